//! A user's recipe through the command line: the `splitbrain` binary does not know its code,
//! yet `report` judges and renders its traces (they carry the recipe's family), and `replay`
//! says how to rerun one instead of failing obscurely.

mod support;

use home_grown_lock::HOME_GROWN_LOCK;
use splitbrain::scenarios::scenario::Scenario;
use splitbrain::sim::RecipeCode;
use splitbrain::testing;
use support::{scratch, splitbrain};

/// Seed 1 of the example's contention scenario, where a waiter is left waiting.
fn user_trace() -> std::path::PathBuf {
    let file = "examples/home-grown-lock/scenarios/contention.json";
    let text = std::fs::read_to_string(file).unwrap();
    let scenario = Scenario::from_json(file, &text).unwrap();
    let out = scratch("user-recipe");
    let hunted = testing::hunt(&HOME_GROWN_LOCK, &scenario)
        .seeds(1..2)
        .out_dir(&out)
        .run();
    assert_eq!(hunted.seeds_run, 1);
    let found = hunted
        .finding(splitbrain::recipe_table::property::Property::Progress)
        .expect("seed 1 leaves a waiter waiting");
    found.trace.clone()
}

#[test]
fn report_judges_a_trace_of_a_users_recipe_and_replay_says_how_to_rerun_it() {
    let trace = user_trace();
    let trace = trace.to_str().unwrap();
    let report = splitbrain(&["report", trace]);
    let printed = String::from_utf8_lossy(&report.stdout);
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    assert!(
        (printed.lines()).any(|l| l.starts_with("progress at ") && l.contains(" began waiting")),
        "{printed}"
    );
    let html = std::fs::read_to_string(trace.replace(".json", ".html")).unwrap();
    assert!(
        html.contains("SPLITBRAIN_SEED=1 cargo test"),
        "the rerun command"
    );

    let replay = splitbrain(&["replay", "--from", trace]);
    let error = String::from_utf8_lossy(&replay.stderr);
    assert_eq!(replay.status.code(), Some(2), "{error}");
    assert!(
        error.contains("found `home-grown-lock`, a recipe of your own: rerun it from the test")
            && error.contains("SPLITBRAIN_SEED=1"),
        "{error}"
    );
    assert_eq!(error.lines().count(), 1, "{error}");
}

#[test]
fn a_users_recipe_replays_its_seed_byte_for_byte() {
    let file = "examples/home-grown-lock/scenarios/contention.json";
    let text = std::fs::read_to_string(file).unwrap();
    let scenario = Scenario::from_json(file, &text).unwrap();
    let code = RecipeCode::of(&HOME_GROWN_LOCK);
    let json = |seed| {
        let faults = scenario.fault_schedule(seed);
        let outcome = splitbrain::run::run_then(&code, &scenario, seed, faults, |o| o).unwrap();
        serde_json::to_string(&outcome.trace).unwrap()
    };
    let first = json(1);
    assert_eq!(first, json(1));
    assert_ne!(first, json(2), "another seed, another run");
}
