//! `Client::lock`, unmodified, hunted in the simulation with each of its prefixes and as an
//! election on its `latch-` prefix: the GC pause and the catalog's random faults, every
//! expectation of each scenario over its 200 seeds. A program's finding replays with `SPLITBRAIN_SEED=<seed>`, byte for byte.

use client_lock::Prefix;
use client_lock::scenarios::{gc_pause, random_faults, timed_acquire};
use splitbrain::recipe_table::family::Family;
use splitbrain::recipe_table::property::Property;
use splitbrain::run::run_then;
use splitbrain::sim::RecipeCode;
use splitbrain::testing;

#[test]
fn a_paused_holder_still_believes_it_holds_and_the_fence_rejects_its_write() {
    for prefix in Prefix::ALL {
        let hunted = testing::hunt(prefix.program(), &gc_pause(prefix)).run();
        hunted.assert_met();
        let belief = match prefix.family() {
            Family::Latch => Property::LeaderUniqueBelief,
            _ => Property::MutualExclusionBelief,
        };
        let found = hunted.finding(belief).unwrap();
        assert!(
            found.report.exists(),
            "{prefix:?}: {}",
            found.report.display()
        );
    }
}

/// Finding: a release during a partition is lost while the session survives, and every
/// waiter waits forever behind the node, the releaser's own next acquire included (the
/// scenario's description tells the chain). Seeds 3411 (Curator's prefix, the latch) and 301
/// (the shared and custom prefixes) are each program's first in the random-faults hunt of
/// 10,000. One test per program, so that the replay command a finding prints runs its own.
fn a_release_lost_in_a_partition_leaves_every_waiter_waiting_forever(prefix: Prefix, seed: u64) {
    let scenario = random_faults(prefix);
    let hunted = testing::hunt(prefix.program(), &scenario)
        .seeds(seed..seed + 1)
        .run();
    for property in [Property::Progress, Property::Answered] {
        assert_eq!(
            hunted.violating_seeds(property),
            [seed],
            "{prefix:?} {property}"
        );
    }
    let trace = std::fs::read_to_string(&hunted.finding(Property::Progress).unwrap().trace);
    let trace: serde_json::Value = serde_json::from_str(&trace.unwrap()).unwrap();
    let last = trace["events"].as_array().unwrap().last().unwrap();
    let owners: Vec<_> = (last["nodes"].as_array().unwrap().iter())
        .filter_map(|node| node["ephemeral_owner"].as_u64())
        .collect();
    let twice = owners
        .iter()
        .any(|o| owners.iter().filter(|p| *p == o).count() == 2);
    assert!(
        twice,
        "{prefix:?}: one session owns its released node and its new one: {last}"
    );
    // The release was sent (the client wrote its delete) but never applied: the node is there.
    let remaining: Vec<_> = (last["nodes"].as_array().unwrap().iter())
        .map(|node| node["path"].as_str().unwrap())
        .collect();
    let lost_delete = trace["events"].as_array().unwrap().iter().any(|event| {
        let path = event["request"]["path"].as_str();
        event["kind"] == "op_sent"
            && event["request"]["op"] == "delete"
            && path.is_some_and(|path| remaining.contains(&path))
    });
    assert!(
        lost_delete,
        "{prefix:?}: a delete sent of a node still in the tree"
    );
}

#[test]
fn a_release_lost_in_a_partition_blocks_the_curator_prefix_lock() {
    a_release_lost_in_a_partition_leaves_every_waiter_waiting_forever(Prefix::Curator, 3411);
}

#[test]
fn a_release_lost_in_a_partition_blocks_the_shared_prefix_lock() {
    a_release_lost_in_a_partition_leaves_every_waiter_waiting_forever(Prefix::Shared, 301);
}

#[test]
fn a_release_lost_in_a_partition_blocks_the_custom_prefix_lock() {
    a_release_lost_in_a_partition_leaves_every_waiter_waiting_forever(Prefix::Custom, 301);
}

#[test]
fn a_release_lost_in_a_partition_blocks_the_election() {
    a_release_lost_in_a_partition_leaves_every_waiter_waiting_forever(Prefix::Latch, 3411);
}

#[test]
fn under_random_faults_only_belief_breaks() {
    for prefix in Prefix::ALL {
        testing::hunt(prefix.program(), &random_faults(prefix))
            .run()
            .assert_met();
    }
}

#[test]
fn a_timed_acquire_is_answered_by_its_deadline() {
    for prefix in [Prefix::Curator, Prefix::Shared, Prefix::Custom] {
        testing::hunt(prefix.program(), &timed_acquire(prefix))
            .run()
            .assert_met();
    }
}

/// A finding's trace as the hunt wrote it (from a parallel sweep) is the trace of the same
/// seed run alone, twice over.
#[test]
fn a_finding_replays_byte_for_byte() {
    let prefix = Prefix::Curator;
    let scenario = random_faults(prefix);
    let hunted = testing::hunt(prefix.program(), &scenario)
        .seeds(0..40)
        .run();
    let found = hunted
        .finding(Property::MutualExclusionBelief)
        .expect("a finding in 40 seeds");
    let written = std::fs::read_to_string(&found.trace).unwrap();
    let written: serde_json::Value = serde_json::from_str(&written).unwrap();
    let alone = || {
        let faults = scenario.fault_schedule(found.seed);
        run_then(
            &prefix.program().into(),
            &scenario,
            found.seed,
            faults,
            |outcome| serde_json::to_string(&outcome.trace).unwrap(),
        )
        .unwrap()
    };
    let first = alone();
    assert_eq!(first, alone(), "seed {} twice in one process", found.seed);
    let first: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(
        written, first,
        "seed {} in the hunt's sweep and alone",
        found.seed
    );
}

/// Each seed's trace is the same whatever ran before it in the process: eight seeds of the
/// random faults forwards, then backwards, with each prefix.
#[test]
fn seeds_replay_forwards_and_backwards() {
    for prefix in Prefix::ALL {
        let scenario = random_faults(prefix);
        let program = RecipeCode::from(prefix.program());
        let trace = |seed: u64| {
            let faults = scenario.fault_schedule(seed);
            run_then(&program, &scenario, seed, faults, |outcome| {
                serde_json::to_string(&outcome.trace).unwrap()
            })
            .unwrap()
        };
        let forwards: Vec<String> = (0..8).map(trace).collect();
        let mut backwards: Vec<String> = (0..8).rev().map(trace).collect();
        backwards.reverse();
        assert!(
            forwards == backwards,
            "{prefix:?}: a seed's trace depends on the order"
        );
    }
}
