//! Test helpers for recipes of your own: a simulator hunt ([`hunt`]) and an exhaustive model
//! check ([`model_check`]) of any [`RecipeDef`](recipe_table::recipes::RecipeDef), whose findings are written as traces and HTML
//! reports and turned into failing tests whose message says how to replay them.
//!
//! ```no_run
//! # use splitbrain::testing;
//! # use splitbrain::scenarios::scenario::Scenario;
//! # use splitbrain::recipe_table::recipes::{RecipeDef, Testable};
//! # fn example<R: Testable>(def: &'static RecipeDef<R>, scenario: &Scenario) {
//! // In a `#[test]`: every expectation of the scenario over its seeds, or a panic naming the
//! // seed, the replay command, the trace and the report.
//! testing::hunt(def, scenario).run().assert_met();
//! # }
//! ```
//!
//! A finding's trace and report go to `<target>/splitbrain/<scenario>/` (the test binary's
//! target directory). Setting `SPLITBRAIN_SEED=N` makes every hunt run seed `N` alone: that is
//! the replay command a failure prints. Setting `SPLITBRAIN_SEEDS=A..B` makes every hunt run
//! seeds `A..B` instead of its own (a wider hunt than the test's, without editing it:
//! `SPLITBRAIN_SEEDS=0..10000 cargo test --release`). `splitbrain report <trace>` renders any such trace
//! again, since a trace records the recipe's family with its name.

mod hunt;
mod model;
pub mod schedules;

pub use hunt::{Finding, Hunt, Hunted, hunt};
pub use model::{Counterexample, ModelChecked, model_check};

use std::path::PathBuf;

/// The environment variable that makes a hunt run one seed (the replay of a finding).
pub const SEED_VARIABLE: &str = "SPLITBRAIN_SEED";

/// Where findings are written: `<target>/splitbrain`, the target directory being the one the
/// running test binary is in (`<target>/<profile>/deps/<binary>`), or `target` if that cannot
/// be told.
pub fn default_out_dir() -> PathBuf {
    let target = std::env::current_exe().ok().and_then(|exe| {
        let deps = exe.parent()?;
        (deps.file_name()? == "deps").then(|| deps.parent()?.parent().map(PathBuf::from))?
    });
    target
        .unwrap_or_else(|| PathBuf::from("target"))
        .join("splitbrain")
}

/// The command that reruns the current test, with `SPLITBRAIN_SEED=<seed>` when a seed is
/// given: `cargo test -p <package> -- <test> --exact`, as far as the package (cargo sets
/// `CARGO_PKG_NAME` for the tests it runs) and the test (the test thread's name) are known.
pub fn rerun_command(seed: Option<u64>) -> String {
    let mut command = String::new();
    if let Some(seed) = seed {
        command += &format!("{SEED_VARIABLE}={seed} ");
    }
    command += "cargo test";
    if let Ok(package) = std::env::var("CARGO_PKG_NAME") {
        command += &format!(" -p {package}");
    }
    if let Some(test) = std::thread::current().name().filter(|name| *name != "main") {
        command += &format!(" -- {test} --exact");
    }
    command
}

/// Panics with `headline` and one paragraph per entry of `unmet`, unless it is empty.
#[track_caller]
fn fail_unless_empty(headline: &str, unmet: &[String]) {
    if !unmet.is_empty() {
        panic!("{headline}: {}\n{}", unmet.len(), unmet.join("\n"));
    }
}

/// The seed `SPLITBRAIN_SEED` asks for, if set; a value that is not a seed is a mistake worth a
/// clear panic in a test.
fn seed_from_environment() -> Option<u64> {
    let value = std::env::var(SEED_VARIABLE).ok()?;
    match value.trim().parse() {
        Ok(seed) => Some(seed),
        Err(_) => panic!("{SEED_VARIABLE}: expected a seed (an unsigned integer), found `{value}`"),
    }
}

/// The environment variable that makes every hunt run a range of seeds of its choosing.
pub const SEEDS_VARIABLE: &str = "SPLITBRAIN_SEEDS";

/// The seeds `SPLITBRAIN_SEEDS` asks for, if set; a value that is not a range is a mistake
/// worth a clear panic in a test.
fn seeds_from_environment() -> Option<std::ops::Range<u64>> {
    let value = std::env::var(SEEDS_VARIABLE).ok()?;
    match value.parse::<scenarios::scenario::SeedRange>() {
        Ok(seeds) => Some(seeds.iter()),
        Err(why) => panic!("{SEEDS_VARIABLE}: {why}"),
    }
}

/// The seeds a hunt runs: `SPLITBRAIN_SEED` alone, else `SPLITBRAIN_SEEDS`, else `own`.
fn hunted_seeds(own: std::ops::Range<u64>) -> std::ops::Range<u64> {
    chosen_seeds(seed_from_environment(), seeds_from_environment(), own)
}

/// The seeds a hunt runs, given what the environment asks for: `seed` alone, else `seeds`,
/// else `own`.
fn chosen_seeds(
    seed: Option<u64>,
    seeds: Option<std::ops::Range<u64>>,
    own: std::ops::Range<u64>,
) -> std::ops::Range<u64> {
    match (seed, seeds) {
        (Some(seed), _) => seed..seed + 1,
        (None, Some(seeds)) => seeds,
        (None, None) => own,
    }
}

#[cfg(test)]
mod tests {
    use super::chosen_seeds;

    #[test]
    fn one_seed_wins_over_a_range_which_wins_over_the_hunts_own() {
        assert_eq!(chosen_seeds(Some(7), Some(0..10_000), 0..200), 7..8);
        assert_eq!(chosen_seeds(None, Some(0..10_000), 0..200), 0..10_000);
        assert_eq!(chosen_seeds(None, None, 0..200), 0..200);
    }
}
