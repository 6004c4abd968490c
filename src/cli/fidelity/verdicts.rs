//! The verdicts of the catalog's mutex, read-write-lock, semaphore and leader-latch
//! scenarios whose faults have real counterparts: per property, the share of simulator seeds
//! that violate it beside the share of real runs that do (seeds 0..N, each on a local server
//! of its own with the scenario's tick, as `splitbrain real --start-local` runs it).
//! Scenarios with a fault that has no real counterpart are listed with the reason.

use recipe_table::property::{Expectation, Property};
use scenarios::catalog::Catalog;
use scenarios::scenario::Scenario;
use serde::Serialize;
use splitbrain::sweep;

use real::ClientLauncher;

use super::{Plan, progress, start_server};
use crate::cli::Failure;
use splitbrain::compare::{differs, share};

/// The recipes whose scenarios are compared (the lock, read-write, semaphore and election families, by recipe name).
const RECIPES: [&str; 5] = [
    "mutex",
    "read-write-lock",
    "semaphore",
    "semaphore-mutex",
    "leader-latch",
];

/// At most this many real scenario runs at once: each has a server (a JVM) of its own.
const REAL_AT_ONCE: usize = 3;

/// One scenario on both.
#[derive(Debug, Serialize)]
pub struct VerdictRow {
    /// The scenario's name.
    pub scenario: String,
    /// Why it was not run on a real server, if it has a fault with no real counterpart.
    pub refused: Option<String>,
    /// Per checked property, both sides.
    pub properties: Vec<PropertyRow>,
    /// Real runs that failed (not counted), with the first one's reason.
    pub real_failed: u64,
    /// Why the first real run failed, if one did.
    pub real_failure: Option<String>,
}

/// One property of one scenario on both.
#[derive(Debug, Serialize)]
pub struct PropertyRow {
    /// The property.
    pub property: Property,
    /// What the scenario expects of it.
    pub expectation: Expectation,
    /// Simulator seeds that violate it, of `sim_runs`.
    pub sim_violated: u64,
    /// Simulator seeds run.
    pub sim_runs: u64,
    /// Real runs that violate it, of `real_runs`.
    pub real_violated: u64,
    /// Real runs that completed.
    pub real_runs: u64,
    /// Whether the real count is unlikely under the simulator's share.
    pub differs: bool,
}

/// The scenarios compared: every catalog scenario of [`RECIPES`]; with --quick only those
/// without faults.
fn chosen<'a>(catalog: &'a Catalog, plan: &Plan) -> Vec<&'a Scenario> {
    (catalog.scenarios().iter())
        .filter(|s| RECIPES.contains(&s.recipe.name()))
        .filter(|s| !plan.quick || (s.faults.is_empty() && s.random_faults.is_empty()))
        .collect()
}

/// Why `scenario` cannot run on a local real server with seeds 0..runs, if it cannot.
fn refusal(scenario: &Scenario, runs: u64) -> Option<String> {
    (0..runs).find_map(|seed| {
        let schedule = scenario.fault_schedule(seed);
        real::faults::refusal(scenario, seed, &schedule, Some(1))
    })
}

/// The violated properties of a run: `Ok` with those of `properties` that it violates.
type Verdict = Result<Vec<Property>, String>;

/// Measures every chosen scenario on the simulator and on real servers.
pub fn measure(
    plan: &Plan,
    catalog: &Catalog,
    launcher: &ClientLauncher,
) -> Result<Vec<VerdictRow>, Failure> {
    let scenarios = chosen(catalog, plan);
    let mut rows: Vec<VerdictRow> = (scenarios.iter())
        .map(|s| VerdictRow {
            scenario: s.name.clone(),
            refused: refusal(s, plan.verdict_runs),
            properties: (s.recipe.properties().iter())
                .map(|&property| PropertyRow {
                    property,
                    expectation: s.expectation(property),
                    sim_violated: 0,
                    sim_runs: 0,
                    real_violated: 0,
                    real_runs: 0,
                    differs: false,
                })
                .collect(),
            real_failed: 0,
            real_failure: None,
        })
        .collect();
    let runnable: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].refused.is_none())
        .collect();
    let sim_jobs: Vec<(usize, u64)> = (runnable.iter())
        .flat_map(|&i| (0..plan.seeds).map(move |seed| (i, seed)))
        .collect();
    let total = sim_jobs.len();
    let mut done = 0;
    let simulate = |&(i, seed): &(usize, u64)| -> Verdict {
        let outcome = splitbrain::run::run(scenarios[i], seed).map_err(|e| e.to_string())?;
        Ok(violated(&outcome.violations))
    };
    let mut failed = None;
    sweep::in_order(
        sim_jobs.into_iter(),
        sweep::default_workers(),
        simulate,
        |(i, seed), verdict| {
            done += 1;
            progress("verdicts, simulator", done, total, total / 4);
            match verdict {
                Ok(violated) => count(&mut rows[i].properties, &violated, true),
                Err(e) => {
                    let name = &rows[i].scenario;
                    failed = failed.take().or(Some(format!("{name} seed {seed}: {e}")));
                }
            }
        },
    );
    if let Some(failed) = failed {
        return Err(Failure(failed));
    }
    let real_jobs: Vec<(usize, u64)> = (runnable.iter())
        .flat_map(|&i| (0..plan.verdict_runs).map(move |seed| (i, seed)))
        .collect();
    let total = real_jobs.len();
    let mut done = 0;
    let run_real = |&(i, seed): &(usize, u64)| run_real(scenarios[i], seed, launcher);
    let at_once = plan.parallel.min(REAL_AT_ONCE);
    sweep::in_order(
        real_jobs.into_iter(),
        at_once,
        run_real,
        |(i, seed), verdict| {
            done += 1;
            progress("verdicts, real server", done, total, 5);
            let row = &mut rows[i];
            match verdict {
                Ok(violated) => count(&mut row.properties, &violated, false),
                Err(why) => {
                    eprintln!("fidelity: {} seed {seed} failed: {why}", row.scenario);
                    row.real_failed += 1;
                    row.real_failure
                        .get_or_insert(format!("seed {seed}: {why}"));
                }
            }
        },
    );
    for property in rows.iter_mut().flat_map(|r| r.properties.iter_mut()) {
        property.differs = property.real_runs > 0
            && differs(
                property.real_violated,
                property.real_runs,
                property.sim_violated,
                property.sim_runs,
            );
    }
    Ok(rows)
}

/// The properties `violations` violate, each once.
fn violated(violations: &[recipe_table::property::Violation]) -> Vec<Property> {
    let mut properties: Vec<Property> = violations.iter().map(|v| v.property).collect();
    properties.sort_unstable();
    properties.dedup();
    properties
}

/// Counts one run (of the simulator when `sim`) that violates `violated`.
fn count(properties: &mut [PropertyRow], violated: &[Property], sim: bool) {
    for row in properties {
        let hit = u64::from(violated.contains(&row.property));
        if sim {
            row.sim_runs += 1;
            row.sim_violated += hit;
        } else {
            row.real_runs += 1;
            row.real_violated += hit;
        }
    }
}

/// One real run of `scenario` with `seed` on a standalone server of its own.
fn run_real(scenario: &Scenario, seed: u64, launcher: &ClientLauncher) -> Verdict {
    let target = start_server(scenario.server.tick_ms).map_err(|f| f.0)?;
    let result = real::run(scenario, seed, &target, launcher);
    target.stop();
    let trace = result.map_err(|f| f.message)?;
    let violations = properties::verdict::violations(&trace).map_err(|e| e.to_string())?;
    Ok(violated(&violations))
}

/// The table, as Markdown: per scenario, the properties violated on either side.
pub fn markdown(rows: &[VerdictRow], plan: &Plan) -> String {
    let mut text = format!(
        "Verdicts: per property, simulator seeds (0..{}) and real runs (seeds 0..{}, a \
         standalone server each) that violate it, with the scenario's expectation; \
         properties violated on neither side are left out.\n\n",
        plan.seeds, plan.verdict_runs
    );
    text.push_str(
        "| scenario | violated: expectation, sim · real | differs |\n| --- | --- | --- |\n",
    );
    for row in rows {
        if let Some(refused) = &row.refused {
            text.push_str(&format!(
                "| {} | not run on a real server: {refused} | – |\n",
                row.scenario
            ));
            continue;
        }
        let violated: Vec<String> = (row.properties.iter())
            .filter(|p| p.sim_violated > 0 || p.real_violated > 0)
            .map(|p| {
                format!(
                    "{} ({}): {} · {}",
                    p.property,
                    p.expectation.name(),
                    share(p.sim_violated, p.sim_runs),
                    share(p.real_violated, p.real_runs)
                )
            })
            .collect();
        let differing: Vec<String> = (row.properties.iter())
            .filter(|p| p.differs)
            .map(|p| format!("**{}**", p.property))
            .collect();
        let failed = match row.real_failed {
            0 => String::new(),
            n => format!(" ({n} real run(s) failed)"),
        };
        text.push_str(&format!(
            "| {} | {}{failed} | {} |\n",
            row.scenario,
            if violated.is_empty() {
                "none".into()
            } else {
                violated.join("; ")
            },
            if differing.is_empty() {
                "no".into()
            } else {
                differing.join(", ")
            },
        ));
    }
    text
}
