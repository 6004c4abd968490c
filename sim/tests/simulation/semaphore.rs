//! Semaphore (Curator's InterProcessSemaphoreV2) under the simulator: what Curator's
//! TestInterProcessSemaphore checks — N leases out at once and never more, a timed-out
//! acquire returns nothing and leaves no node, a returned lease frees one waiter, a killed
//! session's lease frees up, leases survive a server restart — on the catalog's semaphore
//! scenarios, varied per test.

use lock::recipes::{Mode, Notice};
use lock::zk::Request;
use scenarios::catalog::Catalog;
use scenarios::check::timeline::{Interval, Role, Timeline};
use scenarios::property::Property;
use scenarios::scenario::Scenario;
use scenarios::trace::{EventKind, ServerSession, Trace};

use crate::herd::lease_wakeups;
use crate::query::{
    assert_all_hold, catalog_variant, count_server, find, index, notice, on, run_scenario,
    sessions_of, violations,
};

/// The catalog scenario `semaphore-<name>`, as it is.
fn semaphore(name: &str) -> Scenario {
    let catalog = Catalog::builtin().expect("the embedded catalog parses");
    catalog
        .get(&format!("semaphore-{name}"))
        .expect("a semaphore scenario")
        .clone()
}

/// The believed lease holds of `trace`.
fn leases(trace: &Trace) -> Vec<Interval> {
    Timeline::of(trace)
        .holds
        .into_iter()
        .filter(|h| h.role == Role::Lock(Mode::Lease))
        .collect()
}

/// The most leases believed held at one instant.
fn most_out(trace: &Trace) -> usize {
    let len = trace.events.len();
    let leases = leases(trace);
    (leases.iter())
        .map(|grant| {
            (leases.iter())
                .filter(|h| h.start <= grant.start && grant.start < h.end_or(len))
                .count()
        })
        .max()
        .unwrap_or(0)
}

/// How many `Acquired` notices client `client` got.
fn grants(trace: &Trace, client: u16) -> usize {
    (trace.events.iter())
        .filter(|e| matches!(notice(e, client), Some(Notice::Acquired { .. })))
        .count()
}

#[test]
fn max_leases_are_out_at_once_never_more_and_everyone_is_served() {
    let scenario = semaphore("fault-free");
    let max = scenario.recipe_settings.max_leases as usize;
    assert_eq!(max, 3);
    for seed in 0..5 {
        let trace = run_scenario(&scenario, seed);
        assert_all_hold(&scenario, &trace);
        assert_eq!(most_out(&trace), max, "seed {seed}");
        for client in 0..scenario.clients {
            assert_eq!(
                grants(&trace, client),
                scenario.workload.acquisitions as usize,
                "seed {seed}, c{client}"
            );
        }
    }
}

#[test]
fn a_returned_lease_wakes_one_session_at_a_time() {
    let scenario = semaphore("fault-free");
    let trace = run_scenario(&scenario, 7);
    let wakeups = lease_wakeups(&trace);
    let most = wakeups.values().copied().max().unwrap_or(0);
    println!(
        "Semaphore, {} clients, {} leases: {} lease changes woke a session, at most {most} each",
        scenario.clients,
        scenario.recipe_settings.max_leases,
        wakeups.len()
    );
    assert!(wakeups.len() >= 3, "waiters are woken by lease changes");
    assert_eq!(most, 1, "{wakeups:?}");
}

#[test]
fn a_timed_out_acquire_returns_nothing_and_leaves_no_node() {
    let mut scenario = catalog_variant("semaphore-fault-free", 3, 1_000, Vec::new());
    scenario.recipe_settings.max_leases = 1;
    scenario.workload.acquisitions = 1;
    scenario.workload.acquire_timeout_ms = Some(300);
    let trace = run_scenario(&scenario, 1);
    assert_all_hold(&scenario, &trace);
    assert_eq!(grants(&trace, 0), 1);
    for client in 1..3 {
        let timed_out = (trace.events.iter())
            .any(|e| matches!(notice(e, client), Some(Notice::TimedOut { .. })));
        assert!(timed_out, "c{client} gave up");
        assert_eq!(grants(&trace, client), 0, "c{client} got nothing");
        // Its lease node (if it got as far as creating one) was deleted.
        let lease_creates = (trace.events.iter())
            .filter(|e| on(e, client))
            .filter(|e| {
                matches!(&e.kind, EventKind::OpApplied { request: Request::Create { path, .. }, .. }
                    if path.name().contains("lease-"))
            })
            .count();
        let lease_deletes = (trace.events.iter())
            .filter(|e| on(e, client))
            .filter(|e| {
                matches!(&e.kind, EventKind::OpApplied { request: Request::Delete { path, .. }, .. }
                    if path.name().contains("lease-"))
            })
            .count();
        assert!(lease_deletes >= lease_creates, "c{client}");
    }
}

#[test]
fn a_paused_holders_lease_goes_to_a_waiter_while_it_still_believes() {
    let scenario = semaphore("gc-pause");
    let trace = run_scenario(&scenario, 0);
    assert!(violations(&scenario, &trace, Property::LeaseBound) >= 1);
    for property in [Property::HerdFree, Property::Progress, Property::NoOrphans] {
        assert_eq!(violations(&scenario, &trace, property), 0, "{property:?}");
    }
    assert_eq!(most_out(&trace), 3, "two leases, three believers");
    // The third holder's grant comes after the server expired the paused holder's session.
    let expired = index(&trace, 0, "the paused holder's expiry", |e| {
        matches!(&e.kind, EventKind::ServerSession { session, change: ServerSession::Expired }
            if sessions_of(&trace, 0).first() == Some(session))
    });
    let third = index(&trace, 0, "c2's grant", |e| {
        matches!(notice(e, 2), Some(Notice::Acquired { .. }))
    });
    assert!(expired < third);
}

#[test]
fn a_crashed_holders_lease_frees_up_when_its_session_expires() {
    let scenario = semaphore("crash");
    for seed in 0..5 {
        let trace = run_scenario(&scenario, seed);
        assert_all_hold(&scenario, &trace);
        let old = sessions_of(&trace, 0)[0];
        let expired = index(&trace, 0, "the crashed session's expiry", |e| {
            matches!(&e.kind, EventKind::ServerSession { session, change: ServerSession::Expired }
                if *session == old)
        });
        // Two leases were out (c0 and c1): c2 waits until c0's old session is gone.
        let third = index(&trace, 0, "c2's grant", |e| {
            matches!(notice(e, 2), Some(Notice::Acquired { .. }))
        });
        assert!(expired < third, "seed {seed}");
        assert_eq!(
            grants(&trace, 0),
            2,
            "seed {seed}: the restarted c0 is served"
        );
        assert!(sessions_of(&trace, 0).len() >= 2);
    }
}

#[test]
fn expired_sessions_free_their_leases_and_everyone_is_served() {
    let scenario = semaphore("session-expiry");
    for seed in 0..5 {
        let trace = run_scenario(&scenario, seed);
        assert_all_hold(&scenario, &trace);
        assert_eq!(count_server(&trace, ServerSession::Expired), 3);
        for client in 0..scenario.clients {
            assert!(grants(&trace, client) >= 1, "seed {seed}, c{client}");
        }
    }
}

#[test]
fn leases_survive_server_restarts() {
    let scenario = semaphore("server-restart");
    for seed in 0..5 {
        let trace = run_scenario(&scenario, seed);
        assert_all_hold(&scenario, &trace);
        // (A client whose session close is cut off by the second restart leaves its session
        // to expire once it is done: that is not a lost lease.)
        let lost = find(&trace, 0, |e| {
            matches!(
                &e.kind,
                EventKind::Notice {
                    notice: Notice::Lost { .. }
                }
            )
        });
        assert!(lost.is_none(), "seed {seed}: no session was lost");
        for client in 0..scenario.clients {
            assert_eq!(
                grants(&trace, client),
                scenario.workload.acquisitions as usize,
                "seed {seed}, c{client}"
            );
        }
    }
}
