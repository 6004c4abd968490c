//! Semaphore (Curator's InterProcessSemaphoreV2) under the simulator: what Curator's
//! TestInterProcessSemaphore checks — N leases out at once and never more, a timed-out
//! acquire returns nothing and leaves no node, a returned lease frees one waiter, a killed
//! session's lease frees up, leases survive a server restart — on the catalog's semaphore
//! scenarios, varied per test.

use coordination::recipes::{Mode, Notice};
use coordination::zk::Request;
use recipe_table::property::Property;
use scenarios::scenario::Scenario;
use trace::{EventKind, ServerSession, Trace};

use crate::query::{
    assert_everyone_granted, assert_everyone_served, catalog_scenario, catalog_variant,
    count_notices, count_server, find, first_notice, first_session_expiry, grants_of, is_acquired,
    long_sessions, most_at_once, on, run_checked, run_scenario, sessions_of, violations,
};
use crate::wakeups::lease_wakeups;

/// The catalog scenario `semaphore-<name>`, as it is.
fn semaphore(name: &str) -> Scenario {
    catalog_scenario(&format!("semaphore-{name}"))
}

/// How many lease nodes the server created and deleted for client `client`: (creates,
/// deletes).
fn lease_changes(trace: &Trace, client: u16) -> (usize, usize) {
    let (mut creates, mut deletes) = (0, 0);
    for event in trace.events.iter().filter(|e| on(e, client)) {
        let EventKind::OpApplied { request, .. } = &event.kind else {
            continue;
        };
        match request {
            Request::Create { path, .. } if path.name().contains("lease-") => creates += 1,
            Request::Delete { path, .. } if path.name().contains("lease-") => deletes += 1,
            _ => {}
        }
    }
    (creates, deletes)
}

/// True when c2's first grant comes after the server expired c0's first session: the two
/// leases were out to c0 and c1, and c0's went back only with its session.
fn c2_waits_for_c0_s_expiry(trace: &Trace) -> bool {
    let expired = first_session_expiry(trace, 0, "the expiry of c0's first session");
    expired < first_notice(trace, 2, "c2's grant", is_acquired)
}

#[test]
fn max_leases_are_out_at_once_never_more_and_everyone_is_served() {
    let scenario = semaphore("fault-free");
    let max = scenario.recipe_settings.max_leases as usize;
    assert_eq!(max, 3);
    for seed in 0..5 {
        let trace = run_checked(&scenario, seed);
        assert_eq!(most_at_once(&trace, Mode::Lease), max, "seed {seed}");
        assert_everyone_served(&scenario, &trace, seed);
    }
}

/// Two leases per owner (each acquire is one more lease), two owners, three leases: the
/// leases out at once are counted, not their holders, and they reach the bound without
/// passing it. (With more owners than leases, owners that each hold one and wait for a second
/// would deadlock, as Curator's would.)
#[test]
fn leases_not_holders_reach_the_bound() {
    let mut scenario = semaphore("fault-free");
    scenario.clients = 2;
    scenario.workload.reentrant = 2;
    let max = scenario.recipe_settings.max_leases as usize;
    let most = (0..5)
        .map(|seed| {
            let trace = run_checked(&scenario, seed);
            for client in 0..2 {
                assert_eq!(
                    grants_of(&trace, client),
                    4,
                    "seed {seed}: 2 holds of 2 leases"
                );
            }
            most_at_once(&trace, Mode::Lease)
        })
        .max();
    assert_eq!(most, Some(max));
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
    let mut scenario = catalog_variant("semaphore-fault-free", 3, 1, 1_000, Vec::new());
    scenario.recipe_settings.max_leases = 1;
    scenario.workload.acquire_timeout_ms = Some(300);
    let trace = run_checked(&scenario, 1);
    assert_eq!(grants_of(&trace, 0), 1);
    for client in 1..3 {
        let timed_out = count_notices(&trace, client, |n| matches!(n, Notice::TimedOut { .. })) > 0;
        assert!(timed_out, "c{client} gave up");
        assert_eq!(grants_of(&trace, client), 0, "c{client} got nothing");
        // Its lease node (if it got as far as creating one) was deleted.
        let (lease_creates, lease_deletes) = lease_changes(&trace, client);
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
    assert_eq!(
        most_at_once(&trace, Mode::Lease),
        3,
        "two leases, three believers"
    );
    // The third holder's grant comes after the server expired the paused holder's session.
    assert!(c2_waits_for_c0_s_expiry(&trace));
}

#[test]
fn a_crashed_holders_lease_frees_up_when_its_session_expires() {
    let scenario = semaphore("crash");
    for seed in 0..5 {
        let trace = run_checked(&scenario, seed);
        // Two leases were out (c0 and c1): c2 waits until c0's old session is gone.
        assert!(c2_waits_for_c0_s_expiry(&trace), "seed {seed}");
        assert_eq!(
            grants_of(&trace, 0),
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
        // Not run_checked: herd_free is a finding of this scenario since the lease loop (see its
        // description); what this test pins is that every waiter is served.
        let trace = run_scenario(&scenario, seed);
        // The expiry at 2 s finds no session when c0 is done by then (c1 and c3 spent
        // a second each without a session, reconnecting, and left it the leases).
        let expired = count_server(&trace, ServerSession::Expired);
        assert!(
            (2..=3).contains(&expired),
            "seed {seed}: {expired} expiries"
        );
        assert_everyone_granted(&scenario, &trace, seed);
    }
}

#[test]
fn leases_survive_server_restarts() {
    // With sessions long enough to outlast the restarts' downtime and the reconnect sleeps.
    let scenario = long_sessions(semaphore("server-restart"));
    for seed in 0..5 {
        let trace = run_checked(&scenario, seed);
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
        assert_everyone_served(&scenario, &trace, seed);
    }
}
