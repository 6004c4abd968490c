//! Same seed, same trace: for every catalog scenario (every recipe), seeds run forwards and then
//! backwards in one process give byte-for-byte identical traces, and a trace rerun from its own
//! record is identical again.

use scenarios::catalog::Catalog;
use splitbrain::run::{rerun, run};

fn trace_bytes(scenario: &scenarios::scenario::Scenario, seed: u64) -> Vec<u8> {
    let outcome =
        run(scenario, seed).unwrap_or_else(|e| panic!("{} seed {seed}: {e}", scenario.name));
    serde_json::to_vec(&outcome.trace).unwrap()
}

#[test]
fn seeds_forwards_and_backwards_give_identical_traces() {
    let catalog = Catalog::builtin().unwrap();
    // Every scenario of every recipe, a few seeds each; the random-faults one longer.
    for scenario in catalog.scenarios() {
        let name = &scenario.name;
        let seeds: Vec<u64> = (0..if name == "random-faults-mutex" { 8 } else { 3 }).collect();
        let forwards: Vec<Vec<u8>> = seeds.iter().map(|&s| trace_bytes(scenario, s)).collect();
        let mut backwards: Vec<Vec<u8>> = seeds
            .iter()
            .rev()
            .map(|&s| trace_bytes(scenario, s))
            .collect();
        backwards.reverse();
        for (seed, (a, b)) in forwards.iter().zip(&backwards).enumerate() {
            assert!(a == b, "{name} seed {seed} differs between two runs");
        }
        assert!(
            forwards.windows(2).any(|w| w[0] != w[1]),
            "{name}: seeds differ"
        );
    }
}

#[test]
fn a_rerun_from_the_trace_is_identical() {
    let catalog = Catalog::builtin().unwrap();
    for name in [
        "random-faults-mutex",
        "mutex-follower-cut-split-brain",
        "mutex-follower-cut-split-brain-realistic",
        "mutex-lagging-follower-split-brain",
        "mutex-lagging-follower-past-sync-limit",
        "mutex-holder-cut-from-its-server",
        "leader-selector-lagging-follower-split-brain",
        "mutex-leader-crash",
        "mutex-leader-crash-realistic",
        "random-lagging-servers-mutex",
        "random-lagging-servers-leader-latch",
        "mutex-random-halves",
        "mutex-slow-lossy-server-links",
        "mutex-quorum-loss-old-session",
        "mutex-quorum-loss-by-crashes",
        "mutex-create-survives-election",
        "leader-latch-quorum-loss-old-session",
        "mutex-rolling-restart",
        "mutex-waiter-moves-to-another-server",
        "leader-selector-leader-crash",
        "semaphore-rolling-restart",
    ] {
        let scenario = catalog.get(name).unwrap();
        for seed in 0..4 {
            let first = run(scenario, seed).unwrap();
            let again = rerun(&first.trace).unwrap().unwrap();
            assert_eq!(
                serde_json::to_vec(&first.trace).unwrap(),
                serde_json::to_vec(&again.trace).unwrap(),
                "{name} seed {seed}"
            );
            assert_eq!(first.violations, again.violations);
        }
    }
}
