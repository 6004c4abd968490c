//! `Semaphore` driven input by input through the harness: what Curator's
//! TestInterProcessSemaphore checks (N leases out at once and the next one waits, a timeout
//! returns nothing and leaves no node, a returned lease frees a waiter, a killed session's
//! leases free up, the participant nodes, no orphaned lease after a failed listing), plus the
//! lease bound under every step order of a fixed family of schedules. The shared paths and
//! helpers serve the `SemaphoreMutex` tests too.

use std::time::Duration;

use super::{LEASE_NAME, Semaphore};
use crate::fencing::Token;
use crate::framework::FrameworkConfig;
use crate::harness::Harness;
use crate::ids::Owner;
use crate::recipe::Recipe;
use crate::recipes::tests::{
    A, B, RELEASING_AT_LOST, acquired, drop_and_reconnect, failed, give_up_session, in_turn,
    last_notice, lose_waiter_session, sent, step_until, time_out,
};
use crate::recipes::{Call, FailReason, Mode, Notice};
use crate::retry::RetryPolicy;
use crate::zk::{Path, Request, ZkError};

pub(in crate::recipes) const PATH: &str = "/locks/s";
pub(in crate::recipes) const LEASES: &str = "/locks/s/leases";
pub(in crate::recipes) const LOCKS: &str = "/locks/s/locks";

/// No lease and no internal-lock node left.
pub(in crate::recipes) fn assert_empty<R: Recipe>(h: &Harness<R>) {
    assert!(
        h.children(LEASES).is_empty(),
        "leases {:?}",
        h.children(LEASES)
    );
    assert!(
        h.children(LOCKS).is_empty(),
        "locks {:?}",
        h.children(LOCKS)
    );
}

/// Steps client `c` until its next request in flight is the lease create.
pub(in crate::recipes) fn step_to_lease_create<R: Recipe>(h: &mut Harness<R>, c: usize) {
    step_until(h, c, |request| {
        matches!(request, Request::Create { path, .. }
            if path.parent() == Some(Path::new(LEASES).unwrap()))
    });
}

/// `n` clients on a semaphore of `max` leases.
fn semaphores(n: u16, max: u32) -> Harness<Semaphore> {
    Harness::new(n, || Semaphore::new(Path::new(PATH).unwrap(), max))
}

fn take(owner: Owner) -> Call {
    Call::Acquire {
        owner,
        timeout: None,
        mode: Mode::Lease,
    }
}

fn take_within(owner: Owner, secs: u64) -> Call {
    Call::Acquire {
        owner,
        timeout: Some(Duration::from_secs(secs)),
        mode: Mode::Lease,
    }
}

fn give_back(owner: Owner) -> Call {
    Call::Release {
        owner,
        mode: Mode::Lease,
    }
}

fn returned(owner: Owner, remaining: u32) -> Option<Notice> {
    Some(Notice::Released {
        owner,
        remaining,
        mode: Mode::Lease,
    })
}

/// The tokens of `owner`'s leases on client `c`, oldest first.
fn tokens(h: &Harness<Semaphore>, c: usize, owner: Owner) -> Vec<Token> {
    h.peers[c].client.recipe().tokens(owner).collect()
}

/// Leases believed held, over every client and owner.
fn believed(h: &Harness<Semaphore>) -> usize {
    (0..h.peers.len())
        .map(|c| tokens(h, c, A).len() + tokens(h, c, B).len())
        .sum()
}

/// How many `GetChildren` with a watch client `c` sent.
fn listings(h: &Harness<Semaphore>, c: usize) -> usize {
    sent(h, c, |r| {
        matches!(r, Request::GetChildren { watch: true, .. })
    })
}

#[test]
fn n_leases_out_at_once_the_next_waits_and_a_return_frees_it() {
    let mut h = semaphores(4, 3);
    for c in 0..3 {
        h.call(c, take(A));
        h.settle();
        assert!(
            matches!(last_notice(&h, c), Some(Notice::Acquired { mode: Mode::Lease, token, .. })
                if tokens(&h, c, A) == [token]),
            "c{c}: {:?}",
            h.peers[c].notices
        );
    }
    h.call(3, take(A));
    h.settle();
    assert!(acquired(&h, 3).is_none());
    assert_eq!(h.children(LEASES).len(), 4, "three leases and the waiter's");
    assert_eq!(
        h.children(LOCKS).len(),
        1,
        "the waiter keeps the internal lock"
    );
    h.call(1, give_back(A));
    h.settle();
    assert_eq!(last_notice(&h, 1), returned(A, 0));
    let fourth = acquired(&h, 3).expect("the waiter gets the returned lease");
    assert!((0..3).all(|c| acquired(&h, c) < Some(fourth)));
    assert_eq!(believed(&h), 3);
    assert_eq!(h.children(LEASES).len(), 3);
    assert!(h.children(LOCKS).is_empty());
    for c in [0, 2, 3] {
        h.call(c, give_back(A));
        h.settle();
    }
    assert_empty(&h);
}

#[test]
fn one_lease_a_second_acquire_times_out_returning_nothing_and_leaving_no_node() {
    let mut h = semaphores(1, 1);
    h.call(0, take(A));
    h.settle();
    let first = acquired(&h, 0).unwrap();
    h.call(0, take_within(A, 3));
    h.settle();
    assert_eq!(h.peers[0].notices.len(), 1, "no second lease");
    time_out(&mut h, 0, A);
    assert_eq!(tokens(&h, 0, A), [first]);
    assert_eq!(h.children(LEASES).len(), 1, "only the held lease");
    assert!(h.children(LOCKS).is_empty());
}

#[test]
fn an_owner_holds_several_leases_the_participants_and_returns_the_oldest_first() {
    let mut h = semaphores(1, 3);
    for _ in 0..3 {
        h.call(0, take(A));
        h.settle();
    }
    let held = tokens(&h, 0, A);
    assert_eq!(held.len(), 3);
    assert!(held.windows(2).all(|w| w[0] < w[1]), "tokens {held:?}");
    // Curator's getParticipantNodes: the children of the leases path.
    let participants = h.children(LEASES);
    assert_eq!(participants.len(), 3);
    assert!(participants.iter().all(|name| name.contains(LEASE_NAME)));
    // A fourth lease waits for the owner's own return.
    h.call(0, take(A));
    h.settle();
    assert_eq!(tokens(&h, 0, A).len(), 3);
    h.call(0, give_back(A));
    h.settle();
    let notices = &h.peers[0].notices;
    assert_eq!(notices[notices.len() - 2], returned(A, 2).unwrap());
    assert!(matches!(notices.last(), Some(Notice::Acquired { .. })));
    let now = tokens(&h, 0, A);
    assert_eq!(now[..2], held[1..], "the oldest went first");
    assert!(now[2] > held[2]);
    for remaining in (0..3).rev() {
        h.call(0, give_back(A));
        h.settle();
        assert_eq!(last_notice(&h, 0), returned(A, remaining));
    }
    assert_empty(&h);
}

#[test]
fn only_the_internal_lock_holder_watches_and_a_return_wakes_one_waiter() {
    let mut h = semaphores(5, 2);
    in_turn(&mut h, [take(A); 5]);
    assert_eq!(believed(&h), 2);
    assert_eq!(
        (0..5).map(|c| listings(&h, c)).collect::<Vec<_>>(),
        [1, 1, 1, 0, 0],
        "c2 holds the internal lock; c3 and c4 queue for it"
    );
    // Which waiters a return wakes: the clients that see a leases event and are still
    // waiting (a holder's child watch left from its own listing may fire too, harmlessly).
    let woken = |h: &mut Harness<Semaphore>, c: usize| -> Vec<usize> {
        let seen: Vec<usize> = h.peers.iter().map(|p| p.watched.len()).collect();
        let waiting: Vec<usize> = (0..5).filter(|&w| tokens(h, w, A).is_empty()).collect();
        h.call(c, give_back(A));
        h.settle();
        let leases = Path::new(LEASES).unwrap();
        waiting
            .into_iter()
            .filter(|&w| {
                h.peers[w].watched[seen[w]..]
                    .iter()
                    .any(|e| e.path == leases)
            })
            .collect()
    };
    assert_eq!(woken(&mut h, 0), [2]);
    assert!(acquired(&h, 2).is_some());
    assert!(acquired(&h, 3).is_none() && acquired(&h, 4).is_none());
    assert_eq!(listings(&h, 3), 1, "c3 took the internal lock over");
    assert_eq!(woken(&mut h, 1), [3]);
    assert!(acquired(&h, 3).is_some());
    assert_eq!(believed(&h), 2);
}

/// A deterministic schedule (a fixed linear congruential sequence per seed): which client
/// takes a step, and whether a holder returns its lease.
struct Schedule(u64);

impl Schedule {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as usize % below
    }
}

#[test]
fn never_more_than_max_leases_in_any_of_many_step_orders() {
    const CLIENTS: usize = 6;
    const MAX: u32 = 2;
    let mut most = 0;
    for seed in 0..40 {
        let mut schedule = Schedule(seed);
        let mut h = semaphores(CLIENTS as u16, MAX);
        for c in 0..CLIENTS {
            h.call(c, take(A));
        }
        let mut done = [false; CLIENTS];
        for step in 0.. {
            assert!(step < 10_000, "seed {seed}: stuck, done {done:?}");
            if done.iter().all(|&d| d) {
                break;
            }
            let c = schedule.next(CLIENTS);
            if !tokens(&h, c, A).is_empty() && schedule.next(4) == 0 {
                h.call(c, give_back(A));
                done[c] = true;
            } else if schedule.next(2) == 0 {
                h.apply_next(c);
            } else {
                h.deliver_next(c);
            }
            let holders = believed(&h);
            assert!(holders <= MAX as usize, "seed {seed}: {holders} holders");
            most = most.max(holders);
        }
        h.settle();
        assert!(
            (0..CLIENTS).all(|c| acquired(&h, c).is_some()),
            "seed {seed}"
        );
        assert_empty(&h);
    }
    assert_eq!(
        most, MAX as usize,
        "every lease was out at once in some order"
    );
}

#[test]
fn a_killed_session_frees_all_its_leases() {
    let mut h = semaphores(3, 2);
    for _ in 0..2 {
        h.call(0, take(A));
        h.settle();
    }
    h.call(1, take(A));
    h.settle();
    h.call(2, take(A));
    h.settle();
    assert!(acquired(&h, 1).is_none() && acquired(&h, 2).is_none());
    // The server expires c0's session; c0 does not hear of it yet.
    h.expire(0, false);
    h.settle();
    assert!(acquired(&h, 1).is_some() && acquired(&h, 2).is_some());
    assert_eq!(h.children(LEASES).len(), 2);
    assert!(h.children(LOCKS).is_empty());
}

#[test]
fn a_failed_listing_leaves_no_orphaned_lease_and_acquires_go_on_after() {
    // Giving up at LOST (`OnLost::Release`); Curator keeps the waiter queued.
    let mut h = Harness::with_config(2, RELEASING_AT_LOST, || {
        Semaphore::new(Path::new(PATH).unwrap(), 1)
    });
    h.call(0, take(A));
    h.settle();
    h.call(1, take(A));
    step_until(&mut h, 1, |r| matches!(r, Request::GetChildren { .. }));
    // The listing is lost with the connection and the session is given up (CURATOR-335).
    lose_waiter_session(&mut h, false);
    assert_eq!(h.children(LEASES).len(), 1, "only c0's lease");
    assert!(h.children(LOCKS).is_empty());
    h.call(1, take(A));
    h.settle();
    h.call(0, give_back(A));
    h.settle();
    assert!(acquired(&h, 1) > acquired(&h, 0));
    h.call(1, give_back(A));
    h.settle();
    assert_empty(&h);
}

/// Deletes client 1's lease node (it waits behind client 0's lease) behind every client's
/// back, as Curator's testNoOrphanedNodes does.
fn delete_the_waiters_lease(h: &mut Harness<Semaphore>) {
    let waiter = h.children(LEASES)[1].clone();
    let path = Path::new(LEASES).unwrap().child(&waiter).unwrap();
    let request = Request::Delete {
        path,
        version: None,
    };
    assert!(h.operator(&request).is_ok());
    h.settle();
}

#[test]
fn a_waiter_whose_lease_node_vanishes_starts_over_and_acquires() {
    let mut h = semaphores(2, 1);
    in_turn(&mut h, [take(A); 2]);
    delete_the_waiters_lease(&mut h);
    // Curator's RETRY_DUE_TO_MISSING_NODE: the lease goes back, the acquire starts over.
    assert!(
        h.peers[1].notices.is_empty(),
        "no Failed: the acquire goes on"
    );
    assert_eq!(h.children(LEASES).len(), 2, "c0's lease and c1's new one");
    h.call(0, give_back(A));
    h.settle();
    assert!(acquired(&h, 1) > acquired(&h, 0));
    h.call(1, give_back(A));
    h.settle();
    assert_empty(&h);
}

/// Curator's `RETRY_DUE_TO_MISSING_NODE` asks the retry policy before it starts over: under
/// `RetryNTimes(1)` the first vanished lease node starts the acquire over, the second fails
/// it with `NoNode`, its nodes gone.
#[test]
fn a_waiter_starts_over_only_while_the_retry_policy_allows() {
    let once = FrameworkConfig {
        retry: RetryPolicy::NTimes { n: 1, sleep_ms: 0 },
        ..FrameworkConfig::default()
    };
    let mut h = Harness::with_config(2, once, || Semaphore::new(Path::new(PATH).unwrap(), 1));
    in_turn(&mut h, [take(A); 2]);
    delete_the_waiters_lease(&mut h);
    assert!(h.peers[1].notices.is_empty(), "the first starts over");
    delete_the_waiters_lease(&mut h);
    assert_eq!(last_notice(&h, 1), failed(FailReason::Zk(ZkError::NoNode)));
    assert_eq!(h.children(LEASES).len(), 1, "only c0's lease");
    assert!(h.children(LOCKS).is_empty());
}

#[test]
fn under_release_at_lost_a_waiter_whose_lease_node_vanishes_fails_and_can_acquire_again() {
    let mut h = Harness::with_config(2, RELEASING_AT_LOST, || {
        Semaphore::new(Path::new(PATH).unwrap(), 1)
    });
    in_turn(&mut h, [take(A); 2]);
    delete_the_waiters_lease(&mut h);
    assert_eq!(last_notice(&h, 1), failed(FailReason::NodeVanished));
    assert_eq!(h.children(LEASES).len(), 1);
    assert!(h.children(LOCKS).is_empty());
    h.call(1, take(A));
    h.settle();
    h.call(0, give_back(A));
    h.settle();
    assert!(acquired(&h, 1).is_some());
    h.call(1, give_back(A));
    h.settle();
    assert_empty(&h);
}

#[test]
fn a_lease_waiter_keeps_its_lease_node_across_lost_and_acquires_on_its_new_session() {
    let mut h = semaphores(2, 1);
    in_turn(&mut h, [take(A); 2]);
    let old_session = h.peers[1].handle.session;
    // c1, past the internal lock, gives up its session while the server still holds it.
    give_up_session(&mut h, 1, false);
    assert_ne!(h.peers[1].handle.session, old_session);
    assert!(h.peers[1].notices.is_empty(), "no Failed: the wait goes on");
    assert_eq!(h.children(LEASES).len(), 2, "its old lease node is listed");
    h.call(0, give_back(A));
    h.settle();
    assert!(acquired(&h, 1).is_some(), "woken on its new session");
    let ours = h.server.tree.ephemerals_of(old_session);
    assert_eq!(
        ours.len(),
        1,
        "it holds through its old session's lease node"
    );
}

#[test]
fn a_lease_waiter_whose_session_expired_starts_over_from_the_internal_lock() {
    let mut h = semaphores(2, 1);
    in_turn(&mut h, [take(A); 2]);
    h.drop_connection(1, false);
    h.expire(1, true);
    h.settle();
    assert!(
        h.peers[1].notices.is_empty(),
        "no Failed: the acquire goes on"
    );
    let new_session = h.peers[1].handle.session;
    assert_eq!(
        h.server.tree.ephemerals_of(new_session).len(),
        2,
        "a new internal-lock node and a new lease node, of the new session"
    );
    h.call(0, give_back(A));
    h.settle();
    assert!(acquired(&h, 1) > acquired(&h, 0));
}

/// The finding of `check semaphore --max-leases 1` (`progress`, 25 steps), which Curator's
/// `internalAcquire1Lease` shares: the internal lock does not keep lease takers to one at a
/// time across a session expiry, and two waiters with one lease wait for each other.
#[test]
fn an_expiry_past_the_internal_lock_lets_a_second_lease_taker_in_and_both_wait_for_ever() {
    let mut h = semaphores(2, 1);
    let lease_listing = |r: &Request| matches!(r, Request::GetChildren { path, watch: true } if path.as_str() == LEASES);
    // c0 holds the internal lock, its lease create in flight, when the server expires it.
    h.call(0, take(A));
    step_to_lease_create(&mut h, 0);
    h.expire(0, true);
    // Its create is redone on the new session (after a retry sleep); its internal-lock node
    // went with the old one.
    while !h.peers[0]
        .handle
        .requests
        .front()
        .is_some_and(|(_, r)| lease_listing(r))
    {
        if !(h.apply_next(0) | h.deliver_next(0)) {
            let sleep = h.only_timer(0);
            h.fire(0, sleep);
        }
    }
    assert!(h.children(LOCKS).is_empty());
    // So c1 takes the internal lock and a lease node of its own before c0 lists the leases.
    h.call(1, take(A));
    step_until(&mut h, 1, lease_listing);
    h.settle();
    assert_eq!(h.children(LEASES).len(), 2, "two lease nodes for one lease");
    assert!(acquired(&h, 0).is_none() && acquired(&h, 1).is_none());
    assert!(
        h.peers
            .iter()
            .all(|p| p.notices.is_empty() && p.handle.requests.is_empty())
    );
}

#[test]
fn a_timeout_at_every_stage_leaves_no_node() {
    let mut h = semaphores(4, 2);
    in_turn(&mut h, [take(A); 2]);
    h.call(2, take_within(A, 3));
    h.settle();
    h.call(3, take_within(A, 3));
    h.settle();
    // c2 waits for the leases, c3 for the internal lock.
    for c in [3, 2] {
        time_out(&mut h, c, A);
    }
    assert_eq!(h.children(LEASES).len(), 2);
    assert!(h.children(LOCKS).is_empty());
    // And while the lease node is being created: the node it produces is deleted.
    h.call(2, take_within(A, 3));
    step_to_lease_create(&mut h, 2);
    time_out(&mut h, 2, A);
    assert_eq!(h.children(LEASES).len(), 2);
    in_turn(&mut h, [give_back(A); 2]);
    assert_empty(&h);
}

#[test]
fn connection_loss_during_the_lease_create_leaves_exactly_one_lease() {
    for applied in [true, false] {
        let mut h = semaphores(1, 2);
        h.call(0, take(A));
        h.settle();
        h.call(0, take(A));
        step_to_lease_create(&mut h, 0);
        drop_and_reconnect(&mut h, 0, applied);
        assert_eq!(tokens(&h, 0, A).len(), 2, "applied: {applied}");
        assert_eq!(h.children(LEASES).len(), 2, "applied: {applied}");
        assert!(h.children(LOCKS).is_empty());
    }
}

#[test]
fn holders_hear_each_connection_state_once_and_lost_deletes_every_lease() {
    // Releasing at LOST (`OnLost::Release`); Curator keeps the hold until released.
    let mut h = Harness::with_config(2, RELEASING_AT_LOST, || {
        Semaphore::new(Path::new(PATH).unwrap(), 2)
    });
    for _ in 0..2 {
        h.call(0, take(A));
        h.settle();
    }
    h.call(1, take(B));
    h.settle();
    drop_and_reconnect(&mut h, 0, false);
    assert_eq!(
        h.peers[0].notices[2..],
        [
            Notice::Suspended { owner: A },
            Notice::Reconnected { owner: A }
        ]
    );
    // c0 gives its session up at the LOST timer while the server still holds it: its new
    // session deletes both leases, and c1 gets one.
    give_up_session(&mut h, 0, false);
    assert_eq!(
        h.peers[0].notices[4..],
        [Notice::Suspended { owner: A }, Notice::Lost { owner: A }]
    );
    assert!(tokens(&h, 0, A).is_empty());
    assert!(acquired(&h, 1).is_some());
    assert_eq!(h.children(LEASES).len(), 1, "c1's lease only");
}

#[test]
fn two_owners_on_one_instance_take_their_own_leases() {
    let mut h = semaphores(1, 1);
    h.call(0, take(A));
    h.settle();
    h.call(0, give_back(B));
    assert_eq!(
        last_notice(&h, 0),
        Some(Notice::Failed {
            owner: B,
            reason: FailReason::NotHeld
        })
    );
    h.call(0, take(B));
    h.settle();
    assert!(tokens(&h, 0, B).is_empty());
    h.call(0, give_back(A));
    h.settle();
    assert_eq!(tokens(&h, 0, B).len(), 1);
    assert!(tokens(&h, 0, A).is_empty());
}

#[test]
fn release_not_held_second_waiting_acquire_and_other_modes_fail() {
    let mut h = semaphores(1, 0);
    h.call(0, give_back(A));
    assert_eq!(last_notice(&h, 0), failed(FailReason::NotHeld));
    // No lease at all: the acquire waits.
    h.call(0, take(A));
    h.settle();
    assert!(acquired(&h, 0).is_none());
    h.call(0, take(A));
    assert_eq!(last_notice(&h, 0), failed(FailReason::AlreadyAcquiring));
    for mode in [Mode::Exclusive, Mode::Read, Mode::Write] {
        h.call(
            0,
            Call::Acquire {
                owner: A,
                timeout: None,
                mode,
            },
        );
        assert_eq!(last_notice(&h, 0), failed(FailReason::Unsupported));
        h.call(0, Call::Release { owner: A, mode });
        assert_eq!(last_notice(&h, 0), failed(FailReason::Unsupported));
    }
    h.call(0, Call::Start { owner: A });
    assert_eq!(last_notice(&h, 0), failed(FailReason::Unsupported));
}

#[test]
fn a_waiter_queued_for_the_internal_lock_whose_session_is_lost_fails_and_leaves_nothing() {
    // Giving up at LOST (`OnLost::Release`); Curator keeps the waiter queued.
    let mut h = Harness::with_config(3, RELEASING_AT_LOST, || {
        Semaphore::new(Path::new(PATH).unwrap(), 1)
    });
    h.call(0, take(A));
    h.settle();
    h.call(2, take(A));
    h.settle();
    // c2 holds the internal lock and waits for the lease; c1 queues for the internal lock.
    h.call(1, take(A));
    h.settle();
    assert_eq!(h.children(LOCKS).len(), 2);
    lose_waiter_session(&mut h, false);
    assert_eq!(h.children(LOCKS).len(), 1, "c2's internal-lock node only");
    assert_eq!(h.children(LEASES).len(), 2, "c0's lease and c2's");
    h.call(0, give_back(A));
    h.settle();
    assert!(acquired(&h, 2).is_some());
    assert!(h.children(LOCKS).is_empty());
}
