//! `LeaderSelector` driven input by input through the harness: what Curator's
//! TestLeaderSelector checks (one leader at a time, in order; auto-requeue; interruptLeadership;
//! a killed session or a server restart cancels leadership; close while leading; Suspended
//! cancels; the leader's node is deleted).

use super::LeaderSelector;
use crate::fencing::Token;
use crate::harness::Harness;
use crate::ids::Owner;
use crate::recipes::tests::{
    A, B, RELEASING_AT_LOST, drop_and_reconnect, failed, fire_lost_timer, give_up_session, in_turn,
    last_notice, lose_waiter_session,
};
use crate::recipes::{Call, FailReason, Mode, Notice};
use crate::zk::Path;

const PATH: &str = "/election/s";

fn selectors(n: u16, auto_requeue: bool) -> Harness<LeaderSelector> {
    Harness::new(n, || {
        LeaderSelector::new(Path::new(PATH).unwrap(), auto_requeue)
    })
}

/// `selectors` whose internal mutexes give up at LOST (`OnLost::Release`); Curator's keep
/// their waiters queued.
fn selectors_releasing_at_lost(n: u16, auto_requeue: bool) -> Harness<LeaderSelector> {
    Harness::with_config(n, RELEASING_AT_LOST, || {
        LeaderSelector::new(Path::new(PATH).unwrap(), auto_requeue)
    })
}

fn start(owner: Owner) -> Call {
    Call::Start { owner }
}

fn requeue(owner: Owner) -> Call {
    Call::Requeue { owner }
}

fn relinquish(owner: Owner) -> Call {
    Call::Relinquish { owner }
}

/// The answer to a `Relinquish` by a leader.
fn released(owner: Owner) -> Notice {
    Notice::Released {
        owner,
        remaining: 0,
        mode: Mode::Exclusive,
    }
}

fn close(owner: Owner) -> Call {
    Call::Close {
        owner,
        notify: false,
    }
}

/// Two selectors on one client: `A` started first and leads, `B` waits behind it.
fn two_on_one_client(auto_requeue: bool) -> Harness<LeaderSelector> {
    two_on_one_client_in(selectors(1, auto_requeue))
}

/// Two owners of client 0 started on `h` (one client): A leads.
fn two_on_one_client_in(mut h: Harness<LeaderSelector>) -> Harness<LeaderSelector> {
    h.call(0, start(A));
    h.call(0, start(B));
    h.settle();
    assert_eq!(leaders(&h), [(0, A)]);
    h
}

/// The leaders now, as (client, owner), by the recipes' own state.
fn leaders(h: &Harness<LeaderSelector>) -> Vec<(usize, Owner)> {
    let mut leaders = Vec::new();
    for (c, peer) in h.peers.iter().enumerate() {
        for owner in [A, B] {
            if peer.client.recipe().leading(owner).is_some() {
                leaders.push((c, owner));
            }
        }
    }
    leaders
}

/// The tokens of client `c`'s `IsLeader` notices, in order.
fn led(h: &Harness<LeaderSelector>, c: usize) -> Vec<Token> {
    h.peers[c]
        .notices
        .iter()
        .filter_map(|n| match n {
            Notice::IsLeader { token, .. } => Some(*token),
            _ => None,
        })
        .collect()
}

/// How client `c`'s leaderships of `owner` began and ended, in order: `lead` (`IsLeader`),
/// `released` (`Released`, the answer to `Relinquish`), `cancelled` (`NotLeader`).
fn leadership_changes(h: &Harness<LeaderSelector>, c: usize, owner: Owner) -> Vec<&'static str> {
    h.peers[c]
        .notices
        .iter()
        .filter(|n| n.owner() == owner)
        .filter_map(|n| match n {
            Notice::IsLeader { .. } => Some("lead"),
            Notice::Released { .. } => Some("released"),
            Notice::NotLeader { .. } => Some("cancelled"),
            _ => None,
        })
        .collect()
}

/// Connections drop for every client, then come back to the same sessions (the server
/// restarted within the session timeout).
fn restart_server(h: &mut Harness<LeaderSelector>) {
    for c in 0..h.peers.len() {
        h.drop_connection(c, false);
    }
    h.settle();
    for c in 0..h.peers.len() {
        h.reconnect(c);
    }
    h.settle();
}

#[test]
fn one_leader_at_a_time_in_start_order_with_rising_tokens_and_nothing_left() {
    let mut h = selectors(5, false);
    in_turn(&mut h, [start(A); 5]);
    assert_eq!(leaders(&h), [(0, A)]);
    let mut tokens = led(&h, 0);
    for c in 0..4 {
        h.call(c, relinquish(A));
        h.settle();
        assert_eq!(last_notice(&h, c), Some(released(A)));
        assert_eq!(leaders(&h), [(c + 1, A)], "leadership passes in order");
        tokens.extend(led(&h, c + 1));
    }
    assert_eq!(tokens.len(), 5, "each led once");
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "tokens {tokens:?}");
    h.call(4, relinquish(A));
    h.settle();
    assert!(leaders(&h).is_empty());
    assert!(h.children(PATH).is_empty());
}

#[test]
fn rotating_leadership_with_requeue_visits_everyone_once_per_round() {
    let mut h = selectors(3, false);
    let mut order = Vec::new();
    for round in 0..3 {
        for c in 0..3 {
            let queue = if round == 0 { start } else { requeue };
            h.call(c, queue(A));
            h.settle();
        }
        for _ in 0..3 {
            let [(c, _)] = leaders(&h)[..] else {
                panic!("one leader expected: {:?}", leaders(&h));
            };
            order.push(c);
            h.call(c, relinquish(A));
            h.settle();
        }
    }
    assert_eq!(order, [0, 1, 2, 0, 1, 2, 0, 1, 2]);
    let tokens: Vec<Token> = (0..3).flat_map(|c| led(&h, c)).collect();
    assert_eq!(tokens.len(), 9);
}

#[test]
fn without_auto_requeue_a_relinquished_leader_waits_for_requeue() {
    let mut h = selectors(1, false);
    h.call(0, start(A));
    h.settle();
    h.call(0, relinquish(A));
    h.settle();
    assert_eq!(leadership_changes(&h, 0, A), ["lead", "released"]);
    assert!(!h.peers[0].client.recipe().queued(A));
    assert!(h.children(PATH).is_empty());
    h.call(0, requeue(A));
    h.settle();
    assert_eq!(leadership_changes(&h, 0, A), ["lead", "released", "lead"]);
    let [first, second] = led(&h, 0)[..] else {
        panic!("two leaderships");
    };
    assert!(second > first);
}

#[test]
fn requeue_while_queued_or_leading_does_nothing() {
    let mut h = selectors(2, false);
    in_turn(&mut h, [start(A); 2]);
    let notices = [h.peers[0].notices.len(), h.peers[1].notices.len()];
    h.call(0, requeue(A));
    h.call(1, requeue(A));
    h.settle();
    assert_eq!(
        [h.peers[0].notices.len(), h.peers[1].notices.len()],
        notices,
        "no answer: Curator's requeue() returns false"
    );
    assert_eq!(h.children(PATH).len(), 2, "no second node");
    assert!(h.peers[1].client.recipe().queued(A));
}

#[test]
fn auto_requeue_gives_leadership_again() {
    let mut h = selectors(1, true);
    h.call(0, start(A));
    h.settle();
    h.call(0, relinquish(A));
    h.settle();
    assert_eq!(leadership_changes(&h, 0, A), ["lead", "released", "lead"]);
    let [first, second] = led(&h, 0)[..] else {
        panic!("two leaderships");
    };
    assert!(second > first);
    assert_eq!(h.children(PATH).len(), 1, "the old node went");
}

#[test]
fn auto_requeue_goes_to_the_back_of_the_queue() {
    let mut h = selectors(3, true);
    in_turn(&mut h, [start(A); 3]);
    let mut order = Vec::new();
    for _ in 0..6 {
        let [(c, _)] = leaders(&h)[..] else {
            panic!("one leader expected: {:?}", leaders(&h));
        };
        order.push(c);
        h.call(c, relinquish(A));
        h.settle();
    }
    assert_eq!(order, [0, 1, 2, 0, 1, 2]);
    assert_eq!(h.children(PATH).len(), 3, "everyone queued, one node each");
}

#[test]
fn interrupt_leadership_ends_it_and_deletes_the_node() {
    let mut h = selectors(2, false);
    in_turn(&mut h, [start(A); 2]);
    h.call(0, Call::Interrupt { owner: A });
    h.settle();
    assert_eq!(last_notice(&h, 0), Some(Notice::NotLeader { owner: A }));
    assert_eq!(leaders(&h), [(1, A)]);
    assert_eq!(h.children(PATH).len(), 1, "only the new leader's node");
}

#[test]
fn interrupt_leadership_with_auto_requeue_leads_again() {
    let mut h = selectors(1, true);
    h.call(0, start(A));
    h.settle();
    h.call(0, Call::Interrupt { owner: A });
    h.settle();
    assert_eq!(leadership_changes(&h, 0, A), ["lead", "cancelled", "lead"]);
}

#[test]
fn interrupt_or_relinquish_without_leadership_fails_and_keeps_the_place() {
    let mut h = selectors(2, true);
    in_turn(&mut h, [start(A); 2]);
    for call in [Call::Interrupt { owner: A }, relinquish(A)] {
        h.call(1, call);
        h.settle();
        assert_eq!(last_notice(&h, 1), failed(FailReason::NotHeld));
    }
    assert!(h.peers[1].client.recipe().queued(A));
    h.call(0, relinquish(A));
    h.settle();
    assert_eq!(leaders(&h), [(1, A)], "c1 kept its place ahead of c0");
}

#[test]
fn suspended_cancels_leadership_at_once_and_lost_adds_nothing() {
    let mut h = selectors(2, false);
    in_turn(&mut h, [start(A); 2]);
    h.drop_connection(0, false);
    h.settle();
    assert_eq!(
        last_notice(&h, 0),
        Some(Notice::NotLeader { owner: A }),
        "cancelled before any reconnect"
    );
    assert!(leaders(&h).is_empty(), "c0's node is still there");
    fire_lost_timer(&mut h, 0);
    assert_eq!(
        leadership_changes(&h, 0, A),
        ["lead", "cancelled"],
        "one NotLeader"
    );
    assert_eq!(
        leaders(&h),
        [(1, A)],
        "the guaranteed delete ran on the new session"
    );
    assert_eq!(h.children(PATH).len(), 1);
}

#[test]
fn the_cancelled_leaders_node_is_deleted_on_reconnect() {
    let mut h = selectors(1, false);
    h.call(0, start(A));
    h.settle();
    h.drop_connection(0, false);
    h.settle();
    assert_eq!(leadership_changes(&h, 0, A), ["lead", "cancelled"]);
    assert_eq!(h.children(PATH).len(), 1, "nothing reaches the server");
    h.reconnect(0);
    h.settle();
    assert!(h.children(PATH).is_empty());
    assert_eq!(
        leadership_changes(&h, 0, A),
        ["lead", "cancelled"],
        "no requeue"
    );
}

#[test]
fn a_waiter_keeps_its_place_through_a_suspension() {
    let mut h = selectors(2, false);
    in_turn(&mut h, [start(A); 2]);
    drop_and_reconnect(&mut h, 1, false);
    assert!(h.peers[1].client.recipe().queued(A));
    h.call(0, relinquish(A));
    h.settle();
    assert_eq!(leaders(&h), [(1, A)]);
}

#[test]
fn a_killed_session_cancels_leadership_then_requeue_elects_one_and_close_passes_it_on() {
    // Two selectors on one client, as Curator's testKillSessionThenCloseShouldElectNewLeader.
    let mut h = two_on_one_client_in(selectors_releasing_at_lost(1, false));
    h.drop_connection(0, false);
    h.expire(0, true);
    h.settle();
    assert_eq!(leadership_changes(&h, 0, A), ["lead", "cancelled"]);
    assert!(h.peers[0].notices.contains(&Notice::Failed {
        owner: B,
        reason: FailReason::SessionLost,
    }));
    assert!(leaders(&h).is_empty());
    h.call(0, requeue(A));
    h.call(0, requeue(B));
    h.settle();
    assert_eq!(leaders(&h), [(0, A)]);
    h.call(0, close(A));
    h.settle();
    assert_eq!(
        h.peers[0].notices[h.peers[0].notices.len() - 3..],
        [
            Notice::NotLeader { owner: A },
            Notice::Closed { owner: A },
            Notice::IsLeader {
                owner: B,
                token: led(&h, 0).last().copied().unwrap(),
            },
        ]
    );
    assert_eq!(leaders(&h), [(0, B)]);
}

#[test]
fn a_server_restart_cancels_leadership_and_auto_requeue_elects_one_again() {
    // As Curator's testKillServerThenCloseShouldElectNewLeader: auto-requeue, no requeue call.
    let mut h = two_on_one_client(true);
    restart_server(&mut h);
    assert_eq!(leadership_changes(&h, 0, A), ["lead", "cancelled"]);
    assert_eq!(
        leaders(&h),
        [(0, B)],
        "B kept its place, A queued behind it"
    );
    assert_eq!(h.children(PATH).len(), 2);
    h.call(0, close(B));
    h.settle();
    assert_eq!(leaders(&h), [(0, A)]);
    assert_eq!(h.children(PATH).len(), 1);
}

#[test]
fn a_waiters_lost_session_fails_its_attempt_without_auto_requeue() {
    let mut h = selectors_releasing_at_lost(2, false);
    in_turn(&mut h, [start(A); 2]);
    lose_waiter_session(&mut h, false);
    assert!(!h.peers[1].client.recipe().queued(A));
    assert_eq!(h.children(PATH).len(), 1, "the waiter's node was deleted");
    h.call(1, requeue(A));
    h.settle();
    h.call(0, relinquish(A));
    h.settle();
    assert_eq!(leaders(&h), [(1, A)]);
}

#[test]
fn a_waiters_lost_session_requeues_it_on_the_new_session_with_auto_requeue() {
    let mut h = selectors_releasing_at_lost(2, true);
    in_turn(&mut h, [start(A); 2]);
    give_up_session(&mut h, 1, false);
    assert!(
        !h.peers[1]
            .notices
            .iter()
            .any(|n| matches!(n, Notice::Failed { .. })),
        "a requeued attempt is not announced"
    );
    assert!(h.peers[1].client.recipe().queued(A));
    let names = h.children(PATH);
    assert_eq!(names.len(), 2);
    let node = Path::new(PATH).unwrap().child(&names[1]).unwrap();
    assert_eq!(
        h.server.tree.get(&node).unwrap().stat.ephemeral_owner,
        Some(h.peers[1].handle.session),
        "queued again on the new session"
    );
    h.call(0, relinquish(A));
    h.settle();
    assert_eq!(leaders(&h), [(1, A)]);
}

#[test]
fn closing_a_waiter_leaves_the_leader_and_closing_the_leader_leaves_nothing() {
    let mut h = selectors(2, false);
    in_turn(&mut h, [start(A); 2]);
    h.call(1, close(A));
    h.settle();
    assert_eq!(last_notice(&h, 1), Some(Notice::Closed { owner: A }));
    assert_eq!(leaders(&h), [(0, A)]);
    h.call(0, close(A));
    h.settle();
    assert_eq!(leadership_changes(&h, 0, A), ["lead", "cancelled"]);
    assert_eq!(last_notice(&h, 0), Some(Notice::Closed { owner: A }));
    assert!(leaders(&h).is_empty());
    assert!(h.children(PATH).is_empty());
    for c in 0..2 {
        assert_eq!(
            h.peers[c].client.recipe(),
            &LeaderSelector::new(Path::new(PATH).unwrap(), false),
            "c{c} forgot the owner"
        );
    }
}

#[test]
fn closing_during_the_create_deletes_the_node_it_produces() {
    let mut h = selectors(1, true);
    h.call(0, start(A));
    h.call(0, close(A));
    h.settle();
    assert_eq!(h.peers[0].notices, [Notice::Closed { owner: A }]);
    assert!(h.children(PATH).is_empty());
}

#[test]
fn calls_in_the_wrong_state_fail() {
    let mut h = selectors(1, false);
    for call in [
        requeue(A),
        relinquish(A),
        Call::Interrupt { owner: A },
        close(A),
    ] {
        h.call(0, call);
        assert_eq!(
            last_notice(&h, 0),
            failed(FailReason::NotStarted),
            "{call:?}"
        );
    }
    h.call(0, start(A));
    h.settle();
    h.call(0, start(A));
    assert_eq!(last_notice(&h, 0), failed(FailReason::AlreadyStarted));
    h.call(0, Call::acquire(A, None));
    assert_eq!(last_notice(&h, 0), failed(FailReason::Unsupported));
    assert_eq!(leaders(&h), [(0, A)], "failed calls changed nothing");
    h.call(0, close(A));
    h.call(0, relinquish(A));
    assert_eq!(last_notice(&h, 0), failed(FailReason::NotStarted));
    h.call(0, start(A));
    h.settle();
    assert_eq!(
        leadership_changes(&h, 0, A),
        ["lead", "cancelled", "lead"],
        "started anew"
    );
}

#[test]
fn a_relinquish_after_a_cancel_fails_and_a_requeue_leads_again() {
    // What the workloads do when a leadership is cancelled under them.
    let mut h = selectors(1, false);
    h.call(0, start(A));
    h.settle();
    h.drop_connection(0, false);
    h.settle();
    h.call(0, relinquish(A));
    assert_eq!(last_notice(&h, 0), failed(FailReason::NotHeld));
    h.call(0, requeue(A));
    h.reconnect(0);
    h.settle();
    assert_eq!(leadership_changes(&h, 0, A), ["lead", "cancelled", "lead"]);
    assert_eq!(
        h.children(PATH).len(),
        1,
        "the old node went, the new one leads"
    );
}
