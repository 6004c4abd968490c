//! Fault spans from `fault_start` / `fault_end` pairs, and which lanes each one touches.

use scenarios::fault::{Fault, Node};
use trace::{EventKind, Trace};

use super::Lane;

/// One injected fault, from its start to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FaultSpan {
    /// The fault.
    pub fault: Fault,
    /// When it began.
    pub start: u64,
    /// When it ended (the trace's end when `open`; `start` for an instant fault).
    pub end: u64,
    /// True when the trace ended first.
    pub open: bool,
    /// The `fault_start` event.
    pub start_event: usize,
    /// The `fault_end` event.
    pub end_event: Option<usize>,
}

impl FaultSpan {
    /// The lanes the fault is drawn on.
    pub(crate) fn lanes(&self) -> Vec<Lane> {
        let node = |node: Node| match node {
            Node::Server => Lane::Server,
            Node::Client(n) => Lane::Client(n),
        };
        match self.fault {
            Fault::Pause { client, .. }
            | Fault::ExpireSession { client }
            | Fault::Crash { client } => vec![Lane::Client(client)],
            Fault::Partition { a, b, .. } => vec![node(a), node(b)],
            Fault::Isolate { node: n, .. } => vec![node(n)],
            Fault::CutFromServer { client, .. } => vec![Lane::Client(client), Lane::Server],
            Fault::Delay { from, to, .. } | Fault::Drop { from, to, .. } => {
                vec![node(from), node(to)]
            }
            Fault::Heal
            | Fault::RestartServer { .. }
            | Fault::IsolateFromPeers { .. }
            | Fault::LagServer { .. }
            | Fault::SplitServers { .. }
            | Fault::SlowServerLinks { .. }
            | Fault::CrashServer { .. }
            | Fault::PauseServer { .. } => {
                vec![Lane::Server]
            }
        }
    }

    /// True for a fault that happens at an instant (it has no extent to draw).
    pub(crate) fn is_instant(&self) -> bool {
        self.end == self.start
    }

    /// Faults that may be recorded as a start alone (a crash that restarts at once, a server
    /// restart): an unmatched start of one is an instant, not a fault to the end of the run.
    fn is_instant_kind(&self) -> bool {
        matches!(
            self.fault,
            Fault::Heal
                | Fault::ExpireSession { .. }
                | Fault::Crash { .. }
                | Fault::RestartServer { .. }
        )
    }

    /// True when the fault stops `client` from running (a pause or a crash).
    pub(crate) fn stops_client(&self, client: u16) -> bool {
        matches!(self.fault, Fault::Pause { client: c, .. } | Fault::Crash { client: c } if c == client)
    }

    /// A short name for the fault's kind: the CSS class and the timeline label (the kind's
    /// name in scenario files, shortened for the two long ones).
    pub(crate) fn short(&self) -> &'static str {
        match self.fault {
            Fault::ExpireSession { .. } => "expiry",
            Fault::RestartServer { .. } => "restart",
            ref fault => fault.kind(),
        }
    }
}

/// The fault spans of `trace`, which ends at `end`: each `fault_end` closes the earliest open
/// span of an equal fault.
pub(crate) fn spans(trace: &Trace, end: u64) -> Vec<FaultSpan> {
    let mut spans: Vec<FaultSpan> = Vec::new();
    for (index, event) in trace.events.iter().enumerate() {
        match &event.kind {
            EventKind::FaultStart { fault } => spans.push(FaultSpan {
                fault: fault.clone(),
                start: event.t,
                end,
                open: true,
                start_event: index,
                end_event: None,
            }),
            EventKind::FaultEnd { fault } => {
                if let Some(span) = spans.iter_mut().find(|s| s.open && s.fault == *fault) {
                    span.end = event.t;
                    span.open = false;
                    span.end_event = Some(index);
                }
            }
            _ => {}
        }
    }
    for span in spans.iter_mut().filter(|s| s.open && s.is_instant_kind()) {
        span.end = span.start;
        span.open = false;
    }
    spans
}
