//! `LeaderLatch` driven input by input through the harness: what Curator's TestLeaderLatch
//! checks (one leader, leadership passing in order, await with a timeout, listener
//! notifications, Suspended, killed sessions, server restarts, close modes, hasLeadership).

use std::time::Duration;

use super::LeaderLatch;
use crate::fencing::Token;
use crate::framework::{ErrorPolicy, FrameworkConfig};
use crate::harness::Harness;
use crate::recipes::tests::{
    A, B, assert_each_watches_the_node_ahead, c1_about_to_watch_c0, call_while_disconnected,
    drop_and_reconnect, give_up_session, in_turn, last_notice, sent, woken,
};
use crate::recipes::{Call, FailReason, Notice};
use crate::zk::{EventKind, Path, Request, SessionId};

const PATH: &str = "/election/l";

fn latches(n: u16) -> Harness<LeaderLatch> {
    Harness::new(n, || LeaderLatch::new(Path::new(PATH).unwrap()))
}

fn start(owner: crate::ids::Owner) -> Call {
    Call::Start { owner }
}

fn close(owner: crate::ids::Owner, notify: bool) -> Call {
    Call::Close { owner, notify }
}

/// Starts owner `A` on each of the first `n` clients, one after the other.
fn started(n: u16) -> Harness<LeaderLatch> {
    let mut h = latches(n);
    in_turn(&mut h, std::iter::repeat_n(start(A), usize::from(n)));
    h
}

/// The clients whose owner `A` leads.
fn leaders(h: &Harness<LeaderLatch>) -> Vec<usize> {
    (0..h.peers.len())
        .filter(|&c| h.peers[c].client.recipe().leading(A).is_some())
        .collect()
}

/// The listener notices (`IsLeader` with its token as `Some`, `NotLeader` as `None`) client
/// `c` has had.
fn listener(h: &Harness<LeaderLatch>, c: usize) -> Vec<Option<Token>> {
    h.peers[c]
        .notices
        .iter()
        .filter_map(|n| match n {
            Notice::IsLeader { token, .. } => Some(Some(*token)),
            Notice::NotLeader { .. } => Some(None),
            _ => None,
        })
        .collect()
}

/// What `HasLeadership` answers for owner `A` on client `c`.
fn has_leadership(h: &mut Harness<LeaderLatch>, c: usize) -> bool {
    h.call(c, Call::HasLeadership { owner: A });
    match last_notice(h, c) {
        Some(Notice::Leadership { owner: A, leader }) => leader,
        other => panic!("c{c} answered {other:?}"),
    }
}

fn awaited(leader: bool) -> Option<Notice> {
    Some(Notice::Awaited { owner: A, leader })
}

#[test]
fn one_leader_among_five_and_leadership_passes_in_order_on_close() {
    let mut h = started(5);
    assert_eq!(leaders(&h), [0]);
    assert_eq!(h.children(PATH).len(), 5);
    let mut tokens = vec![h.peers[0].client.recipe().leading(A).unwrap()];
    for c in 0..4 {
        h.call(c, close(A, false));
        h.settle();
        assert_eq!(last_notice(&h, c), Some(Notice::Closed { owner: A }));
        assert_eq!(leaders(&h), [c + 1], "the next in line leads");
        tokens.push(h.peers[c + 1].client.recipe().leading(A).unwrap());
    }
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "tokens {tokens:?}");
    h.call(4, close(A, false));
    h.settle();
    assert!(h.children(PATH).is_empty());
}

#[test]
fn each_participant_watches_the_node_ahead_and_a_close_wakes_one() {
    let mut h = started(4);
    assert_each_watches_the_node_ahead(&h, PATH);
    h.call(0, close(A, false));
    h.settle();
    assert_eq!(woken(&h), [1]);
    assert_eq!(h.peers[1].watched[0].kind, EventKind::NodeDeleted);
}

#[test]
fn closing_a_participant_in_the_middle_does_not_make_its_successor_leader() {
    // Curator's testCorrectWatching: the successor lists again and watches the node ahead.
    let mut h = started(4);
    h.call(2, close(A, false));
    h.settle();
    assert_eq!(leaders(&h), [0]);
    assert!(listener(&h, 3).is_empty());
    let names = h.children(PATH);
    let last_watch = h.peers[3].sent.iter().rev().find_map(|r| match r {
        Request::GetData { path, watch: true } => Some(path.name().to_owned()),
        _ => None,
    });
    assert_eq!(last_watch.as_deref(), Some(names[1].as_str()));
    h.call(0, close(A, false));
    h.call(1, close(A, false));
    h.settle();
    assert_eq!(leaders(&h), [3]);
}

#[test]
fn a_node_ahead_gone_before_the_watch_is_set_means_list_again_not_hang() {
    let mut h = latches(2);
    c1_about_to_watch_c0(&mut h, start(A));
    h.call(0, close(A, false));
    assert!(h.apply_next(0), "c0's delete applies before c1's get_data");
    h.settle();
    assert_eq!(leaders(&h), [1]);
    assert!(h.peers[1].watched.is_empty(), "no watch was ever set");
}

#[test]
fn await_answers_when_leadership_comes_at_the_timeout_or_at_once() {
    let mut h = latches(2);
    h.call(
        1,
        Call::Await {
            owner: A,
            timeout: None,
        },
    );
    assert_eq!(last_notice(&h, 1), awaited(false), "not started");
    h.call(0, start(A));
    h.settle();
    h.call(
        0,
        Call::Await {
            owner: A,
            timeout: Some(Duration::from_secs(1)),
        },
    );
    assert_eq!(last_notice(&h, 0), awaited(true), "leads already");
    h.call(1, start(A));
    h.settle();
    h.call(
        1,
        Call::Await {
            owner: A,
            timeout: Some(Duration::from_secs(1)),
        },
    );
    let timer = h.only_timer(1);
    h.fire(1, timer);
    assert_eq!(last_notice(&h, 1), awaited(false), "timed out");
    h.call(
        1,
        Call::Await {
            owner: A,
            timeout: None,
        },
    );
    h.call(
        1,
        Call::Await {
            owner: A,
            timeout: Some(Duration::from_secs(5)),
        },
    );
    let timer = h.only_timer(1);
    h.call(0, close(A, false));
    h.settle();
    let tail = &h.peers[1].notices[h.peers[1].notices.len() - 3..];
    assert!(matches!(tail[0], Notice::IsLeader { owner: A, .. }));
    assert_eq!(tail[1..], [awaited(true).unwrap(), awaited(true).unwrap()]);
    assert!(
        !h.peers[1].timers.contains_key(&timer),
        "the await's timer is cancelled"
    );
}

#[test]
fn close_answers_a_pending_await_with_false() {
    let mut h = started(2);
    h.call(
        1,
        Call::Await {
            owner: A,
            timeout: None,
        },
    );
    h.call(1, close(A, true));
    assert_eq!(
        h.peers[1].notices,
        [awaited(false).unwrap(), Notice::Closed { owner: A }]
    );
}

#[test]
fn listener_hears_is_leader_once_and_notify_close_says_not_leader() {
    let mut h = started(2);
    let token = h.peers[0].client.recipe().leading(A).unwrap();
    assert_eq!(listener(&h, 0), [Some(token)]);
    assert!(listener(&h, 1).is_empty());
    h.call(0, close(A, true));
    h.settle();
    assert_eq!(listener(&h, 0), [Some(token), None]);
    assert_eq!(last_notice(&h, 0), Some(Notice::Closed { owner: A }));
    assert!(!has_leadership(&mut h, 0), "false after close");
    assert_eq!(listener(&h, 1).len(), 1);
}

#[test]
fn a_silent_close_says_nothing_to_the_listener() {
    let mut h = started(1);
    h.call(0, close(A, false));
    h.settle();
    assert_eq!(listener(&h, 0).len(), 1, "IsLeader only");
    assert_eq!(last_notice(&h, 0), Some(Notice::Closed { owner: A }));
    assert!(!has_leadership(&mut h, 0));
    assert!(h.children(PATH).is_empty());
}

#[test]
fn start_twice_and_close_unstarted_fail_and_a_start_after_close_is_a_new_latch() {
    let mut h = started(1);
    let first = h.peers[0].client.recipe().leading(A).unwrap();
    h.call(0, start(A));
    assert_eq!(
        last_notice(&h, 0),
        Some(Notice::Failed {
            owner: A,
            reason: FailReason::AlreadyStarted,
        })
    );
    h.call(0, close(B, false));
    assert_eq!(
        last_notice(&h, 0),
        Some(Notice::Failed {
            owner: B,
            reason: FailReason::NotStarted,
        })
    );
    h.call(0, close(A, false));
    h.call(0, start(A));
    h.settle();
    let second = h.peers[0].client.recipe().leading(A).unwrap();
    assert!(second > first, "a new node");
    assert_eq!(h.children(PATH).len(), 1);
}

#[test]
fn other_calls_are_unsupported() {
    let mut h = latches(1);
    for call in [Call::acquire(A, None), Call::Relinquish { owner: A }] {
        h.call(0, call);
        assert_eq!(
            last_notice(&h, 0),
            Some(Notice::Failed {
                owner: A,
                reason: FailReason::Unsupported,
            })
        );
    }
}

#[test]
fn two_owners_on_one_client_are_two_participants() {
    let mut h = latches(1);
    h.call(0, start(A));
    h.call(0, start(B));
    h.settle();
    assert_eq!(h.children(PATH).len(), 2);
    let recipe = h.peers[0].client.recipe();
    assert!(recipe.leading(A).is_some() && recipe.leading(B).is_none());
    h.call(0, close(A, false));
    h.settle();
    assert!(matches!(
        last_notice(&h, 0),
        Some(Notice::IsLeader { owner: B, .. })
    ));
}

#[test]
fn suspended_drops_leadership_and_only_the_reconnect_check_gives_it_back() {
    let mut h = started(2);
    let token = h.peers[0].client.recipe().leading(A).unwrap();
    h.drop_connection(0, false);
    h.settle();
    assert_eq!(
        listener(&h, 0),
        [Some(token), None],
        "NotLeader at Suspended"
    );
    assert!(!has_leadership(&mut h, 0));
    assert!(leaders(&h).is_empty(), "nobody leads while c0 is suspended");
    h.reconnect(0);
    // The Reconnected check is sent; until it answers, still no leader.
    assert!(h.deliver_next(0));
    assert!(leaders(&h).is_empty());
    assert!(matches!(
        h.peers[0].handle.requests.back(),
        Some((_, Request::GetChildren { .. }))
    ));
    h.settle();
    assert_eq!(listener(&h, 0), [Some(token), None, Some(token)]);
    assert_eq!(leaders(&h), [0], "same session, same node, same token");
    assert_eq!(h.children(PATH).len(), 2);
}

#[test]
fn under_the_session_based_policy_a_leader_leads_through_suspended_until_lost() {
    let config = FrameworkConfig {
        error_policy: ErrorPolicy::SessionBased,
        ..FrameworkConfig::default()
    };
    let mut h = Harness::with_config(2, config, || LeaderLatch::new(Path::new(PATH).unwrap()));
    in_turn(&mut h, [start(A), start(A)]);
    let token = h.peers[0].client.recipe().leading(A).unwrap();
    h.drop_connection(0, false);
    h.settle();
    assert_eq!(listener(&h, 0), [Some(token)], "no NotLeader at Suspended");
    assert!(has_leadership(&mut h, 0));
    h.reconnect(0);
    h.settle();
    assert_eq!(listener(&h, 0), [Some(token)], "nothing changed");
    assert_eq!(leaders(&h), [0]);
    h.drop_connection(0, false);
    h.expire(0, false);
    h.settle();
    assert_eq!(
        leaders(&h),
        [0, 1],
        "c0 leads on, by belief, beside its successor"
    );
    let lost = h.only_timer(0);
    h.fire(0, lost);
    h.settle();
    assert_eq!(listener(&h, 0), [Some(token), None], "NotLeader at LOST");
    assert_eq!(leaders(&h), [1]);
}

#[test]
fn a_suspended_waiter_keeps_its_place() {
    let mut h = started(2);
    drop_and_reconnect(&mut h, 1, false);
    assert!(listener(&h, 1).is_empty());
    assert_eq!(h.children(PATH).len(), 2);
    h.call(0, close(A, false));
    h.settle();
    assert_eq!(leaders(&h), [1]);
}

#[test]
fn a_killed_session_passes_leadership_and_the_old_leader_never_regains_it() {
    // Curator's testSessionInterruptionDoNotCauseBrainSplit.
    let mut h = started(2);
    let old = h.peers[0].client.recipe().leading(A).unwrap();
    h.drop_connection(0, false);
    h.expire(0, true);
    h.settle();
    assert_eq!(leaders(&h), [1]);
    let new = h.peers[1].client.recipe().leading(A).unwrap();
    assert!(new > old);
    assert_eq!(
        listener(&h, 0),
        [Some(old), None],
        "one NotLeader, no IsLeader"
    );
    assert_eq!(
        h.children(PATH).len(),
        2,
        "c0 queues again with a fresh node"
    );
    h.call(1, close(A, false));
    h.settle();
    let again = h.peers[0].client.recipe().leading(A).unwrap();
    assert!(again > new);
}

#[test]
fn a_leader_that_gives_up_its_session_deletes_its_old_node_and_queues_a_fresh_one() {
    let mut h = started(2);
    let old_session = h.peers[0].handle.session;
    give_up_session(&mut h, 0, false);
    assert_ne!(h.peers[0].handle.session, old_session);
    assert!(h.server.tree.get(&Path::new(PATH).unwrap()).is_some());
    assert!(
        h.server.tree.ephemerals_of(old_session).is_empty(),
        "the old session's node is deleted while the server still holds the session"
    );
    assert_eq!(leaders(&h), [1]);
    assert_eq!(h.children(PATH).len(), 2);
    assert_eq!(listener(&h, 0).len(), 2, "IsLeader, then NotLeader");
}

#[test]
fn at_lost_the_latch_keeps_its_node_and_lists_with_it_on_the_new_session() {
    let mut h = started(2);
    let before = h.peers[0].sent.len();
    give_up_session(&mut h, 0, false);
    assert!(
        matches!(h.peers[0].sent[before], Request::GetChildren { .. }),
        "the first request of the new session is the check, not a delete: {:?}",
        &h.peers[0].sent[before..]
    );
}

#[test]
fn a_server_restart_ends_with_the_same_single_leader() {
    // Curator's testLostConnection, with sessions that survive the restart.
    let mut h = started(4);
    let token = h.peers[0].client.recipe().leading(A).unwrap();
    for c in 0..4 {
        h.drop_connection(c, false);
    }
    h.settle();
    assert!(leaders(&h).is_empty());
    for c in 0..4 {
        h.reconnect(c);
    }
    h.settle();
    assert_eq!(leaders(&h), [0]);
    assert_eq!(h.peers[0].client.recipe().leading(A), Some(token));
    assert_eq!(h.children(PATH).len(), 4);
}

#[test]
fn a_participant_whose_node_vanished_creates_a_new_one() {
    let mut h = started(2);
    let c1_node = Path::new(PATH)
        .unwrap()
        .child(&h.children(PATH)[1])
        .unwrap();
    let delete = Request::Delete {
        path: c1_node,
        version: None,
    };
    assert!(h.server.tree.apply(SessionId(99), &delete).result.is_ok());
    h.call(0, close(A, false));
    h.settle();
    assert_eq!(leaders(&h), [1], "c1 found its node missing and reset");
    assert_eq!(h.children(PATH).len(), 1);
}

#[test]
fn a_latch_path_gone_on_reconnect_is_created_again() {
    // Curator's testGetChildrenHitsNoNode (CURATOR-724).
    let mut h = started(1);
    h.drop_connection(0, false);
    h.settle();
    let node = Path::new(PATH)
        .unwrap()
        .child(&h.children(PATH)[0])
        .unwrap();
    let delete = Request::Delete {
        path: node,
        version: None,
    };
    assert!(h.server.tree.apply(SessionId(99), &delete).result.is_ok());
    h.server.tree.reap_containers();
    assert!(h.server.tree.get(&Path::new(PATH).unwrap()).is_none());
    h.reconnect(0);
    h.settle();
    assert_eq!(leaders(&h), [0]);
    assert_eq!(h.children(PATH).len(), 1);
}

#[test]
fn a_first_node_of_an_older_session_does_not_make_a_leader() {
    // CURATOR-696: the client comes back on a new session while the old one (and its node)
    // lives on; the old node is first, but it is not ours any more.
    let mut h = started(1);
    let old_session = h.peers[0].handle.session;
    h.drop_connection(0, false);
    h.settle();
    h.peers[0].handle.session = SessionId(77);
    h.reconnect(0);
    h.settle();
    assert!(
        h.server.tree.ephemerals_of(old_session).is_empty(),
        "old node deleted"
    );
    let names = h.children(PATH);
    assert_eq!(names.len(), 1);
    let node = h
        .server
        .tree
        .get(&Path::new(PATH).unwrap().child(&names[0]).unwrap())
        .unwrap();
    assert_eq!(node.stat.ephemeral_owner, Some(SessionId(77)));
    assert_eq!(leaders(&h), [0]);
    let tokens: Vec<Option<Token>> = listener(&h, 0);
    assert_eq!(tokens.len(), 3, "IsLeader, NotLeader, IsLeader");
    assert!(tokens[2] > tokens[0], "a new node");
}

#[test]
fn connection_loss_during_the_create_leaves_exactly_one_node() {
    for applied in [true, false] {
        let mut h = latches(1);
        h.call(0, start(A));
        drop_and_reconnect(&mut h, 0, applied);
        assert_eq!(h.children(PATH).len(), 1, "applied: {applied}");
        assert_eq!(leaders(&h), [0]);
    }
}

#[test]
fn a_close_during_the_create_deletes_the_node_it_produces() {
    let mut h = latches(1);
    h.call(0, start(A));
    h.call(0, close(A, true));
    assert_eq!(last_notice(&h, 0), Some(Notice::Closed { owner: A }));
    h.settle();
    assert!(h.children(PATH).is_empty());
    assert!(listener(&h, 0).is_empty());
}

#[test]
fn a_create_cut_off_by_a_lost_session_carries_on_in_the_new_one() {
    let mut h = latches(2);
    h.call(1, start(A));
    h.settle();
    h.call(0, start(A));
    let old_session = h.peers[0].handle.session;
    give_up_session(&mut h, 0, true);
    let creates = sent(&h, 0, |r| matches!(r, Request::Create { .. }));
    assert_eq!(creates, 2, "the create, redone once on the new session");
    assert!(h.server.tree.ephemerals_of(old_session).is_empty());
    assert_eq!(
        h.server.tree.ephemerals_of(h.peers[0].handle.session).len(),
        1
    );
    assert_eq!(h.children(PATH).len(), 2);
    h.call(1, close(A, false));
    h.settle();
    assert_eq!(leaders(&h), [0]);
}

#[test]
fn a_start_before_the_connection_is_up_leads_once_connected() {
    // Curator's testNoServerAtStart: start waits for the connection.
    let mut h = latches(1);
    call_while_disconnected(&mut h, 0, start(A));
    h.reconnect(0);
    h.settle();
    assert_eq!(leaders(&h), [0]);
}

#[test]
fn a_close_before_the_connection_is_up_leaves_no_node() {
    // Curator's testProperCloseWithoutConnectionEstablished.
    let mut h = latches(1);
    call_while_disconnected(&mut h, 0, start(A));
    h.call(0, close(A, true));
    assert_eq!(last_notice(&h, 0), Some(Notice::Closed { owner: A }));
    h.reconnect(0);
    h.settle();
    assert!(h.children(PATH).is_empty());
    assert!(listener(&h, 0).is_empty());
}
