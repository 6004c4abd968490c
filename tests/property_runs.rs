//! Property runs: proptest generates fault schedules (pauses, partitions, message loss and
//! delay, session expiries, crashes, server restarts) for the Mutex scenarios; fenced exclusion, progress and no orphans must
//! hold for every one. Proptest shrinks a failing schedule and keeps it in
//! `tests/property_runs.proptest-regressions`, so it is replayed first on every later run; the failing
//! run's trace and report are written (`splitbrain::testing::schedules`, which users' crates use
//! the same way).

use proptest::prelude::*;
use recipe_table::property::Property;
use scenarios::catalog::Catalog;
use scenarios::fault::ScheduledFault;
use scenarios::scenario::Scenario;
use splitbrain::testing::schedules::{config, fault_schedule, must_hold};

/// The Mutex scenarios the schedules are injected into (their own faults replaced).
const SCENARIOS: [&str; 2] = ["random-faults-mutex", "herd-free-mutex"];

const MUST_HOLD: [Property; 3] = [
    Property::MutualExclusionFenced,
    Property::Progress,
    Property::NoOrphans,
];

fn scenario(name: &str) -> Scenario {
    let catalog = Catalog::builtin().expect("the built-in catalog parses");
    let mut scenario = catalog.get(name).expect("in the catalog").clone();
    scenario.faults.clear();
    scenario.random_faults.clear();
    scenario
}

fn case() -> impl Strategy<Value = (usize, u64, Vec<ScheduledFault>)> {
    (0..SCENARIOS.len()).prop_flat_map(|index| {
        let clients = scenario(SCENARIOS[index]).clients;
        (Just(index), 0..10_000u64, fault_schedule(clients, 2_000))
    })
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn a_mutex_stays_fenced_live_and_clean_under_any_schedule((index, seed, faults) in case()) {
        let scenario = scenario(SCENARIOS[index]);
        let code = splitbrain::run::table_code(&scenario).expect("a recipe of the table");
        must_hold(code, &scenario, seed, faults, &MUST_HOLD)?;
    }
}
