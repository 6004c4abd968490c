//! The lock recipes and the framework layer driven input by input through the harness.

use std::time::Duration;

use super::{Call, FailReason, Mode, Mutex, NaiveHerdMutex, Notice};
use crate::client::ClientInput;
use crate::fencing::Token;
use crate::framework::{ErrorPolicy, FrameworkConfig, OnLost};
use crate::harness::Harness;
use crate::ids::Owner;
use crate::recipe::{Recipe, SessionEvent};
use crate::retry::RetryPolicy;
use crate::zk::{CreateMode, EventKind, Path, Request, ZkError};

pub(super) const A: Owner = Owner(1);
pub(super) const B: Owner = Owner(2);

fn mutexes(n: u16) -> Harness<Mutex> {
    Harness::new(n, || Mutex::new(Path::new("/locks/m").unwrap()))
}

pub(super) fn acquire(owner: Owner) -> Call {
    Call::acquire(owner, None)
}

pub(super) fn acquire_within(owner: Owner, secs: u64) -> Call {
    Call::acquire(owner, Some(Duration::from_secs(secs)))
}

pub(super) fn release(owner: Owner) -> Call {
    Call::release(owner)
}

/// The token of the last `Acquired` notice of client `c`.
pub(super) fn acquired<R: Recipe<Notice = Notice>>(h: &Harness<R>, c: usize) -> Option<Token> {
    h.peers[c].notices.iter().rev().find_map(|n| match n {
        Notice::Acquired { token, .. } => Some(*token),
        _ => None,
    })
}

/// The notice of an acquire or release of owner `A` that failed for `reason`.
pub(super) fn failed(reason: FailReason) -> Option<Notice> {
    Some(Notice::Failed { owner: A, reason })
}

/// What the framework reports when the client gives up a cut-off session at the LOST timer
/// and opens a new one.
const GAVE_UP_THEN_NEW_SESSION: [SessionEvent; 3] = [
    SessionEvent::Suspended,
    SessionEvent::Lost {
        server_confirmed: false,
    },
    SessionEvent::Reconnected {
        session_changed: true,
    },
];

/// Framework settings that end a hold at LOST (`OnLost::Release`, splitbrain's safer choice)
/// instead of keeping it until released (Curator's).
pub(super) const RELEASING_AT_LOST: FrameworkConfig = FrameworkConfig {
    error_policy: ErrorPolicy::Standard,
    on_lost: OnLost::Release,
    lost_after_percent: 100,
    retry: crate::retry::RetryPolicy::DEFAULT,
    connection_timeout_ms: FrameworkConfig::DEFAULT_CONNECTION_TIMEOUT_MS,
};

pub(super) fn last_notice<R: Recipe<Notice = Notice>>(h: &Harness<R>, c: usize) -> Option<Notice> {
    h.peers[c].notices.last().copied()
}

/// Client `c` makes the `c`-th of `calls`, one client after the other, settling after each
/// (with the same acquire or start: the first holds or leads, the others queue in client
/// order).
pub(super) fn in_turn<R: Recipe<Call = Call>>(
    h: &mut Harness<R>,
    calls: impl IntoIterator<Item = Call>,
) {
    for (c, call) in calls.into_iter().enumerate() {
        h.call(c, call);
        h.settle();
    }
}

/// c1's connection drops (its request in flight applied first when `applied`) and it gives up
/// the session at the LOST timer: its acquire must fail with `SessionLost` and leave no
/// request behind.
pub(super) fn lose_waiter_session<R: Recipe<Call = Call, Notice = Notice>>(
    h: &mut Harness<R>,
    applied: bool,
) {
    give_up_session(h, 1, applied);
    assert_eq!(last_notice(h, 1), failed(FailReason::SessionLost));
    assert_eq!(h.peers[1].client.framework().pending_requests(), 0);
}

/// Client `c`'s connection drops (its request in flight applied first when `applied`) and it
/// gives up the session at the LOST timer, opening a new one, while the server may still
/// hold the old one.
pub(super) fn give_up_session<R: Recipe>(h: &mut Harness<R>, c: usize, applied: bool) {
    h.drop_connection(c, applied);
    h.settle();
    fire_lost_timer(h, c);
}

/// Fires client `c`'s LOST timer (its connection suspended) and settles.
pub(super) fn fire_lost_timer<R: Recipe>(h: &mut Harness<R>, c: usize) {
    let timer = h.lost_timer(c);
    h.fire(c, timer);
    h.settle();
}

/// Client `c`'s connection drops (its request in flight applied first when `applied`) and
/// comes back within the session.
pub(super) fn drop_and_reconnect<R: Recipe>(h: &mut Harness<R>, c: usize, applied: bool) {
    h.drop_connection(c, applied);
    h.settle();
    h.reconnect(c);
    h.settle();
}

/// Fires client `c`'s one timer (an acquire's timeout, or the LOST timer of a cut-off
/// session) and settles.
pub(super) fn fire_only_timer<R: Recipe>(h: &mut Harness<R>, c: usize) {
    let timer = h.only_timer(c);
    h.fire(c, timer);
    h.settle();
}

/// Client `c`'s acquire by `owner` waits until its timeout fires (its one timer): it must
/// time out.
pub(super) fn time_out<R: Recipe<Notice = Notice>>(h: &mut Harness<R>, c: usize, owner: Owner) {
    fire_only_timer(h, c);
    assert_eq!(last_notice(h, c), Some(Notice::TimedOut { owner }));
}

/// Client `c`, cut off, makes `call`, which waits for the connection: nothing is sent.
pub(super) fn call_while_disconnected<R: Recipe>(h: &mut Harness<R>, c: usize, call: R::Call) {
    h.drop_connection(c, false);
    h.settle();
    h.call(c, call);
    assert!(
        h.peers[c].handle.requests.is_empty(),
        "nothing sent while disconnected"
    );
}

/// Steps client `c` until its next request in flight is one `wanted` accepts.
pub(super) fn step_until<R: Recipe>(
    h: &mut Harness<R>,
    c: usize,
    wanted: impl Fn(&Request) -> bool,
) {
    loop {
        if let Some((_, request)) = h.peers[c].handle.requests.front()
            && wanted(request)
        {
            return;
        }
        assert!(h.apply_next(c) | h.deliver_next(c), "c{c} got stuck");
    }
}

/// How many of the requests client `c` sent `kind` accepts.
pub(super) fn sent<R: Recipe>(h: &Harness<R>, c: usize, kind: impl Fn(&Request) -> bool) -> usize {
    h.peers[c].sent.iter().filter(|r| kind(r)).count()
}

/// How many of the notices client `c` heard `kind` accepts.
pub(super) fn heard<R: Recipe<Notice = Notice>>(
    h: &Harness<R>,
    c: usize,
    kind: impl Fn(&Notice) -> bool,
) -> usize {
    h.peers[c].notices.iter().filter(|n| kind(n)).count()
}

/// The clients that have handled a watch event.
pub(super) fn woken<R: Recipe>(h: &Harness<R>) -> Vec<usize> {
    (0..h.peers.len())
        .filter(|&c| !h.peers[c].watched.is_empty())
        .collect()
}

/// Every client but the first, queued under `path` in client order, has set one watch (by
/// get_data), on the node just ahead of its own.
pub(super) fn assert_each_watches_the_node_ahead<R: Recipe>(h: &Harness<R>, path: &str) {
    let names = h.children(path);
    for c in 1..h.peers.len() {
        let watched: Vec<&Request> = h.peers[c]
            .sent
            .iter()
            .filter(|r| matches!(r, Request::GetData { watch: true, .. }))
            .collect();
        assert_eq!(watched.len(), 1, "c{c} set one watch");
        assert_eq!(
            watched[0].path().name(),
            names[c - 1],
            "c{c} watches the node ahead"
        );
    }
}

/// Relabels client 0's `recipe` with clients 0 and 1 swapped: every node of client 0 then
/// names client 1, and swapping back gives the recipe again. Returns how often it names
/// client 0's slot.
pub(super) fn assert_swapping_clients_relabels<R>(recipe: &R) -> usize
where
    R: crate::relabel::Relabel + std::fmt::Debug + PartialEq,
{
    use crate::ids::ClientSlot;
    use crate::relabel::ClientMap;

    let mut swap = ClientMap::new();
    swap.map_slot(ClientSlot(0), ClientSlot(1));
    swap.map_slot(ClientSlot(1), ClientSlot(0));
    let swapped = recipe.relabel(&swap);
    let own = format!("{recipe:?}").matches("-0000-").count();
    assert_eq!(
        format!("{swapped:?}").matches("-0001-").count(),
        own,
        "every node of c0 now names c1"
    );
    assert_ne!(&swapped, recipe);
    assert_eq!(&swapped.relabel(&swap), recipe);
    own
}

#[test]
fn five_contenders_acquire_in_fifo_order_with_increasing_tokens() {
    let mut h = mutexes(5);
    in_turn(&mut h, [acquire(A); 5]);
    assert!(acquired(&h, 0).is_some());
    assert!((1..5).all(|c| acquired(&h, c).is_none()));
    let mut tokens = vec![acquired(&h, 0).unwrap()];
    for c in 0..4 {
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
        let next = acquired(&h, c + 1).unwrap_or_else(|| panic!("c{} did not acquire", c + 1));
        tokens.push(next);
        assert!(
            (c + 2..5).all(|w| acquired(&h, w).is_none()),
            "only c{} holds",
            c + 1
        );
    }
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "tokens {tokens:?}");
}

#[test]
fn each_waiter_watches_only_its_predecessor_and_a_release_wakes_one() {
    let mut h = mutexes(4);
    in_turn(&mut h, [acquire(A); 4]);
    assert_each_watches_the_node_ahead(&h, "/locks/m");
    h.call(0, release(A));
    h.settle();
    assert_eq!(woken(&h), [1]);
    assert_eq!(h.peers[1].watched[0].kind, EventKind::NodeDeleted);
}

/// c0 has made `call` (it holds, or leads); c1 has made it too, created its node and listed,
/// and its watch-setting read of c0's node is in flight, not yet applied.
pub(super) fn c1_about_to_watch_c0<R: Recipe<Call = Call>>(h: &mut Harness<R>, call: Call) {
    h.call(0, call);
    h.settle();
    h.call(1, call);
    // c1: create, then list.
    for _ in 0..2 {
        assert!(h.apply_next(1));
        assert!(h.deliver_next(1));
    }
    assert!(matches!(
        h.peers[1].handle.requests.front(),
        Some((_, Request::GetData { watch: true, .. }))
    ));
}

#[test]
fn a_predecessor_gone_before_the_watch_is_set_means_list_again_not_hang() {
    let mut h = mutexes(2);
    c1_about_to_watch_c0(&mut h, acquire(A));
    h.call(0, release(A));
    assert!(h.apply_next(0), "c0's delete applies before c1's get_data");
    h.settle();
    assert!(acquired(&h, 1).is_some());
    assert!(h.peers[1].watched.is_empty(), "no watch was ever set");
}

#[test]
fn a_timed_out_waiter_deletes_its_node() {
    let mut h = mutexes(2);
    h.call(0, acquire(A));
    h.settle();
    h.call(1, acquire_within(A, 3));
    h.settle();
    assert_eq!(h.children("/locks/m").len(), 2);
    time_out(&mut h, 1, A);
    assert_eq!(h.children("/locks/m").len(), 1);
    h.call(0, release(A));
    h.settle();
    assert!(h.children("/locks/m").is_empty());
}

#[test]
fn a_timeout_during_the_create_deletes_the_node_it_produces() {
    let mut h = mutexes(1);
    h.call(0, acquire_within(A, 3));
    time_out(&mut h, 0, A);
    assert!(h.children("/locks/m").is_empty());
}

#[test]
fn reentrant_per_owner_and_the_node_goes_on_the_last_release() {
    let mut h = mutexes(1);
    h.call(0, acquire(A));
    h.settle();
    let token = acquired(&h, 0).unwrap();
    h.call(0, acquire(A));
    assert_eq!(
        last_notice(&h, 0),
        Some(Notice::Acquired {
            owner: A,
            token,
            mode: Mode::Exclusive,
        })
    );
    h.call(0, release(A));
    h.settle();
    assert_eq!(h.children("/locks/m").len(), 1, "one hold left");
    h.call(0, release(A));
    h.settle();
    assert!(h.children("/locks/m").is_empty());
    h.call(0, release(A));
    assert_eq!(last_notice(&h, 0), failed(FailReason::NotHeld));
}

#[test]
fn a_second_owner_on_one_instance_queues_with_its_own_node() {
    let mut h = mutexes(1);
    h.call(0, acquire(A));
    h.settle();
    h.call(0, acquire(B));
    h.settle();
    assert_eq!(h.children("/locks/m").len(), 2);
    assert_eq!(h.peers[0].notices.len(), 1, "only A acquired");
    h.call(0, release(A));
    h.settle();
    assert!(matches!(
        last_notice(&h, 0),
        Some(Notice::Acquired { owner: B, .. })
    ));
}

#[test]
fn connection_loss_during_create_leaves_exactly_one_node() {
    for applied in [true, false] {
        let mut h = mutexes(1);
        h.call(0, acquire(A));
        h.drop_connection(0, applied);
        h.settle();
        assert_eq!(h.peers[0].sessions, [SessionEvent::Suspended]);
        h.reconnect(0);
        h.settle();
        let same_session = SessionEvent::Reconnected {
            session_changed: false,
        };
        assert_eq!(h.peers[0].sessions, [SessionEvent::Suspended, same_session]);
        let names = h.children("/locks/m");
        assert_eq!(names.len(), 1, "applied before the loss: {applied}");
        assert!(acquired(&h, 0).is_some());
    }
}

#[test]
fn an_own_node_found_after_a_connection_loss_is_adopted_not_made_again() {
    let mut h = mutexes(1);
    for call in [acquire(A), release(A)] {
        h.call(0, call);
        h.settle();
    }
    let deletes = |h: &Harness<Mutex>| sent(h, 0, |r| matches!(r, Request::Delete { .. }));
    assert_eq!(deletes(&h), 1, "the release");
    h.call(0, acquire(A));
    // The create is applied and its answer lost with the connection; the client reconnects
    // to the same session and finds the node by its protection prefix.
    h.drop_connection(0, true);
    h.settle();
    h.reconnect(0);
    h.settle();
    assert!(acquired(&h, 0).is_some());
    let names = h.children("/locks/m");
    assert_eq!(names.len(), 1);
    assert!(names[0].ends_with("-lock-0000000001"), "{names:?}");
    assert_eq!(
        deletes(&h),
        1,
        "the session's own node is not deleted and made again"
    );
}

#[test]
fn a_protected_node_of_an_older_session_is_deleted_not_adopted() {
    let mut h = mutexes(1);
    h.call(0, acquire(A));
    let old_session = h.peers[0].handle.session;
    h.drop_connection(0, true);
    h.settle();
    // The client gives up on the session (the LOST timer) while the server still holds it.
    fire_lost_timer(&mut h, 0);
    let new_session = h.peers[0].handle.session;
    assert_ne!(old_session, new_session);
    assert_eq!(h.peers[0].sessions, GAVE_UP_THEN_NEW_SESSION);
    let names = h.children("/locks/m");
    assert_eq!(names.len(), 1);
    let node = h
        .server
        .tree
        .get(&Path::new("/locks/m").unwrap().child(&names[0]).unwrap())
        .unwrap();
    assert_eq!(node.stat.ephemeral_owner, Some(new_session));
    assert!(acquired(&h, 0).is_some());
}

#[test]
fn a_guaranteed_delete_is_retried_after_connection_loss_until_no_node() {
    let mut h = mutexes(1);
    h.call(0, acquire(A));
    h.settle();
    h.call(0, release(A));
    drop_and_reconnect(&mut h, 0, true);
    let deletes = sent(&h, 0, |r| matches!(r, Request::Delete { .. }));
    assert_eq!(deletes, 2, "sent again after the connection loss");
    assert!(h.children("/locks/m").is_empty());
    assert_eq!(h.peers[0].client.framework().pending_requests(), 0);
}

/// Client `c`'s request in flight is lost with its connection; the client reconnects within
/// the session and the retry sleep ends, sending the request again (left in flight). Returns
/// the sleep's duration.
fn lose_and_retry<R: Recipe>(h: &mut Harness<R>, c: usize) -> Duration {
    h.drop_connection(c, false);
    h.settle_without_sleeps();
    h.reconnect(c);
    h.settle_without_sleeps();
    let sleeps = h.peers[c].client.framework().retry_sleeps();
    assert_eq!(sleeps.len(), 1, "one retry sleep");
    let after = h.peers[c].timers[&sleeps[0]];
    h.fire(c, sleeps[0]);
    after
}

/// One mutex client under `retry`, its lock's parents already there (so its first request
/// is the protected create of its node).
fn retrying(retry: RetryPolicy) -> Harness<Mutex> {
    let config = FrameworkConfig {
        retry,
        ..FrameworkConfig::default()
    };
    let mut h = Harness::with_config(1, config, || Mutex::new(Path::new("/locks/m").unwrap()));
    for path in ["/locks", "/locks/m"] {
        let create = Request::Create {
            path: Path::new(path).unwrap(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        };
        assert!(h.operator(&create).is_ok());
    }
    h
}

/// A mutex client under `retry` whose node is created and whose listing is in flight.
fn listing_in_flight(retry: RetryPolicy) -> Harness<Mutex> {
    let mut h = retrying(retry);
    h.call(0, acquire(A));
    h.apply_next(0);
    h.deliver_next(0);
    let created = h.children("/locks/m").len();
    assert_eq!(created, 1, "created; the listing is in flight");
    h
}

/// Client 0's acquire has failed with `ConnectionLoss`; once it reconnects, nothing of it is
/// left (its node deleted, by path or found by its protection id) and nothing is pending.
fn assert_failed_and_cleaned_up(h: &mut Harness<Mutex>) {
    assert_eq!(
        last_notice(h, 0),
        failed(FailReason::Zk(ZkError::ConnectionLoss))
    );
    h.reconnect(0);
    h.settle();
    assert!(h.children("/locks/m").is_empty(), "the node is deleted");
    assert_eq!(h.peers[0].client.framework().pending_requests(), 0);
}

/// Curator's `ExponentialBackoffRetry(1000, 3)`: a listing that fails with `ConnectionLoss`
/// four times fails the acquire, and the waiter's node is deleted (`LockInternals` deletes
/// its path and rethrows). Before the retry policy, requests were retried forever.
#[test]
fn a_request_out_of_retries_fails_the_acquire_and_its_node_is_deleted() {
    let mut h = listing_in_flight(RetryPolicy::DEFAULT);
    for _ in 0..3 {
        lose_and_retry(&mut h, 0);
        assert_eq!(last_notice(&h, 0), None, "retried");
    }
    h.drop_connection(0, false);
    h.settle();
    assert_failed_and_cleaned_up(&mut h);
}

/// `RetryForever`: the same losses and more never fail the acquire.
#[test]
fn retry_forever_never_gives_up() {
    let mut h = listing_in_flight(RetryPolicy::Forever { sleep_ms: 100 });
    for _ in 0..10 {
        assert_eq!(lose_and_retry(&mut h, 0), Duration::from_millis(100));
    }
    h.settle();
    assert!(acquired(&h, 0).is_some());
}

/// `RetryNTimes(0, ..)`: a protected create whose one attempt is lost (after the server
/// applied it) fails at once, and its node, found by its protection id, is deleted in the
/// background (Curator's `FindAndDeleteProtectedNodeInBackground`).
#[test]
fn a_protected_create_out_of_retries_fails_and_its_node_is_found_and_deleted() {
    let mut h = retrying(RetryPolicy::NTimes { n: 0, sleep_ms: 0 });
    h.call(0, acquire(A));
    h.drop_connection(0, true);
    h.settle_without_sleeps();
    assert_eq!(h.children("/locks/m").len(), 1, "applied before the loss");
    assert_failed_and_cleaned_up(&mut h);
}

/// The retry sleeps are the policy's: `ExponentialBackoffRetry(1000, 3)` sleeps a whole
/// number of seconds within 1..2^(n+1) before retry n.
#[test]
fn retry_sleeps_follow_the_policy() {
    let mut h = listing_in_flight(RetryPolicy::DEFAULT);
    for retry in 0..3u32 {
        let after = lose_and_retry(&mut h, 0);
        let seconds = after.as_millis() / 1000;
        assert_eq!(after.as_millis() % 1000, 0);
        assert!(
            (1..1 << (retry + 1)).contains(&seconds),
            "{retry}: {after:?}"
        );
    }
}

#[test]
fn suspended_and_lost_end_the_hold() {
    let mut h = mutexes(2);
    h.call(0, acquire(A));
    h.settle();
    h.drop_connection(0, false);
    h.settle();
    assert_eq!(last_notice(&h, 0), Some(Notice::Suspended { owner: A }));
    h.reconnect(0);
    h.settle();
    assert_eq!(last_notice(&h, 0), Some(Notice::Reconnected { owner: A }));
    assert_eq!(h.children("/locks/m").len(), 1, "same session, same node");
    // Cut off again; the server expires the session and says so on reconnect.
    h.drop_connection(0, false);
    h.call(1, acquire(A));
    h.expire(0, true);
    h.settle();
    assert_eq!(last_notice(&h, 0), Some(Notice::Lost { owner: A }));
    assert!(h.peers[0].sessions.contains(&SessionEvent::Lost {
        server_confirmed: true
    }));
    assert!(acquired(&h, 1).is_some(), "the next waiter gets the lock");
    assert!(acquired(&h, 1) > acquired(&h, 0));
}

#[test]
fn under_the_session_based_policy_a_hold_lives_through_suspended_until_lost() {
    let config = FrameworkConfig {
        error_policy: ErrorPolicy::SessionBased,
        ..FrameworkConfig::default()
    };
    let mut h = Harness::with_config(2, config, || Mutex::new(Path::new("/locks/m").unwrap()));
    h.call(0, acquire(A));
    h.settle();
    let token = acquired(&h, 0);
    drop_and_reconnect(&mut h, 0, false);
    assert_eq!(
        h.peers[0].notices,
        [Notice::Acquired {
            owner: A,
            token: token.unwrap(),
            mode: Mode::Exclusive
        }],
        "neither Suspended nor Reconnected"
    );
    assert_eq!(h.peers[0].client.recipe().holding(A), token);
    h.drop_connection(0, false);
    h.settle();
    fire_only_timer(&mut h, 0);
    assert_eq!(last_notice(&h, 0), Some(Notice::Lost { owner: A }));
}

#[test]
fn at_lost_a_hold_and_its_node_stay_until_the_holder_releases() {
    let mut h = mutexes(2);
    in_turn(&mut h, [acquire(A); 2]);
    let token = acquired(&h, 0);
    // c0 gives up its session while the server still holds it.
    give_up_session(&mut h, 0, false);
    assert_eq!(last_notice(&h, 0), Some(Notice::Lost { owner: A }));
    assert_eq!(h.peers[0].client.recipe().holding(A), token, "kept");
    assert_eq!(h.children("/locks/m").len(), 2, "the node stays");
    assert_eq!(acquired(&h, 1), None, "c1 still waits behind it");
    // No later connection change reaches the lost hold.
    drop_and_reconnect(&mut h, 0, false);
    assert_eq!(last_notice(&h, 0), Some(Notice::Lost { owner: A }));
    h.call(0, release(A));
    h.settle();
    assert!(matches!(
        last_notice(&h, 0),
        Some(Notice::Released { remaining: 0, .. })
    ));
    assert!(acquired(&h, 1) > token, "the release deleted the old node");
}

#[test]
fn releasing_at_lost_ends_the_hold_and_deletes_its_node_at_once() {
    let mut h = Harness::with_config(2, RELEASING_AT_LOST, || {
        Mutex::new(Path::new("/locks/m").unwrap())
    });
    in_turn(&mut h, [acquire(A); 2]);
    let token = acquired(&h, 0);
    give_up_session(&mut h, 0, false);
    assert_eq!(last_notice(&h, 0), Some(Notice::Lost { owner: A }));
    assert_eq!(h.peers[0].client.recipe().holding(A), None);
    assert!(acquired(&h, 1) > token, "c1 holds without any release");
    h.call(0, release(A));
    assert_eq!(last_notice(&h, 0), failed(FailReason::NotHeld));
}

#[test]
fn a_queued_waiter_keeps_its_node_across_lost_and_acquires_with_it_on_the_new_session() {
    let mut h = mutexes(2);
    in_turn(&mut h, [acquire(A); 2]);
    let old_session = h.peers[1].handle.session;
    // c1 gives up its session while the server still holds it (and its node).
    give_up_session(&mut h, 1, false);
    assert_ne!(h.peers[1].handle.session, old_session);
    assert!(h.peers[1].notices.is_empty(), "no Failed: the wait goes on");
    assert_eq!(
        h.children("/locks/m").len(),
        2,
        "the old node keeps its place"
    );
    h.call(0, release(A));
    h.settle();
    assert!(
        acquired(&h, 1).is_some(),
        "c1 acquires, woken on its new session"
    );
    let ours = h.server.tree.ephemerals_of(old_session);
    assert_eq!(ours.len(), 1, "through the node of its old session");
}

#[test]
fn a_waiter_whose_node_vanished_at_lost_starts_over_with_a_new_node() {
    let mut h = mutexes(2);
    in_turn(&mut h, [acquire(A); 2]);
    h.drop_connection(1, false);
    h.expire(1, true);
    h.settle();
    assert!(h.peers[1].notices.is_empty(), "no Failed: the wait goes on");
    let new_session = h.peers[1].handle.session;
    assert_eq!(
        h.server.tree.ephemerals_of(new_session).len(),
        1,
        "a new node, of the new session"
    );
    h.call(0, release(A));
    h.settle();
    assert!(acquired(&h, 1) > acquired(&h, 0));
}

/// Curator's `attemptLock` counts its start-overs against the retry policy: under
/// `RetryNTimes(1)` a waiter starts over once when its node vanishes, and the second time
/// its acquire fails with the `NoNode` (its new node deleted), as `acquire()` rethrows.
#[test]
fn a_waiter_starts_over_only_while_the_retry_policy_allows() {
    let once = FrameworkConfig {
        retry: RetryPolicy::NTimes { n: 1, sleep_ms: 0 },
        ..FrameworkConfig::default()
    };
    let mut h = Harness::with_config(2, once, || Mutex::new(Path::new("/locks/m").unwrap()));
    in_turn(&mut h, [acquire(A); 2]);
    for _ in 0..2 {
        h.drop_connection(1, false);
        h.expire(1, true);
        h.settle();
    }
    assert_eq!(
        h.peers[1].notices,
        vec![Notice::Failed {
            owner: A,
            reason: FailReason::Zk(ZkError::NoNode)
        }],
        "the first vanishing starts over, the second fails"
    );
    assert_eq!(
        h.children("/locks/m").len(),
        1,
        "only the holder's node is left"
    );
}

#[test]
fn a_waiter_whose_lock_path_was_reaped_while_it_was_cut_off_starts_over() {
    let mut h = mutexes(2);
    in_turn(&mut h, [acquire(A); 2]);
    // c1 is cut off; the server expires its session (its node goes with it), c0 releases,
    // and the lock path, a container left empty, is reaped.
    h.drop_connection(1, false);
    h.settle();
    h.expire(1, false);
    h.call(0, release(A));
    h.settle();
    h.server.tree.reap_containers();
    assert!(h.server.tree.get(&Path::new("/locks/m").unwrap()).is_none());
    // c1 gives up its session at LOST and lists again on a new one: the path is gone.
    fire_lost_timer(&mut h, 1);
    h.settle();
    assert!(
        h.peers[1]
            .notices
            .iter()
            .all(|n| !matches!(n, Notice::Failed { .. }))
    );
    assert!(
        acquired(&h, 1).is_some(),
        "c1 starts over with a new node (and the path) and acquires"
    );
}

#[test]
fn a_waiter_whose_session_is_lost_fails_and_leaves_no_node() {
    // Giving up at LOST (`OnLost::Release`); Curator keeps the waiter queued.
    let mut h = Harness::with_config(2, RELEASING_AT_LOST, || {
        Mutex::new(Path::new("/locks/m").unwrap())
    });
    in_turn(&mut h, [acquire(A); 2]);
    lose_waiter_session(&mut h, false);
    assert_eq!(
        h.children("/locks/m").len(),
        1,
        "the waiter's node was deleted"
    );
}

#[test]
fn requests_wait_for_the_connection() {
    let mut h = mutexes(1);
    call_while_disconnected(&mut h, 0, acquire(A));
    h.reconnect(0);
    h.settle();
    assert!(acquired(&h, 0).is_some());
}

#[test]
fn a_reaped_lock_path_is_created_again() {
    let mut h = mutexes(1);
    h.call(0, acquire(A));
    h.settle();
    h.call(0, release(A));
    h.settle();
    h.server.tree.reap_containers();
    assert!(h.server.tree.get(&Path::new("/locks/m").unwrap()).is_none());
    let before = h.peers[0].sent.len();
    h.call(0, acquire(A));
    h.settle();
    assert_eq!(
        acquired(&h, 0).map(|_| h.children("/locks/m").len()),
        Some(1)
    );
    // Within the one create, as Curator's creatingParentContainersIfNeeded: the node's
    // create, answered NoNode; the path made as containers; the same create again, under
    // the same protection id.
    let creates: Vec<(&str, CreateMode)> = (h.peers[0].sent[before..].iter())
        .filter_map(|request| match request {
            Request::Create { path, mode, .. } => Some((path.as_str(), *mode)),
            _ => None,
        })
        .collect();
    let node = creates[0].0;
    assert!(node.starts_with("/locks/m/_c_"), "{creates:?}");
    let expected = [
        (node, CreateMode::EphemeralSequential),
        ("/locks", CreateMode::Container),
        ("/locks/m", CreateMode::Container),
        (node, CreateMode::EphemeralSequential),
    ];
    assert_eq!(creates, expected);
}

fn naive(n: u16) -> Harness<NaiveHerdMutex> {
    Harness::new(n, || NaiveHerdMutex::new(Path::new("/locks/n").unwrap()))
}

#[test]
fn the_naive_lock_excludes_but_every_release_wakes_the_herd() {
    let mut h = naive(4);
    in_turn(&mut h, [acquire(A); 4]);
    assert!(acquired(&h, 0).is_some());
    h.call(0, release(A));
    h.settle();
    assert_eq!(woken(&h), [1, 2, 3], "all waiters woke");
    let holders = (1..4).filter(|&c| acquired(&h, c).is_some()).count();
    assert_eq!(holders, 1, "one of them won");
}

#[test]
fn the_naive_lock_adopts_its_own_node_after_a_connection_loss() {
    let mut h = naive(1);
    h.call(0, acquire(A));
    drop_and_reconnect(&mut h, 0, true);
    assert!(acquired(&h, 0).is_some());
}

#[test]
fn the_naive_lock_queues_owners_of_one_instance() {
    let mut h = naive(1);
    h.call(0, acquire(A));
    h.call(0, acquire(B));
    h.settle();
    assert_eq!(h.peers[0].notices.len(), 1);
    h.call(0, release(A));
    h.settle();
    assert!(matches!(
        last_notice(&h, 0),
        Some(Notice::Acquired { owner: B, .. })
    ));
    assert_eq!(h.children("/locks/n"), ["lock"]);
}

#[test]
fn lost_is_declared_after_the_session_timeout_and_a_new_session_follows() {
    let mut h = mutexes(1);
    h.drop_connection(0, false);
    h.settle();
    let lost = h.only_timer(0);
    assert_eq!(
        h.peers[0].timers[&lost],
        crate::harness::TIMEOUT,
        "100 % by default"
    );
    h.input(0, ClientInput::Timer(lost));
    h.settle();
    assert_eq!(h.peers[0].sessions, GAVE_UP_THEN_NEW_SESSION);
    assert!(h.peers[0].notices.is_empty(), "nothing was held");
}

#[test]
fn lost_after_percent_scales_the_lost_timer() {
    use crate::client::Client;
    use crate::framework::Framework;
    use crate::ids::ClientSlot;
    use crate::recipe::Effect;
    use crate::session::{RawEvent, RawState};
    use crate::zk::SessionId;

    let config = FrameworkConfig {
        lost_after_percent: 50,
        ..FrameworkConfig::default()
    };
    let framework = Framework::new(config, ClientSlot(0), 0);
    let mut client = Client::new(framework, Mutex::new(Path::new("/l").unwrap()));
    let mut out = Vec::new();
    for state in [
        RawState::Connected {
            session: SessionId(1),
            timeout: Duration::from_secs(8),
        },
        RawState::Disconnected,
    ] {
        client.handle(ClientInput::Event(RawEvent::State { state }), &mut out);
    }
    let after = out.iter().find_map(|e| match e {
        Effect::SetTimer { after, .. } => Some(*after),
        _ => None,
    });
    assert_eq!(after, Some(Duration::from_secs(4)));
}

#[test]
fn a_watch_read_pending_at_lost_is_not_sent_again_on_the_new_session() {
    // Giving up at LOST (`OnLost::Release`); Curator keeps the waiter queued.
    let mut h = Harness::with_config(2, RELEASING_AT_LOST, || {
        Mutex::new(Path::new("/locks/m").unwrap())
    });
    c1_about_to_watch_c0(&mut h, acquire(A));
    give_up_session(&mut h, 1, false);
    let reads = sent(&h, 1, |r| matches!(r, Request::GetData { .. }));
    assert_eq!(
        reads, 1,
        "the watch-setting read is not re-sent on the new session"
    );
    assert_eq!(last_notice(&h, 1), failed(FailReason::SessionLost));
    assert_eq!(h.peers[1].client.framework().pending_requests(), 0);
    h.call(0, release(A));
    h.settle();
    assert!(
        h.peers[1].watched.is_empty(),
        "no stray watch wakes the former waiter"
    );
}

#[test]
fn a_naive_create_pending_at_lost_fails_and_leaves_nothing_behind() {
    let mut h = naive(2);
    h.call(0, acquire(A));
    h.settle();
    h.call(1, acquire(A));
    lose_waiter_session(&mut h, true);
    assert_eq!(
        h.peers[1].client.recipe(),
        &NaiveHerdMutex::new(Path::new("/locks/n").unwrap())
    );
}

/// Curator's connection timeout, which a call made while not connected waits at most.
const CONNECTION_TIMEOUT: Duration =
    Duration::from_millis(FrameworkConfig::DEFAULT_CONNECTION_TIMEOUT_MS as u64);

/// Client `c`'s timers set to run for the connection timeout.
fn connection_timeouts(h: &Harness<Mutex>, c: usize) -> Vec<crate::ids::TimerId> {
    let timers = h.peers[c].timers.iter();
    timers
        .filter(|(_, after)| **after == CONNECTION_TIMEOUT)
        .map(|(timer, _)| *timer)
        .collect()
}

#[test]
fn a_call_made_while_suspended_waits_out_the_connection_timeout_then_fails_at_failed_attempts() {
    let mut h = mutexes(1);
    h.drop_connection(0, false);
    h.settle();
    h.call(0, acquire(A));
    h.settle();
    h.fail_connection_attempt(0);
    h.settle();
    let framework = h.peers[0].client.framework();
    assert!(
        framework.retry_sleeps().is_empty(),
        "a call waiting for a connection is not yet queued, so a failed attempt fails nothing"
    );
    // The create and the policy's three retries (`settle` ends each retry sleep). Each waits
    // out the connection timeout (a retry of a protected create looks for its node with a
    // call of its own, which waits again), is queued by the client and fails at the end of
    // the next failed connection attempt.
    for retry in 0..=3 {
        assert_eq!(
            last_notice(&h, 0),
            None,
            "still trying after {retry} failures"
        );
        let [blocked] = connection_timeouts(&h, 0)[..] else {
            panic!("attempt {retry} waits for a connection")
        };
        h.fire(0, blocked);
        h.settle();
        h.fail_connection_attempt(0);
        h.settle();
    }
    assert_eq!(
        last_notice(&h, 0),
        failed(FailReason::Zk(ZkError::ConnectionLoss)),
        "out of retries before the session is lost"
    );
    assert!(h.peers[0].sent.is_empty(), "nothing reached the server");
    h.lost_timer(0);
}

#[test]
fn a_call_made_while_suspended_is_sent_at_reconnection_and_stops_waiting() {
    let mut h = mutexes(1);
    h.drop_connection(0, false);
    h.settle();
    h.call(0, acquire(A));
    h.settle();
    assert_eq!(connection_timeouts(&h, 0).len(), 1);
    h.reconnect(0);
    h.settle();
    assert!(matches!(
        last_notice(&h, 0),
        Some(Notice::Acquired { owner: A, .. })
    ));
    assert!(
        h.peers[0].timers.is_empty(),
        "the connection timeout is cancelled, as the LOST timer is"
    );
}

#[test]
fn a_retry_made_while_disconnected_is_queued_without_waiting_again() {
    let mut h = mutexes(2);
    // c1's watch-setting read, a plain call, is in flight when its connection drops.
    c1_about_to_watch_c0(&mut h, acquire(A));
    h.drop_connection(1, false);
    h.settle();
    assert!(connection_timeouts(&h, 1).is_empty(), "no second wait");
    let framework = h.peers[1].client.framework();
    assert_eq!(framework.pending_requests(), 1, "the retry is queued");
    h.fail_connection_attempt(1);
    h.settle();
    assert!(connection_timeouts(&h, 1).is_empty());
    h.reconnect(1);
    h.settle();
    h.call(0, release(A));
    h.settle();
    assert!(acquired(&h, 1).is_some());
}

#[test]
fn a_waiter_lists_again_at_suspended_and_can_run_its_retries_out_before_lost() {
    let mut h = mutexes(2);
    in_turn(&mut h, [acquire(A); 2]);
    let listings = |h: &Harness<Mutex>| sent(h, 1, |r| matches!(r, Request::GetChildren { .. }));
    let before = listings(&h);
    h.drop_connection(1, false);
    h.settle();
    // Curator's waiter wakes on the connection-state change its watcher hears, and lists
    // again: the call waits for a connection, then is queued and fails at each failed
    // connection attempt until the retry policy gives up.
    let [blocked] = connection_timeouts(&h, 1)[..] else {
        panic!("the listing waits for a connection")
    };
    h.fire(1, blocked);
    h.settle();
    for _ in 0..=3 {
        h.fail_connection_attempt(1);
        h.settle();
    }
    assert_eq!(
        h.peers[1].notices.last(),
        Some(&Notice::Failed {
            owner: A,
            reason: FailReason::Zk(ZkError::ConnectionLoss)
        })
    );
    assert_eq!(listings(&h), before, "no listing reached the server");
    h.reconnect(1);
    h.settle();
    assert_eq!(
        h.children("/locks/m").len(),
        1,
        "the waiter's node is deleted (guaranteed) once it is back"
    );
}
