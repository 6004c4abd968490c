//! Revocation on `Mutex` driven input by input through the harness: what Curator's
//! TestInterProcessMutex.testRevoking checks (the holder is asked, releases, and a waiter then
//! gets the lock), and the rest of the contract: cooperative only, re-armed after each
//! request, cleared by the final release, and an attempt that finds no holder says so.

use super::REVOKE_MESSAGE;
use crate::harness::Harness;
use crate::recipes::tests::{
    A, B, acquire, acquire_within, acquired, give_up_session, heard, last_notice, release, sent,
    time_out,
};
use crate::recipes::{Call, Mutex, Notice};
use crate::zk::{Path, Request};

const LOCK: &str = "/locks/our-lock";

fn mutexes(n: u16) -> Harness<Mutex> {
    Harness::new(n, || Mutex::new(Path::new(LOCK).unwrap()))
}

fn make_revocable(owner: crate::ids::Owner) -> Call {
    Call::MakeRevocable { owner }
}

fn attempt_revoke(owner: crate::ids::Owner) -> Call {
    Call::AttemptRevoke { owner }
}

fn attempted(delivered: bool) -> Option<Notice> {
    Some(Notice::RevokeAttempted {
        owner: B,
        delivered,
    })
}

/// Client `c` makes `owner`'s lock revocable, then acquires it, and everything settles.
fn hold_revocably(h: &mut Harness<Mutex>, c: usize, owner: crate::ids::Owner) {
    h.call(c, make_revocable(owner));
    h.call(c, acquire(owner));
    h.settle();
}

/// Client `c` attempts to revoke the lock (as owner `B`), and everything settles.
fn revoke(h: &mut Harness<Mutex>, c: usize) {
    h.call(c, attempt_revoke(B));
    h.settle();
}

/// How many times client `c` heard `RevocationRequested`.
fn requests(h: &Harness<Mutex>, c: usize) -> usize {
    heard(h, c, |n| matches!(n, Notice::RevocationRequested { .. }))
}

/// The reads client `c` sent with a watch on one of its own lock nodes.
fn own_node_reads(h: &Harness<Mutex>, c: usize) -> usize {
    let session = h.peers[c].handle.session;
    h.peers[c]
        .sent
        .iter()
        .filter(|request| match request {
            Request::GetData { path, watch: true } => h
                .server
                .tree
                .get(path)
                .is_none_or(|node| node.stat.ephemeral_owner == Some(session)),
            _ => false,
        })
        .count()
}

/// c0 holds the lock, revocable; c1 waits for it.
fn revocable_holder_and_a_waiter() -> Harness<Mutex> {
    let mut h = mutexes(3);
    hold_revocably(&mut h, 0, A);
    h.call(1, acquire(A));
    h.settle();
    assert!(acquired(&h, 0).is_some());
    h
}

#[test]
fn the_holder_is_asked_releases_and_the_waiter_gets_the_lock() {
    let mut h = revocable_holder_and_a_waiter();
    assert_eq!(own_node_reads(&h, 0), 1, "the revocation watch is armed");
    revoke(&mut h, 2);
    assert_eq!(last_notice(&h, 2), attempted(true));
    assert_eq!(
        last_notice(&h, 0),
        Some(Notice::RevocationRequested { owner: A })
    );
    // Cooperative: nothing happens to the hold until the holder releases.
    assert!(h.peers[0].client.recipe().holding(A).is_some());
    assert!(acquired(&h, 1).is_none(), "the waiter still waits");
    assert_eq!(h.children(LOCK).len(), 2);
    h.call(0, release(A));
    h.settle();
    assert!(acquired(&h, 1) > acquired(&h, 0));
}

#[test]
fn the_request_marks_the_holder_s_node_which_is_the_first() {
    let mut h = revocable_holder_and_a_waiter();
    revoke(&mut h, 2);
    let names = h.children(LOCK);
    let data = |name: &str| {
        let node = Path::new(LOCK).unwrap().child(name).unwrap();
        h.server.tree.get(&node).unwrap().data.clone()
    };
    assert_eq!(data(&names[0]), REVOKE_MESSAGE);
    assert!(data(&names[1]).is_empty(), "the waiter's node is untouched");
}

#[test]
fn a_holder_that_is_not_revocable_is_marked_but_never_asked() {
    let mut h = mutexes(2);
    h.call(0, acquire(A));
    h.settle();
    revoke(&mut h, 1);
    assert_eq!(last_notice(&h, 1), attempted(true));
    assert_eq!(own_node_reads(&h, 0), 0, "no revocation watch");
    assert_eq!(requests(&h, 0), 0);
}

#[test]
fn each_request_is_heard_and_the_watch_is_armed_again() {
    let mut h = revocable_holder_and_a_waiter();
    for asked in 1..=2 {
        revoke(&mut h, 2);
        assert_eq!(requests(&h, 0), asked);
    }
    assert_eq!(
        own_node_reads(&h, 0),
        3,
        "armed at the create, then after each request"
    );
    assert!(
        acquired(&h, 1).is_none(),
        "the waiter woke, listed and still waits"
    );
}

#[test]
fn made_revocable_while_holding_it_is_armed_at_once() {
    let mut h = mutexes(2);
    h.call(0, acquire(A));
    h.settle();
    h.call(0, make_revocable(A));
    h.call(0, make_revocable(A));
    h.settle();
    assert_eq!(own_node_reads(&h, 0), 1, "armed once");
    revoke(&mut h, 1);
    assert_eq!(requests(&h, 0), 1);
}

#[test]
fn the_final_release_ends_revocability() {
    let mut h = mutexes(2);
    hold_revocably(&mut h, 0, A);
    h.call(0, acquire(A));
    h.call(0, release(A));
    h.settle();
    revoke(&mut h, 1);
    assert_eq!(
        requests(&h, 0),
        1,
        "still revocable after a reentrant release"
    );
    h.call(0, release(A));
    h.settle();
    h.call(0, acquire(A));
    h.settle();
    assert_eq!(own_node_reads(&h, 0), 2, "the new node is not watched");
    revoke(&mut h, 1);
    assert_eq!(last_notice(&h, 1), attempted(true));
    assert_eq!(requests(&h, 0), 1);
}

#[test]
fn only_the_revocable_owner_of_an_instance_is_asked() {
    let mut h = mutexes(2);
    h.call(0, make_revocable(B));
    h.call(0, acquire(A));
    h.settle();
    h.call(0, acquire(B));
    h.settle();
    revoke(&mut h, 1);
    assert_eq!(requests(&h, 0), 0, "A holds and is not revocable");
    h.call(0, release(A));
    h.settle();
    revoke(&mut h, 1);
    assert_eq!(
        last_notice(&h, 0),
        Some(Notice::RevocationRequested { owner: B })
    );
}

#[test]
fn a_request_made_while_the_holder_is_cut_off_is_heard_after_it_reconnects() {
    let mut h = revocable_holder_and_a_waiter();
    h.drop_connection(0, false);
    h.settle();
    revoke(&mut h, 2);
    assert_eq!(requests(&h, 0), 0, "the re-read waits for the connection");
    h.reconnect(0);
    h.settle();
    assert_eq!(
        last_notice(&h, 0),
        Some(Notice::RevocationRequested { owner: A })
    );
}

#[test]
fn an_attempt_without_a_holder_is_not_delivered() {
    let mut h = mutexes(1);
    revoke(&mut h, 0);
    assert_eq!(last_notice(&h, 0), attempted(false), "no lock path at all");
    h.call(0, acquire(A));
    h.settle();
    h.call(0, release(A));
    h.settle();
    revoke(&mut h, 0);
    assert_eq!(last_notice(&h, 0), attempted(false), "an empty lock");
}

#[test]
fn a_holder_gone_between_the_listing_and_the_mark_means_not_delivered() {
    let mut h = mutexes(2);
    hold_revocably(&mut h, 0, A);
    h.call(1, attempt_revoke(B));
    assert!(h.apply_next(1) && h.deliver_next(1), "c1 listed the lock");
    h.call(0, release(A));
    h.settle();
    assert_eq!(last_notice(&h, 1), attempted(false));
    assert!(h.children(LOCK).is_empty(), "nothing was recreated");
    assert_eq!(requests(&h, 0), 0);
}

#[test]
fn a_request_read_after_the_owner_gave_up_its_node_is_not_heard() {
    let mut h = mutexes(3);
    h.call(0, acquire(A));
    h.settle();
    h.call(1, make_revocable(A));
    h.call(1, acquire_within(A, 3));
    h.settle();
    // c0 releases and c2 marks c1's node, now the first; c1 has not looked yet.
    h.call(0, release(A));
    assert!(h.apply_next(0));
    h.call(2, attempt_revoke(B));
    for _ in 0..2 {
        assert!(h.apply_next(2) && h.deliver_next(2));
    }
    assert_eq!(last_notice(&h, 2), attempted(true));
    // c1 hears of both (it lists again and reads its node again), then times out before
    // the answers arrive.
    assert!(h.deliver_next(1) && h.deliver_next(1));
    assert_eq!(h.peers[1].handle.requests.len(), 2);
    time_out(&mut h, 1, A);
    assert_eq!(requests(&h, 1), 0);
    assert!(h.children(LOCK).is_empty());
}

#[test]
fn the_final_release_removes_the_revocation_watch_before_the_delete() {
    let mut h = mutexes(1);
    hold_revocably(&mut h, 0, A);
    h.call(0, acquire(A));
    h.call(0, release(A));
    h.settle();
    let removals = |h: &Harness<Mutex>| sent(h, 0, |r| matches!(r, Request::RemoveWatches { .. }));
    assert_eq!(removals(&h), 0, "a reentrant release keeps it");
    h.call(0, release(A));
    h.settle();
    let last: Vec<&Request> = h.peers[0].sent.iter().rev().take(2).collect();
    assert!(matches!(last[0], Request::Delete { .. }), "{last:?}");
    assert!(matches!(last[1], Request::RemoveWatches { .. }), "{last:?}");
    assert!(h.peers[0].watched.is_empty(), "the delete woke nobody");
}

#[test]
fn a_watch_another_owner_of_the_instance_waits_on_is_kept() {
    let mut h = mutexes(2);
    hold_revocably(&mut h, 0, A);
    h.call(0, acquire(B));
    h.settle();
    h.call(0, release(A));
    h.settle();
    assert!(
        !h.peers[0]
            .sent
            .iter()
            .any(|r| matches!(r, Request::RemoveWatches { .. })),
        "B's watch on A's node is the same watch"
    );
    assert_eq!(
        last_notice(&h, 0),
        Some(Notice::Acquired {
            owner: B,
            token: acquired(&h, 0).unwrap(),
            mode: crate::recipes::Mode::Exclusive,
        })
    );
}

#[test]
fn an_attempt_cut_off_by_a_lost_session_is_not_delivered_and_no_failure() {
    let mut h = mutexes(2);
    h.call(0, acquire(A));
    h.settle();
    h.call(1, attempt_revoke(B));
    give_up_session(&mut h, 1, false);
    assert_eq!(last_notice(&h, 1), attempted(false));
    assert_eq!(h.peers[1].notices.len(), 1, "{:?}", h.peers[1].notices);
}
