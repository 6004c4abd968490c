//! The recipe table: every recipe splitbrain knows, as one row each ([`recipes`]), the name a
//! scenario or trace uses for it ([`recipe_ref`]), the family that says how a workload uses it
//! ([`family`]), what the model checker runs it with ([`model_spec`]), and the property vocabulary
//! its rows and every checker share ([`property`]).
//!
//! The recipes themselves are sans-IO state machines in the `coordination` crate; this table is what
//! the command line, the simulator, the real executor and the model read to find them.

pub mod family;
pub mod model_spec;
pub mod property;
pub mod recipe_ref;
pub mod recipes;
