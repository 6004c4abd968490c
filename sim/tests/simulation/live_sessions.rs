//! `live_session_exclusion` tells a recipe bug from the inherent overlap: a mutex whose woken
//! waiter holds without listing again meets every other expectation of the mutex's own catalog
//! scenarios (the belief overlap it adds hides among the expected ones, or goes unchecked), and
//! only the live-session property catches it, on the scenarios where a waiter's session ends
//! while a holder is still ahead of it. A holder that ignores connection state is caught by
//! the same property before any live overlap: its hold outlives the change that ends it.

use std::collections::BTreeSet;

use properties::verdict::violations_of_scenario;
use recipe_table::property::{Expectation, Property};
use recipe_table::recipes::RecipeKind;
use scenarios::catalog::Catalog;
use sim::Sim;

use crate::query::catalog_scenario;

/// Seeds per scenario (each "violated" expectation of the mutex's scenarios is met by seed 0).
const SEEDS: u64 = 10;

#[test]
fn a_trusting_wakeup_passes_the_mutex_scenarios_but_live_session_exclusion() {
    let catalog = Catalog::builtin().expect("the embedded catalog parses");
    let mut caught = BTreeSet::new();
    for scenario in catalog.scenarios() {
        // mutex-acquire-timeout catches the variant by belief too: a predecessor that times
        // out leaves without holding, which is what the variant wrongly trusts. So does
        // mutex-follower-cut-sync-limit-first, whose expected overlap-free runs leave none for
        // the variant's to hide among.
        let by_belief = [
            "mutex-acquire-timeout",
            "mutex-follower-cut-sync-limit-first",
        ];
        if scenario.recipe != RecipeKind::Mutex || by_belief.contains(&scenario.name.as_str()) {
            continue;
        }
        let mut bad = scenario.clone();
        bad.recipe = RecipeKind::TrustingWakeupMutex.into();
        let mut violated = BTreeSet::new();
        for seed in 0..SEEDS {
            let trace = Sim::from_scenario(&bad, seed, bad.fault_schedule(seed))
                .run()
                .unwrap();
            violated.extend(
                violations_of_scenario(&trace, &bad)
                    .iter()
                    .map(|v| v.property),
            );
        }
        for &property in bad.recipe.properties() {
            let expected = scenario.expectation(property);
            let found = violated.contains(&property);
            if property == Property::LiveSessionExclusion {
                // Where Curator's own lock loop breaks it (a waiter holding through its old
                // session's node), the variant cannot be told apart by it.
                if expected == Expectation::Violated {
                    continue;
                }
                assert_eq!(expected, Expectation::Holds, "{}", scenario.name);
                if found {
                    caught.insert(scenario.name.as_str());
                }
                continue;
            }
            // What the mutex keeps, the variant keeps too (a violation the mutex shows in a
            // few of its 200 seeds, as connection-loss-create's, need not come up in these).
            if expected == Expectation::Holds {
                assert!(!found, "{}: {property}", scenario.name);
            }
        }
    }
    assert_eq!(
        caught,
        BTreeSet::from([
            "mutex-reentrant",
            "mutex-revocation-session-expiry",
            "session-expiry-waiter"
        ])
    );
}

/// A holder that ignores connection state breaks `live_session_exclusion` by keeping its hold
/// past SUSPENDED, the change at which Curator's default error policy ends it, even where no
/// two live sessions overlap: `state-blind-mutex-partition` ends the hold while its client is
/// still cut off, so every violation names the one client that kept it, and the belief overlap
/// with the next holder (whose session is alive while the blind holder's has expired) is there
/// too. Curator's mutex, in the blind one's place, gives the hold up and breaks neither.
#[test]
fn a_state_blind_holder_is_caught_by_its_kept_hold_without_a_live_overlap() {
    let blind = catalog_scenario("state-blind-mutex-partition");
    let mut curator = blind.clone();
    curator.recipe = RecipeKind::Mutex.into();
    for seed in 0..SEEDS {
        let violations = |scenario: &scenarios::scenario::Scenario| {
            let trace = Sim::from_scenario(scenario, seed, scenario.fault_schedule(seed))
                .run()
                .unwrap();
            violations_of_scenario(&trace, scenario)
        };
        let caught = violations(&blind);
        let kept: Vec<_> = (caught.iter())
            .filter(|v| v.property == Property::LiveSessionExclusion)
            .collect();
        assert!(!kept.is_empty(), "seed {seed}: the kept hold is caught");
        assert!(
            kept.iter().all(|v| v.clients.len() == 1),
            "seed {seed}: no live overlap, only the kept hold: {kept:?}"
        );
        assert!(
            (caught.iter()).any(|v| v.property == Property::MutualExclusionBelief),
            "seed {seed}: the belief overlap"
        );
        let exclusive = [
            Property::LiveSessionExclusion,
            Property::MutualExclusionBelief,
        ];
        assert!(
            (violations(&curator).iter()).all(|v| !exclusive.contains(&v.property)),
            "seed {seed}: Curator's mutex gives the hold up"
        );
    }
}
