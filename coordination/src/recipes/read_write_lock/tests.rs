//! `ReadWriteLock` driven input by input through the harness: what Curator's
//! TestInterProcessReadWriteLock checks (readers share, a writer excludes, downgrade, no
//! upgrade, participants in order, a reader queued behind a writer waits, a killed holder's
//! session frees the lock), plus the reader's watch, timeouts and connection states.

use std::time::Duration;

use super::{READ_NAME, ReadWriteLock, WRITE_NAME};
use crate::harness::Harness;
use crate::recipes::tests::{
    A, B, RELEASING_AT_LOST, acquired, assert_swapping_clients_relabels, drop_and_reconnect,
    failed, in_turn, last_notice, lose_waiter_session, time_out, woken,
};
use crate::recipes::{Call, FailReason, Mode, Notice};
use crate::zk::{Path, Request};

const PATH: &str = "/locks/rw";

fn locks(n: u16) -> Harness<ReadWriteLock> {
    Harness::new(n, || ReadWriteLock::new(Path::new(PATH).unwrap()))
}

fn acquire(owner: crate::ids::Owner, mode: Mode) -> Call {
    Call::Acquire {
        owner,
        timeout: None,
        mode,
    }
}

fn acquire_within(owner: crate::ids::Owner, mode: Mode) -> Call {
    Call::Acquire {
        owner,
        timeout: Some(Duration::from_secs(3)),
        mode,
    }
}

fn release(owner: crate::ids::Owner, mode: Mode) -> Call {
    Call::Release { owner, mode }
}

fn released(owner: crate::ids::Owner, mode: Mode, remaining: u32) -> Option<Notice> {
    Some(Notice::Released {
        owner,
        remaining,
        mode,
    })
}

/// Each client in turn calls `acquire(A, mode)` and settles: `W` for write, `R` for read.
fn queue_up(h: &mut Harness<ReadWriteLock>, modes: &str) {
    let mode = |kind| if kind == 'W' { Mode::Write } else { Mode::Read };
    in_turn(h, modes.chars().map(|kind| acquire(A, mode(kind))));
}

/// The clients whose owner `A` holds a `mode` hold.
fn holders(h: &Harness<ReadWriteLock>, mode: Mode) -> Vec<usize> {
    (0..h.peers.len())
        .filter(|&c| h.peers[c].client.recipe().holding(A, mode).is_some())
        .collect()
}

/// The kinds of the lock's nodes in sequence order: `W` for write, `R` for read.
fn kinds(h: &Harness<ReadWriteLock>) -> String {
    h.children(PATH)
        .iter()
        .map(|name| if name.contains(WRITE_NAME) { 'W' } else { 'R' })
        .collect()
}

/// The nodes client `c` set a watch on (by get_data), by name.
fn watched_nodes(h: &Harness<ReadWriteLock>, c: usize) -> Vec<String> {
    h.peers[c]
        .sent
        .iter()
        .filter_map(|r| match r {
            Request::GetData { path, watch: true } => Some(path.name().to_owned()),
            _ => None,
        })
        .collect()
}

#[test]
fn readers_share_and_a_writer_waits_for_every_one_of_them() {
    let mut h = locks(4);
    queue_up(&mut h, "RRRW");
    assert_eq!(holders(&h, Mode::Read), [0, 1, 2]);
    assert!(holders(&h, Mode::Write).is_empty());
    for c in 0..3 {
        assert_eq!(
            last_notice(&h, c),
            Some(Notice::Acquired {
                owner: A,
                token: acquired(&h, c).unwrap(),
                mode: Mode::Read,
            })
        );
    }
    for c in [1, 0] {
        h.call(c, release(A, Mode::Read));
        h.settle();
        assert_eq!(last_notice(&h, c), released(A, Mode::Read, 0));
        assert!(holders(&h, Mode::Write).is_empty(), "c2 still reads");
    }
    h.call(2, release(A, Mode::Read));
    h.settle();
    assert_eq!(holders(&h, Mode::Write), [3]);
    assert!(acquired(&h, 3) > acquired(&h, 2));
}

#[test]
fn a_writer_excludes_readers_and_writers_in_queue_order() {
    let mut h = locks(3);
    queue_up(&mut h, "WRW");
    assert_eq!(holders(&h, Mode::Write), [0]);
    assert!(holders(&h, Mode::Read).is_empty());
    h.call(0, release(A, Mode::Write));
    h.settle();
    assert_eq!(last_notice(&h, 0), released(A, Mode::Write, 0));
    assert_eq!(holders(&h, Mode::Read), [1]);
    assert!(
        holders(&h, Mode::Write).is_empty(),
        "c2 waits for the reader"
    );
    h.call(1, release(A, Mode::Read));
    h.settle();
    assert_eq!(holders(&h, Mode::Write), [2]);
    let tokens: Vec<_> = (0..3).map(|c| acquired(&h, c).unwrap()).collect();
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "tokens {tokens:?}");
    h.call(2, release(A, Mode::Write));
    h.settle();
    assert!(h.children(PATH).is_empty());
}

#[test]
fn a_reader_queued_behind_a_writer_waits_for_it_so_writers_do_not_starve() {
    let mut h = locks(3);
    queue_up(&mut h, "RWR");
    assert_eq!(holders(&h, Mode::Read), [0], "c2 does not join the reader");
    h.call(0, release(A, Mode::Read));
    h.settle();
    assert_eq!(holders(&h, Mode::Write), [1]);
    assert!(holders(&h, Mode::Read).is_empty());
    h.call(1, release(A, Mode::Write));
    h.settle();
    assert_eq!(holders(&h, Mode::Read), [2]);
}

#[test]
fn participants_are_named_by_kind_and_sorted_by_sequence_across_kinds() {
    let mut h = locks(6);
    queue_up(&mut h, "RRWRWR");
    assert_eq!(kinds(&h), "RRWRWR");
    let names = h.children(PATH);
    let readers = names.iter().filter(|n| n.contains(READ_NAME)).count();
    let writers = names.iter().filter(|n| n.contains(WRITE_NAME)).count();
    assert_eq!((readers, writers), (4, 2));
    assert!(names.iter().all(|n| n.starts_with("_c_")), "protected");
    assert_eq!(holders(&h, Mode::Read), [0, 1]);
}

#[test]
fn readers_watch_the_nearest_writer_ahead_so_a_release_wakes_only_who_can_acquire() {
    let mut h = locks(4);
    queue_up(&mut h, "WWRR");
    let names = h.children(PATH);
    assert_eq!(watched_nodes(&h, 1), [names[0].clone()]);
    for c in [2, 3] {
        assert_eq!(watched_nodes(&h, c), [names[1].clone()], "c{c}");
    }
    h.call(0, release(A, Mode::Write));
    h.settle();
    assert_eq!(woken(&h), [1], "only the writer that then holds");
    assert_eq!(holders(&h, Mode::Write), [1]);
    h.call(1, release(A, Mode::Write));
    h.settle();
    assert_eq!(woken(&h), [1, 2, 3]);
    assert_eq!(holders(&h, Mode::Read), [2, 3], "both woken readers read");
}

#[test]
fn curator_s_first_writer_watch_wakes_readers_that_cannot_acquire() {
    let mut h = Harness::new(4, || {
        ReadWriteLock::watching_first_writer(Path::new(PATH).unwrap())
    });
    queue_up(&mut h, "WWRR");
    let names = h.children(PATH);
    for c in [2, 3] {
        assert_eq!(watched_nodes(&h, c), [names[0].clone()], "c{c}");
    }
    h.call(0, release(A, Mode::Write));
    h.settle();
    assert_eq!(woken(&h), [1, 2, 3], "a herd: three woken");
    assert_eq!(holders(&h, Mode::Write), [1], "one can acquire");
    assert!(holders(&h, Mode::Read).is_empty());
    h.call(1, release(A, Mode::Write));
    h.settle();
    assert_eq!(holders(&h, Mode::Read), [2, 3], "still safe and live");
}

#[test]
fn a_writer_giving_up_wakes_the_readers_behind_it_who_then_watch_the_next_writer() {
    let mut h = locks(3);
    h.call(0, acquire(A, Mode::Write));
    h.settle();
    h.call(1, acquire_within(A, Mode::Write));
    h.settle();
    h.call(2, acquire(A, Mode::Read));
    h.settle();
    let names = h.children(PATH);
    time_out(&mut h, 1, A);
    assert_eq!(woken(&h), [2]);
    assert_eq!(watched_nodes(&h, 2), [names[1].clone(), names[0].clone()]);
    assert!(holders(&h, Mode::Read).is_empty());
    h.call(0, release(A, Mode::Write));
    h.settle();
    assert_eq!(holders(&h, Mode::Read), [2]);
    assert_eq!(kinds(&h), "R");
}

#[test]
fn a_downgrade_is_granted_at_once_and_keeps_a_queued_writer_out_until_the_read_release() {
    let mut h = locks(2);
    h.call(0, acquire(A, Mode::Write));
    h.settle();
    let token = acquired(&h, 0).unwrap();
    h.call(1, acquire(A, Mode::Write));
    h.settle();
    h.call(0, acquire(A, Mode::Read));
    assert_eq!(
        last_notice(&h, 0),
        Some(Notice::Acquired {
            owner: A,
            token,
            mode: Mode::Read,
        }),
        "granted without a round trip"
    );
    assert!(
        h.peers[0].handle.requests.is_empty(),
        "no node for a downgrade"
    );
    h.call(0, release(A, Mode::Write));
    h.settle();
    assert_eq!(last_notice(&h, 0), released(A, Mode::Write, 0));
    assert_eq!(
        h.peers[0].client.recipe().holding(A, Mode::Read),
        Some(token)
    );
    assert_eq!(holders(&h, Mode::Write), [] as [usize; 0], "c1 still waits");
    assert_eq!(kinds(&h), "WW");
    h.call(0, release(A, Mode::Read));
    h.settle();
    assert_eq!(last_notice(&h, 0), released(A, Mode::Read, 0));
    assert_eq!(holders(&h, Mode::Write), [1]);
    assert_eq!(kinds(&h), "W");
}

#[test]
fn a_downgrade_is_per_owner_another_owner_s_read_waits() {
    let mut h = locks(1);
    h.call(0, acquire(A, Mode::Write));
    h.settle();
    h.call(0, acquire_within(B, Mode::Read));
    h.settle();
    assert_eq!(kinds(&h), "WR");
    assert!(h.peers[0].client.recipe().holding(B, Mode::Read).is_none());
    time_out(&mut h, 0, B);
    assert_eq!(kinds(&h), "W");
    assert!(h.peers[0].client.recipe().holding(A, Mode::Write).is_some());
}

#[test]
fn a_reader_cannot_upgrade_it_fails_at_once_instead_of_deadlocking() {
    let mut h = locks(1);
    h.call(0, acquire(A, Mode::Read));
    h.settle();
    let sent = h.peers[0].sent.len();
    h.call(0, acquire_within(A, Mode::Write));
    assert_eq!(last_notice(&h, 0), failed(FailReason::UpgradeWouldDeadlock));
    assert_eq!(h.peers[0].sent.len(), sent, "nothing created");
    assert!(h.peers[0].timers.is_empty(), "no timer left behind");
    h.call(0, release(A, Mode::Read));
    h.settle();
    assert!(h.children(PATH).is_empty());
    // A downgraded read hold cannot go back up either once its write holds are released.
    h.call(0, acquire(A, Mode::Write));
    h.settle();
    h.call(0, acquire(A, Mode::Read));
    h.call(0, release(A, Mode::Write));
    h.call(0, acquire(A, Mode::Write));
    assert_eq!(last_notice(&h, 0), failed(FailReason::UpgradeWouldDeadlock));
    h.call(0, release(A, Mode::Read));
    h.settle();
    assert!(h.children(PATH).is_empty());
}

#[test]
fn reentrant_per_owner_and_side() {
    let mut h = locks(1);
    h.call(0, acquire(A, Mode::Read));
    h.settle();
    h.call(0, acquire(A, Mode::Read));
    assert_eq!(h.children(PATH).len(), 1);
    h.call(0, release(A, Mode::Read));
    assert_eq!(last_notice(&h, 0), released(A, Mode::Read, 1));
    h.call(0, release(A, Mode::Read));
    h.settle();
    assert_eq!(last_notice(&h, 0), released(A, Mode::Read, 0));
    assert!(h.children(PATH).is_empty());
    // Write twice, read twice on top (downgrades), released in any order.
    h.call(0, acquire(A, Mode::Write));
    h.settle();
    for mode in [Mode::Write, Mode::Read, Mode::Read] {
        h.call(0, acquire(A, mode));
        assert!(matches!(last_notice(&h, 0), Some(Notice::Acquired { mode: m, .. }) if m == mode));
    }
    let steps = [
        (Mode::Read, 1),
        (Mode::Write, 1),
        (Mode::Write, 0),
        (Mode::Read, 0),
    ];
    for (mode, remaining) in steps {
        h.call(0, release(A, mode));
        h.settle();
        assert_eq!(last_notice(&h, 0), released(A, mode, remaining));
    }
    assert!(h.children(PATH).is_empty());
    for mode in [Mode::Read, Mode::Write] {
        h.call(0, release(A, mode));
        assert_eq!(last_notice(&h, 0), failed(FailReason::NotHeld));
    }
}

#[test]
fn one_acquire_at_a_time_per_owner_across_both_sides() {
    let mut h = locks(2);
    h.call(1, acquire(A, Mode::Write));
    h.settle();
    h.call(0, acquire(A, Mode::Read));
    h.settle();
    for mode in [Mode::Write, Mode::Read] {
        h.call(0, acquire(A, mode));
        assert_eq!(last_notice(&h, 0), failed(FailReason::AlreadyAcquiring));
    }
    h.call(0, release(A, Mode::Write));
    assert_eq!(last_notice(&h, 0), failed(FailReason::NotHeld));
    assert_eq!(h.children(PATH).len(), 2);
}

#[test]
fn other_modes_and_calls_are_unsupported() {
    let mut h = locks(1);
    for call in [
        acquire(A, Mode::Exclusive),
        acquire(A, Mode::Lease),
        release(A, Mode::Exclusive),
        Call::Start { owner: A },
    ] {
        h.call(0, call);
        assert_eq!(last_notice(&h, 0), failed(FailReason::Unsupported));
    }
    assert!(h.peers[0].sent.is_empty());
}

#[test]
fn a_timed_out_reader_deletes_its_node() {
    let mut h = locks(2);
    h.call(0, acquire(A, Mode::Write));
    h.settle();
    h.call(1, acquire_within(A, Mode::Read));
    h.settle();
    time_out(&mut h, 1, A);
    assert_eq!(kinds(&h), "W");
}

#[test]
fn a_killed_holder_session_frees_the_lock() {
    let mut h = locks(2);
    queue_up(&mut h, "WR");
    // The server expires c0's session; c0 does not hear of it yet.
    h.expire(0, false);
    h.settle();
    assert_eq!(holders(&h, Mode::Read), [1]);
    assert_eq!(kinds(&h), "R");
}

#[test]
fn connection_states_reach_each_holder_once_also_with_a_downgrade() {
    // Releasing at LOST (`OnLost::Release`); Curator keeps the hold until released.
    let mut h = Harness::with_config(2, RELEASING_AT_LOST, || {
        ReadWriteLock::new(Path::new(PATH).unwrap())
    });
    h.call(0, acquire(A, Mode::Write));
    h.settle();
    h.call(0, acquire(A, Mode::Read));
    h.call(0, acquire(B, Mode::Read));
    h.settle();
    h.call(1, acquire(A, Mode::Write));
    h.settle();
    let before = h.peers[0].notices.len();
    drop_and_reconnect(&mut h, 0, false);
    assert_eq!(
        h.peers[0].notices[before..],
        [
            Notice::Suspended { owner: A },
            Notice::Reconnected { owner: A },
        ],
        "B waits: it hears nothing"
    );
    h.drop_connection(0, false);
    h.expire(0, true);
    h.settle();
    let lost: Vec<Notice> = h.peers[0].notices[before + 2..].to_vec();
    assert_eq!(
        lost,
        [
            Notice::Suspended { owner: A },
            Notice::Failed {
                owner: B,
                reason: FailReason::SessionLost,
            },
            Notice::Lost { owner: A },
        ]
    );
    let recipe = h.peers[0].client.recipe();
    assert!(recipe.holding(A, Mode::Read).is_none() && recipe.holding(A, Mode::Write).is_none());
    assert_eq!(holders(&h, Mode::Write), [1]);
}

#[test]
fn a_waiting_reader_whose_session_is_lost_fails_and_leaves_no_node() {
    // Giving up at LOST (`OnLost::Release`); Curator keeps the waiter queued.
    let mut h = Harness::with_config(2, RELEASING_AT_LOST, || {
        ReadWriteLock::new(Path::new(PATH).unwrap())
    });
    queue_up(&mut h, "WR");
    lose_waiter_session(&mut h, false);
    assert_eq!(kinds(&h), "W");
    assert_eq!(
        h.peers[1].client.recipe(),
        &ReadWriteLock::new(Path::new(PATH).unwrap())
    );
}

#[test]
fn relabelling_rewrites_the_nodes_of_both_sides() {
    let mut h = locks(2);
    h.call(1, acquire(A, Mode::Write));
    h.settle();
    h.call(0, acquire(A, Mode::Read));
    h.call(0, acquire(B, Mode::Write));
    h.settle();
    // c0's reader (A) watches c1's write node; its writer (B) watches A's read node.
    let own = assert_swapping_clients_relabels(h.peers[0].client.recipe());
    assert_eq!(own, 3, "c0's two nodes, and A's as B's predecessor");
}
