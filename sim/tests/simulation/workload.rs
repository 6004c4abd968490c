//! The workload's own paths under the simulator: reentrant holds and acquire timeouts (the
//! catalog has neither).

use coordination::recipes::Notice;
use scenarios::scenario::Workload;
use trace::{EventKind, Trace};

use crate::query::{heard, is_acquired, notice_of, run, sim, workload};

/// How many of client `client`'s notices `wanted` accepts.
fn count(trace: &Trace, client: u16, wanted: impl Fn(&Notice) -> bool) -> usize {
    let matches = notice_of(client, wanted);
    trace.events.iter().filter(|e| matches(e)).count()
}

fn released(remaining: u32) -> impl Fn(&Notice) -> bool {
    move |n| matches!(n, Notice::Released { remaining: r, .. } if *r == remaining)
}

#[test]
fn reentrant_holds_acquire_and_release_as_many_times_and_write_once() {
    let workload = Workload {
        reentrant: 3,
        ..workload(2, 200)
    };
    let trace = run(sim("reentrant", 2, workload), 5, Vec::new());
    for client in 0..2 {
        assert_eq!(
            count(&trace, client, is_acquired),
            6,
            "c{client}: 2 × 3 acquires"
        );
        for remaining in 0..3 {
            assert_eq!(count(&trace, client, released(remaining)), 2);
        }
    }
    let writes = trace
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ResourceWrite { accepted: true, .. }))
        .count();
    assert_eq!(writes, 4, "one write per hold");
}

#[test]
fn a_waiter_gives_up_after_its_timeout_and_the_workload_goes_on() {
    let workload = Workload {
        acquire_timeout_ms: Some(500),
        ..workload(1, 3_000)
    };
    let trace = run(sim("timeout", 2, workload), 5, Vec::new());
    let timed_out = |n: &Notice| matches!(n, Notice::TimedOut { .. });
    assert!(heard(&trace, 0, is_acquired).is_some(), "c0 acquires first");
    let gave_up = heard(&trace, 1, timed_out).expect("c1 times out");
    assert!(heard(&trace, 1, is_acquired).is_none());
    let c0_release = trace
        .events
        .iter()
        .find(|e| crate::query::is_release_call(e, 0))
        .expect("c0 releases")
        .t;
    assert!(gave_up < c0_release, "c1 gave up while c0 still held");
}
