//! LeaderLatch under the simulator: what Curator's TestLeaderLatch checks (one leader,
//! leadership passing in order, Suspended dropping leadership, a killed session passing it
//! on, a server restart) on the catalog's leader-latch scenarios, varied per test.

use coordination::fencing::Token;
use coordination::framework::FrameworkConfig;
use coordination::recipe::SessionEvent;
use coordination::recipes::Notice;
use recipe_table::property::Property;
use scenarios::fault::{Fault, ScheduledFault};
use scenarios::scenario::Scenario;
use trace::{EventKind, Trace};

use crate::elections::{assert_the_paused_leader_is_fenced_off, leader_pause};
use crate::query::{
    PAST_READ_TIMEOUT_MS, assert_all_hold, at, catalog_scenario, catalog_variant, clients_of,
    cut_off, first_notice, first_session_expiry, index, leaderships, long_sessions, notice, on,
    run_scenario, violations,
};
use crate::wakeups::woken_by_each_delete;

/// A catalog leader-latch scenario (`leader-latch-<name>`), `clients` participants leading
/// once each, for `hold_ms` each, with `faults`.
fn latch(name: &str, clients: u16, hold_ms: u64, faults: Vec<ScheduledFault>) -> Scenario {
    catalog_variant(&format!("leader-latch-{name}"), clients, 1, hold_ms, faults)
}

/// Client `client`'s listener notices: `Some(token)` for IsLeader, `None` for NotLeader.
fn listener(trace: &Trace, client: u16) -> Vec<Option<Token>> {
    (trace.events.iter())
        .filter_map(|e| match notice(e, client)? {
            Notice::IsLeader { token, .. } => Some(Some(token)),
            Notice::NotLeader { .. } => Some(None),
            _ => None,
        })
        .collect()
}

#[test]
fn leadership_passes_in_start_order_with_increasing_tokens() {
    let scenario = latch("fault-free", 4, 200, Vec::new());
    let trace = run_scenario(&scenario, 3);
    let leaders = leaderships(&trace);
    assert_eq!(clients_of(&leaders), [0, 1, 2, 3]);
    assert!(leaders.windows(2).all(|w| w[0].1 < w[1].1), "{leaders:?}");
    assert_all_hold(&scenario, &trace);
}

#[test]
fn each_close_wakes_at_most_the_next_participant() {
    let mut scenario = latch("fault-free", 10, 50, Vec::new());
    scenario.workload.stagger_ms = 0;
    let trace = run_scenario(&scenario, 21);
    let woken = woken_by_each_delete(&trace, coordination::recipes::LATCH_NAME);
    assert_eq!(woken.len(), 10, "every participant closed");
    let most = woken.iter().copied().max();
    assert_eq!(
        most,
        Some(1),
        "a close wakes one participant, never the herd"
    );
    assert_all_hold(&scenario, &trace);
}

#[test]
fn a_paused_leader_still_believes_while_the_next_leads_and_its_write_is_rejected() {
    let scenario = latch("gc-pause", 2, 1_000, leader_pause());
    let trace = run_scenario(&scenario, 7);
    assert_the_paused_leader_is_fenced_off(&scenario, &trace);
}

#[test]
fn a_cut_off_leader_steps_down_at_once_and_leads_again_with_the_same_token() {
    // Disconnected after the read timeout without a word from the server, back before the
    // server's T is up: the session survives, the latch node stays first, and nobody else
    // leads meanwhile.
    let cut = at(200, cut_off(0, PAST_READ_TIMEOUT_MS));
    let scenario = long_sessions(latch("partition", 2, 12_000, vec![cut]));
    let trace = run_scenario(&scenario, 5);
    let token = leaderships(&trace)[0].1;
    assert_eq!(listener(&trace, 0), [Some(token), None, Some(token)]);
    let second = leaderships(&trace)[2];
    assert_eq!(second.0, 1, "c1 leads only after c0 closes");
    assert_all_hold(&scenario, &trace);
}

#[test]
fn an_expired_leader_hears_not_leader_once_and_the_next_one_leads() {
    let expire = Fault::ExpireSession { client: 0 };
    let scenario = latch("session-expiry", 2, 2_000, vec![at(500, expire)]);
    let trace = run_scenario(&scenario, 11);
    let leaders = leaderships(&trace);
    assert_eq!(clients_of(&leaders), [0, 1]);
    assert!(leaders[1].1 > leaders[0].1);
    assert_eq!(listener(&trace, 0), [Some(leaders[0].1), None]);
    assert_all_hold(&scenario, &trace);
}

#[test]
fn after_a_server_restart_the_same_leader_leads_again() {
    // Down 2 s: the clients re-attach within the sessions' fresh 9 s.
    let restart = Fault::RestartServer { down_ms: 2_000 };
    let scenario = long_sessions(latch("server-restart", 3, 6_000, vec![at(500, restart)]));
    let trace = run_scenario(&scenario, 2);
    let leaders = leaderships(&trace);
    let token = leaders[0].1;
    assert_eq!(leaders[..2], [(0, token), (0, token)], "{leaders:?}");
    assert_eq!(clients_of(&leaders[2..]), [1, 2]);
    assert_all_hold(&scenario, &trace);
}

#[test]
fn under_the_session_based_policy_a_cut_off_leader_overlaps_its_successor_until_its_lost() {
    let scenario = catalog_scenario("leader-latch-session-based");
    let trace = run_scenario(&scenario, 11);
    let expired = first_session_expiry(&trace, 0, "the server's expiry of c0's session");
    let successor = first_notice(&trace, 1, "c1's IsLeader", |n| {
        matches!(n, Notice::IsLeader { .. })
    });
    let stepped_down = first_notice(&trace, 0, "c0's NotLeader", |n| {
        matches!(n, Notice::NotLeader { .. })
    });
    let lost = index(&trace, 0, "c0's LOST", |e| {
        on(e, 0)
            && matches!(
                e.kind,
                EventKind::Session {
                    event: SessionEvent::Lost { .. }
                }
            )
    });
    assert!(expired < successor, "c1 leads once c0's session is gone");
    assert!(
        successor < stepped_down,
        "c0 still leads by belief when c1 starts leading"
    );
    assert_eq!(
        stepped_down,
        lost + 1,
        "c0 steps down at its LOST, not before"
    );
    let belief = violations(&scenario, &trace, Property::LeaderUniqueBelief);
    assert_eq!(belief, 1, "one overlap by belief");
    let live = violations(&scenario, &trace, Property::LiveSessionExclusion);
    assert_eq!(live, 0, "never two leaders on live sessions");
    // The same run under the standard policy: c0 steps down at SUSPENDED, before the expiry.
    let mut standard = scenario.clone();
    standard.framework = FrameworkConfig::default();
    let trace = run_scenario(&standard, 11);
    let stepped_down = first_notice(&trace, 0, "c0's NotLeader", |n| {
        matches!(n, Notice::NotLeader { .. })
    });
    assert!(stepped_down < first_session_expiry(&trace, 0, "the expiry"));
    assert_all_hold(&standard, &trace);
}
