//! Unmodified `zookeeper-client` programs under the simulator benchmark's random faults
//! (every kind: pauses, partitions, isolation, expiry, crashes, server restarts, delay and
//! loss): every seed replays byte for byte, and the programs finish their work.

use std::collections::BTreeSet;

use programs::simulated::{Ended, Outcome, Setup, run};
use scenarios::scenario::Scenario;

mod support;

use support::lock_user::lock_user;

fn bench_scenario() -> Scenario {
    let text = include_str!("../../sim/benches/random-faults-5x20.json");
    Scenario::from_json("random-faults-5x20.json", text).expect("the bench scenario parses")
}

fn run_seed(scenario: &Scenario, seed: u64) -> Outcome<u32> {
    let shared = scenario.clone();
    run(Setup::of_scenario(scenario, seed), move |place| {
        let scenario = shared.clone();
        async move { lock_user(place, &scenario).await }
    })
}

#[test]
fn every_seed_replays_byte_for_byte_and_every_program_finishes() {
    let scenario = bench_scenario();
    let mut kinds = BTreeSet::new();
    for seed in 0..12 {
        let first = run_seed(&scenario, seed);
        let again = run_seed(&scenario, seed);
        assert_eq!(first.results, again.results, "seed {seed}");
        let events = serde_json::to_string(&first.events).unwrap();
        assert_eq!(
            events,
            serde_json::to_string(&again.events).unwrap(),
            "seed {seed}"
        );
        let holds = scenario.workload.acquisitions;
        assert!(
            first
                .results
                .iter()
                .all(|held| *held == Ended::Returned(holds)),
            "seed {seed}: {:?}",
            first.results
        );
        for event in &first.events {
            if let trace::EventKind::FaultStart { fault } = &event.kind {
                kinds.insert(fault.kind());
            }
        }
    }
    for kind in [
        "pause",
        "partition",
        "isolate",
        "expire_session",
        "crash",
        "restart_server",
    ] {
        assert!(kinds.contains(kind), "no {kind} in 12 seeds: {kinds:?}");
    }
}
