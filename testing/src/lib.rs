//! splitbrain as a library: what a crate testing its own recipe depends on, and what the
//! `splitbrain` command line is built on. It runs a scenario's seed on the simulator and
//! checks its trace ([`run`]), sweeps seeds in parallel with results in seed order
//! ([`sweep`]), writes files atomically ([`files`]), and gives `cargo test` its helpers:
//! [`testing`] hunts and model-checks any [`recipe_table::recipes::RecipeDef`]. The crates a
//! recipe and its tests are written against are re-exported, so this is the one dependency a
//! user's crate needs.

pub mod compare;
pub mod files;
pub mod run;
pub mod sweep;
pub mod testing;
pub mod wants;

/// The recipe contract, the framework layer, the recipes and the in-memory tree.
pub use coordination;
/// The stateright model checker over the same recipe code.
pub use model;
/// Programs on `zookeeper-client` as the code of a run's clients.
pub use programs;
/// The properties: monitors, trace checks and verdicts.
pub use properties;
/// The real executor: local ZooKeeper servers, and runs of scenarios on them (a user's
/// programs' with `real::run_program`). With the feature `real`.
#[cfg(feature = "real")]
pub use real;
/// The recipe table and the property vocabulary.
pub use recipe_table;
/// HTML reports of traces.
pub use reports;
/// What a client of a run does: the workload, its drive loop and the fenced resource.
pub use runtime;
/// The scenario format, the fault vocabulary and the catalog.
pub use scenarios;
/// The madsim simulator.
pub use sim;
/// The trace schema and its recorder.
pub use trace;

/// The README's code, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

/// Compiles and runs the `rust` blocks of book pages as doc tests, one struct per page (the
/// book's pages cannot be tested with `mdbook test`, which cannot link the workspace's crates).
/// `tests/docs.rs` checks that every page with a `rust` block is listed here.
macro_rules! book_doctests {
    ($($(#[$cfg:meta])* $name:ident: $page:literal),* $(,)?) => {
        $(
            $(#[$cfg])*
            #[cfg(doctest)]
            #[doc = include_str!(concat!("../../book/src/", $page))]
            struct $name;
        )*
    };
}

book_doctests! {
    BookYourRecipe: "guides/your-recipe.md",
    BookScenarioFormat: "reference/scenario-format.md",
    #[cfg(feature = "real")]
    BookRealZookeeper: "guides/real-zookeeper.md",
}
