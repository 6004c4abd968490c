//! LeaderSelector under the simulator: what Curator's TestLeaderSelector checks (one leader at
//! a time, leadership rotating in queue order as participants requeue, a cut-off leader's
//! leadership cancelled at Suspended, a killed session or a server restart cancelling it and
//! electing the next) on the catalog's leader-selector scenarios, varied per test. The
//! workloads run selectors without auto-requeue: each cycle after the first requeues.

use coordination::recipe::SessionEvent;
use coordination::recipes::{FailReason, Notice};
use scenarios::fault::{Fault, ScheduledFault};
use scenarios::scenario::Scenario;
use trace::{Event, EventKind, Trace};

use crate::elections::{assert_the_paused_leader_is_fenced_off, leader_pause};
use crate::query::{
    PAST_READ_TIMEOUT_MS, assert_all_hold, at, catalog_variant, clients_of, cut_off, first_notice,
    index, leaderships, long_sessions, notice, on, run_scenario,
};

/// The catalog scenario `leader-selector-<name>`, `clients` participants leading `cycles`
/// times each, for `hold_ms` each, under `faults`.
fn selector(
    name: &str,
    clients: u16,
    cycles: u32,
    hold_ms: u64,
    faults: Vec<ScheduledFault>,
) -> Scenario {
    let name = format!("leader-selector-{name}");
    catalog_variant(&name, clients, cycles, hold_ms, faults)
}

/// How client `client`'s leaderships began and ended, in order: `lead` (IsLeader),
/// `released` (the answer to Relinquish), `cancelled` (NotLeader), `not held` (a Relinquish
/// after a cancel).
fn story(trace: &Trace, client: u16) -> Vec<&'static str> {
    (trace.events.iter())
        .filter_map(|e| match notice(e, client)? {
            Notice::IsLeader { .. } => Some("lead"),
            Notice::Released { .. } => Some("released"),
            Notice::NotLeader { .. } => Some("cancelled"),
            Notice::Failed {
                reason: FailReason::NotHeld,
                ..
            } => Some("not held"),
            _ => None,
        })
        .collect()
}

#[test]
fn leadership_rotates_in_queue_order_with_increasing_tokens() {
    let scenario = selector("fault-free", 3, 3, 200, Vec::new());
    let trace = run_scenario(&scenario, 3);
    let leaders = leaderships(&trace);
    assert_eq!(clients_of(&leaders), [0, 1, 2, 0, 1, 2, 0, 1, 2]);
    assert!(leaders.windows(2).all(|w| w[0].1 < w[1].1), "{leaders:?}");
    assert_eq!(story(&trace, 1), ["lead", "released"].repeat(3));
    assert_all_hold(&scenario, &trace);
}

#[test]
fn ten_participants_lead_one_at_a_time_without_a_herd() {
    let mut scenario = selector("fault-free", 10, 1, 50, Vec::new());
    scenario.workload.stagger_ms = 0;
    let trace = run_scenario(&scenario, 21);
    let mut leaders = clients_of(&leaderships(&trace));
    leaders.sort();
    assert_eq!(leaders, (0..10).collect::<Vec<u16>>(), "each led once");
    // herd_free: each relinquish wakes at most the next participant.
    assert_all_hold(&scenario, &trace);
}

#[test]
fn a_paused_leader_still_believes_while_the_next_leads_and_its_write_is_rejected() {
    let scenario = selector("gc-pause", 2, 1, 1_000, leader_pause());
    let trace = run_scenario(&scenario, 7);
    assert_the_paused_leader_is_fenced_off(&scenario, &trace);
}

#[test]
fn a_cut_off_leader_is_cancelled_at_suspended_before_anyone_else_leads() {
    // Disconnected after the read timeout without a word from the server, back before the
    // server's T is up: the session survives, yet the leadership is cancelled at Suspended
    // (Curator's LeaderSelectorListenerAdapter), the node deleted once reconnected, and the
    // relinquish at the end of the hold finds nothing to give back.
    let cut = at(200, cut_off(0, PAST_READ_TIMEOUT_MS));
    let scenario = long_sessions(selector("partition", 2, 2, 12_000, vec![cut]));
    let trace = run_scenario(&scenario, 5);
    assert_eq!(
        story(&trace, 0),
        ["lead", "cancelled", "not held", "lead", "released"]
    );
    let cancelled = first_notice(&trace, 0, "c0's NotLeader", |n| {
        matches!(n, Notice::NotLeader { .. })
    });
    let session = |wanted: SessionEvent| {
        move |e: &Event| {
            on(e, 0) && matches!(e.kind, EventKind::Session { event } if event == wanted)
        }
    };
    let suspended = index(
        &trace,
        0,
        "c0's Suspended",
        session(SessionEvent::Suspended),
    );
    let reconnected = index(
        &trace,
        suspended,
        "c0's Reconnected",
        session(SessionEvent::Reconnected {
            session_changed: false,
        }),
    );
    assert!(
        suspended < cancelled && cancelled < reconnected,
        "cancelled at Suspended, not at Reconnected"
    );
    let next = first_notice(&trace, 1, "c1's IsLeader", |n| {
        matches!(n, Notice::IsLeader { .. })
    });
    assert!(cancelled < next, "c1 leads only after c0's cancel");
    assert_eq!(
        clients_of(&leaderships(&trace)),
        [0, 1, 0, 1],
        "c0 requeued behind c1"
    );
    assert_all_hold(&scenario, &trace);
}

#[test]
fn a_killed_session_cancels_leadership_once_and_the_next_one_leads() {
    let expire = Fault::ExpireSession { client: 0 };
    let scenario = selector("session-expiry", 2, 2, 2_000, vec![at(500, expire)]);
    let trace = run_scenario(&scenario, 11);
    let leaders = leaderships(&trace);
    assert_eq!(clients_of(&leaders), [0, 1, 0, 1]);
    assert!(leaders.windows(2).all(|w| w[0].1 < w[1].1), "{leaders:?}");
    assert_eq!(
        story(&trace, 0),
        ["lead", "cancelled", "not held", "lead", "released"],
        "one NotLeader for the expired leadership; it leads again on its new session"
    );
    assert_all_hold(&scenario, &trace);
}

#[test]
fn a_server_restart_cancels_the_leader_and_the_next_in_line_leads() {
    // As Curator's testKillServerThenCloseShouldElectNewLeader: the leader steps down, a
    // waiter keeps its place and leads, the former leader requeues behind it.
    let restart = at(500, Fault::RestartServer { down_ms: 2_000 });
    let scenario = long_sessions(selector("server-restart", 3, 2, 6_000, vec![restart]));
    let trace = run_scenario(&scenario, 2);
    assert_eq!(
        story(&trace, 0)[..3],
        ["lead", "cancelled", "not held"],
        "the leader was cancelled"
    );
    assert_eq!(clients_of(&leaderships(&trace))[..3], [0, 1, 2]);
    assert_all_hold(&scenario, &trace);
}
