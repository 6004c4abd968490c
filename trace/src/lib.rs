//! The trace: one JSON document per run, `{ "meta": {..}, "events": [..] }`, with no
//! wall-clock time in it. The simulator, the model checker and real runs all write it;
//! checkers and reports read nothing else.
//!
//! [`record`] is the recorder every executor writes it with; [`build`] builds one by hand, event by
//! event, for tests.

pub mod build;
pub mod record;

use coordination::driver::Observed;
use coordination::fencing::Token;
use coordination::ids::{ClientSlot, OpId, Owner};
use coordination::recipe::Recipe;
use coordination::recipe::SessionEvent;
use coordination::recipes::{Call, Notice};
use coordination::session::{RawEvent, RawState};
use coordination::zk::tree::Tree;
use coordination::zk::{OpResult, Path, Request, SessionId, WatchedEvent, Zxid};
use serde::{Deserialize, Serialize};

use recipe_table::model_spec::ModelSpec;
use recipe_table::recipe_ref::RecipeRef;
use scenarios::fault::{Fault, ScheduledFault};
use scenarios::scenario::{Scenario, ScenarioError, parse_json};

/// Where a trace came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The madsim simulator; `t` is simulated nanoseconds.
    Sim,
    /// A model-checker counterexample; `t` is the step index.
    Model,
    /// A real ZooKeeper; `t` is nanoseconds since the run started.
    Real,
}

/// What the run was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The scenario's name.
    pub scenario: String,
    /// The seed (simulator), or 0.
    pub seed: u64,
    /// Who produced the trace.
    pub source: Source,
    /// The splitbrain version and build that produced it.
    pub build: String,
    /// The recipe: its kebab-case name (`mutex`, `naive-herd-mutex`, ...), with its family
    /// when it is a user's own ([`RecipeRef`]).
    pub recipe: RecipeRef,
    /// Number of clients.
    pub clients: u16,
    /// Whatever else the producer needs to rerun the trace exactly (scenario settings).
    pub settings: serde_json::Value,
    /// The faults the run injected, as scheduled (after any randomization and shrinking).
    pub fault_schedule: Vec<ScheduledFault>,
    /// The scenario as run (after command-line overrides), so that `replay --from` reruns it
    /// exactly; absent in traces that did not come from a scenario.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_spec: Option<Box<Scenario>>,
    /// The model checker's configuration, in a model trace, so that its verdicts can be
    /// computed again from the trace alone (`properties::verdict::violations`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_spec: Option<ModelSpec>,
    /// The schedule `fault_schedule` was shrunk from, when it was minimized.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrunk_from: Option<Vec<ScheduledFault>>,
}

/// One trace event: at `t`, on `client` (absent for the server and the environment).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Simulated or real nanoseconds since the start, or the model's step index.
    pub t: u64,
    /// The client the event happened on; `None` for server-side and environment events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientSlot>,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// Where a read was answered in an ensemble, whose servers apply the log at their own pace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadFrom {
    /// The server that answered (0-based).
    pub server: u16,
    /// The zxid of the last change it had applied: the state the read saw, and the zxid
    /// ZooKeeper's reply header carries to the client.
    pub zxid: Zxid,
}

/// A server-side change to a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerSession {
    /// The server created the session.
    Created,
    /// A new connection re-attached to the session.
    Reattached,
    /// The server expired the session (its ephemerals are deleted in one zxid).
    Expired,
    /// The client closed the session.
    Closed,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind {
    /// Client side: a request went out.
    OpSent {
        /// The client's id for it.
        op: OpId,
        /// The request.
        request: Request,
    },
    /// Server side: a request was applied.
    OpApplied {
        /// The requesting session.
        session: SessionId,
        /// The client's id for it.
        op: OpId,
        /// The request.
        request: Request,
        /// The outcome.
        result: OpResult,
        /// The zxid it got, if it changed the tree.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        zxid: Option<Zxid>,
        /// A read answered by a server of an ensemble: which server, and how far it had
        /// applied the log. Absent for writes, and on a standalone server, whose reads all see
        /// its latest state.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        read_from: Option<ReadFrom>,
    },
    /// Client side: a reply arrived.
    Reply {
        /// The request's id.
        op: OpId,
        /// The outcome.
        result: OpResult,
    },
    /// Server side: a watch fired for `session`.
    WatchFired {
        /// Whose watch.
        session: SessionId,
        /// The event.
        event: WatchedEvent,
        /// The zxid of the change that fired it (the delete, or the expiry that deleted
        /// ephemerals); `None` when a reconnect's SetWatches fired it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        zxid: Option<Zxid>,
    },
    /// Client side: a watch event arrived.
    WatchDelivered {
        /// The event.
        event: WatchedEvent,
    },
    /// Server side: a session changed.
    ServerSession {
        /// The session.
        session: SessionId,
        /// How.
        change: ServerSession,
    },
    /// Client side: the raw session state changed.
    RawSession {
        /// The new raw state.
        state: RawState,
    },
    /// Client side: the framework layer's connection state changed.
    Session {
        /// The new state as recipes see it.
        event: SessionEvent,
    },
    /// Client side: the user called the recipe (recorded before the client handles it, so a
    /// release call comes before its delete is sent).
    Call {
        /// The call.
        call: Call,
    },
    /// Client side: the recipe told the user something.
    Notice {
        /// The notice.
        notice: Notice,
    },
    /// A fault began.
    FaultStart {
        /// The fault.
        fault: Fault,
    },
    /// A fault ended.
    FaultEnd {
        /// The fault.
        fault: Fault,
    },
    /// Client side: the workload read the protected resource.
    ResourceRead {
        /// The reading owner.
        owner: Owner,
        /// The token presented.
        token: Token,
        /// Whether the resource accepted the token.
        accepted: bool,
        /// The value read, when accepted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<u64>,
    },
    /// Client side: the workload wrote the protected resource.
    ResourceWrite {
        /// The writing owner.
        owner: Owner,
        /// The token presented.
        token: Token,
        /// The value written.
        value: u64,
        /// Whether the resource accepted the token.
        accepted: bool,
    },
    /// Client side, recorded by the model only: the timeout timer of the owner's acquire fired
    /// and the client handled it (`answered_by_deadline` reads it; the simulator's and the
    /// real executor's traces tell a deadline by their times).
    DeadlinePassed {
        /// The acquiring owner.
        owner: Owner,
    },
    /// Server side: the data tree's nodes at this instant, each with its ephemeral owner (the
    /// simulator records one at the end of a run; `no_orphans` reads the last one).
    TreeSnapshot {
        /// Every node but the root, in path order.
        nodes: Vec<SnapshotNode>,
    },
    /// Server side, in a real run only: the watches the server(s) list by session at the
    /// horizon (ZooKeeper's `wchc`, asked of every server of an ensemble, each of which knows
    /// only its own clients' watches). ZooKeeper 3.8 lists data and exists watches there, not
    /// child watches; the waits of a report read it for the clients whose requests the trace
    /// does not record (a library's contenders).
    WatchSnapshot {
        /// Every watch listed, in session then path order.
        watches: Vec<ServerWatch>,
    },
    /// Client side, from a library's contender: the library's own text for the failure of the
    /// `failed` notice just before it (its exception's or error's message), kept for the
    /// reader; the checkers read the notice's reason.
    LibraryError {
        /// The text, as the contender reported it.
        message: String,
    },
    /// Server side, in a real run on a local ensemble: each server's mode at the horizon as
    /// its `srvr` answer tells it, in server order (the order a fault's resolved server counts
    /// in); `None` for a server that did not answer or does not serve (down, or looking for a
    /// leader). An ensemble without a leader expires no session and applies no write, which
    /// reads a hang that no client's wait explains.
    ServerModes {
        /// One per server.
        modes: Vec<Option<ServerMode>>,
    },
    /// Client side: the client's program (a user's code on a client library, run in the place
    /// of a recipe) returned an error or panicked, which ended that client's run.
    ProgramFailed {
        /// The error's text, or `panicked: ` and the panic's message.
        error: String,
    },
}

impl EventKind {
    /// The [`EventKind::TreeSnapshot`] of `tree` as it stands: how a simulated run ends, and a
    /// model path that ends where nothing but a fault can happen.
    pub fn tree_snapshot(tree: &Tree) -> EventKind {
        let nodes = (tree.nodes())
            .map(|(path, node)| SnapshotNode {
                path: path.clone(),
                ephemeral_owner: node.stat.ephemeral_owner,
            })
            .collect();
        EventKind::TreeSnapshot { nodes }
    }
}

/// What a ZooKeeper server says it is (`srvr`'s `Mode:` line).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerMode {
    /// A standalone server.
    Standalone,
    /// The ensemble's leader.
    Leader,
    /// A follower.
    Follower,
    /// An observer.
    Observer,
}

impl ServerMode {
    /// Whether a server in this mode orders the writes and expires the sessions: a leader, or
    /// a standalone server.
    pub fn leads(self) -> bool {
        matches!(self, ServerMode::Leader | ServerMode::Standalone)
    }
}

/// One node of a [`EventKind::TreeSnapshot`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SnapshotNode {
    /// The node's path.
    pub path: Path,
    /// The owning session of an ephemeral node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_owner: Option<SessionId>,
}

/// One watch of a [`EventKind::WatchSnapshot`]: `session` watches `path` (a change of the node,
/// or its creation).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ServerWatch {
    /// The watching session.
    pub session: SessionId,
    /// The watched path.
    pub path: Path,
}

/// A whole run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// What the run was.
    pub meta: Meta,
    /// What happened, in order.
    pub events: Vec<Event>,
}

/// The trace event of what a client's executor observed (the one mapping the simulator's
/// recorder, the model and the real executor share); `None` for the opening and closing of a
/// session handle, which the raw `Connected` that follows (or the server's side) tells.
pub fn client_event<R: Recipe<Call = Call, Notice = Notice>>(
    observed: Observed<'_, R>,
) -> Option<EventKind> {
    Some(match observed {
        Observed::SessionOpened | Observed::SessionClosed => return None,
        Observed::Call(call) => EventKind::Call { call: *call },
        Observed::OpSent { op, request } => EventKind::OpSent {
            op,
            request: request.clone(),
        },
        Observed::Event(RawEvent::Reply { op, result }) => EventKind::Reply {
            op: *op,
            result: result.clone(),
        },
        Observed::Event(RawEvent::Watch { event }) => EventKind::WatchDelivered {
            event: event.clone(),
        },
        Observed::Event(RawEvent::State { state }) => EventKind::RawSession { state: *state },
        Observed::Session(event) => EventKind::Session { event },
        Observed::Notice(notice) => EventKind::Notice { notice: *notice },
    })
}

impl Trace {
    /// Reads a trace file's `text` (named `file` in errors): the JSON, then the order of its
    /// events, whose times never go backwards (a checker reading a trace whose clock runs
    /// backwards would judge nonsense). Every mistake is one line naming the file, the JSON
    /// pointer and what was expected.
    pub fn from_json(file: &str, text: &str) -> Result<Trace, ScenarioError> {
        let trace: Trace = parse_json(file, text)?;
        let backwards = trace
            .events
            .windows(2)
            .position(|pair| pair[1].t < pair[0].t);
        if let Some(index) = backwards {
            let (before, at) = (trace.events[index].t, trace.events[index + 1].t);
            return Err(ScenarioError {
                file: file.to_owned(),
                pointer: format!("/events/{}/t", index + 1),
                message: format!(
                    "expected a time at or after the previous event's ({before}), found {at}"
                ),
            });
        }
        Ok(trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::Build;

    #[test]
    fn a_trace_whose_time_goes_backwards_is_rejected_naming_the_event() {
        let trace = Build::new().acquire(0).acquired(0, 5).release(0).trace();
        let text = serde_json::to_string(&trace).unwrap();
        assert_eq!(Trace::from_json("t.json", &text), Ok(trace.clone()));
        let mut backwards = trace;
        backwards.events[2].t = backwards.events[1].t - 1;
        let text = serde_json::to_string(&backwards).unwrap();
        let error = Trace::from_json("t.json", &text).unwrap_err().to_string();
        assert_eq!(
            error,
            "t.json: /events/2/t: expected a time at or after the previous event's (1000000), \
             found 999999"
        );
    }
}
