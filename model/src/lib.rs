//! Exhaustive model checking of splitbrain's recipes with stateright.
//!
//! The model checks the *same* state machines the simulator and the real client run —
//! [`coordination::client::Client`] (a recipe composed with its framework layer), fed with
//! [`coordination::client::ClientInput`]s and emitting [`coordination::recipe::Effect`]s — over an abstract
//! ZooKeeper server built on the shared [`coordination::zk::tree::Tree`]. There is no second,
//! hand-written model of a recipe to drift away from the real one.
//!
//! - [`budget`]: what a check explores (clients, cycles, fault budgets, fencing).
//! - [`model`]: the stateright `Model`: state, actions, faults.
//! - [`predicates`]: the shared property vocabulary as state predicates.
//! - The recipes come from the recipe table (`recipe_table::recipes`): a row's
//!   [`RecipeDef`](recipe_table::recipes::RecipeDef) says how to build the recipe, which
//!   directories the initial tree has and which verdicts the model must give.
//! - [`mod@check`]: the exhaustive run, verdicts, shortest and minimized counterexamples.
//! - [`replay`]: action paths, their states and their traces in the simulator's format.
//! - Symmetry: [`state::State`] implements stateright's `Representative`.
//! - Partial-order reduction: the search takes one of the interleavings of a client's local,
//!   invisible event handling (see `reduction.rs` for the soundness argument).

pub mod budget;
pub mod check;
pub mod components;
pub mod model;
pub mod predicates;
mod reduction;
pub mod replay;
pub mod state;
mod symmetry;
mod transition;

pub use budget::{Budgets, ModelSpec};
pub use check::{Options, Outcome, check};
pub use model::{Action, LockModel};
pub use predicates::Checked;
