//! What a splitbrain run is and what it must satisfy: the fault vocabulary, the scenario
//! format and the embedded catalog, the trace schema shared by the simulator, the model
//! checker and real runs, the property vocabulary, the trace checkers and the fault-schedule
//! minimizer; and what a client of a run does — the workload state machine, and the loop
//! that drives it beside its recipe and records the trace ([`drive`], [`record`]), shared by
//! the simulator and the real executor.

pub mod catalog;
pub mod check;
pub mod drive;
pub mod fault;
pub mod monitor;
pub mod property;
pub mod recipe_ref;
pub mod recipes;
pub mod record;
pub mod resource;
pub mod rng;
pub mod scenario;
pub mod shrink;
pub mod spec;
pub mod trace;
pub mod usage;
pub mod verdict;
pub mod workload;
