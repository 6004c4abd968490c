//! Faults that start at a request (a scheduled fault's `on_request`): a cut is in force
//! before its client's request leaves, so the server sees it only once the cut heals; a cut
//! whose request never comes never starts. A crash of the leader at its proposal of a create
//! leaves the create to the election, which commits it.

use coordination::recipes::Notice;
use coordination::zk::{OpOk, Request, ZkError};
use scenarios::fault::{Fault, RequestOp, RequestTrigger, ScheduledFault};
use trace::{Event, EventKind, Trace};

use crate::query::{
    at, catalog_scenario, cut_off, find, index, notice, on, run, run_checked, sessions_of, sim,
    workload,
};

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

/// `mutex-create-survives-election`, seeds 0..5: the leader crashes as it proposes client 1's
/// lock-node create, after the client sent it and before any server applied it; the client is
/// answered `connection_loss`; the next leader applies the create all the same, and client 1
/// holds through that node (protected mode found it), creating no other, every property
/// holding.
#[test]
fn a_create_the_leader_proposed_as_it_crashed_is_committed_by_the_next_leader() {
    let scenario = catalog_scenario("mutex-create-survives-election");
    for seed in 0..5 {
        let trace = run_checked(&scenario, seed);
        let creates: Vec<(u64, _)> = (trace.events.iter().filter(|e| on(e, 1)))
            .filter_map(|e| match &e.kind {
                EventKind::OpSent {
                    op,
                    request: Request::Create { path, .. },
                } if path.as_str().contains("-lock-") => Some((e.t, *op)),
                _ => None,
            })
            .collect();
        let [(sent, op)] = creates[..] else {
            panic!("seed {seed}: one lock-node create of client 1, found {creates:?}");
        };
        let crashed = first(&trace, |e| match &e.kind {
            EventKind::FaultStart {
                fault: Fault::CrashServer { .. },
            } => Some(e.t),
            _ => None,
        });
        let answered = first(&trace, |e| match &e.kind {
            EventKind::Reply { op: o, result } if on(e, 1) && *o == op => Some(result.clone()),
            _ => None,
        });
        let session = sessions_of(&trace, 1)[0];
        let (applied, created) = first(&trace, |e| match &e.kind {
            EventKind::OpApplied {
                session: s,
                op: o,
                result: Ok(OpOk::Created { stat, .. }),
                ..
            } if *s == session && *o == op => Some((e.t, stat.czxid)),
            _ => None,
        });
        let token = first(&trace, |e| match notice(e, 1) {
            Some(Notice::Acquired { token, .. }) => Some(token),
            _ => None,
        });
        assert!(
            sent < crashed && crashed < applied,
            "seed {seed}: {sent} {crashed} {applied}"
        );
        assert_eq!(answered, Err(ZkError::ConnectionLoss), "seed {seed}");
        assert_eq!(
            token,
            created.into(),
            "seed {seed}: holds through the surviving node"
        );
    }
}

/// What `pick` picks from the first event of `trace` it picks from.
fn first<T>(trace: &Trace, pick: impl Fn(&Event) -> Option<T>) -> T {
    trace
        .events
        .iter()
        .find_map(pick)
        .expect("an event of the kind")
}
