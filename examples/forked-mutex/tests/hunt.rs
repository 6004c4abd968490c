//! The forked mutex under splitbrain: a hunt finds the bug its one changed line put back, the
//! same the built-in known-bad variant shows in the catalog's `state-blind-mutex-partition`.

use forked_mutex::FORKED_MUTEX;
use splitbrain::recipe_table::property::Property;
use splitbrain::scenarios::scenario::Scenario;
use splitbrain::testing;

fn partition() -> Scenario {
    let file = "scenarios/partition.json";
    Scenario::from_json(file, include_str!("../scenarios/partition.json"))
        .unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn a_hunt_finds_the_holder_that_kept_its_hold_past_suspended() {
    let hunted = testing::hunt(&FORKED_MUTEX, &partition()).run();
    assert!(
        hunted.finding(Property::LiveSessionExclusion).is_some(),
        "the hold outlives the SUSPENDED that ends it"
    );
    assert!(
        hunted.finding(Property::MutualExclusionBelief).is_some(),
        "two clients believe they hold"
    );
    assert!(
        hunted.finding(Property::MutualExclusionFenced).is_none(),
        "the fence keeps the stale holder off the resource"
    );
    // Everything as the scenario expects of the known-bad mutex, no more.
    hunted.assert_met();
}
