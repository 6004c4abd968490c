//! The application under a GC pause: both holders believe (inherent to session-based locks),
//! and because the application never presents its token, the storage accepts the paused
//! holder's stale write and an update is lost. With the token, the same run is safe.

use splitbrain::recipe_table::property::Property;
use splitbrain::recipe_table::recipes::MUTEX;
use splitbrain::scenarios::scenario::{RecipeRef, Scenario};
use splitbrain::testing;
use unfenced_app::UNFENCED_APP;

fn gc_pause() -> Scenario {
    let file = "scenarios/gc-pause.json";
    Scenario::from_json(file, include_str!("../scenarios/gc-pause.json"))
        .unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn the_stale_holder_loses_an_update_under_a_gc_pause() {
    let hunted = testing::hunt(&UNFENCED_APP, &gc_pause()).run();
    let lost = hunted
        .finding(Property::MutualExclusionFenced)
        .expect("the paused holder's stale write is accepted");
    assert_eq!(lost.seed, 0, "every seed shows it: the pause is scheduled");
    assert!(lost.report.exists());
    assert_eq!(hunted.unmet().len(), 1, "{:#?}", hunted.unmet());
}

#[test]
fn the_same_run_with_the_token_presented_is_safe() {
    let mut scenario = gc_pause();
    scenario.recipe = RecipeRef::of(&MUTEX);
    testing::hunt(&MUTEX, &scenario).run().assert_met();
}
