//! `MultiLock` driven input by input through the harness: what Curator's
//! TestInterProcessMultiMutex checks (a lock that fails to lock releases the ones taken before
//! it; releases go in reverse order) and what it inherits from TestInterProcessMutexBase
//! (two clients, reentrancy, a second owner, killed sessions, connection loss), plus the
//! timeout (each lock's in turn, or one for the whole acquire) that leaves nothing held.

use std::cell::Cell;

use std::time::Duration;

use super::{MultiLock, MultiLockError, TimeoutScope};
use crate::framework::FrameworkConfig;
use crate::harness::Harness;
use crate::ids::TimerId;
use crate::recipes::tests::{
    A, B, RELEASING_AT_LOST, acquire, acquire_within, acquired, assert_swapping_clients_relabels,
    drop_and_reconnect, failed, give_up_session, heard, in_turn, last_notice, lose_waiter_session,
    release, step_until, time_out,
};
use crate::recipes::{Call, FailReason, Mode, Notice};
use crate::zk::{CreateMode, Path, Request, ZkError};

const LOCK_1: &str = "/locks/our-lock-1";
const LOCK_2: &str = "/locks/our-lock-2";

fn path(text: &str) -> Path {
    Path::new(text).unwrap()
}

fn both() -> MultiLock {
    MultiLock::new(vec![path(LOCK_1), path(LOCK_2)]).unwrap()
}

/// `n` clients, each with a multi-lock over both paths.
fn multi_locks(n: u16) -> Harness<MultiLock> {
    Harness::new(n, both)
}

/// Two clients: c0 with the multi-lock over both paths, c1 with one over the second path only
/// (a plain mutex on it, as far as c0 can tell).
fn with_second_lock_alone() -> Harness<MultiLock> {
    let slot = Cell::new(0);
    Harness::new(2, || {
        slot.set(slot.get() + 1);
        match slot.get() {
            1 => both(),
            _ => MultiLock::new(vec![path(LOCK_2)]).unwrap(),
        }
    })
}

/// The nodes left under both lock paths.
fn nodes(h: &Harness<MultiLock>) -> [usize; 2] {
    [h.children(LOCK_1).len(), h.children(LOCK_2).len()]
}

/// The paths client `c` deleted, in the order it sent the deletes.
fn deleted(h: &Harness<MultiLock>, c: usize) -> Vec<Path> {
    h.peers[c]
        .sent
        .iter()
        .filter_map(|request| match request {
            Request::Delete { path, .. } => Some(path.parent().unwrap()),
            _ => None,
        })
        .collect()
}

/// Steps client `c` until its next request in flight is the create of its node under the
/// second lock path (the first lock is held then).
fn step_to_second_create(h: &mut Harness<MultiLock>, c: usize) {
    step_until(
        h,
        c,
        |request| matches!(request, Request::Create { path, .. } if path.parent() == Some(self::path(LOCK_2))),
    );
}

fn released(remaining: u32) -> Option<Notice> {
    Some(Notice::Released {
        owner: A,
        remaining,
        mode: Mode::Exclusive,
    })
}

#[test]
fn acquires_every_lock_then_releases_them_in_reverse_order() {
    let mut h = multi_locks(1);
    h.call(0, acquire(A));
    h.settle();
    assert_eq!(h.peers[0].notices.len(), 1, "one Acquired for both locks");
    let token = acquired(&h, 0).unwrap();
    assert_eq!(h.peers[0].client.recipe().holding(A), Some(token));
    assert_eq!(nodes(&h), [1, 1]);
    let first = path(LOCK_1).child(&h.children(LOCK_1)[0]).unwrap();
    assert_eq!(
        token,
        h.server.tree.get(&first).unwrap().stat.czxid.into(),
        "the token is the first lock's"
    );
    h.call(0, release(A));
    h.settle();
    assert_eq!(last_notice(&h, 0), released(0));
    assert_eq!(deleted(&h, 0), [path(LOCK_2), path(LOCK_1)]);
    assert_eq!(nodes(&h), [0, 0]);
    assert_eq!(h.peers[0].client.recipe(), &both());
}

#[test]
fn the_locks_are_taken_in_order_one_after_the_other() {
    let mut h = multi_locks(1);
    h.call(0, acquire(A));
    let creates: Vec<Path> = h.peers[0]
        .handle
        .requests
        .iter()
        .filter_map(|(_, request)| match request {
            Request::Create { path, .. } => path.parent(),
            _ => None,
        })
        .collect();
    assert_eq!(creates, [path(LOCK_1)], "the second waits for the first");
    h.settle();
    assert!(acquired(&h, 0).is_some());
}

#[test]
fn two_clients_hold_one_at_a_time_and_the_waiter_gets_it_on_release() {
    let mut h = multi_locks(3);
    in_turn(&mut h, [acquire(A); 3]);
    assert!(acquired(&h, 0).is_some());
    assert!((1..3).all(|c| acquired(&h, c).is_none()));
    assert_eq!(nodes(&h), [3, 1], "the waiters queue on the first lock");
    let mut tokens = vec![acquired(&h, 0).unwrap()];
    for c in 0..2 {
        h.call(c, release(A));
        h.settle();
        let holders: Vec<usize> = (0..3)
            .filter(|&w| h.peers[w].client.recipe().holding(A).is_some())
            .collect();
        assert_eq!(holders, [c + 1]);
        tokens.push(acquired(&h, c + 1).unwrap());
    }
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "tokens {tokens:?}");
}

#[test]
fn a_lock_that_fails_to_lock_releases_the_ones_taken_before_it() {
    let mut h = multi_locks(2);
    // c1 makes the second lock path an ephemeral node: no lock node can be created under it.
    let ephemeral = Request::Create {
        path: path(LOCK_2),
        data: Vec::new(),
        mode: CreateMode::Ephemeral,
    };
    for request in [
        Request::Create {
            path: path("/locks"),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        },
        ephemeral,
    ] {
        h.server
            .tree
            .apply(h.peers[1].handle.session, &request)
            .result
            .unwrap();
    }
    h.call(0, acquire(A));
    step_to_second_create(&mut h, 0);
    assert_eq!(h.children(LOCK_1).len(), 1, "the first lock was held");
    h.settle();
    assert_eq!(
        last_notice(&h, 0),
        failed(FailReason::Zk(ZkError::NoChildrenForEphemerals))
    );
    assert!(acquired(&h, 0).is_none());
    assert!(h.children(LOCK_1).is_empty(), "and is released");
    assert_eq!(h.peers[0].client.recipe(), &both());
    assert_eq!(h.peers[0].client.framework().pending_requests(), 0);
}

#[test]
fn a_timeout_releases_the_held_locks_in_reverse_order_and_leaves_nothing_held() {
    let mut h = with_second_lock_alone();
    h.call(1, acquire(B));
    h.settle();
    assert!(acquired(&h, 1).is_some());
    h.call(0, acquire_within(A, 3));
    h.settle();
    assert_eq!(
        nodes(&h),
        [1, 2],
        "c0 holds the first lock and waits for the second"
    );
    time_out(&mut h, 0, A);
    assert_eq!(deleted(&h, 0), [path(LOCK_2), path(LOCK_1)]);
    assert_eq!(nodes(&h), [0, 1], "only c1's node is left");
    assert_eq!(h.peers[0].client.recipe(), &both());
    h.call(0, release(A));
    assert_eq!(last_notice(&h, 0), failed(FailReason::NotHeld));
}

/// c0's timers while its acquire (timeout 3 s) holds the first lock and waits for the
/// second: the one set at the call, and the one it waits with. c1 holds the second lock alone
/// until then, and then releases it to c0.
fn timers_of_an_acquire_with(scope: TimeoutScope) -> (Vec<TimerId>, Vec<TimerId>) {
    let slot = Cell::new(0);
    let mut h = Harness::new(2, || {
        slot.set(slot.get() + 1);
        match slot.get() {
            1 => both().with_timeout_scope(scope),
            _ => MultiLock::new(vec![path(LOCK_2)]).unwrap(),
        }
    });
    h.call(1, acquire(B));
    h.settle();
    h.call(0, acquire_within(A, 3));
    let at_call: Vec<TimerId> = h.peers[0].timers.keys().copied().collect();
    h.settle();
    let waiting: Vec<TimerId> = h.peers[0].timers.keys().copied().collect();
    assert_eq!(
        h.peers[0].timers.values().collect::<Vec<_>>(),
        [&Duration::from_secs(3)],
        "the whole timeout"
    );
    h.call(1, release(B));
    h.settle();
    assert!(acquired(&h, 0).is_some());
    assert!(h.peers[0].timers.is_empty(), "cancelled once it holds");
    (at_call, waiting)
}

#[test]
fn one_timeout_bounds_the_whole_acquire_and_goes_once_it_holds() {
    let (at_call, waiting) = timers_of_an_acquire_with(TimeoutScope::Whole);
    assert_eq!(at_call.len(), 1);
    assert_eq!(waiting, at_call, "the timer set at the call still runs");
}

#[test]
fn by_default_each_lock_gets_the_whole_timeout_in_turn_as_curators_does() {
    let (at_call, waiting) = timers_of_an_acquire_with(TimeoutScope::default());
    assert_eq!(at_call.len(), 1, "the first lock's");
    assert_eq!(waiting.len(), 1, "the second lock's");
    assert_ne!(waiting, at_call, "a fresh timer for the second lock");
}

#[test]
fn reentrant_per_owner_with_one_token_and_the_nodes_go_on_the_last_release() {
    let mut h = multi_locks(1);
    h.call(0, acquire(A));
    h.settle();
    let token = acquired(&h, 0).unwrap();
    let sent = h.peers[0].sent.len();
    h.call(0, acquire_within(A, 3));
    assert_eq!(
        last_notice(&h, 0),
        Some(Notice::Acquired {
            owner: A,
            token,
            mode: Mode::Exclusive,
        })
    );
    assert_eq!(
        h.peers[0].sent.len(),
        sent,
        "no request for a reentrant hold"
    );
    assert!(h.peers[0].timers.is_empty());
    h.call(0, release(A));
    h.settle();
    assert_eq!(last_notice(&h, 0), released(1));
    assert_eq!(nodes(&h), [1, 1]);
    h.call(0, release(A));
    h.settle();
    assert_eq!(last_notice(&h, 0), released(0));
    assert_eq!(nodes(&h), [0, 0]);
    h.call(0, release(A));
    assert_eq!(last_notice(&h, 0), failed(FailReason::NotHeld));
}

#[test]
fn a_second_owner_on_one_instance_waits_for_the_first_and_can_time_out() {
    let mut h = multi_locks(1);
    h.call(0, acquire(A));
    h.settle();
    h.call(0, acquire_within(B, 3));
    h.settle();
    assert_eq!(h.peers[0].notices.len(), 1, "only A holds");
    time_out(&mut h, 0, B);
    h.call(0, acquire(B));
    h.settle();
    h.call(0, release(A));
    h.settle();
    assert!(matches!(
        last_notice(&h, 0),
        Some(Notice::Acquired { owner: B, .. })
    ));
    assert_eq!(nodes(&h), [1, 1]);
}

#[test]
fn an_owner_already_acquiring_is_told_so() {
    let mut h = multi_locks(2);
    in_turn(&mut h, [acquire(A); 2]);
    h.call(1, acquire(A));
    assert_eq!(last_notice(&h, 1), failed(FailReason::AlreadyAcquiring));
}

#[test]
fn a_killed_session_hands_every_lock_to_the_waiter() {
    let mut h = multi_locks(2);
    h.call(0, acquire(A));
    h.settle();
    h.call(1, acquire(B));
    h.settle();
    // The server expires c0's session; c0 does not hear of it yet.
    h.expire(0, false);
    h.settle();
    assert!(acquired(&h, 1) > acquired(&h, 0));
    assert_eq!(nodes(&h), [1, 1]);
}

#[test]
fn connection_notices_come_once_per_holder_and_never_to_a_waiter() {
    let mut h = with_second_lock_alone();
    h.call(0, acquire(A));
    h.settle();
    drop_and_reconnect(&mut h, 0, false);
    assert_eq!(
        h.peers[0].notices[1..],
        [
            Notice::Suspended { owner: A },
            Notice::Reconnected { owner: A }
        ]
    );
    h.call(0, release(A));
    h.settle();
    // Now c0 holds the first lock only, waiting for c1's.
    h.call(1, acquire(B));
    h.settle();
    h.call(0, acquire(A));
    h.settle();
    let heard = h.peers[0].notices.len();
    drop_and_reconnect(&mut h, 0, false);
    assert_eq!(h.peers[0].notices.len(), heard, "a waiter hears nothing");
    h.call(1, release(B));
    h.settle();
    assert!(matches!(
        last_notice(&h, 0),
        Some(Notice::Acquired { owner: A, .. })
    ));
}

#[test]
fn a_lost_session_ends_the_hold_with_one_lost_and_the_waiter_gets_every_lock() {
    // Releasing at LOST (`OnLost::Release`); Curator keeps the hold until released.
    let mut h = Harness::with_config(2, RELEASING_AT_LOST, both);
    h.call(0, acquire(A));
    h.settle();
    h.drop_connection(0, false);
    h.call(1, acquire(A));
    h.expire(0, true);
    h.settle();
    let lost = heard(&h, 0, |n| matches!(n, Notice::Lost { .. }));
    assert_eq!(lost, 1);
    assert_eq!(last_notice(&h, 0), Some(Notice::Lost { owner: A }));
    assert_eq!(h.peers[0].client.recipe(), &both());
    assert!(acquired(&h, 1) > acquired(&h, 0));
    assert_eq!(nodes(&h), [1, 1]);
}

/// Two clients: c0 with a multi-lock over the second path only, c1 with one over both, which
/// takes the first and waits for the second while c0 holds it.
fn waiting_for_the_second_lock(config: FrameworkConfig) -> Harness<MultiLock> {
    let slot = Cell::new(0);
    let mut h = Harness::with_config(2, config, || {
        slot.set(slot.get() + 1);
        match slot.get() {
            1 => MultiLock::new(vec![path(LOCK_2)]).unwrap(),
            _ => both(),
        }
    });
    in_turn(&mut h, [acquire(A); 2]);
    assert_eq!(nodes(&h), [1, 2]);
    h
}

/// Curator's multi-lock is its mutexes' acquires in turn: across LOST the held first lock
/// keeps its hold and the lock loop of the second goes on, on the new session.
#[test]
fn a_waiter_holding_the_first_lock_keeps_waiting_across_lost_and_acquires() {
    let mut h = waiting_for_the_second_lock(FrameworkConfig::default());
    give_up_session(&mut h, 1, false);
    assert_eq!(heard(&h, 1, |n| matches!(n, Notice::Failed { .. })), 0);
    h.call(0, release(A));
    h.settle();
    assert!(acquired(&h, 1).is_some(), "c1 holds both locks");
}

#[test]
fn a_waiter_holding_the_first_lock_whose_session_is_lost_fails_once_and_leaves_nothing() {
    // Giving up at LOST (`OnLost::Release`).
    let mut h = waiting_for_the_second_lock(RELEASING_AT_LOST);
    lose_waiter_session(&mut h, false);
    let failures = heard(&h, 1, |n| matches!(n, Notice::Failed { .. }));
    assert_eq!(failures, 1);
    assert_eq!(nodes(&h), [0, 1], "only c0's node is left");
    assert_eq!(h.peers[1].client.recipe(), &both());
}

#[test]
fn a_session_lost_while_the_second_node_is_created_fails_and_leaves_nothing() {
    for applied in [true, false] {
        let mut h = Harness::with_config(2, RELEASING_AT_LOST, both);
        h.call(1, acquire(A));
        step_to_second_create(&mut h, 1);
        lose_waiter_session(&mut h, applied);
        assert_eq!(nodes(&h), [0, 0], "applied before the loss: {applied}");
    }
}

#[test]
fn connection_loss_during_the_second_create_leaves_exactly_one_node_per_lock() {
    for applied in [true, false] {
        let mut h = multi_locks(1);
        h.call(0, acquire(A));
        step_to_second_create(&mut h, 0);
        drop_and_reconnect(&mut h, 0, applied);
        assert_eq!(nodes(&h), [1, 1], "applied before the loss: {applied}");
        assert!(acquired(&h, 0).is_some());
    }
}

#[test]
fn revocation_and_other_modes_are_not_served() {
    let mut h = multi_locks(1);
    for call in [
        Call::MakeRevocable { owner: A },
        Call::AttemptRevoke { owner: A },
        Call::Acquire {
            owner: A,
            timeout: None,
            mode: Mode::Read,
        },
    ] {
        h.call(0, call);
        assert_eq!(last_notice(&h, 0), failed(FailReason::Unsupported));
    }
    assert!(h.peers[0].sent.is_empty());
}

#[test]
fn the_paths_must_be_distinct_and_at_least_one() {
    assert_eq!(MultiLock::new(Vec::new()), Err(MultiLockError::NoPaths));
    let repeated = MultiLock::new(vec![path(LOCK_1), path(LOCK_2), path(LOCK_1)]);
    assert_eq!(repeated, Err(MultiLockError::Repeated(path(LOCK_1))));
    assert_eq!(
        repeated.unwrap_err().to_string(),
        "lock path /locks/our-lock-1 is listed twice; a multi-lock's paths must be distinct"
    );
    let lock = both();
    let paths: Vec<&Path> = lock.paths().collect();
    assert_eq!(paths, [&path(LOCK_1), &path(LOCK_2)]);
    let pair = MultiLock::pair(&path("/locks/m"));
    let paths: Vec<&Path> = pair.paths().collect();
    assert_eq!(paths, [&path("/locks/m/1"), &path("/locks/m/2")]);
}

#[test]
fn relabelling_rewrites_the_nodes_of_every_lock() {
    let mut h = with_second_lock_alone();
    h.call(1, acquire(B));
    h.settle();
    h.call(0, acquire(A));
    h.settle();
    // c0 holds a node of its own in each lock, and watches c1's in the second.
    assert_swapping_clients_relabels(h.peers[0].client.recipe());
}
