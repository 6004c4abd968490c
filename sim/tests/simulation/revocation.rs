//! Revocation on `Mutex` under the simulator: Curator's TestInterProcessMutex.testRevoking
//! (the holder is asked, releases, and the waiter then gets the lock) on the catalog's
//! mutex-revocation scenarios, varied per test.

use lock::recipes::Notice;
use scenarios::catalog::Catalog;
use scenarios::check::{Context, check_all};
use scenarios::fault::{Fault, Node, ScheduledFault};
use scenarios::scenario::{Scenario, Span};
use scenarios::trace::{EventKind, Source, Trace};
use sim::Sim;

use crate::query::{notice, on};

/// A catalog revocation scenario (`mutex-revocation-<name>`): two clients acquiring once,
/// c1 starting `stagger_ms` after c0, holding for `hold_ms`, with `faults`.
fn revocation(name: &str, hold_ms: u64, stagger_ms: u64, faults: Vec<ScheduledFault>) -> Scenario {
    let catalog = Catalog::builtin().expect("the embedded catalog parses");
    let mut scenario = catalog
        .get(&format!("mutex-revocation-{name}"))
        .expect("a mutex-revocation scenario")
        .clone();
    scenario.clients = 2;
    scenario.workload.acquisitions = 1;
    scenario.workload.hold_ms = Span::fixed(hold_ms);
    scenario.workload.stagger_ms = stagger_ms;
    scenario.faults = faults;
    scenario
}

fn run(scenario: &Scenario, seed: u64) -> Trace {
    let trace = Sim::from_scenario(scenario, seed, scenario.faults.clone())
        .run()
        .expect("valid settings");
    let cx = Context::for_scenario(scenario, Source::Sim);
    let found = check_all(&trace, scenario.recipe.properties(), &cx);
    assert!(found.is_empty(), "{found:#?}");
    trace
}

/// When (ns) client `client` first heard a notice `wanted` accepts.
fn heard(trace: &Trace, client: u16, wanted: fn(&Notice) -> bool) -> Option<u64> {
    (trace.events.iter())
        .find(|e| notice(e, client).as_ref().is_some_and(wanted))
        .map(|e| e.t)
}

/// When (ns) client `client` called release.
fn released(trace: &Trace, client: u16) -> u64 {
    (trace.events.iter())
        .find(|e| {
            on(e, client) && matches!(&e.kind, EventKind::Call { call } if call.name() == "release")
        })
        .map(|e| e.t)
        .expect("a release")
}

fn acquired(n: &Notice) -> bool {
    matches!(n, Notice::Acquired { .. })
}

fn asked(n: &Notice) -> bool {
    matches!(n, Notice::RevocationRequested { .. })
}

const MS: u64 = 1_000_000;

#[test]
fn the_holder_is_asked_releases_and_the_waiter_then_gets_the_lock() {
    let scenario = revocation("fault-free", 5_000, 300, Vec::new());
    let trace = run(&scenario, 1);
    let delivered = heard(&trace, 1, |n| {
        matches!(
            n,
            Notice::RevokeAttempted {
                delivered: true,
                ..
            }
        )
    });
    assert!(delivered.is_some(), "c1 marked c0's node");
    let asked = heard(&trace, 0, asked).expect("c0 was asked");
    let held = heard(&trace, 0, acquired).unwrap();
    assert!(held < asked);
    let release = released(&trace, 0);
    assert!(release - asked < 10 * MS, "c0 gave way at once");
    let next = heard(&trace, 1, acquired).expect("c1 acquired");
    assert!(
        release < next && next < 1_000 * MS,
        "long before c0's 5 s hold would end"
    );
}

#[test]
fn without_revocation_the_waiter_waits_out_the_hold() {
    let mut scenario = revocation("fault-free", 5_000, 300, Vec::new());
    scenario.recipe_settings.revocable = false;
    let trace = run(&scenario, 1);
    assert!(heard(&trace, 0, asked).is_none());
    let held = heard(&trace, 0, acquired).unwrap();
    assert!(heard(&trace, 1, acquired).unwrap() > held + 5_000 * MS);
}

#[test]
fn a_request_made_while_the_holder_is_cut_off_is_heard_after_it_reconnects() {
    let partition = ScheduledFault {
        at_ms: 200,
        fault: Fault::Partition {
            a: Node::Client(0),
            b: Node::Server,
            oneway: false,
            for_ms: Some(700),
        },
    };
    let scenario = revocation("partition", 5_000, 500, vec![partition]);
    let trace = run(&scenario, 3);
    let asked = heard(&trace, 0, asked).expect("c0 was asked");
    assert!(asked > 900 * MS, "heard after the partition healed");
    assert!(heard(&trace, 0, |n| matches!(n, Notice::Lost { .. })).is_none());
    let next = heard(&trace, 1, acquired).expect("c1 acquired");
    assert!(next < 2_000 * MS, "long before c0's 5 s hold would end");
}
