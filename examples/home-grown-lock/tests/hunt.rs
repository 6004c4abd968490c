//! The home-grown lock under splitbrain: a hunt and a model check find its two bugs.

use home_grown_lock::HOME_GROWN_LOCK;
use splitbrain::model::ModelSpec;
use splitbrain::recipe_table::property::Property;
use splitbrain::scenarios::scenario::Scenario;
use splitbrain::testing;

fn contention() -> Scenario {
    let file = "scenarios/contention.json";
    Scenario::from_json(file, include_str!("../scenarios/contention.json"))
        .unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn a_hunt_finds_the_herd_and_the_waiter_left_waiting_by_seed() {
    let hunted = testing::hunt(&HOME_GROWN_LOCK, &contention()).run();
    let hang = hunted
        .finding(Property::Progress)
        .expect("a waiter that missed the release waits for ever");
    assert!(
        hang.replay
            .starts_with(&format!("SPLITBRAIN_SEED={} cargo test", hang.seed)),
        "{}",
        hang.replay
    );
    assert!(hang.trace.exists() && hang.report.exists());
    // Every seed that hung is listed, the first of them the finding's.
    let hung = hunted.violating_seeds(Property::Progress);
    assert_eq!(hung.first(), Some(&hang.seed));
    assert!(hung.windows(2).all(|pair| pair[0] < pair[1]), "{hung:?}");
    assert!(
        hunted.finding(Property::HerdFree).is_some(),
        "every waiter wakes"
    );
    for safe in [
        Property::MutualExclusionBelief,
        Property::MutualExclusionFenced,
    ] {
        assert!(hunted.finding(safe).is_none(), "{safe}: exclusion holds");
        assert!(hunted.violating_seeds(safe).is_empty());
    }
}

#[test]
#[should_panic(expected = "progress: expected to hold, violated in")]
fn a_failing_hunt_says_how_to_replay_it() {
    testing::hunt(&HOME_GROWN_LOCK, &contention())
        .run()
        .assert_met();
}

#[test]
fn the_model_finds_the_waiter_left_waiting_with_two_clients() {
    let checked = testing::model_check(&HOME_GROWN_LOCK, ModelSpec::new(2));
    let hang = checked
        .path(Property::Progress)
        .expect("a counterexample of progress");
    assert!(hang.report.exists());
    let unmet = checked.unmet();
    assert!(
        unmet[0].starts_with("progress: expected to hold, violated in 1 of 1 exhaustive search"),
        "{unmet:#?}"
    );
    // A hang, not a give-up: the waiter still asks.
    assert!(
        unmet[1].starts_with("answered: expected to hold, violated in 1 of 1 exhaustive search"),
        "{unmet:#?}"
    );
    assert_eq!(
        unmet.len(),
        2,
        "the rest is as any exclusive lock: {unmet:#?}"
    );
}

mod schedules {
    use home_grown_lock::HOME_GROWN_LOCK;
    use proptest::prelude::*;
    use splitbrain::recipe_table::property::Property;
    use splitbrain::testing::schedules::{config, fault_schedule, must_hold};

    proptest! {
        #![proptest_config(config(16))]

        /// Its bugs are in liveness and efficiency: with fencing, no schedule of pauses,
        /// partitions, expiries, crashes and restarts loses an update.
        #[test]
        fn no_fault_schedule_loses_an_update(seed in 0..10_000u64, faults in fault_schedule(3, 2_000)) {
            must_hold(&HOME_GROWN_LOCK, &super::contention(), seed, faults, &[Property::MutualExclusionFenced])?;
        }
    }
}
