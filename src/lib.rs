//! splitbrain's driving layer: runs a scenario's seed on the simulator and checks its trace
//! ([`run`]), sweeps seeds in parallel with results in seed order ([`sweep`]), and writes
//! files atomically ([`files`]). The `splitbrain` binary's commands are built on these.
//!
//! It is also the one dependency a crate testing its own recipe needs: [`testing`] hunts and
//! model-checks any [`scenarios::recipes::RecipeDef`], and the crates below are re-exported.

pub mod files;
pub mod run;
pub mod sweep;
pub mod testing;
pub mod wants;

/// The recipe contract, the framework layer, the recipes and the in-memory tree.
pub use lock;
/// The stateright model checker over the same recipe code.
pub use model;
/// HTML reports of traces.
pub use reports;
/// Scenarios, traces, properties and their checkers, the recipe table.
pub use scenarios;
/// The madsim simulator.
pub use sim;

/// The README's code, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
