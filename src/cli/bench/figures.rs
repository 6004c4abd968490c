//! The figures `splitbrain bench` measures. Hunts and model checks run as child processes
//! (as a user runs them, and so that each one's peak memory is its own); the simulated time
//! of the bench scenario and the first split brain are measured in this process.

use std::path::{Path, PathBuf};
use std::time::Instant;

use recipe_table::property::Property;
use scenarios::scenario::{FaultTemplate, Scenario};
use serde::Serialize;
use splitbrain::files::write_atomic;

use super::child::{Measured, run_self};
use crate::cli::{BAD_INPUT, Failure};

/// The simulator benchmark scenario: 5 clients, 20 acquisitions each, 2–8 random faults of
/// every kind per seed.
pub const BENCH_SCENARIO: &str = include_str!("../../../sim/benches/random-faults-5x20.json");
/// Its file name, as errors and the catalog directory name it.
const BENCH_FILE: &str = "random-faults-5x20.json";

/// How much each figure runs.
#[derive(Clone, Debug, Serialize)]
pub struct Sizes {
    /// Repetitions of each figure (its median is reported).
    pub runs: usize,
    /// Seeds of each simulator-throughput hunt.
    pub sim_seeds: u64,
    /// Seeds of the smaller memory hunt (the larger runs ten times as many).
    pub memory_seeds: u64,
    /// Client counts of the model checks.
    pub model_clients: Vec<u16>,
    /// Repetitions of each model check (its median by wall time is reported).
    pub model_runs: usize,
    /// Seconds after which a model check is stopped (and reported incomplete).
    pub model_cap_s: u64,
    /// Seeds searched at most for the first split brain.
    pub split_brain_seeds: u64,
}

/// Where the figures' child processes read the scenario and write their output.
pub struct Workspace {
    dir: PathBuf,
    scenario: Scenario,
}

/// Seeds per second of a hunt.
#[derive(Clone, Debug, Serialize)]
pub struct Throughput {
    /// Worker threads (`--jobs`).
    pub jobs: usize,
    /// Seeds per run.
    pub seeds: u64,
    /// Median seeds per second.
    pub seeds_per_s: f64,
    /// Every run's rate.
    pub runs: Vec<f64>,
}

/// Peak memory of a hunt.
#[derive(Clone, Debug, Serialize)]
pub struct Memory {
    /// Seeds of the hunt.
    pub seeds: u64,
    /// Worker threads.
    pub jobs: usize,
    /// Peak resident set size, MB.
    pub peak_rss_mb: f64,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// The bench scenario without server restarts, on one server and on a 3-server ensemble,
/// each hunted on one core: what the ensemble costs the simulator.
#[derive(Clone, Debug, Serialize)]
pub struct EnsembleCost {
    /// On one server.
    pub standalone: Throughput,
    /// On a 3-server ensemble.
    pub ensemble: Throughput,
}

/// The first split brain a one-core sweep from seed 0 finds.
#[derive(Clone, Debug, Serialize)]
pub struct FirstSplitBrain {
    /// The scenario swept (the bench scenario with GC pauses as its only faults).
    pub scenario: String,
    /// The first seed whose run breaks `mutual_exclusion_belief` (`None`: none found).
    pub seed: Option<u64>,
    /// Median wall time to it, seconds.
    pub seconds: f64,
}

/// The faults a bench model check explores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelFaults {
    /// The default budgets: one session expiry.
    Expiry,
    /// One follower cut in its place (`--expiries 0 --follower-cuts 1`): the ensemble
    /// behaviour the model has.
    FollowerCut,
}

impl ModelFaults {
    /// The `check` arguments that choose these faults.
    fn args(self) -> &'static [&'static str] {
        match self {
            ModelFaults::Expiry => &[],
            ModelFaults::FollowerCut => &["--expiries", "0", "--follower-cuts", "1"],
        }
    }

    /// How the bench's table and progress name them.
    pub fn label(self) -> &'static str {
        match self {
            ModelFaults::Expiry => "one expiry",
            ModelFaults::FollowerCut => "one follower cut",
        }
    }
}

/// Which model check of `mutex` the bench makes.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ModelCheck {
    /// Clients.
    pub clients: u16,
    /// Whether symmetry reduction is on.
    pub symmetry: bool,
    /// The faults it explores.
    pub faults: ModelFaults,
}

/// One model check of `mutex`, measured.
#[derive(Clone, Debug, Serialize)]
pub struct ModelRow {
    /// What was checked.
    #[serde(flatten)]
    pub check: ModelCheck,
    /// Unique states explored (median run).
    pub unique_states: u64,
    /// States per second.
    pub states_per_s: f64,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Peak resident set size, MB.
    pub peak_rss_mb: f64,
    /// False when the cap stopped the search.
    pub complete: bool,
}

impl Workspace {
    /// A workspace under `dir`, with the bench scenario written as a one-file catalog.
    pub fn new(dir: &Path) -> Result<Workspace, Failure> {
        let scenario = Scenario::from_json(BENCH_FILE, BENCH_SCENARIO)?;
        let catalog = dir.join("catalog");
        std::fs::create_dir_all(&catalog)
            .map_err(|e| Failure(format!("{}: {e}", catalog.display())))?;
        let file = catalog.join(BENCH_FILE);
        write_atomic(&file, BENCH_SCENARIO.as_bytes())
            .map_err(|e| Failure(format!("{}: {e}", file.display())))?;
        Ok(Workspace {
            dir: dir.to_path_buf(),
            scenario,
        })
    }

    /// Runs `hunt` over seeds `0..seeds` of the bench scenario with `jobs` workers.
    fn hunt(&self, seeds: u64, jobs: usize) -> Result<Measured, Failure> {
        self.hunt_in(&self.dir.join("catalog"), seeds, jobs)
    }

    /// Runs `hunt` over seeds `0..seeds` of the one-scenario catalog `catalog` with `jobs`
    /// workers.
    fn hunt_in(&self, catalog: &Path, seeds: u64, jobs: usize) -> Result<Measured, Failure> {
        let name = catalog
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        let out = (self.dir).join(format!("hunt-{}-{seeds}-j{jobs}", name.unwrap_or_default()));
        let args = [
            "hunt".to_string(),
            "--catalog".into(),
            catalog.display().to_string(),
            "--seeds".into(),
            format!("0..{seeds}"),
            "--jobs".into(),
            jobs.to_string(),
            "--json".into(),
            "--out".into(),
            out.display().to_string(),
        ];
        succeeded(run_self(&args)?, &args)
    }

    /// The hunt's seeds per second with `jobs` workers, the median of `sizes.runs` runs.
    pub fn throughput(&self, sizes: &Sizes, jobs: usize) -> Result<Throughput, Failure> {
        let runs = (0..sizes.runs)
            .map(|_| {
                let measured = self.hunt(sizes.sim_seeds, jobs)?;
                Ok(sizes.sim_seeds as f64 / measured.wall.as_secs_f64())
            })
            .collect::<Result<Vec<f64>, Failure>>()?;
        Ok(Throughput {
            jobs,
            seeds: sizes.sim_seeds,
            seeds_per_s: median(&runs),
            runs,
        })
    }

    /// The bench scenario without server restarts on one server and on a 3-server ensemble,
    /// hunted alternately on one core, `sizes.runs` times each.
    pub fn ensemble_cost(&self, sizes: &Sizes) -> Result<EnsembleCost, Failure> {
        let standalone = without_server_restarts(&self.scenario);
        let ensemble = on_ensemble(&standalone, 3);
        let catalogs = [self.catalog_of(&standalone)?, self.catalog_of(&ensemble)?];
        let mut rates: [Vec<f64>; 2] = Default::default();
        for _ in 0..sizes.runs {
            for (catalog, rates) in catalogs.iter().zip(&mut rates) {
                let measured = self.hunt_in(catalog, sizes.sim_seeds, 1)?;
                rates.push(sizes.sim_seeds as f64 / measured.wall.as_secs_f64());
            }
        }
        let [standalone, ensemble] = rates.map(|runs| Throughput {
            jobs: 1,
            seeds: sizes.sim_seeds,
            seeds_per_s: median(&runs),
            runs,
        });
        Ok(EnsembleCost {
            standalone,
            ensemble,
        })
    }

    /// A one-scenario catalog of `scenario` in the workspace: its directory.
    fn catalog_of(&self, scenario: &Scenario) -> Result<PathBuf, Failure> {
        let catalog = self.dir.join(format!("catalog-{}", scenario.name));
        let file = catalog.join(format!("{}.json", scenario.name));
        let text = serde_json::to_string_pretty(scenario)?;
        std::fs::create_dir_all(&catalog)
            .and_then(|()| write_atomic(&file, text.as_bytes()))
            .map_err(|e| Failure(format!("{}: {e}", file.display())))?;
        Ok(catalog)
    }

    /// The peak memory of one hunt of `seeds` seeds with `jobs` workers.
    pub fn memory(&self, seeds: u64, jobs: usize) -> Result<Memory, Failure> {
        let measured = self.hunt(seeds, jobs)?;
        Ok(Memory {
            seeds,
            jobs,
            peak_rss_mb: megabytes(measured.peak_rss),
            seconds: measured.wall.as_secs_f64(),
        })
    }

    /// Mean simulated seconds per seed of the bench scenario over seeds `0..seeds`.
    pub fn simulated_s_per_seed(&self, seeds: u64) -> Result<f64, Failure> {
        let mut total_ns = 0u64;
        for seed in 0..seeds {
            // The trace alone: its checkers add nothing to how long it simulates.
            let trace =
                sim::Sim::from_scenario(&self.scenario, seed, self.scenario.fault_schedule(seed))
                    .run()
                    .map_err(|e| Failure(format!("bench: seed {seed}: {e}")))?;
            total_ns += trace.events.last().map_or(0, |e| e.t);
        }
        Ok(total_ns as f64 / 1e9 / seeds.max(1) as f64)
    }

    /// Sweeps the bench scenario with GC pauses as its only faults from seed 0 on one core
    /// until a run breaks `mutual_exclusion_belief`; the median wall time of `sizes.runs`.
    pub fn first_split_brain(&self, sizes: &Sizes) -> Result<FirstSplitBrain, Failure> {
        let scenario = pauses_only(&self.scenario);
        let mut found = None;
        let mut times = Vec::new();
        for _ in 0..sizes.runs {
            let started = Instant::now();
            found = None;
            for seed in 0..sizes.split_brain_seeds {
                let outcome = splitbrain::run::run(&scenario, seed)
                    .map_err(|e| Failure(format!("bench: {} seed {seed}: {e}", scenario.name)))?;
                if outcome.violates(Property::MutualExclusionBelief) {
                    found = Some(seed);
                    break;
                }
            }
            times.push(started.elapsed().as_secs_f64());
        }
        Ok(FirstSplitBrain {
            scenario: scenario.name,
            seed: found,
            seconds: median(&times),
        })
    }

    /// `check mutex` as `check` says, the median of `sizes.model_runs` runs by wall time,
    /// stopped after `sizes.model_cap_s` seconds.
    pub fn model(&self, sizes: &Sizes, check: ModelCheck) -> Result<ModelRow, Failure> {
        let mut rows = (0..sizes.model_runs.max(1))
            .map(|_| self.model_once(sizes, check))
            .collect::<Result<Vec<ModelRow>, Failure>>()?;
        rows.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
        Ok(rows.swap_remove(rows.len() / 2))
    }

    fn model_once(&self, sizes: &Sizes, check: ModelCheck) -> Result<ModelRow, Failure> {
        let ModelCheck {
            clients,
            symmetry,
            faults,
        } = check;
        let threads = splitbrain::sweep::default_workers();
        let mut args = vec![
            "check".to_string(),
            "mutex".into(),
            "--clients".into(),
            clients.to_string(),
            "--threads".into(),
            threads.to_string(),
            "--timeout".into(),
            sizes.model_cap_s.to_string(),
            "--json".into(),
            "--out".into(),
            self.dir.join("check").display().to_string(),
        ];
        if !symmetry {
            args.push("--no-symmetry".into());
        }
        args.extend(faults.args().iter().map(|a| a.to_string()));
        let measured = succeeded(run_self(&args)?, &args)?;
        let json: serde_json::Value = serde_json::from_str(&measured.stdout).map_err(|e| {
            Failure(format!(
                "bench: `splitbrain {}` printed no JSON: {e}",
                args.join(" ")
            ))
        })?;
        let field = |name: &str| {
            json.get(name).cloned().ok_or_else(|| {
                Failure(format!(
                    "bench: `splitbrain {}` printed no `{name}`",
                    args.join(" ")
                ))
            })
        };
        Ok(ModelRow {
            check,
            unique_states: field("unique_states")?.as_u64().unwrap_or(0),
            states_per_s: field("states_per_second")?.as_f64().unwrap_or(0.0),
            seconds: field("seconds")?.as_f64().unwrap_or(0.0),
            peak_rss_mb: megabytes(measured.peak_rss),
            complete: field("complete")?.as_bool().unwrap_or(false),
        })
    }
}

/// `measured`, unless the child failed to run (bad input or a crash; a hunt or check whose
/// expectations are unmet still measured what it ran).
fn succeeded(measured: Measured, args: &[String]) -> Result<Measured, Failure> {
    match measured.code {
        Some(code) if code != i32::from(BAD_INPUT) => Ok(measured),
        code => Err(Failure(format!(
            "bench: `splitbrain {}` failed ({})",
            args.join(" "),
            code.map_or("killed by a signal".to_string(), |c| format!(
                "exit code {c}"
            ))
        ))),
    }
}

/// `scenario` with GC pauses as its only random faults.
fn pauses_only(scenario: &Scenario) -> Scenario {
    let mut paused = scenario.clone();
    paused.name = "bench-random-pauses-5x20".into();
    for random in &mut paused.random_faults {
        random
            .pick
            .retain(|template| matches!(template, FaultTemplate::Pause { .. }));
    }
    paused
}

/// `scenario` without the server restarts its random faults draw (an ensemble refuses them:
/// its server faults address one server).
fn without_server_restarts(scenario: &Scenario) -> Scenario {
    let mut kept = scenario.clone();
    kept.name = format!("{}-no-restarts", scenario.name);
    for random in &mut kept.random_faults {
        random
            .pick
            .retain(|template| !matches!(template, FaultTemplate::RestartServer { .. }));
    }
    kept
}

/// `scenario` on an ensemble of `servers`.
fn on_ensemble(scenario: &Scenario, servers: u16) -> Scenario {
    let mut ensemble = scenario.clone();
    ensemble.name = format!("{}-ensemble-{servers}", scenario.name);
    ensemble.server.ensemble = servers;
    ensemble
}

/// The median of `values` (the upper one of an even count); 0 for none.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_scenario_parses_and_its_pause_variant_draws_only_pauses() {
        let scenario = Scenario::from_json(BENCH_FILE, BENCH_SCENARIO).expect("parses");
        assert!(scenario.random_faults[0].pick.len() > 1);
        let paused = pauses_only(&scenario);
        assert!(!paused.random_faults[0].pick.is_empty());
        assert!(
            (paused.random_faults[0].pick.iter()).all(|t| matches!(t, FaultTemplate::Pause { .. }))
        );
    }

    #[test]
    fn the_ensemble_variant_is_the_bench_scenario_on_three_servers_without_restarts() {
        let scenario = Scenario::from_json(BENCH_FILE, BENCH_SCENARIO).expect("parses");
        let ensemble = on_ensemble(&without_server_restarts(&scenario), 3);
        let text = serde_json::to_string(&ensemble).unwrap();
        let parsed = Scenario::from_json("ensemble.json", &text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.server.ensemble, 3);
        let (all, kept) = (
            &scenario.random_faults[0].pick,
            &parsed.random_faults[0].pick,
        );
        assert_eq!(kept.len() + 1, all.len());
        assert!(!(kept.iter()).any(|t| matches!(t, FaultTemplate::RestartServer { .. })));
        assert_eq!(parsed.workload, scenario.workload);
    }

    #[test]
    fn median_takes_the_middle_value() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0]), 4.0);
        assert_eq!(median(&[]), 0.0);
    }
}
