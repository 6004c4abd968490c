//! `SemaphoreMutex` driven input by input through the harness: what Curator's
//! TestInterProcessSemaphoreMutex and TestInterProcessMutexBase check, for a lock that is not
//! reentrant.

use super::SemaphoreMutex;
use crate::harness::Harness;
use crate::recipes::semaphore::tests::{LEASES, LOCKS, PATH, assert_empty, step_to_lease_create};
use crate::recipes::tests::{
    A, B, RELEASING_AT_LOST, acquire, acquire_within, acquired, drop_and_reconnect, failed,
    in_turn, last_notice, lose_waiter_session, release, sent, time_out,
};
use crate::recipes::{FailReason, Mode, Notice};
use crate::zk::{Path, Request};

fn semaphores(n: u16) -> Harness<SemaphoreMutex> {
    Harness::new(n, || SemaphoreMutex::new(Path::new(PATH).unwrap()))
}

#[test]
fn one_holder_at_a_time_with_increasing_tokens_and_nothing_left() {
    let mut h = semaphores(4);
    in_turn(&mut h, [acquire(A); 4]);
    assert!(acquired(&h, 0).is_some());
    assert!((1..4).all(|c| acquired(&h, c).is_none()));
    assert_eq!(
        h.children(LEASES).len(),
        2,
        "the holder's and the next one's"
    );
    let mut tokens = vec![acquired(&h, 0).unwrap()];
    for c in 0..3 {
        h.call(c, release(A));
        h.settle();
        assert_eq!(
            last_notice(&h, c),
            Some(Notice::Released {
                owner: A,
                remaining: 0,
                mode: Mode::Exclusive,
            })
        );
        let holders: Vec<usize> = (0..4)
            .filter(|&w| h.peers[w].client.recipe().holding(A).is_some())
            .collect();
        assert_eq!(holders, [c + 1]);
        tokens.push(acquired(&h, c + 1).unwrap());
    }
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "tokens {tokens:?}");
    h.call(3, release(A));
    h.settle();
    assert_empty(&h);
}

#[test]
fn only_the_internal_lock_holder_watches_the_leases() {
    let mut h = semaphores(3);
    in_turn(&mut h, [acquire(A); 3]);
    let listed = |h: &Harness<SemaphoreMutex>, c: usize| {
        sent(h, c, |r| {
            matches!(r, Request::GetChildren { watch: true, .. })
        })
    };
    assert_eq!([listed(&h, 0), listed(&h, 1), listed(&h, 2)], [1, 1, 0]);
    assert_eq!(h.children(LOCKS).len(), 2, "c1 holds it, c2 waits for it");
    h.call(0, release(A));
    h.settle();
    assert!(acquired(&h, 1).is_some());
    assert!(
        h.peers[2]
            .watched
            .iter()
            .all(|e| e.path != Path::new(LEASES).unwrap())
    );
}

#[test]
fn not_reentrant_a_second_acquire_by_the_holder_waits_then_times_out() {
    let mut h = semaphores(1);
    h.call(0, acquire(A));
    h.settle();
    let token = acquired(&h, 0).unwrap();
    h.call(0, acquire_within(A, 3));
    h.settle();
    assert_eq!(h.peers[0].notices.len(), 1, "no second hold");
    assert_eq!(h.children(LEASES).len(), 2);
    time_out(&mut h, 0, A);
    assert_eq!(h.children(LEASES).len(), 1, "only the hold's lease is left");
    assert!(h.children(LOCKS).is_empty());
    assert_eq!(h.peers[0].client.recipe().holding(A), Some(token));
    h.call(0, release(A));
    h.settle();
    assert_empty(&h);
    h.call(0, release(A));
    assert_eq!(last_notice(&h, 0), failed(FailReason::NotHeld));
}

#[test]
fn not_reentrant_a_second_acquire_by_the_holder_gets_it_after_the_release() {
    let mut h = semaphores(1);
    h.call(0, acquire(A));
    h.settle();
    let first = acquired(&h, 0).unwrap();
    h.call(0, acquire(A));
    h.settle();
    h.call(0, acquire(A));
    assert_eq!(last_notice(&h, 0), failed(FailReason::AlreadyAcquiring));
    h.call(0, release(A));
    h.settle();
    let second = acquired(&h, 0).unwrap();
    assert!(second > first);
    assert_eq!(h.children(LEASES).len(), 1);
}

#[test]
fn a_waiter_timing_out_on_the_internal_lock_or_the_leases_leaves_no_node() {
    let mut h = semaphores(3);
    h.call(0, acquire(A));
    h.settle();
    h.call(1, acquire_within(A, 3));
    h.settle();
    h.call(2, acquire_within(A, 3));
    h.settle();
    // c1 waits for the leases, c2 for the internal lock.
    for c in [2, 1] {
        time_out(&mut h, c, A);
    }
    assert_eq!(h.children(LEASES).len(), 1);
    assert!(h.children(LOCKS).is_empty());
    h.call(0, release(A));
    h.settle();
    assert_empty(&h);
}

#[test]
fn a_timeout_during_the_lease_create_deletes_the_lease_it_produces() {
    let mut h = semaphores(1);
    h.call(0, acquire_within(A, 3));
    step_to_lease_create(&mut h, 0);
    time_out(&mut h, 0, A);
    assert_empty(&h);
}

#[test]
fn a_killed_session_frees_its_lease() {
    let mut h = semaphores(2);
    h.call(0, acquire(A));
    h.settle();
    h.call(1, acquire(B));
    h.settle();
    assert!(acquired(&h, 1).is_none());
    // The server expires c0's session; c0 does not hear of it yet.
    h.expire(0, false);
    h.settle();
    assert!(acquired(&h, 1) > acquired(&h, 0));
    assert_eq!(h.children(LEASES).len(), 1);
}

#[test]
fn connection_loss_during_the_lease_create_leaves_exactly_one_lease() {
    for applied in [true, false] {
        let mut h = semaphores(1);
        h.call(0, acquire(A));
        step_to_lease_create(&mut h, 0);
        drop_and_reconnect(&mut h, 0, applied);
        assert_eq!(h.children(LEASES).len(), 1, "applied: {applied}");
        assert!(acquired(&h, 0).is_some());
        assert!(h.children(LOCKS).is_empty());
        h.call(0, release(A));
        h.settle();
        assert_empty(&h);
    }
}

#[test]
fn suspended_and_lost_end_the_hold_and_the_next_waiter_gets_it() {
    let mut h = semaphores(2);
    h.call(0, acquire(A));
    h.settle();
    h.drop_connection(0, false);
    h.settle();
    assert_eq!(last_notice(&h, 0), Some(Notice::Suspended { owner: A }));
    h.reconnect(0);
    h.settle();
    assert_eq!(last_notice(&h, 0), Some(Notice::Reconnected { owner: A }));
    h.drop_connection(0, false);
    h.call(1, acquire(A));
    h.expire(0, true);
    h.settle();
    assert_eq!(last_notice(&h, 0), Some(Notice::Lost { owner: A }));
    assert!(acquired(&h, 1) > acquired(&h, 0));
}

#[test]
fn under_release_at_lost_a_lease_waiter_whose_session_is_lost_fails_and_leaves_nothing_behind() {
    let mut h = Harness::with_config(2, RELEASING_AT_LOST, || {
        SemaphoreMutex::new(Path::new(PATH).unwrap())
    });
    in_turn(&mut h, [acquire(A); 2]);
    lose_waiter_session(&mut h, false);
    assert_eq!(h.children(LEASES).len(), 1);
    assert!(h.children(LOCKS).is_empty());
    h.call(0, release(A));
    h.settle();
    assert_empty(&h);
    assert_eq!(
        h.peers[1].client.recipe(),
        &SemaphoreMutex::new(Path::new(PATH).unwrap())
    );
}
