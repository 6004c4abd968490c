//! MultiLock under the simulator: what Curator's TestInterProcessMultiMutex and its base
//! TestInterProcessMutexBase check (every lock taken in order and released in reverse, one
//! holder at a time, a killed session passing the locks on, connection changes heard once per
//! holder, a server restart) on the catalog's multi-lock scenarios, varied per test.

use coordination::fencing::Token;
use coordination::recipes::Notice;
use coordination::zk::{OpOk, Path, Request};
use recipe_table::property::Property;
use scenarios::fault::{Fault, ScheduledFault};
use scenarios::scenario::Scenario;
use trace::{EventKind, Trace};

use crate::query::{
    PAST_READ_TIMEOUT_MS, at, catalog_scenario, catalog_variant, clients_of, count_notices,
    cut_off, grants, heard, is_acquired, is_rejected_write, long_sessions, on, run_checked,
    run_scenario, sessions_of, violations,
};

/// A catalog multi-lock scenario (`multi-lock-<name>`), `clients` clients acquiring once
/// each, holding for `hold_ms`, with `faults`.
fn multi_lock(name: &str, clients: u16, hold_ms: u64, faults: Vec<ScheduledFault>) -> Scenario {
    catalog_variant(&format!("multi-lock-{name}"), clients, 1, hold_ms, faults)
}

/// The lock (`1` or `2`, the directory below the lock path) of every change to a lock node
/// the server applied for client `client`, in order, as `+1` (a create) or `-1` (a delete).
fn lock_changes(scenario: &Scenario, trace: &Trace, client: u16) -> Vec<String> {
    let sessions = sessions_of(trace, client);
    let lock = |path: &Path| {
        let dir = path.parent()?;
        (dir.parent()? == scenario.lock_path).then(|| dir.name().to_owned())
    };
    (trace.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::OpApplied {
                session,
                request,
                result: Ok(ok),
                ..
            } if sessions.contains(session) => match (request, ok) {
                (Request::Create { .. }, OpOk::Created { path, .. }) => {
                    Some(format!("+{}", lock(path)?))
                }
                (Request::Delete { path, .. }, OpOk::Deleted) => Some(format!("-{}", lock(path)?)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn every_holder_takes_the_locks_in_order_and_releases_them_in_reverse() {
    let scenario = multi_lock("fault-free", 4, 200, Vec::new());
    let trace = run_checked(&scenario, 7);
    let grants = grants(&trace);
    assert_eq!(grants.len(), 4, "{grants:?}");
    assert!(
        grants.windows(2).all(|w| w[0].1 < w[1].1),
        "tokens increase: {grants:?}"
    );
    for client in 0..4 {
        assert_eq!(
            lock_changes(&scenario, &trace, client),
            ["+1", "+2", "-2", "-1"],
            "c{client}"
        );
    }
}

#[test]
fn the_token_is_the_first_lock_node_s_czxid() {
    let scenario = multi_lock("fault-free", 2, 200, Vec::new());
    let trace = run_scenario(&scenario, 3);
    let first: Vec<Token> = (trace.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::OpApplied {
                result: Ok(OpOk::Created { path, stat }),
                ..
            } if path.parent()?.name() == "1" => Some(stat.czxid.into()),
            _ => None,
        })
        .collect();
    let tokens: Vec<Token> = grants(&trace).into_iter().map(|(_, t)| t).collect();
    assert_eq!(tokens, first);
}

#[test]
fn a_killed_holder_session_passes_both_locks_on_and_is_lost_once() {
    let expire = at(1_000, Fault::ExpireSession { client: 0 });
    let scenario = multi_lock("session-expiry", 2, 3_000, vec![expire]);
    let trace = run_checked(&scenario, 11);
    assert_eq!(
        count_notices(&trace, 0, |n| matches!(n, Notice::Lost { .. })),
        1
    );
    let grants = grants(&trace);
    assert_eq!(clients_of(&grants), [0, 1]);
    let granted = heard(&trace, 1, is_acquired).expect("c1 acquired");
    assert!(
        heard(&trace, 0, is_acquired).expect("c0 acquired") < 1_000_000_000,
        "c0 held when its session was expired"
    );
    assert!(
        granted < 3_000_000_000,
        "c1 got both before c0's hold would end"
    );
}

#[test]
fn a_cut_off_holder_is_suspended_and_reconnected_once_not_per_lock() {
    let cut = at(600, cut_off(0, PAST_READ_TIMEOUT_MS));
    let scenario = long_sessions(multi_lock("partition", 2, 12_000, vec![cut]));
    let trace = run_checked(&scenario, 5);
    assert_eq!(
        count_notices(&trace, 0, |n| matches!(n, Notice::Suspended { .. })),
        1
    );
    assert_eq!(
        count_notices(&trace, 0, |n| matches!(n, Notice::Reconnected { .. })),
        1
    );
    assert_eq!(grants(&trace).len(), 2);
}

#[test]
fn a_paused_holder_whose_session_expires_is_fenced_off() {
    let scenario = catalog_scenario("multi-lock-gc-pause");
    let trace = run_scenario(&scenario, 0);
    assert!(violations(&scenario, &trace, Property::MutualExclusionBelief) >= 1);
    assert_eq!(
        violations(&scenario, &trace, Property::MutualExclusionFenced),
        0
    );
    let rejected = (trace.events.iter()).any(|e| on(e, 0) && is_rejected_write(e));
    assert!(rejected, "the paused holder's write is rejected");
}

#[test]
fn a_server_restart_keeps_every_hold_and_serves_everyone() {
    let restart = |at_ms| at(at_ms, Fault::RestartServer { down_ms: 2_000 });
    let faults = vec![restart(300), restart(5_000)];
    let scenario = long_sessions(multi_lock("server-restart", 3, 400, faults));
    let trace = run_checked(&scenario, 2);
    assert_eq!(grants(&trace).len(), 3);
}
