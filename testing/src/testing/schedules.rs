//! Property runs of any recipe: proptest draws fault schedules (pauses, partitions, message
//! loss and delay, session expiries, crashes, server restarts), a run of the scenario under
//! each must keep the properties asked for, and proptest shrinks a failing schedule.
//!
//! ```no_run
//! # use splitbrain::scenarios::scenario::Scenario;
//! # use splitbrain::recipe_table::property::Property;
//! # use splitbrain::recipe_table::recipes::MUTEX;
//! use proptest::prelude::*;
//! use splitbrain::testing::schedules::{config, fault_schedule, must_hold};
//! # fn scenario() -> Scenario { unimplemented!() }
//!
//! proptest! {
//!     #![proptest_config(config(64))]
//!     #[test]
//!     fn stays_fenced(seed in 0..10_000u64, faults in fault_schedule(3, 2_000)) {
//!         must_hold(&MUTEX, &scenario(), seed, faults, &[Property::MutualExclusionFenced])?;
//!     }
//! }
//! ```

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use recipe_table::property::Property;
use scenarios::fault::{Fault, Node, ScheduledFault};
use scenarios::scenario::Scenario;
use sim::RecipeCode;

use super::default_out_dir;
use crate::files::{evidence_paths, write_trace_and_report};
use crate::run::run_then;

/// The seed of proptest's own generator: fixed, so that every run draws the same schedules.
const PROPTEST_SEED: u64 = 0x5b17_b2a1;

/// proptest's configuration for `cases` schedules, drawn from a fixed seed (a test must not
/// draw other schedules on every run).
pub fn config(cases: u32) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(PROPTEST_SEED),
        ..Config::default()
    }
}

/// Up to four faults on `clients` clients, each starting in the first `within_ms` ms, in time
/// order: the kinds a fenced lock must survive.
pub fn fault_schedule(clients: u16, within_ms: u64) -> impl Strategy<Value = Vec<ScheduledFault>> {
    proptest::collection::vec(fault(clients, within_ms), 0..5).prop_map(|mut faults| {
        faults.sort_by_key(|f| f.at_ms);
        faults
    })
}

/// One fault on one of `clients` clients (or the server), starting in the first `within_ms`.
fn fault(clients: u16, within_ms: u64) -> impl Strategy<Value = ScheduledFault> {
    let client = 0..clients.max(1);
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
    (0..within_ms.max(1), kind).prop_map(|(at_ms, fault)| ScheduledFault::at(at_ms, fault))
}

/// Runs `scenario` with `seed` under exactly `faults`, its recipe's code being `code` (your
/// recipe's definition, `&DEF`, or a row of the table); fails the case, naming the violations
/// and the trace and report it writes (to `<target>/splitbrain/<scenario>/`), when any of
/// `properties` is violated or the run fails.
pub fn must_hold(
    code: impl Into<RecipeCode>,
    scenario: &Scenario,
    seed: u64,
    faults: Vec<ScheduledFault>,
    properties: &[Property],
) -> Result<(), TestCaseError> {
    let fail = |why: String| TestCaseError::fail(format!("{} seed {seed}: {why}", scenario.name));
    let outcome = run_then(&code.into(), scenario, seed, faults.clone(), |outcome| {
        outcome
    })
    .map_err(|e| fail(e.to_string()))?;
    let broken: Vec<String> = outcome
        .violations
        .iter()
        .filter(|v| properties.contains(&v.property))
        .map(|v| format!("{}: {}", v.property, v.message))
        .collect();
    if broken.is_empty() {
        return Ok(());
    }
    let out = default_out_dir().join(&scenario.name);
    let (trace, report) = evidence_paths(&out, &format!("seed-{seed}.schedule"));
    let rerun = "cargo test (proptest replays the shrunk schedule first)".to_owned();
    let files = (trace.as_path(), report.as_path());
    let written =
        match write_trace_and_report(&outcome.trace, &outcome.violations, files, Some(rerun)) {
            Ok(()) => format!("trace: {}\nreport: {}", trace.display(), report.display()),
            Err(error) => error,
        };
    Err(fail(format!(
        "under {faults:?}:\n{}\n{written}",
        broken.join("\n")
    )))
}
