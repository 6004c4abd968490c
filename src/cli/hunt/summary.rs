//! The sweep's tallies per scenario and property, and the summary they make: a table for
//! people and the JSON other tools build on (`{"scenarios": [{"name", "seeds_run",
//! "properties": [{"name", "expectation", "seeds_violating", "first_violating_seed",
//! "met"}], "met"}], "seeds_run", "seconds", "seeds_per_second", "all_met"}`).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use reports::{ReportLink, Summary as ReportSummary, SummaryRow, render_summary};
use scenarios::property::{Expectation, Property};
use scenarios::scenario::Scenario;
use serde::Serialize;
use splitbrain::run::{self, Outcome, RunError};

/// One property of one scenario, tallied.
#[derive(Clone, Debug, Serialize)]
pub struct PropertyTally {
    name: Property,
    expectation: Expectation,
    seeds_violating: u64,
    first_violating_seed: Option<u64>,
    met: bool,
    /// Traces kept for violating seeds.
    traces: Vec<String>,
    /// HTML reports of the kept traces.
    reports: Vec<String>,
    /// The seeds of the kept traces, in the same order.
    #[serde(skip)]
    report_seeds: Vec<u64>,
}

/// A run that produced no trace.
#[derive(Clone, Debug, Serialize)]
pub struct Failed {
    seed: u64,
    error: String,
}

/// One scenario, tallied.
#[derive(Clone, Debug, Serialize)]
pub struct Tally {
    name: String,
    seeds_run: u64,
    properties: Vec<PropertyTally>,
    met: bool,
    failures: Vec<Failed>,
    /// Seed → the properties it violates, for seeds whose trace is kept.
    #[serde(skip)]
    keeping: BTreeMap<u64, Vec<Property>>,
}

impl Tally {
    fn new(scenario: &Scenario) -> Tally {
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
                report_seeds: Vec::new(),
            })
            .collect();
        Tally {
            name: scenario.name.clone(),
            seeds_run: 0,
            properties,
            met: false,
            failures: Vec::new(),
            keeping: BTreeMap::new(),
        }
    }

    /// Counts a run; true when its trace should be kept (it is among the first `keep`
    /// violating seeds of some property, or `all` is set).
    pub fn record(&mut self, seed: u64, outcome: &Outcome, all: bool, keep: usize) -> bool {
        self.seeds_run += 1;
        let mut wanted = false;
        let mut violated = Vec::new();
        for property in &mut self.properties {
            if outcome.violates(property.name) {
                property.seeds_violating += 1;
                property.first_violating_seed.get_or_insert(seed);
                wanted |= all || property.seeds_violating <= keep as u64;
                violated.push(property.name);
            }
        }
        if wanted {
            self.keeping.insert(seed, violated);
        }
        wanted
    }

    /// Notes that a trace of `seed` and its report were written: for `property` only (a
    /// shrunk trace), or for every property the seed violates.
    pub fn kept(&mut self, seed: u64, trace: &Path, report: &Path, property: Option<Property>) {
        let violated = self.keeping.get(&seed).cloned().unwrap_or_default();
        for tally in &mut self.properties {
            if property.map_or(violated.contains(&tally.name), |p| p == tally.name) {
                tally.traces.push(trace.display().to_string());
                tally.reports.push(report.display().to_string());
                tally.report_seeds.push(seed);
            }
        }
    }

    /// Counts a run that failed.
    pub fn fail(&mut self, seed: u64, error: &RunError) {
        self.seeds_run += 1;
        let error = error.to_string();
        self.failures.push(Failed { seed, error });
    }

    /// Settles the verdicts.
    fn settle(&mut self) {
        for property in &mut self.properties {
            property.met = match property.expectation {
                Expectation::Holds => property.seeds_violating == 0,
                Expectation::Violated => property.seeds_violating > 0,
                Expectation::Unchecked => true,
            };
        }
        self.met = self.failures.is_empty() && self.properties.iter().all(|p| p.met);
    }
}

/// The tallies of a sweep.
pub struct Sweep {
    /// Per scenario, in the order given.
    pub scenarios: Vec<Tally>,
}

impl Sweep {
    /// Empty tallies for `scenarios`.
    pub fn new(scenarios: &[Scenario]) -> Sweep {
        Sweep {
            scenarios: scenarios.iter().map(Tally::new).collect(),
        }
    }

    /// The summary after `seconds` of wall-clock time.
    pub fn summary(mut self, seconds: f64) -> Summary {
        for tally in &mut self.scenarios {
            tally.settle();
        }
        let seeds_run: u64 = self.scenarios.iter().map(|s| s.seeds_run).sum();
        let all_met = self.scenarios.iter().all(|s| s.met);
        Summary {
            scenarios: self.scenarios,
            seeds_run,
            seconds,
            seeds_per_second: if seconds > 0.0 {
                seeds_run as f64 / seconds
            } else {
                0.0
            },
            all_met,
            summary_report: None,
        }
    }
}

/// The sweep's verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    scenarios: Vec<Tally>,
    seeds_run: u64,
    seconds: f64,
    seeds_per_second: f64,
    /// True when every scenario met every expectation.
    pub all_met: bool,
    /// The HTML summary page, once written.
    pub summary_report: Option<String>,
}

impl Summary {
    /// The HTML summary page's content, with links relative to `out` (where it goes).
    pub fn html(&self, title: String, out: &Path) -> String {
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
                        .zip(&p.report_seeds)
                        .map(|(path, seed)| ReportLink {
                            seed: *seed,
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
                let expected = serde_json::to_value(p.expectation)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
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
