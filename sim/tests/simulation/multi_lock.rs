//! MultiLock under the simulator: what Curator's TestInterProcessMultiMutex and its base
//! TestInterProcessMutexBase check (every lock taken in order and released in reverse, one
//! holder at a time, a killed session passing the locks on, connection changes heard once per
//! holder, a server restart) on the catalog's multi-lock scenarios, varied per test.

use lock::fencing::Token;
use lock::recipes::Notice;
use lock::zk::{OpOk, Path, Request};
use scenarios::catalog::Catalog;
use scenarios::check::{Context, check, check_all};
use scenarios::fault::{Fault, Node, ScheduledFault};
use scenarios::property::Property;
use scenarios::scenario::{Scenario, Span};
use scenarios::trace::{EventKind, Source, Trace};
use sim::Sim;

use crate::query::{notice, on};

/// A catalog multi-lock scenario (`multi-lock-<name>`), `clients` clients acquiring once
/// each, holding for `hold_ms`, with `faults`.
fn multi_lock(name: &str, clients: u16, hold_ms: u64, faults: Vec<ScheduledFault>) -> Scenario {
    let catalog = Catalog::builtin().expect("the embedded catalog parses");
    let mut scenario = catalog
        .get(&format!("multi-lock-{name}"))
        .expect("a multi-lock scenario")
        .clone();
    scenario.clients = clients;
    scenario.workload.acquisitions = 1;
    scenario.workload.hold_ms = Span::fixed(hold_ms);
    scenario.workload.stagger_ms = 100;
    scenario.faults = faults;
    scenario
}

fn run(scenario: &Scenario, seed: u64) -> Trace {
    Sim::from_scenario(scenario, seed, scenario.faults.clone())
        .run()
        .expect("valid settings")
}

/// Every property of the lock family holds in `trace`.
fn assert_all_hold(scenario: &Scenario, trace: &Trace) {
    let cx = Context::for_scenario(scenario, Source::Sim);
    let found = check_all(trace, scenario.recipe.properties(), &cx);
    assert!(found.is_empty(), "{found:#?}");
}

/// The Acquired notices, in trace order: (client, token).
fn grants(trace: &Trace) -> Vec<(u16, Token)> {
    (trace.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Notice {
                notice: Notice::Acquired { token, .. },
            } => Some((e.client?.0, *token)),
            _ => None,
        })
        .collect()
}

/// How many of client `client`'s notices `wanted` accepts.
fn count(trace: &Trace, client: u16, wanted: fn(&Notice) -> bool) -> usize {
    (trace.events.iter())
        .filter(|e| notice(e, client).as_ref().is_some_and(wanted))
        .count()
}

/// The lock (`1` or `2`, the directory below the lock path) of every change to a lock node
/// the server applied for client `client`, in order, as `+1` (a create) or `-1` (a delete).
fn lock_changes(scenario: &Scenario, trace: &Trace, client: u16) -> Vec<String> {
    let sessions = crate::query::sessions_of(trace, client);
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
    let trace = run(&scenario, 7);
    assert_all_hold(&scenario, &trace);
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
    let trace = run(&scenario, 3);
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
    let expire = ScheduledFault {
        at_ms: 1_000,
        fault: Fault::ExpireSession { client: 0 },
    };
    let scenario = multi_lock("session-expiry", 2, 3_000, vec![expire]);
    let trace = run(&scenario, 11);
    assert_all_hold(&scenario, &trace);
    assert_eq!(count(&trace, 0, |n| matches!(n, Notice::Lost { .. })), 1);
    let grants = grants(&trace);
    assert_eq!(grants.iter().map(|g| g.0).collect::<Vec<_>>(), [0, 1]);
    let at = |client: u16, wanted: fn(&Notice) -> bool| {
        (trace.events.iter())
            .find(|e| notice(e, client).as_ref().is_some_and(wanted))
            .map(|e| e.t)
            .unwrap()
    };
    let granted = at(1, |n| matches!(n, Notice::Acquired { .. }));
    assert!(
        at(0, |n| matches!(n, Notice::Acquired { .. })) < 1_000_000_000,
        "c0 held when its session was expired"
    );
    assert!(
        granted < 3_000_000_000,
        "c1 got both before c0's hold would end"
    );
}

#[test]
fn a_cut_off_holder_is_suspended_and_reconnected_once_not_per_lock() {
    let partition = ScheduledFault {
        at_ms: 600,
        fault: Fault::Partition {
            a: Node::Client(0),
            b: Node::Server,
            oneway: false,
            for_ms: Some(800),
        },
    };
    let scenario = multi_lock("partition", 2, 2_000, vec![partition]);
    let trace = run(&scenario, 5);
    assert_all_hold(&scenario, &trace);
    assert_eq!(
        count(&trace, 0, |n| matches!(n, Notice::Suspended { .. })),
        1
    );
    assert_eq!(
        count(&trace, 0, |n| matches!(n, Notice::Reconnected { .. })),
        1
    );
    assert_eq!(grants(&trace).len(), 2);
}

#[test]
fn a_paused_holder_whose_session_expires_is_fenced_off() {
    let scenario = Catalog::builtin()
        .unwrap()
        .get("multi-lock-gc-pause")
        .unwrap()
        .clone();
    let trace = run(&scenario, 0);
    let cx = Context::for_scenario(&scenario, Source::Sim);
    assert!(!check(&trace, Property::MutualExclusionBelief, &cx).is_empty());
    assert!(check(&trace, Property::MutualExclusionFenced, &cx).is_empty());
    let rejected = (trace.events.iter()).filter(|e| on(e, 0)).any(|e| {
        matches!(
            e.kind,
            EventKind::ResourceWrite {
                accepted: false,
                ..
            }
        )
    });
    assert!(rejected, "the paused holder's write is rejected");
}

#[test]
fn a_server_restart_keeps_every_hold_and_serves_everyone() {
    let restart = |at_ms| ScheduledFault {
        at_ms,
        fault: Fault::RestartServer,
    };
    let scenario = multi_lock("server-restart", 3, 400, vec![restart(300), restart(900)]);
    let trace = run(&scenario, 2);
    assert_all_hold(&scenario, &trace);
    assert_eq!(grants(&trace).len(), 3);
}
