//! The bundled programs' verdicts in the simulator beside a real ZooKeeper's, with the same
//! program on both sides: for each program and each of its scenarios (`client_lock::scenarios`),
//! how many of 200 simulated seeds and of a few real runs (seeds 0 up, each on a standalone
//! server of its own, started from Debian's `zookeeper` package) violate each property, and
//! whether the real count is unlikely under the simulator's share (`splitbrain::compare`).
//!
//! `cargo bench -p client-lock --bench fidelity` writes `target/bench/client-lock-fidelity.md`;
//! `SPLITBRAIN_FIDELITY_RUNS` sets the real runs per scenario (default 3),
//! `SPLITBRAIN_BENCH_SEEDS` the simulated seeds (default 200). It needs ZooKeeper
//! (`scripts/test` installs it); it is a measurement, not a test.

mod support;

use client_lock::Prefix;
use client_lock::scenarios::{gc_pause, random_faults, timed_acquire};
use splitbrain::compare::{differs, share};
use splitbrain::properties::verdict::violations;
use splitbrain::real::local::{NOT_INSTALLED, Settings, installed};
use splitbrain::real::target::Target;
use splitbrain::real::{ClientLauncher, run_program};
use splitbrain::scenarios::scenario::Scenario;
use splitbrain::testing;

/// The scenarios of `prefix`'s program.
fn scenarios(prefix: Prefix) -> Vec<Scenario> {
    let mut scenarios = vec![gc_pause(prefix), random_faults(prefix)];
    if prefix != Prefix::Latch {
        scenarios.push(timed_acquire(prefix));
    }
    scenarios
}

/// One scenario's real runs: how many violated each of its properties, and how many failed.
struct Real {
    runs: u64,
    violating: Vec<u64>,
    failed: Vec<String>,
}

/// `runs` real runs of `scenario`, each on a standalone server of its own.
fn real(scenario: &Scenario, runs: u64, launcher: &ClientLauncher) -> Real {
    let properties = scenario.recipe.properties();
    let mut real = Real {
        runs: 0,
        violating: vec![0; properties.len()],
        failed: Vec::new(),
    };
    for seed in 0..runs {
        let settings = Settings::of(&scenario.server);
        let target = Target::start_local(1, settings).unwrap_or_else(|e| panic!("{e}"));
        let run = run_program(scenario, seed, &target, launcher);
        target.stop();
        let found = match run
            .map_err(|f| f.message)
            .and_then(|trace| violations(&trace).map_err(|e| e.to_string()))
        {
            Ok(found) => found,
            Err(why) => {
                real.failed.push(format!("seed {seed}: {why}"));
                continue;
            }
        };
        real.runs += 1;
        for (count, property) in real.violating.iter_mut().zip(properties) {
            *count += u64::from(found.iter().any(|v| v.property == *property));
        }
    }
    real
}

fn main() {
    if !installed() {
        eprintln!("client-lock fidelity: {NOT_INSTALLED}");
        std::process::exit(2);
    }
    let runs = support::setting("SPLITBRAIN_FIDELITY_RUNS", 3);
    let seeds = support::setting("SPLITBRAIN_BENCH_SEEDS", 200);
    let launcher = ClientLauncher::new(
        env!("CARGO_BIN_EXE_client-lock-real-client"),
        std::iter::empty::<&str>(),
    );
    let scratch = std::env::temp_dir().join("client-lock-fidelity");
    let mut table = format!(
        "The bundled programs' verdicts, with the same program on both sides: {seeds} simulated \
         seeds and {runs} real run(s) (a standalone ZooKeeper each) per scenario; a cell is the \
         runs violating the property. \"differs\": the real count is unlikely under the \
         simulator's share (two-sided binomial test, 5 %).\n\n\
         | scenario | program | property | simulator | real | differs |\n\
         | --- | --- | --- | --- | --- | --- |\n"
    );
    let mut failures = Vec::new();
    for prefix in Prefix::ALL {
        for scenario in scenarios(prefix) {
            eprintln!(
                "client-lock fidelity: {} with {}",
                scenario.name,
                prefix.name()
            );
            let hunted = testing::hunt(prefix.program(), &scenario)
                .seeds(0..seeds)
                .out_dir(scratch.join(&scenario.name))
                .run();
            let real = real(&scenario, runs, &launcher);
            failures.extend(
                real.failed
                    .iter()
                    .map(|f| format!("{}: {f}", scenario.name)),
            );
            let properties = scenario.recipe.properties();
            for (property, real_violating) in properties.iter().zip(&real.violating) {
                let sim = hunted.violating_seeds(*property).len() as u64;
                let differs = differs(*real_violating, real.runs, sim, seeds);
                table.push_str(&format!(
                    "| {} | {} | {property} | {} | {} | {} |\n",
                    scenario.name,
                    prefix.name(),
                    share(sim, seeds),
                    share(*real_violating, real.runs),
                    if differs { "**yes**" } else { "no" }
                ));
            }
        }
    }
    if !failures.is_empty() {
        table.push_str(&format!(
            "\nReal runs that failed: {}\n",
            failures.join("; ")
        ));
    }
    print!("{table}");
    support::write_result("client-lock-fidelity.md", &table);
}
