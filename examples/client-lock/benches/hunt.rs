//! The speed of a hunt of unmodified client code: seeds per second, on one core, of five
//! programs that each take `zookeeper-client`'s `Client::lock` (Curator's prefix) twenty
//! times under the simulator benchmark's random faults (`sim/benches/random-faults-5x20.json`),
//! each run checked for its properties as a hunt checks it; beside it, the same scenario run
//! and checked with splitbrain's sans-IO mutex.
//!
//! `cargo bench -p client-lock` writes `target/bench/client-lock.json`; set
//! `SPLITBRAIN_BENCH_SEEDS` to change the seed count (default 300).

mod support;

use std::time::Instant;

use client_lock::Prefix;
use serde_json::json;
use splitbrain::run::{run_then, table_code};
use splitbrain::scenarios::scenario::Scenario;
use splitbrain::sim::RecipeCode;

const SCENARIO_FILE: &str = "random-faults-5x20.json";
const SCENARIO: &str = include_str!("../../../sim/benches/random-faults-5x20.json");

/// Seeds per second of `seeds` seeds of `scenario` run with `code` and checked, one at a
/// time, and how many of those runs violated some property.
fn rate(code: &RecipeCode, scenario: &Scenario, seeds: u64) -> (f64, u64) {
    let started = Instant::now();
    let mut violating = 0;
    for seed in 0..seeds {
        let faults = scenario.fault_schedule(seed);
        let violated = run_then(code, scenario, seed, faults, |o| !o.violations.is_empty());
        violating += u64::from(violated.expect("the run ends"));
    }
    (seeds as f64 / started.elapsed().as_secs_f64(), violating)
}

fn main() {
    let mutex = Scenario::from_json(SCENARIO_FILE, SCENARIO).expect("the bench scenario parses");
    let seeds = support::setting("SPLITBRAIN_BENCH_SEEDS", 300);
    let program = RecipeCode::from(Prefix::Curator.program());
    let mut client_lock = mutex.clone();
    client_lock.recipe = program.recipe().clone();
    let (program_rate, program_violating) = rate(&program, &client_lock, seeds);
    let table = table_code(&mutex).expect("the mutex is a row of the table");
    let (mutex_rate, mutex_violating) = rate(&table, &mutex, seeds);
    let figures = json!({
        "scenario": mutex.name,
        "seeds": seeds,
        "program": "5 clients x zookeeper-client Client::lock (Curator's prefix), examples/client-lock",
        "program_seeds_per_second": program_rate,
        "program_runs_violating": program_violating,
        "sans_io_mutex_seeds_per_second": mutex_rate,
        "sans_io_mutex_runs_violating": mutex_violating,
        "program_to_sans_io": program_rate / mutex_rate,
    });
    println!("{figures:#}");
    support::write_result(
        "client-lock.json",
        &serde_json::to_string_pretty(&figures).unwrap(),
    );
}
