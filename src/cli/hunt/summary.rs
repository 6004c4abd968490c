//! The sweep's tallies per scenario and property, and the summary they make: a table for
//! people and the JSON other tools build on (`{"scenarios": [{"name", "seeds", "seeds_run",
//! "properties": [{"name", "expectation", "seeds_violating", "first_violating_seed", "met",
//! "traces", "reports", "kept"}], "met", "runs_failed", "failures"}], "seeds_run", "seconds",
//! "seeds_per_second", "all_met", "shard", "unfenced", "all_reports", "out",
//! "summary_report"}`). A tally keeps counts, the first violating seed, the few kept traces
//! and the first [`FAILURES_LISTED`] failed runs: nothing grows with the number of seeds.
//! `hunt` writes the summary to `summary.json` in its output directory, and `merge` reads
//! those of a sharded hunt back.

use std::fmt::Write;
use std::path::Path;

use recipe_table::property::{Expectation, Property, Violation};
use reports::{ReportLink, Summary as ReportSummary, SummaryRow, render_summary};
use scenarios::scenario::{Scenario, SeedRange};
use serde::{Deserialize, Serialize};
use splitbrain::run;
use splitbrain::sweep::Shard;

/// How many failed runs per scenario the summary lists (all are counted).
pub const FAILURES_LISTED: usize = 20;

/// One property of one scenario, tallied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PropertyTally {
    pub(crate) name: Property,
    pub(crate) expectation: Expectation,
    pub(crate) seeds_violating: u64,
    pub(crate) first_violating_seed: Option<u64>,
    pub(crate) met: bool,
    /// Traces kept for violating seeds.
    pub(crate) traces: Vec<String>,
    /// HTML reports of the kept traces, in the same order.
    pub(crate) reports: Vec<String>,
    /// Which seed each kept trace is of, in the same order.
    pub(crate) kept: Vec<Kept>,
}

/// What a kept trace is: a violating seed's run, or its schedule shrunk for this property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kept {
    /// The seed.
    pub seed: u64,
    /// True for the run under the schedule shrunk for this property.
    pub shrunk: bool,
}

/// A run that produced no trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failed {
    pub(crate) seed: u64,
    pub(crate) error: String,
}

/// One scenario, tallied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tally {
    pub(crate) name: String,
    /// A digest of the scenario as run (see [`digest`]): shards of one hunt agree on it.
    pub(crate) scenario_digest: String,
    /// The seed range swept (of which a shard runs its share).
    pub(crate) seeds: SeedRange,
    pub(crate) seeds_run: u64,
    pub(crate) properties: Vec<PropertyTally>,
    pub(crate) met: bool,
    /// Runs that produced no trace, all counted.
    pub(crate) runs_failed: u64,
    /// The first [`FAILURES_LISTED`] of them, in seed order.
    pub(crate) failures: Vec<Failed>,
}

impl Tally {
    fn new(scenario: &Scenario, seeds: SeedRange) -> Tally {
        let properties = run::checked_properties(scenario)
            .into_iter()
            .map(|name| PropertyTally {
                name,
                expectation: scenario.expectation(name),
                seeds_violating: 0,
                first_violating_seed: None,
                met: false,
                traces: Vec::new(),
                reports: Vec::new(),
                kept: Vec::new(),
            })
            .collect();
        Tally {
            name: scenario.name.clone(),
            scenario_digest: digest(scenario),
            seeds,
            seeds_run: 0,
            properties,
            met: false,
            runs_failed: 0,
            failures: Vec::new(),
        }
    }

    /// Counts a run. When its trace should be kept (it is among the first `keep` violating
    /// seeds of some property, or `all` is set), returns the properties it violates.
    pub fn record(
        &mut self,
        seed: u64,
        violations: &[Violation],
        all: bool,
        keep: usize,
    ) -> Option<Vec<Property>> {
        self.seeds_run += 1;
        let mut wanted = false;
        let mut violated = Vec::new();
        for property in &mut self.properties {
            if violations.iter().any(|v| v.property == property.name) {
                property.seeds_violating += 1;
                property.first_violating_seed.get_or_insert(seed);
                wanted |= all || property.seeds_violating <= keep as u64;
                violated.push(property.name);
            }
        }
        wanted.then_some(violated)
    }

    /// Of the properties a run violated (`violations`, counted), those that have had `keep`
    /// violating seeds counted: they want no more traces. (The others are unchanged by the
    /// run, so a consumer that asks after every run learns of each as it settles.)
    pub fn settled<'a>(
        &'a self,
        violations: &'a [Violation],
        keep: usize,
    ) -> impl Iterator<Item = Property> + 'a {
        (self.properties.iter())
            .filter(move |property| property.seeds_violating >= keep as u64)
            .filter(|property| violations.iter().any(|v| v.property == property.name))
            .map(|property| property.name)
    }

    /// Notes that a trace of `seed` and its report were written: for `shrunk_for` only (a
    /// trace shrunk for that property), or else for each of the `violated` properties.
    pub fn kept(
        &mut self,
        seed: u64,
        (trace, report): (&Path, &Path),
        violated: &[Property],
        shrunk_for: Option<Property>,
    ) {
        for tally in &mut self.properties {
            if shrunk_for.map_or(violated.contains(&tally.name), |p| p == tally.name) {
                tally.traces.push(trace.display().to_string());
                tally.reports.push(report.display().to_string());
                let shrunk = shrunk_for.is_some();
                tally.kept.push(Kept { seed, shrunk });
            }
        }
    }

    /// Counts a run that failed; the first [`FAILURES_LISTED`] are listed.
    pub fn fail(&mut self, seed: u64, error: &dyn std::fmt::Display) {
        self.seeds_run += 1;
        self.runs_failed += 1;
        if self.failures.len() < FAILURES_LISTED {
            let error = error.to_string();
            self.failures.push(Failed { seed, error });
        }
    }

    /// Settles the verdicts.
    pub(crate) fn settle(&mut self) {
        for property in &mut self.properties {
            property.met = (property.expectation).is_met(property.seeds_violating > 0);
        }
        self.met = self.runs_failed == 0 && self.properties.iter().all(|p| p.met);
    }
}

/// FNV-1a (64 bits) of the scenario's JSON, in hex: two shards that ran a scenario of the
/// same name from different catalogs or builds tell themselves apart by it.
pub fn digest(scenario: &Scenario) -> String {
    let json = serde_json::to_string(scenario).expect("a scenario serializes");
    let hash = json.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// What a hunt was asked to do, recorded in its summary so that shards can be checked
/// against one another.
#[derive(Clone, Debug)]
pub struct Setup {
    /// This process's share of the seeds.
    pub shard: Option<Shard>,
    /// Whether every workload ran unfenced.
    pub unfenced: bool,
    /// Whether every violating seed kept its trace.
    pub all_reports: bool,
    /// The output directory, as given.
    pub out: String,
}

/// The tallies of a sweep.
pub struct Sweep {
    /// Per scenario, in the order given.
    pub scenarios: Vec<Tally>,
    setup: Setup,
}

impl Sweep {
    /// Empty tallies for `scenarios`, each over its seed range.
    pub fn new(scenarios: &[(Scenario, SeedRange)], setup: Setup) -> Sweep {
        Sweep {
            scenarios: scenarios.iter().map(|(s, r)| Tally::new(s, *r)).collect(),
            setup,
        }
    }

    /// The summary after `seconds` of wall-clock time.
    pub fn summary(self, seconds: f64) -> Summary {
        let rate = if seconds > 0.0 {
            self.scenarios.iter().map(|s| s.seeds_run).sum::<u64>() as f64 / seconds
        } else {
            0.0
        };
        Summary::settled(self.scenarios, self.setup, seconds, rate)
    }
}

/// The sweep's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    pub(crate) scenarios: Vec<Tally>,
    pub(crate) seeds_run: u64,
    /// Wall-clock seconds (of the slowest shard, for a merge).
    pub(crate) seconds: f64,
    /// Seeds per wall-clock second (summed over shards, for a merge).
    pub(crate) seeds_per_second: f64,
    /// True when every scenario met every expectation.
    pub all_met: bool,
    /// The shard this hunt ran, if it ran one.
    pub(crate) shard: Option<Shard>,
    pub(crate) unfenced: bool,
    pub(crate) all_reports: bool,
    /// The output directory, as given.
    pub(crate) out: String,
    /// The HTML summary page, once written.
    pub summary_report: Option<String>,
}

impl Summary {
    /// The summary of settled `scenarios`.
    pub(crate) fn settled(
        mut scenarios: Vec<Tally>,
        setup: Setup,
        seconds: f64,
        seeds_per_second: f64,
    ) -> Summary {
        for tally in &mut scenarios {
            tally.settle();
        }
        Summary {
            seeds_run: scenarios.iter().map(|s| s.seeds_run).sum(),
            all_met: scenarios.iter().all(|s| s.met),
            scenarios,
            seconds,
            seeds_per_second,
            shard: setup.shard,
            unfenced: setup.unfenced,
            all_reports: setup.all_reports,
            out: setup.out,
            summary_report: None,
        }
    }

    /// The HTML summary page's title: `hunt`, or `hunt · shard I/N`.
    pub fn title(&self) -> String {
        match self.shard {
            Some(shard) => format!("hunt · shard {}/{}", shard.index, shard.count),
            None => "hunt".to_owned(),
        }
    }

    /// The HTML summary page's content, titled `title`, with links relative to `out` (where
    /// it goes).
    pub fn html(&self, out: &Path, title: String) -> String {
        let rows = self
            .scenarios
            .iter()
            .flat_map(|scenario| {
                scenario.properties.iter().map(move |p| SummaryRow {
                    scenario: scenario.name.clone(),
                    property: p.name,
                    expectation: p.expectation,
                    seeds_run: scenario.seeds_run,
                    seeds_violating: p.seeds_violating,
                    first_violating_seed: p.first_violating_seed,
                    met: p.met,
                    reports: p
                        .reports
                        .iter()
                        .zip(&p.kept)
                        .map(|(path, kept)| ReportLink {
                            seed: kept.seed,
                            href: Path::new(path)
                                .strip_prefix(out)
                                .unwrap_or(Path::new(path))
                                .display()
                                .to_string(),
                        })
                        .collect(),
                })
            })
            .collect();
        render_summary(&ReportSummary { title, rows })
    }

    /// The table for people.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let width = self
            .scenarios
            .iter()
            .map(|s| s.name.len())
            .max()
            .unwrap_or(8)
            .max(8);
        let _ = writeln!(
            out,
            "{:width$}  {:23}  {:9}  {:>5}  {:>9}  {:>10}  met",
            "scenario", "property", "expected", "seeds", "violating", "first seed"
        );
        for scenario in &self.scenarios {
            for p in &scenario.properties {
                let first = p
                    .first_violating_seed
                    .map_or("-".to_owned(), |s| s.to_string());
                let expected = p.expectation.name();
                let _ = writeln!(
                    out,
                    "{:width$}  {:23}  {:9}  {:>5}  {:>9}  {:>10}  {}",
                    scenario.name,
                    p.name.name(),
                    expected,
                    scenario.seeds_run,
                    p.seeds_violating,
                    first,
                    if p.met { "yes" } else { "NO" }
                );
            }
            for failure in &scenario.failures {
                let _ = writeln!(
                    out,
                    "{:width$}  run failed at seed {}: {}",
                    scenario.name, failure.seed, failure.error
                );
            }
            let unlisted = scenario.runs_failed - scenario.failures.len() as u64;
            if unlisted > 0 {
                let _ = writeln!(
                    out,
                    "{:width$}  and {unlisted} more failed runs",
                    scenario.name
                );
            }
        }
        let unmet: Vec<&str> = self
            .scenarios
            .iter()
            .filter(|s| !s.met)
            .map(|s| s.name.as_str())
            .collect();
        let rate = format!(
            "{} runs in {:.1} s, {:.0} seeds/s",
            self.seeds_run, self.seconds, self.seeds_per_second
        );
        if unmet.is_empty() {
            let _ = writeln!(
                out,
                "every expectation met: {} scenario(s), {rate}",
                self.scenarios.len()
            );
        } else {
            let _ = writeln!(
                out,
                "expectations NOT met in: {} ({rate})",
                unmet.join(", ")
            );
        }
        out
    }
}
