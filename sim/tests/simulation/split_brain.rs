//! The GC-pause split brain: holder A (client 0) is paused past the session timeout, its
//! session expires, B (client 1) acquires, and A resumes still believing it holds.

use coordination::recipes::Notice;
use scenarios::fault::Fault;
use trace::{EventKind, ServerSession, Trace};

use scenarios::scenario::Workload;

use crate::query::{
    T_MS, at, find, first_notice, index, is_acquired, notice, notice_of, on, run, server_session,
    sessions_of, sim, workload,
};

const SEED: u64 = 7;

fn gc_pause(fenced: bool) -> Trace {
    let workload = Workload {
        fenced,
        ..workload(1, 1_000)
    };
    let pause = at(
        300,
        Fault::Pause {
            client: 0,
            for_ms: 2 * T_MS + 1_000,
        },
    );
    run(sim("gc-pause", 2, workload), SEED, vec![pause])
}

/// The overlap, as indexes: A acquires, A's session expires, B acquires, and only then does
/// A's hold end (a release call, Suspended or Lost). Returns A's and B's tokens.
fn assert_overlap(trace: &Trace) -> (u64, u64) {
    let a_acquired = first_notice(trace, 0, "A's Acquired", is_acquired);
    let a_session = sessions_of(trace, 0)[0];
    let expired = index(trace, a_acquired, "the expiry of A's session", |e| {
        server_session(e, a_session, ServerSession::Expired)
    });
    let (b_acquired, _) = find(trace, expired, notice_of(1, is_acquired))
        .expect("B acquires after A's session expired");
    let a_hold_ends = index(trace, a_acquired + 1, "the end of A's hold", |e| {
        matches!(&e.kind, EventKind::Call { .. }) && on(e, 0)
            || matches!(
                notice(e, 0),
                Some(Notice::Suspended { .. } | Notice::Lost { .. })
            )
    });
    assert!(
        a_hold_ends > b_acquired,
        "A still holds by belief when B acquires"
    );
    let token = |i: usize, client: u16| match notice(&trace.events[i], client) {
        Some(Notice::Acquired { token, .. }) => token.0,
        other => panic!("not an Acquired: {other:?}"),
    };
    let (a, b) = (token(a_acquired, 0), token(b_acquired, 1));
    assert!(a < b, "zxids grow: A's token {a} is below B's {b}");
    (a, b)
}

/// Every write of client `client`: (value, accepted).
fn writes(trace: &Trace, client: u16) -> Vec<(u64, bool)> {
    (trace.events.iter())
        .filter(|e| on(e, client))
        .filter_map(|e| match e.kind {
            EventKind::ResourceWrite {
                value, accepted, ..
            } => Some((value, accepted)),
            _ => None,
        })
        .collect()
}

#[test]
fn unfenced_the_paused_holder_overwrites_its_successor() {
    let trace = gc_pause(false);
    assert_overlap(&trace);
    let (a, b) = (writes(&trace, 0), writes(&trace, 1));
    assert_eq!(b, [(1, true)], "B read 0 and wrote 1");
    assert_eq!(
        a,
        [(1, true)],
        "A read 0 before its pause and wrote 1 after it"
    );
    let a_write = index(&trace, 0, "A's write", |e| {
        on(e, 0) && matches!(e.kind, EventKind::ResourceWrite { .. })
    });
    let b_write = index(&trace, 0, "B's write", |e| {
        on(e, 1) && matches!(e.kind, EventKind::ResourceWrite { .. })
    });
    assert!(b_write < a_write, "A writes last: B's increment is lost");
}

#[test]
fn fenced_the_paused_holder_is_rejected_and_nothing_is_lost() {
    let trace = gc_pause(true);
    let (a_token, _) = assert_overlap(&trace);
    assert_eq!(writes(&trace, 1), [(1, true)]);
    assert_eq!(
        writes(&trace, 0),
        [(1, false)],
        "A's late write is rejected"
    );
    let a_write = (trace.events.iter())
        .find_map(|e| match e.kind {
            EventKind::ResourceWrite { token, .. } if on(e, 0) => Some(token.0),
            _ => None,
        })
        .expect("A writes");
    assert_eq!(a_write, a_token, "with its stale token");
}

/// Two overlapping pauses of one client are one pause until the later one ends: A, paused from
/// 300 ms for 1 s and again from 800 ms for 2 s, runs nothing from 300 ms to 2800 ms (it
/// resumed at the first pause's end before), and runs again after.
#[test]
fn a_client_paused_twice_runs_again_only_when_both_pauses_end() {
    let pause = |at_ms, for_ms| at(at_ms, Fault::Pause { client: 0, for_ms });
    let faults = vec![pause(300, 1_000), pause(800, 2_000)];
    let trace = run(sim("paused-twice", 2, workload(20, 50)), SEED, faults);
    let ms = 1_000_000;
    // Strictly inside (from, to): what A does at a pause's first instant may precede it.
    let a_runs = |from_ms: u64, to_ms: u64| {
        let inside = from_ms * ms + 1..to_ms * ms;
        (trace.events.iter()).any(|e| on(e, 0) && inside.contains(&e.t))
    };
    assert!(a_runs(0, 300), "A runs before its pauses");
    assert!(
        !a_runs(300, 2_800),
        "A runs nothing while either pause lasts"
    );
    assert!(a_runs(2_800, 60_000), "A runs again when both have ended");
}
