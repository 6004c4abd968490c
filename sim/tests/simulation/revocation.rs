//! Revocation on `Mutex` under the simulator: Curator's TestInterProcessMutex.testRevoking
//! (the holder is asked, releases, and the waiter then gets the lock) on the catalog's
//! mutex-revocation scenarios, varied per test.

use coordination::recipes::Notice;
use scenarios::fault::ScheduledFault;
use scenarios::scenario::Scenario;
use trace::Trace;

use crate::query::{
    PAST_READ_TIMEOUT_MS, at, catalog_variant, cut_off, find, heard, is_acquired, is_release_call,
    long_sessions, run_checked,
};

/// A catalog revocation scenario (`mutex-revocation-<name>`): two clients acquiring once,
/// c1 starting `stagger_ms` after c0, holding for `hold_ms`, with `faults`.
fn revocation(name: &str, hold_ms: u64, stagger_ms: u64, faults: Vec<ScheduledFault>) -> Scenario {
    let name = format!("mutex-revocation-{name}");
    let mut scenario = catalog_variant(&name, 2, 1, hold_ms, faults);
    scenario.workload.stagger_ms = stagger_ms;
    scenario
}

/// When (ns) client `client` called release.
fn released(trace: &Trace, client: u16) -> u64 {
    find(trace, 0, |e| is_release_call(e, client))
        .map(|(_, e)| e.t)
        .expect("a release")
}

fn asked(n: &Notice) -> bool {
    matches!(n, Notice::RevocationRequested { .. })
}

const MS: u64 = 1_000_000;

#[test]
fn the_holder_is_asked_releases_and_the_waiter_then_gets_the_lock() {
    let scenario = revocation("fault-free", 5_000, 300, Vec::new());
    let trace = run_checked(&scenario, 1);
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
    let held = heard(&trace, 0, is_acquired).unwrap();
    assert!(held < asked);
    let release = released(&trace, 0);
    assert!(release - asked < 10 * MS, "c0 gave way at once");
    let next = heard(&trace, 1, is_acquired).expect("c1 acquired");
    assert!(
        release < next && next < 1_000 * MS,
        "long before c0's 5 s hold would end"
    );
}

#[test]
fn without_revocation_the_waiter_waits_out_the_hold() {
    let mut scenario = revocation("fault-free", 5_000, 300, Vec::new());
    scenario.recipe_settings.revocable = false;
    let trace = run_checked(&scenario, 1);
    assert!(heard(&trace, 0, asked).is_none());
    let held = heard(&trace, 0, is_acquired).unwrap();
    assert!(heard(&trace, 1, is_acquired).unwrap() > held + 5_000 * MS);
}

#[test]
fn a_request_made_while_the_holder_is_cut_off_is_heard_after_it_reconnects() {
    // Cut off past its read timeout, c0 re-attaches its session once the cut heals.
    let cut = at(200, cut_off(0, PAST_READ_TIMEOUT_MS));
    let scenario = long_sessions(revocation("partition", 30_000, 500, vec![cut]));
    let trace = run_checked(&scenario, 3);
    let asked = heard(&trace, 0, asked).expect("c0 was asked");
    let healed = 200 + PAST_READ_TIMEOUT_MS;
    assert!(asked > healed * MS, "heard after the partition healed");
    assert!(heard(&trace, 0, |n| matches!(n, Notice::Lost { .. })).is_none());
    let next = heard(&trace, 1, is_acquired).expect("c1 acquired");
    assert!(
        next < (healed + 3_000) * MS,
        "long before c0's 30 s hold would end"
    );
}
