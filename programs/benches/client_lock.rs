//! The speed of unmodified client code in the simulation: seeds per second, on one core, of
//! five programs that each take `zookeeper-client`'s `Client::lock` twenty times under the
//! simulator benchmark's random faults (`sim/benches/random-faults-5x20.json`: its clients,
//! workload, server, horizon and fault schedule per seed).
//!
//! `cargo bench -p splitbrain-programs` writes `target/bench/client-lock.json`; set
//! `SPLITBRAIN_BENCH_SEEDS` to change the seed count (default 100).

use std::path::PathBuf;
use std::time::Instant;

use programs::simulated::{Ended, Setup, run};
use scenarios::scenario::Scenario;
use serde_json::json;

const SCENARIO_FILE: &str = "random-faults-5x20.json";
const SCENARIO: &str = include_str!("../../sim/benches/random-faults-5x20.json");

#[path = "../tests/support/lock_user.rs"]
mod lock_user;

fn main() {
    let scenario = Scenario::from_json(SCENARIO_FILE, SCENARIO).expect("the bench scenario parses");
    let seeds: u64 = std::env::var("SPLITBRAIN_BENCH_SEEDS")
        .ok()
        .map(|seeds| {
            seeds
                .parse()
                .expect("SPLITBRAIN_BENCH_SEEDS: a number of seeds")
        })
        .unwrap_or(100);
    let started = Instant::now();
    let (mut holds, mut unfinished) = (0u64, 0u64);
    for seed in 0..seeds {
        let setup = Setup::of_scenario(&scenario, seed);
        let shared = scenario.clone();
        let outcome = run(setup, move |place| {
            let scenario = shared.clone();
            async move { lock_user::lock_user(place, &scenario).await }
        });
        for result in outcome.results {
            match result {
                Ended::Returned(held) => holds += u64::from(held),
                Ended::Panicked(message) => panic!("a program panicked: {message}"),
                Ended::Running => unfinished += 1,
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let figures = json!({
        "scenario": scenario.name,
        "program": "5 clients x zookeeper-client Client::lock, timed acquire, new session after an error",
        "seeds": seeds,
        "seconds": seconds,
        "seeds_per_second": seeds as f64 / seconds,
        "holds": holds,
        "programs_unfinished_at_horizon": unfinished,
    });
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench/client-lock.json");
    std::fs::create_dir_all(out.parent().expect("a directory")).expect("the bench directory");
    reports::write_atomic(&out, serde_json::to_string_pretty(&figures).unwrap())
        .expect("the results file");
    println!("{figures:#}");
    println!("written to {}", out.display());
}
