//! The fault vocabulary, shared by scenario files, property-test generators, the simulator's
//! fault injector and traces. Times and durations are milliseconds of simulated time.

use coordination::zk::Request;
use serde::{Deserialize, Serialize};

/// A machine in a run: the ZooKeeper server or a client by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Node {
    /// The ZooKeeper server.
    Server,
    /// Client `n` (0-based).
    Client(u16),
}

/// One fault. Faults with a `for_ms` end by themselves after it; without one they last until
/// a `heal` (network faults) — a `pause` always has a duration.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// A stop-the-world pause (GC): the client runs nothing and sends nothing.
    Pause {
        /// The paused client.
        client: u16,
        /// How long.
        for_ms: u64,
    },
    /// Cut the link between `a` and `b`; only `a → b` when `oneway`.
    Partition {
        /// One end.
        a: Node,
        /// The other end.
        b: Node,
        /// Cut one direction only.
        #[serde(default)]
        oneway: bool,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<u64>,
    },
    /// Cut every link of `node`.
    Isolate {
        /// The isolated node.
        node: Node,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<u64>,
    },
    /// Cut one server of an ensemble off from its peers only: its clients still reach it.
    /// A follower cut off from the leader keeps answering its clients' pings (so they stay
    /// connected) while the leader hears nothing of their sessions; after `sync_limit` ticks
    /// without the leader it drops its clients and stops serving until the cut ends.
    IsolateFromPeers {
        /// Which server, resolved when the fault starts.
        server: ServerSelector,
        /// The server `server` named when the fault started: recorded in traces, left out
        /// of scenario files.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resolved: Option<u16>,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<u64>,
    },
    /// One server of an ensemble hears its peers `lag_ms` late, in order (a congested link
    /// into it, or a machine too loaded to keep up): the leader's proposals, commits and pings
    /// reach it late, so it acknowledges and applies each write `lag_ms` after the others,
    /// answers its clients' reads from state that old (their pings at once), and tells the
    /// leader of its clients' sessions that much later. What it sends leaves on time. A lag of
    /// syncLimit × tick or more has the follower give up on the leader at its start (it hears
    /// nothing that long), and, each time it joins again, the leader drop it (it hears nothing
    /// from the follower for syncLimit after the follower took its log: `LearnerHandler`'s
    /// read timeout): the follower reads the close a lag later, goes LOOKING (dropping its
    /// clients) and joins again, while the lag lasts. A lagging leader hears its followers
    /// that late, and loses its quorum the same way.
    LagServer {
        /// Which server, resolved when the fault starts.
        server: ServerSelector,
        /// The server `server` named when the fault started: recorded in traces, left out
        /// of scenario files.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resolved: Option<u16>,
        /// How late its peers' messages reach it, in ms.
        lag_ms: u64,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<u64>,
    },
    /// Cut one client off from one server of an ensemble, both ways, as a partition between
    /// them: the client's connection to it falls silent, its read timeout ends it, and its
    /// ZooKeeper client moves on to the next server of its list (resuming its session there
    /// if it does so within the session timeout); the server's peers and the client's other
    /// servers are not cut.
    CutFromServer {
        /// The cut client.
        client: u16,
        /// Which server, resolved when the fault starts: the client's own server
        /// (`{"server_of": client}`) unless given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server: Option<ServerSelector>,
        /// The server `server` named when the fault started: recorded in traces, left out
        /// of scenario files.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resolved: Option<u16>,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<u64>,
    },
    /// The machine of one server of an ensemble crashes: its connections and whatever is
    /// sent to it are lost, and `down_ms` later it starts again with its log (what it had
    /// logged and applied survives), rejoining the leader it finds or triggering an election.
    CrashServer {
        /// Which server, resolved when the fault starts.
        server: ServerSelector,
        /// The server `server` named when the fault started: recorded in traces, left out
        /// of scenario files.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resolved: Option<u16>,
        /// How long the server is down, in ms: [`DEFAULT_RESTART_DOWN_MS`] unless given.
        #[serde(default = "default_restart_down_ms")]
        down_ms: u64,
    },
    /// The process of one server of an ensemble stops for `pause_ms` (a JVM's GC pause): it
    /// runs nothing, so it answers neither its clients nor its peers, who notice by silence;
    /// what is sent to it meanwhile waits, and it processes that when it resumes.
    PauseServer {
        /// Which server, resolved when the fault starts.
        server: ServerSelector,
        /// The server `server` named when the fault started: recorded in traces, left out
        /// of scenario files.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resolved: Option<u16>,
        /// How long the server is paused, in ms.
        pause_ms: u64,
    },
    /// End every network fault (partitions, isolations, delays, drops).
    Heal,
    /// The server expires the client's session now, as if it had not heard from it.
    ExpireSession {
        /// Whose session.
        client: u16,
    },
    /// The client process dies (its session stays until it expires) and restarts.
    Crash {
        /// Which client.
        client: u16,
    },
    /// The server process exits and starts again `down_ms` later: persistent data and live
    /// sessions survive (each restored session gets a fresh timeout), connections do not
    /// (every client sees end of stream at once; while the server is down, connection
    /// attempts are refused).
    RestartServer {
        /// How long the server is down, in ms: [`DEFAULT_RESTART_DOWN_MS`] unless given.
        #[serde(default = "default_restart_down_ms")]
        down_ms: u64,
    },
    /// Add a random delay in `[min_ms, max_ms]` to every message from `from` to `to`.
    Delay {
        /// Sender.
        from: Node,
        /// Receiver.
        to: Node,
        /// Smallest extra delay.
        min_ms: u64,
        /// Largest extra delay.
        max_ms: u64,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<u64>,
    },
    /// Lose each message from `from` to `to` with probability `percent` / 100 (really lost,
    /// not retried).
    Drop {
        /// Sender.
        from: Node,
        /// Receiver.
        to: Node,
        /// Loss probability in percent, 0..=100.
        percent: u8,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<u64>,
    },
}

/// A server of an ensemble, named by its role or its client when a fault starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerSelector {
    /// Server `n` (0-based).
    Server(u16),
    /// The `k`-th follower (0-based, in server order; the leader is not counted).
    Follower(u16),
    /// The leader.
    Leader,
    /// The server client `c`'s session is attached to.
    ServerOf(u16),
}

impl ServerSelector {
    /// The server this selector names among `servers` servers when `leader` leads (or none
    /// does) and `server_of` tells a client's server: the rule both executors resolve it by
    /// when its fault fires. The `k`-th follower counts every server but the leader, in order,
    /// and is `None` while no server leads.
    pub fn resolve(
        self,
        servers: u16,
        leader: Option<u16>,
        server_of: impl Fn(u16) -> Option<u16>,
    ) -> Option<u16> {
        match self {
            ServerSelector::Server(n) => Some(n),
            ServerSelector::Leader => leader,
            ServerSelector::Follower(k) => (0..servers)
                .filter(|&n| leader.is_some_and(|leader| n != leader))
                .nth(usize::from(k)),
            ServerSelector::ServerOf(client) => server_of(client),
        }
    }
}

/// How long a restarted server is down unless its fault says otherwise: 2 s, a ZooKeeper 3.8
/// standalone server's usual restart (the JVM starts in about a second, loading the snapshot
/// and replaying the transaction log of a small data tree takes a few hundred ms, then it
/// listens again), before any supervisor's restart delay.
pub const DEFAULT_RESTART_DOWN_MS: u64 = 2_000;

fn default_restart_down_ms() -> u64 {
    DEFAULT_RESTART_DOWN_MS
}

/// A fault at a point of simulated time, or at the first request of a kind its client sends
/// from then on.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduledFault {
    /// When, in ms of simulated time from the start of the run; with `on_request`, when the
    /// fault is armed.
    pub at_ms: u64,
    /// What.
    pub fault: Fault,
    /// When given, the fault starts not at `at_ms` but at the first request matching it that
    /// the fault's client sends from then on (a partition between one client and the server,
    /// or an isolation of one client): the cut is in force before that request leaves, so
    /// the request itself is held. A fault whose request never comes never starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_request: Option<RequestTrigger>,
}

impl ScheduledFault {
    /// `fault` at `at_ms`, started by time alone.
    pub fn at(at_ms: u64, fault: Fault) -> ScheduledFault {
        ScheduledFault {
            at_ms,
            fault,
            on_request: None,
        }
    }
}

impl Fault {
    /// The fault's kind as scenario files name it (`pause`, `restart_server`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::Pause { .. } => "pause",
            Fault::Partition { .. } => "partition",
            Fault::Isolate { .. } => "isolate",
            Fault::IsolateFromPeers { .. } => "isolate_from_peers",
            Fault::LagServer { .. } => "lag_server",
            Fault::CutFromServer { .. } => "cut_from_server",
            Fault::CrashServer { .. } => "crash_server",
            Fault::PauseServer { .. } => "pause_server",
            Fault::Heal => "heal",
            Fault::ExpireSession { .. } => "expire_session",
            Fault::Crash { .. } => "crash",
            Fault::RestartServer { .. } => "restart_server",
            Fault::Delay { .. } => "delay",
            Fault::Drop { .. } => "drop",
        }
    }

    /// How long the fault lasts by itself, in ms (`for_ms`, a restart's `down_ms`), if it
    /// ends by itself: `None` for instantaneous faults and for cuts that last until a `heal`.
    pub fn duration_ms(&self) -> Option<u64> {
        match *self {
            Fault::Pause { for_ms, .. } => Some(for_ms),
            Fault::Partition { for_ms, .. }
            | Fault::Isolate { for_ms, .. }
            | Fault::IsolateFromPeers { for_ms, .. }
            | Fault::LagServer { for_ms, .. }
            | Fault::CutFromServer { for_ms, .. }
            | Fault::Delay { for_ms, .. }
            | Fault::Drop { for_ms, .. } => for_ms,
            Fault::RestartServer { down_ms } | Fault::CrashServer { down_ms, .. } => Some(down_ms),
            Fault::PauseServer { pause_ms, .. } => Some(pause_ms),
            Fault::Heal | Fault::ExpireSession { .. } | Fault::Crash { .. } => None,
        }
    }

    /// The client a request of which may start this fault (see
    /// [`ScheduledFault::on_request`]): the one client of a partition between a client and
    /// the server, or an isolated client.
    pub fn requesting_client(&self) -> Option<u16> {
        match *self {
            Fault::Isolate {
                node: Node::Client(client),
                ..
            }
            | Fault::Partition {
                a: Node::Client(client),
                b: Node::Server,
                ..
            }
            | Fault::Partition {
                a: Node::Server,
                b: Node::Client(client),
                ..
            } => Some(client),
            _ => None,
        }
    }

    /// The selector of a fault addressed to one server of an ensemble (`isolate_from_peers`,
    /// `lag_server`, `cut_from_server`, `crash_server`, `pause_server`); `None` for any other
    /// fault.
    pub fn server_selector(&self) -> Option<ServerSelector> {
        match *self {
            Fault::IsolateFromPeers { server, .. }
            | Fault::LagServer { server, .. }
            | Fault::CrashServer { server, .. }
            | Fault::PauseServer { server, .. } => Some(server),
            Fault::CutFromServer { client, server, .. } => {
                Some(server.unwrap_or(ServerSelector::ServerOf(client)))
            }
            _ => None,
        }
    }

    /// This fault with `named`, the server its selector named when it started, as traces
    /// record it (a fault addressed to no server by a selector is returned unchanged).
    pub fn resolved_to(&self, named: Option<u16>) -> Fault {
        let mut fault = self.clone();
        match &mut fault {
            Fault::IsolateFromPeers { resolved, .. }
            | Fault::LagServer { resolved, .. }
            | Fault::CutFromServer { resolved, .. }
            | Fault::CrashServer { resolved, .. }
            | Fault::PauseServer { resolved, .. } => *resolved = named,
            _ => {}
        }
        fault
    }

    /// The server a fault addressed by a selector named when it started, as recorded.
    pub fn resolved_server(&self) -> Option<u16> {
        match *self {
            Fault::IsolateFromPeers { resolved, .. }
            | Fault::LagServer { resolved, .. }
            | Fault::CutFromServer { resolved, .. }
            | Fault::CrashServer { resolved, .. }
            | Fault::PauseServer { resolved, .. } => resolved,
            _ => None,
        }
    }
}

/// The requests that start a fault: of one kind, on a path containing some text.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestTrigger {
    /// The request's kind.
    pub op: RequestOp,
    /// Text the request's path contains (for a create, the path asked for: a sequential
    /// node's prefix, with a protected create's `_c_` prefix); empty matches every path.
    #[serde(default)]
    pub path_contains: String,
}

impl RequestTrigger {
    /// Whether a request of kind `op` on `path` starts the fault.
    pub fn matches(&self, op: RequestOp, path: &str) -> bool {
        self.op == op && path.contains(&self.path_contains)
    }
}

/// A kind of ZooKeeper request, as [`RequestTrigger`] names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestOp {
    /// `create` (any mode, also ZooKeeper's `create2`, container and TTL creates).
    Create,
    /// `delete`.
    Delete,
    /// `setData`.
    SetData,
    /// `getData`.
    GetData,
    /// `exists`.
    Exists,
    /// `getChildren` (and `getChildren2`).
    GetChildren,
    /// `removeWatches`.
    RemoveWatches,
}

impl RequestOp {
    /// The kind of `request`.
    pub fn of(request: &Request) -> RequestOp {
        match request {
            Request::Create { .. } => RequestOp::Create,
            Request::Delete { .. } => RequestOp::Delete,
            Request::SetData { .. } => RequestOp::SetData,
            Request::GetData { .. } => RequestOp::GetData,
            Request::Exists { .. } => RequestOp::Exists,
            Request::GetChildren { .. } => RequestOp::GetChildren,
            Request::RemoveWatches { .. } => RequestOp::RemoveWatches,
        }
    }

    /// The kind of a request with ZooKeeper's wire op code `code` (`ZooDefs.OpCode`), if it
    /// is one a trigger can name.
    pub fn of_code(code: i32) -> Option<RequestOp> {
        match code {
            1 | 15 | 19 | 21 => Some(RequestOp::Create),
            2 => Some(RequestOp::Delete),
            3 => Some(RequestOp::Exists),
            4 => Some(RequestOp::GetData),
            5 => Some(RequestOp::SetData),
            8 | 12 => Some(RequestOp::GetChildren),
            18 => Some(RequestOp::RemoveWatches),
            _ => None,
        }
    }
}
