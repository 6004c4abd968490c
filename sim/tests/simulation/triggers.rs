//! Faults that start at a client's request (a scheduled fault's `on_request`): the cut is in
//! force before the request leaves, so the server sees it only once the cut heals; a cut
//! whose request never comes never starts.

use coordination::zk::Request;
use scenarios::fault::{RequestOp, RequestTrigger, ScheduledFault};
use trace::{EventKind, Trace};

use crate::query::{at, cut_off, find, index, on, run, sim, workload};

/// Client 1 cut off for `for_ms` from its first request of kind `op` on a path containing
/// `path_contains` (armed from the start).
fn cut_at(op: RequestOp, path_contains: &str, for_ms: u64) -> ScheduledFault {
    let trigger = RequestTrigger {
        op,
        path_contains: path_contains.to_owned(),
    };
    ScheduledFault {
        on_request: Some(trigger),
        ..at(0, cut_off(1, for_ms))
    }
}

/// Two clients, one hold each, under `fault`, seed 3.
fn two_clients_under(fault: ScheduledFault) -> Trace {
    run(sim("cut-at-request", 2, workload(1, 300)), 3, vec![fault])
}

#[test]
fn a_cut_armed_for_a_request_starts_as_the_request_leaves_and_holds_it() {
    // 500 ms is within the read timeout (2T/3): the connection survives the cut and TCP
    // delivers the held create at its next retransmission after the heal.
    let trace = two_clients_under(cut_at(RequestOp::Create, "lock-", 500));
    let sent = index(&trace, 0, "c1's lock-node create", |e| {
        on(e, 1)
            && matches!(
                &e.kind,
                EventKind::OpSent {
                    request: Request::Create { .. },
                    ..
                }
            )
    });
    let EventKind::OpSent { op, .. } = trace.events[sent].kind else {
        unreachable!()
    };
    let is_start = |e: &trace::Event| matches!(e.kind, EventKind::FaultStart { .. });
    let (started, start) = find(&trace, 0, is_start).expect("the cut started");
    assert!(
        started > sent,
        "the cut starts at the create, not before it"
    );
    assert!(
        start.t - trace.events[sent].t < 1_000_000,
        "within the same instant"
    );
    let ended = index(&trace, started, "the cut's end", |e| {
        matches!(e.kind, EventKind::FaultEnd { .. })
    });
    let lasted = trace.events[ended].t - start.t;
    assert!(
        (500_000_000..501_000_000).contains(&lasted),
        "for_ms from its start: {lasted}"
    );
    let applied = index(
        &trace,
        sent,
        "the create applied",
        |e| matches!(e.kind, EventKind::OpApplied { op: applied, .. } if applied == op),
    );
    assert!(
        applied > ended,
        "the server sees the create only after the heal"
    );
    assert_eq!(
        trace,
        two_clients_under(cut_at(RequestOp::Create, "lock-", 500))
    );
}

#[test]
fn a_cut_whose_request_never_comes_never_starts() {
    let trace = two_clients_under(cut_at(RequestOp::RemoveWatches, "", 500));
    let faults = (trace.events.iter())
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::FaultStart { .. } | EventKind::FaultEnd { .. }
            )
        })
        .count();
    assert_eq!(faults, 0);
    let granted = (trace.events.iter())
        .filter(|e| matches!(&e.kind, EventKind::Notice { notice } if crate::query::is_acquired(notice)))
        .count();
    assert_eq!(granted, 2, "the armed cut holds nothing up");
}
