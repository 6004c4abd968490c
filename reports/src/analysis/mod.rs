//! What a report draws, derived from the trace alone: per-client session and lock spans,
//! fault spans, resource accesses, the lives of ephemeral nodes and the watches left at the
//! end. Every section of the report reads this one [`Run`], so the timeline, the story, the
//! waits and the table cannot disagree.

mod accesses;
mod faults;
mod locks;
mod nodes;
mod sessions;
mod waits;
mod watches;
mod window;

use std::collections::BTreeSet;
use std::fmt;

use trace::{EventKind, Source, Trace};

use crate::clock::Clock;

pub(crate) use accesses::Access;
pub(crate) use faults::FaultSpan;
pub(crate) use locks::{LockKind, LockSpan};
pub(crate) use nodes::{NodeEnd, NodeLife};
pub(crate) use sessions::{ClientView, Sessions};
pub(crate) use waits::{Doing, NodeRef, Target, WaitOn};
pub(crate) use watches::{Watch, WatchKind};
pub(crate) use window::window;

/// A horizontal lane of the timeline: one per client, and the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Lane {
    /// Client `n`.
    Client(u16),
    /// The ZooKeeper server.
    Server,
}

impl fmt::Display for Lane {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lane::Client(n) => write!(f, "c{n}"),
            Lane::Server => f.write_str("server"),
        }
    }
}

/// An interval of trace time in one state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Span<K> {
    /// When it began.
    pub start: u64,
    /// When it ended, or the end of the trace when `open`.
    pub end: u64,
    /// True when the trace ended before the state did.
    pub open: bool,
    /// The state.
    pub kind: K,
    /// The index of the event that began it.
    pub event: usize,
}

/// A trace, digested for drawing and telling.
pub(crate) struct Run<'a> {
    /// The trace itself.
    pub trace: &'a Trace,
    /// How to print its times.
    pub clock: Clock,
    /// The lanes, clients in order, then the server.
    pub lanes: Vec<Lane>,
    /// The last event's time (at least 1, so that scales never divide by zero).
    pub end: u64,
    /// Sessions as each client and as the server saw them.
    pub sessions: Sessions,
    /// Waiting and holding intervals.
    pub locks: Vec<LockSpan>,
    /// Reads and writes of the protected resource.
    pub accesses: Vec<Access>,
    /// Injected faults.
    pub faults: Vec<FaultSpan>,
    /// Ephemeral nodes from create to delete.
    pub nodes: Vec<NodeLife>,
    /// The watches the clients still have outstanding at the end.
    pub watches: Vec<Watch>,
    /// The watches the server listed at the horizon on each client's last session, when a
    /// real run read them (the waits of the clients whose requests the trace lacks).
    pub listed: Option<Vec<Watch>>,
    /// Whether the trace records the server's side (its applied requests): a simulated or
    /// model trace of splitbrain's clients does; a real one does not, nor does a simulated
    /// run of a program (whose requests the server serves as bytes).
    pub server_side: bool,
}

impl<'a> Run<'a> {
    /// Digests `trace`.
    pub(crate) fn new(trace: &'a Trace) -> Run<'a> {
        let end = trace.events.iter().map(|e| e.t).max().unwrap_or(0).max(1);
        let sessions = Sessions::new(trace, end);
        let nodes = nodes::lives(trace, &sessions, end);
        let mut run = Run {
            trace,
            clock: Clock::new(trace.meta.source),
            lanes: lanes(trace),
            end,
            locks: locks::spans(trace, end),
            accesses: accesses::accesses(trace),
            faults: faults::spans(trace, end),
            sessions,
            nodes,
            watches: watches::outstanding(trace),
            server_side: trace.meta.source != Source::Real
                && (trace.events.iter()).any(|e| matches!(e.kind, EventKind::OpApplied { .. })),
            listed: None,
        };
        run.listed = watches::listed(trace, |session| {
            let client = run.sessions.owner.get(&session).copied()?;
            (run.session_at_end(client) == Some(session)).then_some(client)
        });
        run
    }

    /// The lock spans of `client`.
    pub(crate) fn locks_of(&self, client: u16) -> impl Iterator<Item = &LockSpan> {
        self.locks.iter().filter(move |l| l.client == client)
    }

    /// The hold of `client` that covers instant `t`, if any.
    pub(crate) fn hold_at(&self, client: u16, t: u64) -> Option<&LockSpan> {
        self.locks_of(client)
            .find(|l| l.is_hold() && l.start <= t && (t < l.end || (l.open && t == l.end)))
    }

    /// Whether `client` is paused (or crashed) at `t`.
    pub(crate) fn paused_at(&self, client: u16, t: u64) -> bool {
        self.faults
            .iter()
            .any(|f| f.stops_client(client) && f.start <= t && t < f.end)
    }
}

/// One lane per client the meta announces or an event names, then the server.
fn lanes(trace: &Trace) -> Vec<Lane> {
    let named = trace.events.iter().filter_map(|e| e.client.map(|c| c.0));
    let clients: BTreeSet<u16> = (0..trace.meta.clients).chain(named).collect();
    clients
        .into_iter()
        .map(Lane::Client)
        .chain([Lane::Server])
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use recipe_table::property::{Property, Violation};
    use trace::{Event, Meta, Source, Trace};

    /// A violation of `property` at `t=0`, with nothing else said.
    pub(crate) fn violation(property: Property) -> Violation {
        Violation {
            property,
            at: 0,
            until: None,
            clients: Vec::new(),
            events: Vec::new(),
            message: String::new(),
        }
    }

    /// A simulator trace of two clients with these events.
    pub(crate) fn trace_of(events: Vec<Event>) -> Trace {
        Trace {
            meta: Meta {
                scenario: "unit".to_owned(),
                seed: 1,
                source: Source::Sim,
                build: "test".to_owned(),
                recipe: recipe_table::recipes::RecipeKind::Mutex.into(),
                clients: 2,
                settings: serde_json::Value::Null,
                fault_schedule: Vec::new(),
                scenario_spec: None,
                model_spec: None,
                shrunk_from: None,
            },
            events,
        }
    }
}
