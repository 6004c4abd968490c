//! Property runs: proptest generates fault schedules (pauses, partitions, message loss and
//! delay, session expiries, crashes, server restarts) for the Mutex scenarios; fenced exclusion, progress and no orphans must
//! hold for every one. Proptest shrinks a failing schedule and keeps it in
//! `tests/property_runs.proptest-regressions`, so it is replayed first on every later run; the failing
//! run's trace is written for `splitbrain replay --from`.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use scenarios::catalog::Catalog;
use scenarios::fault::{Fault, Node, ScheduledFault};
use scenarios::property::Property;
use scenarios::scenario::Scenario;
use splitbrain::files::write_json;
use splitbrain::run::run_with;

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

/// One fault of the kinds a Mutex must survive with fencing, for `clients` clients, starting
/// in the first 2 s, while the workloads run.
fn fault(clients: u16) -> impl Strategy<Value = ScheduledFault> {
    let client = 0..clients;
    let kind = prop_oneof![
        (client.clone(), 100..2_500u64)
            .prop_map(|(client, for_ms)| Fault::Pause { client, for_ms }),
        (client.clone(), 100..1_500u64).prop_map(|(c, for_ms)| Fault::Partition {
            a: Node::Client(c),
            b: Node::Server,
            oneway: false,
            for_ms: Some(for_ms),
        }),
        client
            .clone()
            .prop_map(|client| Fault::ExpireSession { client }),
        client.clone().prop_map(|client| Fault::Crash { client }),
        (client.clone(), 0..=50u8, 100..1_000u64).prop_map(|(c, percent, for_ms)| Fault::Drop {
            from: Node::Client(c),
            to: Node::Server,
            percent,
            for_ms: Some(for_ms),
        }),
        (client, 1..200u64, 100..1_500u64).prop_map(|(c, max_ms, for_ms)| Fault::Delay {
            from: Node::Server,
            to: Node::Client(c),
            min_ms: 0,
            max_ms,
            for_ms: Some(for_ms),
        }),
        (100..3_000u64).prop_map(|down_ms| Fault::RestartServer { down_ms }),
    ];
    (0..2_000u64, kind).prop_map(|(at_ms, fault)| ScheduledFault { at_ms, fault })
}

fn case() -> impl Strategy<Value = (usize, u64, Vec<ScheduledFault>)> {
    (0..SCENARIOS.len()).prop_flat_map(|index| {
        let clients = scenario(SCENARIOS[index]).clients;
        let faults = proptest::collection::vec(fault(clients), 0..5).prop_map(|mut faults| {
            faults.sort_by_key(|f| f.at_ms);
            faults
        });
        (Just(index), 0..10_000u64, faults)
    })
}

proptest! {
    #![proptest_config(Config {
        cases: 64,
        rng_seed: RngSeed::Fixed(0x5b17_b2a1),
        ..Config::default()
    })]

    #[test]
    fn a_mutex_stays_fenced_live_and_clean_under_any_schedule((index, seed, faults) in case()) {
        let scenario = scenario(SCENARIOS[index]);
        let outcome = run_with(&scenario, seed, faults.clone())
            .map_err(|e| TestCaseError::fail(format!("{} seed {seed}: {e}", scenario.name)))?;
        let broken: Vec<String> = outcome
            .violations
            .iter()
            .filter(|v| MUST_HOLD.contains(&v.property))
            .map(|v| format!("{}: {}", v.property, v.message))
            .collect();
        if !broken.is_empty() {
            let path = std::env::temp_dir().join(format!("splitbrain-property-{}-{seed}.trace.json", scenario.name));
            let written = write_json(&path, &outcome.trace).map_or_else(
                |e| format!("(the trace could not be written: {e})"),
                |()| format!("reproduce: splitbrain replay --from {}", path.display()),
            );
            return Err(TestCaseError::fail(format!(
                "{} seed {seed} with {faults:?}:\n{}\n{written}",
                scenario.name,
                broken.join("\n")
            )));
        }
    }
}
