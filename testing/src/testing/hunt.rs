//! [`hunt`]: a scenario of a user's recipe over its seeds on the simulator, checked against the
//! scenario's expectations.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use recipe_table::property::{Property, Violation};
use scenarios::scenario::Scenario;
use sim::RecipeCode;

use super::{default_out_dir, fail_unless_empty, hunted_seeds, rerun_command};
use crate::files::{evidence_paths, write_trace_and_report};
use crate::run::{self, RunError};
use crate::sweep;
use crate::wants::{KeptRun, TraceWants};

/// A hunt to run: build with [`hunt`], adjust, then [`Hunt::run`].
#[derive(Clone, Debug)]
#[must_use = "a Hunt does nothing until `run` is called"]
pub struct Hunt {
    code: RecipeCode,
    scenario: Scenario,
    seeds: std::ops::Range<u64>,
    out: PathBuf,
}

/// A hunt of `scenario` (whose `recipe` names `code`'s recipe) over the scenario's seeds, or
/// over seed `SPLITBRAIN_SEED` alone when that is set, or over `SPLITBRAIN_SEEDS` (`A..B`). Every run runs `code`: a recipe's
/// definition (`&MY_RECIPE`), or a program (`splitbrain::programs::program`).
///
/// # Panics
/// When the scenario names another recipe than `code`'s: a mistake in a test's set-up.
pub fn hunt(code: impl Into<RecipeCode>, scenario: &Scenario) -> Hunt {
    let code = code.into();
    assert_eq!(
        scenario.recipe.name(),
        code.recipe().name(),
        "scenario `{}`: /recipe: expected the recipe under test",
        scenario.name
    );
    let seeds = hunted_seeds(scenario.seeds.iter());
    Hunt {
        code,
        scenario: scenario.clone(),
        seeds,
        out: default_out_dir().join(&scenario.name),
    }
}

impl Hunt {
    /// Runs these seeds instead (`SPLITBRAIN_SEED` and `SPLITBRAIN_SEEDS` still win).
    pub fn seeds(mut self, seeds: std::ops::Range<u64>) -> Hunt {
        self.seeds = hunted_seeds(seeds);
        self
    }

    /// Writes findings to `dir` instead of `<target>/splitbrain/<scenario>`.
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Hunt {
        self.out = dir.into();
        self
    }

    /// Runs every seed (on every core, results in seed order) and writes the trace and report
    /// of the first seed that violates each property.
    pub fn run(&self) -> Hunted {
        let mut hunted = Hunted {
            scenario: self.scenario.clone(),
            seeds_run: 0,
            violating: BTreeMap::new(),
            findings: Vec::new(),
            failures: Vec::new(),
        };
        let scenario = &self.scenario;
        let wants = TraceWants::new(&run::checked_properties(scenario));
        sweep::in_order(
            self.seeds.clone(),
            sweep::default_workers(),
            |&seed| KeptRun::run(&self.code, scenario, seed, &wants),
            |seed, result| {
                let before = hunted.findings.len();
                hunted.record(seed, result, &self.out);
                (hunted.findings[before..].iter())
                    .for_each(|found| wants.settle(found.violation.property));
            },
        );
        hunted
    }
}

/// The first seed that violated a property, and where its evidence is.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The seed.
    pub seed: u64,
    /// The property's first violation in that run.
    pub violation: Violation,
    /// The run's trace (JSON).
    pub trace: PathBuf,
    /// Its HTML report.
    pub report: PathBuf,
    /// The command that replays it: this test, with `SPLITBRAIN_SEED` set.
    pub replay: String,
}

/// What a hunt found.
#[derive(Clone, Debug)]
pub struct Hunted {
    scenario: Scenario,
    /// Seeds run.
    pub seeds_run: u64,
    /// Every seed that violated each violated property, in seed order.
    pub violating: BTreeMap<Property, Vec<u64>>,
    /// The first finding of each violated property, in property order.
    pub findings: Vec<Finding>,
    /// Seeds whose run produced no trace, and why.
    pub failures: Vec<(u64, String)>,
}

impl Hunted {
    /// Counts the run of `seed`, writing its evidence if it is a property's first violation.
    fn record(&mut self, seed: u64, result: Result<KeptRun, RunError>, out: &std::path::Path) {
        self.seeds_run += 1;
        let judged = match result {
            Ok(judged) => judged,
            Err(error) => return self.failures.push((seed, error.to_string())),
        };
        for violation in judged.violations() {
            let seeds = self.violating.entry(violation.property).or_default();
            if seeds.last() != Some(&seed) {
                seeds.push(seed);
            }
        }
        // Violations come in property order: the first of each property not found before.
        let mut new: Vec<Violation> = (judged.violations().iter())
            .filter(|v| self.finding(v.property).is_none())
            .cloned()
            .collect();
        new.dedup_by_key(|v| v.property);
        // A run none of whose properties wanted its trace any more violates none for the first
        // time (see `crate::wants`).
        let Some(outcome) = judged.outcome().filter(|_| !new.is_empty()) else {
            return;
        };
        let (trace, report) = evidence_paths(out, &format!("seed-{seed}"));
        let files = (trace.as_path(), report.as_path());
        let replay = rerun_command(Some(seed));
        if let Err(error) = write_trace_and_report(
            &outcome.trace,
            &outcome.violations,
            files,
            Some(replay.clone()),
        ) {
            self.failures
                .push((seed, format!("its evidence was not kept: {error}")));
        }
        for violation in new {
            self.findings.push(Finding {
                seed,
                violation,
                trace: trace.clone(),
                report: report.clone(),
                replay: replay.clone(),
            });
        }
        self.findings.sort_by_key(|f| f.violation.property);
    }

    /// The first finding of `property`, if a seed violated it.
    pub fn finding(&self, property: Property) -> Option<&Finding> {
        self.findings
            .iter()
            .find(|f| f.violation.property == property)
    }

    /// The seeds that violated `property`, in seed order (empty when none did).
    pub fn violating_seeds(&self, property: Property) -> &[u64] {
        self.violating.get(&property).map_or(&[], Vec::as_slice)
    }

    /// One paragraph per expectation of the scenario that the seeds did not meet (and per run
    /// that failed), empty when every one was met.
    pub fn unmet(&self) -> Vec<String> {
        let mut unmet = Vec::new();
        for &property in self.scenario.recipe.properties() {
            let violating = self.violating_seeds(property).len() as u64;
            let expectation = self.scenario.expectation(property);
            let Some(mut text) = expectation.unmet(property, violating, self.seeds_run, "seeds")
            else {
                continue;
            };
            if let Some(found) = self.finding(property) {
                describe(&mut text, found);
            }
            unmet.push(text);
        }
        for (seed, why) in &self.failures {
            unmet.push(format!(
                "seed {seed}: the run failed: {why}\n  replay: {}",
                rerun_command(Some(*seed))
            ));
        }
        unmet
    }

    /// Panics, with every unmet expectation's seed, replay command, trace and report, unless
    /// the scenario's expectations were all met.
    #[track_caller]
    pub fn assert_met(&self) {
        let headline = format!(
            "scenario `{}` ({} seeds): expectation(s) not met",
            self.scenario.name, self.seeds_run
        );
        fail_unless_empty(&headline, &self.unmet());
    }
}

/// Adds to an unmet expectation's `text` the first seed that violated it and its evidence.
fn describe(text: &mut String, found: &Finding) {
    let _ = write!(
        text,
        ", first at seed {}: {}\n  replay: {}\n  trace:  {}\n  report: {}",
        found.seed,
        found.violation.message,
        found.replay,
        found.trace.display(),
        found.report.display()
    );
}
