//! Seeds per second of the simulator on a 5-client, 20-acquisitions-per-client Mutex scenario
//! with 2–8 random faults of every kind per seed (`random-faults-5x20.json` beside this file).
//!
//! `cargo bench -p splitbrain-sim` runs seeds 0..200 (`-- --seeds N` for another count),
//! prints the rate and writes it to `target/bench/sim-seeds.json`. Each seed runs on its own
//! thread, as every simulated run does; wall-clock time is read outside the simulation only.

use std::time::Instant;

use scenarios::scenario::Scenario;
use scenarios::trace::EventKind;
use sim::Sim;

const SCENARIO: &str = include_str!("random-faults-5x20.json");

fn main() {
    let seeds = seeds_from_args();
    let scenario =
        Scenario::from_json("random-faults-5x20.json", SCENARIO).unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let (mut events, mut simulated_ns, mut faults) = (0usize, 0u64, 0usize);
    for seed in 0..seeds {
        let schedule = scenario.fault_schedule(seed);
        faults += schedule.len();
        let trace = Sim::from_scenario(&scenario, seed, schedule)
            .run()
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        events += trace.events.len();
        simulated_ns += trace.events.last().map_or(0, |e| e.t);
        debug_assert!(matches!(
            trace.events.last().map(|e| &e.kind),
            Some(EventKind::TreeSnapshot { .. })
        ));
    }
    let wall = started.elapsed().as_secs_f64();
    let rate = seeds as f64 / wall;
    let simulated_s = simulated_ns as f64 / 1e9;
    let summary = serde_json::json!({
        "bench": "sim-seeds",
        "scenario": scenario.name,
        "clients": scenario.clients,
        "acquisitions_per_client": scenario.workload.acquisitions,
        "seeds": seeds,
        "faults": faults,
        "events": events,
        "wall_s": wall,
        "seeds_per_s": rate,
        "simulated_s": simulated_s,
        "speedup": simulated_s / wall,
    });
    println!(
        "{seeds} seeds in {wall:.2} s: {rate:.1} seeds/s ({faults} faults, {events} events, \
         {simulated_s:.0} s simulated, {:.0}x real time)",
        simulated_s / wall
    );
    write_atomically("target/bench/sim-seeds.json", &summary.to_string());
}

fn seeds_from_args() -> u64 {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--seeds") {
        Some(i) => args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("--seeds: expected a number of seeds")),
        None => 200,
    }
}

fn write_atomically(path: &str, text: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path);
    let dir = path.parent().expect("a file in a directory");
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let temp = path.with_extension("json.tmp");
    std::fs::write(&temp, text).unwrap_or_else(|e| panic!("{}: {e}", temp.display()));
    std::fs::rename(&temp, &path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("wrote {}", path.display());
}
