//! A LeaderLatch whose step-down says nothing (Curator's `setLeadership(false)` emptied: the
//! user never hears `NotLeader`), written as a user's recipe against the public API and hunted
//! over the catalog's latch scenarios. Belief comes from what the recipe says, so its leader
//! keeps leading through `Suspended` and `Lost` into its new session: the hunt finds
//! `live_session_exclusion` (two leaders on live sessions, and a leadership kept past the
//! `Suspended` that ends it under the standard error policy). The checkers that ended a
//! leadership at `Suspended` or `Lost` by themselves passed every one of these hunts.

use splitbrain::coordination::recipe::{Ctx, Input, Recipe};
use splitbrain::coordination::recipes::{Call, LeaderLatch, Notice};
use splitbrain::coordination::relabel::Relabel;
use splitbrain::recipe_table::family::Family;
use splitbrain::recipe_table::property::Property;
use splitbrain::recipe_table::recipes::{RecipeDef, exclusive_lock};
use splitbrain::scenarios::scenario::Scenario;
use splitbrain::testing;

/// Curator's LeaderLatch, but its user never hears that it stopped leading.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
#[relabel(crate = "splitbrain::coordination")]
struct SilentStepDownLatch(LeaderLatch);

impl Recipe for SilentStepDownLatch {
    type Call = Call;
    type Notice = Notice;

    fn handle(&mut self, input: Input<Call>, cx: &mut Ctx<'_, Notice>) {
        for notice in cx.run_inner(&mut self.0, input) {
            if !matches!(notice, Notice::NotLeader { .. }) {
                cx.notify(notice);
            }
        }
    }
}

static SILENT_STEP_DOWN_LATCH: RecipeDef<SilentStepDownLatch> = RecipeDef {
    name: "silent-step-down-latch",
    about: "LeaderLatch whose step-down does nothing: its user never hears NotLeader",
    family: Family::Latch,
    revocable: false,
    build: |path, _| SilentStepDownLatch(LeaderLatch::new(path)),
    directories: |_| Vec::new(),
    expectation: exclusive_lock,
};

/// The catalog scenario `name`, run on the silent latch instead.
fn on_silent_latch(name: &str) -> Scenario {
    let file = format!("scenarios/catalog/{name}.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let text = text.replace(
        r#""recipe": "leader-latch""#,
        r#""recipe": { "name": "silent-step-down-latch", "family": "latch" }"#,
    );
    Scenario::from_json(&file, &text).unwrap()
}

#[test]
fn a_latch_that_never_steps_down_breaks_live_session_exclusion_in_the_catalogs_gc_pause_hunt() {
    let scenario = on_silent_latch("leader-latch-gc-pause");
    let hunted = testing::hunt(&SILENT_STEP_DOWN_LATCH, &scenario)
        .seeds(0..40)
        .out_dir(std::env::temp_dir().join("splitbrain-silent-step-down"))
        .run();
    assert!(hunted.failures.is_empty(), "{:?}", hunted.failures);
    let found = (hunted.finding(Property::LiveSessionExclusion))
        .expect("the silent latch keeps leading into its new session");
    assert!(
        found
            .violation
            .message
            .starts_with("c0 kept its leadership")
            && found.violation.message.contains("standard error policy"),
        "{}",
        found.violation.message
    );
}
