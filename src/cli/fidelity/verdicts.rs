//! The verdicts of the catalog's mutex, read-write-lock, semaphore, leader-latch and
//! leader-selector scenarios whose faults have real counterparts: per property, the share of
//! simulator seeds that violate it beside the share of real runs that do (seeds 0..N, each on
//! local servers of its own with the scenario's server settings, as `splitbrain real
//! --start-local` runs it: a standalone server, or an ensemble of the scenario's size).
//! Scenarios with a fault that has no real counterpart are listed with the reason.

use real::local::Settings;
use recipe_table::property::{Expectation, Property};
use scenarios::catalog::Catalog;
use scenarios::scenario::Scenario;
use serde::Serialize;
use splitbrain::sweep;

use real::ClientLauncher;
use real::target::Target;

use super::budget::Budget;
use super::{Plan, progress};
use crate::cli::{Failure, find};
use splitbrain::compare::{differs, share};

/// The recipes whose scenarios are compared (the lock, read-write, semaphore and election
/// families, by recipe name).
const RECIPES: [&str; 6] = [
    "mutex",
    "read-write-lock",
    "semaphore",
    "semaphore-mutex",
    "leader-latch",
    "leader-selector",
];

/// At most this many ZooKeeper servers (JVMs) of real runs at once, not runs: a run on a
/// standalone server counts one, a run on an ensemble each of its servers, so an ensemble of
/// three runs alone. `--parallel` lowers it.
const REAL_AT_ONCE: usize = 3;

/// One scenario on both.
#[derive(Debug, Serialize)]
pub struct VerdictRow {
    /// The scenario's name.
    pub scenario: String,
    /// The servers each real run starts: 1, a standalone server; more, a local ensemble of
    /// that many (the scenario's `server.ensemble`).
    pub servers: u16,
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

/// The scenarios compared: those called `names`, in that order, whatever their faults; with
/// no names, every catalog scenario of [`RECIPES`] (with --quick only those without faults).
/// An error names a scenario the catalog lacks or whose recipe is not compared.
pub fn chosen<'a>(
    catalog: &'a Catalog,
    plan: &Plan,
    names: &[String],
) -> Result<Vec<&'a Scenario>, Failure> {
    if names.is_empty() {
        return Ok((catalog.scenarios().iter())
            .filter(|s| RECIPES.contains(&s.recipe.name()))
            .filter(|s| !plan.quick || (s.faults.is_empty() && s.random_faults.is_empty()))
            .collect());
    }
    (names.iter())
        .map(|name| {
            let scenario = find(catalog, name)?;
            match RECIPES.contains(&scenario.recipe.name()) {
                true => Ok(scenario),
                false => Err(Failure(format!(
                    "--scenario {name}: expected a scenario of a compared recipe ({}), found \
                     one of {}",
                    RECIPES.join(", "),
                    scenario.recipe.name()
                ))),
            }
        })
        .collect()
}

/// Why `scenario` cannot run with seeds 0..runs on the local servers it asks for (a
/// standalone server, or an ensemble of its size), if it cannot.
fn refusal(scenario: &Scenario, runs: u64) -> Option<String> {
    let servers = Some(scenario.server.ensemble);
    (0..runs).find_map(|seed| {
        let schedule = scenario.fault_schedule(seed);
        real::faults::refusal(scenario, seed, &schedule, servers)
    })
}

/// The servers a real run of `scenario` starts, and their settings: the scenario's (its tick
/// and, for an ensemble, its `sync_limit`), as `splitbrain real --start-local` starts them.
fn servers(scenario: &Scenario) -> (u16, Settings) {
    (scenario.server.ensemble, Settings::of(&scenario.server))
}

/// The violated properties of a run: `Ok` with those of `properties` that it violates.
type Verdict = Result<Vec<Property>, String>;

/// Measures every chosen scenario on the simulator and on real servers.
pub fn measure(
    plan: &Plan,
    scenarios: &[&Scenario],
    launcher: &ClientLauncher,
) -> Result<Vec<VerdictRow>, Failure> {
    let mut rows: Vec<VerdictRow> = (scenarios.iter())
        .map(|s| VerdictRow {
            scenario: s.name.clone(),
            servers: s.server.ensemble,
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
    let budget = Budget::new(plan.parallel.min(REAL_AT_ONCE));
    let run_real = |&(i, seed): &(usize, u64)| {
        let _held = budget.hold(usize::from(scenarios[i].server.ensemble));
        run_real(scenarios[i], seed, launcher)
    };
    sweep::in_order(
        real_jobs.into_iter(),
        plan.parallel.min(REAL_AT_ONCE),
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

/// One real run of `scenario` with `seed` on local servers of its own (see [`servers`]).
fn run_real(scenario: &Scenario, seed: u64, launcher: &ClientLauncher) -> Verdict {
    let (servers, settings) = servers(scenario);
    let target = Target::start_local(u32::from(servers), settings).map_err(|e| e.0)?;
    let result = real::run(scenario, seed, &target, launcher);
    target.stop();
    let trace = result.map_err(|f| f.message)?;
    let violations = properties::verdict::violations(&trace).map_err(|e| e.to_string())?;
    Ok(violated(&violations))
}

/// The table, as Markdown: per scenario, the servers of its real runs and the properties
/// violated on either side.
pub fn markdown(rows: &[VerdictRow], plan: &Plan) -> String {
    let mut text = format!(
        "Verdicts: per property, simulator seeds (0..{}) and real runs (seeds 0..{}, each on \
         local servers of its own, as the servers column says: a standalone server, or an \
         ensemble of the scenario's size) that violate it, with the scenario's expectation; \
         properties violated on neither side are left out.\n\n",
        plan.seeds, plan.verdict_runs
    );
    text.push_str(
        "| scenario | servers | violated: expectation, sim · real | differs |\n\
         | --- | --- | --- | --- |\n",
    );
    for row in rows {
        let servers = match row.servers {
            1 => "standalone".to_owned(),
            n => format!("ensemble of {n}"),
        };
        if let Some(refused) = &row.refused {
            text.push_str(&format!(
                "| {} | {servers} | not run on a real server: {refused} | – |\n",
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
            "| {} | {servers} | {}{failed} | {} |\n",
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

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(quick: bool) -> Plan {
        Plan {
            quick,
            runs: 1,
            verdict_runs: 3,
            seeds: 20,
            parallel: 15,
        }
    }

    fn names(scenarios: &[&Scenario]) -> Vec<String> {
        scenarios.iter().map(|s| s.name.clone()).collect()
    }

    /// The catalog's ensemble scenarios whose only fault, `isolate_from_peers`, runs on a
    /// real ensemble.
    const FOLLOWER_CUTS: [&str; 5] = [
        "leader-latch-follower-cut-split-brain",
        "leader-selector-follower-cut-split-brain",
        "mutex-follower-cut-split-brain",
        "mutex-follower-cut-sync-limit-first",
        "mutex-leader-isolated",
    ];

    #[test]
    fn every_compared_recipe_has_its_scenarios_chosen_ensembles_and_selector_too() {
        let catalog = Catalog::builtin().unwrap();
        let all = names(&chosen(&catalog, &plan(false), &[]).unwrap());
        for name in FOLLOWER_CUTS.iter().chain(&["leader-selector-gc-pause"]) {
            assert!(all.iter().any(|n| n == name), "{name} missing: {all:?}");
        }
        let quick = names(&chosen(&catalog, &plan(true), &[]).unwrap());
        assert!(quick.iter().any(|n| n == "leader-selector-fault-free"));
        assert!(!quick.iter().any(|n| n == "mutex-follower-cut-split-brain"));
    }

    #[test]
    fn named_scenarios_are_chosen_in_their_order_whatever_their_faults() {
        let catalog = Catalog::builtin().unwrap();
        let wanted = ["mutex-leader-isolated", "herd-free-mutex"].map(String::from);
        let found = chosen(&catalog, &plan(true), &wanted).unwrap();
        assert_eq!(names(&found), wanted);

        let unknown = chosen(&catalog, &plan(false), &["no-such".into()]).unwrap_err();
        assert!(unknown.0.contains("found `no-such`"), "{}", unknown.0);
        let other = chosen(
            &catalog,
            &plan(false),
            &["state-blind-mutex-partition".into()],
        );
        let other = other.unwrap_err().0;
        assert!(
            other.starts_with(
                "--scenario state-blind-mutex-partition: expected a scenario of a compared \
                 recipe (mutex, "
            ) && other.ends_with("found one of state-blind-mutex"),
            "{other}"
        );
    }

    #[test]
    fn an_ensemble_scenario_runs_on_an_ensemble_of_its_size_with_its_settings() {
        let catalog = Catalog::builtin().unwrap();
        let (servers, settings) = super::servers(find(&catalog, FOLLOWER_CUTS[2]).unwrap());
        let mut expected = crate::cli::fidelity::standalone_settings(100);
        expected.sync_limit = 20;
        assert_eq!((servers, settings), (3, expected));
        // A standalone scenario's server is the one the survival rows and the hand-over run
        // on, for its tick.
        let gc_pause = find(&catalog, "gc-pause-fenced").unwrap();
        let tick = gc_pause.server.tick_ms;
        let standalone = crate::cli::fidelity::standalone_settings(tick);
        assert_eq!(super::servers(gc_pause), (1, standalone));
    }

    #[test]
    fn no_ensemble_scenario_is_refused_for_its_servers_and_the_follower_cuts_run() {
        let catalog = Catalog::builtin().unwrap();
        let scenarios = chosen(&catalog, &plan(false), &[]).unwrap();
        let ensembles: Vec<&&Scenario> = (scenarios.iter())
            .filter(|s| s.server.is_ensemble())
            .collect();
        assert!(ensembles.len() >= FOLLOWER_CUTS.len());
        for scenario in ensembles {
            let refused = refusal(scenario, 3);
            if FOLLOWER_CUTS.contains(&scenario.name.as_str()) {
                assert_eq!(refused, None, "{}", scenario.name);
            }
            let refused = refused.unwrap_or_default();
            assert!(!refused.contains("server.ensemble"), "{refused}");
        }
    }

    #[test]
    fn the_table_says_which_rows_ran_on_an_ensemble() {
        let row = |scenario: &str, servers, refused: Option<&str>| VerdictRow {
            scenario: scenario.into(),
            servers,
            refused: refused.map(String::from),
            properties: Vec::new(),
            real_failed: 0,
            real_failure: None,
        };
        let rows = [
            row("herd-free-mutex", 1, None),
            row("mutex-follower-cut-split-brain", 3, None),
            row("mutex-leader-crash", 3, Some("faults[0]: why")),
        ];
        let table = markdown(&rows, &plan(false));
        for line in [
            "| herd-free-mutex | standalone | none | no |",
            "| mutex-follower-cut-split-brain | ensemble of 3 | none | no |",
            "| mutex-leader-crash | ensemble of 3 | not run on a real server: faults[0]: why | – |",
        ] {
            assert!(table.contains(line), "{line} missing:\n{table}");
        }
    }
}
