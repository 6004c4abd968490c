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
    /// Split the servers of an ensemble into groups: every link between servers of different
    /// groups is cut (quorum and election traffic, both ways), as `isolate_from_peers` cuts
    /// one server's, while clients still reach every server. A minority group's servers stop
    /// serving after `sync_limit` ticks without a leader, as a cut-off follower does; a leader
    /// in a minority loses its quorum, and a majority group elects a leader of its own.
    SplitServers {
        /// The groups: given, or Jepsen's random halves drawn when the fault starts.
        groups: ServerGroups,
        /// The groups the split cut when it started: recorded in traces, left out of
        /// scenario files.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resolved: Option<Vec<Vec<u16>>>,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<u64>,
    },
    /// Slow and lossy links between the servers of an ensemble (all of them, or those of one
    /// server): each message on a link is held a uniformly drawn extra delay within
    /// `[min_ms, max_ms]`, and is lost with probability `loss_percent` / 100 — as TCP shows
    /// a loss: the segment is retransmitted after the retransmission timeout (Linux's
    /// minimum, 200 ms, on a LAN's short round trips), doubling on every further loss. A
    /// link's messages keep their order: one held late holds those behind it (head-of-line
    /// blocking), as ZAB's FIFO channels require.
    SlowServerLinks {
        /// Whose links, resolved when the fault starts; every link between servers when
        /// absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server: Option<ServerSelector>,
        /// The server `server` named when the fault started: recorded in traces, left out
        /// of scenario files.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resolved: Option<u16>,
        /// Smallest extra delay of a message, in ms.
        min_ms: u64,
        /// Largest extra delay of a message, in ms.
        max_ms: u64,
        /// Loss probability of a message (of each transmission) in percent, 0..=99.
        #[serde(default)]
        loss_percent: u8,
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

/// The groups a `split_servers` fault splits an ensemble into: a list of groups of server
/// indices (`[[0], [1, 2]]`), or `"random_halves"`, Jepsen's nemesis: the servers shuffled
/// when the fault starts and cut into a random minority (half, rounded down) and majority.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ServerGroups {
    /// These groups.
    Given(Vec<Vec<u16>>),
    /// A minority and a majority drawn when the fault starts.
    RandomHalves,
}

impl ServerGroups {
    /// Whether these groups split `servers` servers: random halves, or at least two groups,
    /// none empty, that hold each server below `servers` exactly once.
    pub fn split(&self, servers: u16) -> bool {
        let ServerGroups::Given(groups) = self else {
            return true;
        };
        let mut members: Vec<u16> = groups.concat();
        members.sort_unstable();
        groups.len() >= 2
            && groups.iter().all(|group| !group.is_empty())
            && members.iter().copied().eq(0..servers)
    }

    /// The groups among `servers` servers: the given ones, or random halves drawn with
    /// `draw` (a number in `[min, max]`, both included, from the run's seeded source).
    pub fn resolve(&self, servers: u16, draw: impl FnMut(u64, u64) -> u64) -> Vec<Vec<u16>> {
        match self {
            ServerGroups::Given(groups) => groups.clone(),
            ServerGroups::RandomHalves => random_halves(servers, draw),
        }
    }
}

/// Jepsen's random halves of `servers` servers: a shuffle (Fisher–Yates, drawing with
/// `draw`), its first half (rounded down) the minority, the rest the majority, each sorted.
pub fn random_halves(servers: u16, mut draw: impl FnMut(u64, u64) -> u64) -> Vec<Vec<u16>> {
    let mut order: Vec<u16> = (0..servers).collect();
    for i in (1..order.len()).rev() {
        let j = draw(0, i as u64) as usize;
        order.swap(i, j);
    }
    let (minority, majority) = order.split_at(order.len() / 2);
    [minority, majority]
        .map(|half| {
            let mut half = half.to_vec();
            half.sort_unstable();
            half
        })
        .to_vec()
}

/// Whether servers `a` and `b` are in one of `groups` (a server in no group is with none).
pub fn grouped_together(groups: &[Vec<u16>], a: u16, b: u16) -> bool {
    (groups.iter()).any(|group| group.contains(&a) && group.contains(&b))
}

/// The extra delay, in ms, of one message on a link slowed by a `slow_server_links` fault
/// (`min_ms`, `max_ms`, `loss_percent`), drawn with `draw` (a number in `[min, max]`, both
/// included): the drawn delay, plus for each loss (each transmission lost with probability
/// `loss_percent` / 100) a retransmission timeout, from [`LOSS_RTO_MS`] doubling, at most
/// [`MAX_RETRANSMISSIONS`] of them.
pub fn slow_link_delay_ms(
    (min_ms, max_ms, loss_percent): (u64, u64, u8),
    mut draw: impl FnMut(u64, u64) -> u64,
) -> u64 {
    let mut delay = draw(min_ms, max_ms);
    if loss_percent == 0 {
        return delay;
    }
    let mut rto = LOSS_RTO_MS;
    for _ in 0..MAX_RETRANSMISSIONS {
        if draw(0, 99) >= u64::from(loss_percent) {
            break;
        }
        delay += rto;
        rto *= 2;
    }
    delay
}

/// The retransmission timeout a lost message between servers waits before it is sent
/// again: Linux's minimum (`TCP_RTO_MIN`, 200 ms), every segment's first RTO on a LAN whose
/// round trips are far shorter.
pub const LOSS_RTO_MS: u64 = 200;

/// How many times a lost message between servers is retransmitted at most (Linux's
/// `tcp_retries2`; a loss below 100 % makes more all but impossible).
pub const MAX_RETRANSMISSIONS: u32 = 15;

impl Serialize for ServerGroups {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ServerGroups::Given(groups) => groups.serialize(serializer),
            ServerGroups::RandomHalves => serializer.serialize_str(RANDOM_HALVES),
        }
    }
}

const RANDOM_HALVES: &str = "random_halves";

struct ServerGroupsVisitor;

impl<'de> serde::de::Visitor<'de> for ServerGroupsVisitor {
    type Value = ServerGroups;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of groups of server indices, or \"random_halves\"")
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<ServerGroups, E> {
        match value {
            RANDOM_HALVES => Ok(ServerGroups::RandomHalves),
            _ => Err(E::invalid_value(serde::de::Unexpected::Str(value), &self)),
        }
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<ServerGroups, A::Error> {
        let mut groups = Vec::new();
        while let Some(group) = seq.next_element::<Vec<u16>>()? {
            groups.push(group);
        }
        Ok(ServerGroups::Given(groups))
    }
}

impl<'de> Deserialize<'de> for ServerGroups {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<ServerGroups, D::Error> {
        deserializer.deserialize_any(ServerGroupsVisitor)
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
    /// When given, the fault starts not at `at_ms` but at the first request matching it from
    /// then on. A cut of one client's links (a partition between one client and the server,
    /// or an isolation of one client) starts as that client sends it: the cut is in force
    /// before the request leaves, so the request itself is held. A `crash_server` starts as
    /// the ensemble's leader proposes any client's matching write (it has logged it and sent
    /// its proposal to the followers, and does nothing more): whether the write survives is
    /// the election's to decide. A fault whose request never comes never starts.
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
            Fault::SplitServers { .. } => "split_servers",
            Fault::SlowServerLinks { .. } => "slow_server_links",
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
            | Fault::SplitServers { for_ms, .. }
            | Fault::SlowServerLinks { for_ms, .. }
            | Fault::CutFromServer { for_ms, .. }
            | Fault::Delay { for_ms, .. }
            | Fault::Drop { for_ms, .. } => for_ms,
            Fault::RestartServer { down_ms } | Fault::CrashServer { down_ms, .. } => Some(down_ms),
            Fault::PauseServer { pause_ms, .. } => Some(pause_ms),
            Fault::Heal | Fault::ExpireSession { .. } | Fault::Crash { .. } => None,
        }
    }

    /// Whether a request may start this fault ([`ScheduledFault::on_request`]): a cut of one
    /// client's links, as that client sends it, or a crash of a server, as the leader
    /// proposes it ([`Fault::starts_at_proposal`]).
    pub fn may_start_at_request(&self) -> bool {
        self.requesting_client().is_some() || self.starts_at_proposal()
    }

    /// Whether a request starts this fault as the ensemble's leader proposes it, not as a
    /// client sends it: a `crash_server`.
    pub fn starts_at_proposal(&self) -> bool {
        matches!(self, Fault::CrashServer { .. })
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
    /// `lag_server`, `cut_from_server`, `crash_server`, `pause_server`, a `slow_server_links`
    /// with a `server`); `None` for any other fault.
    pub fn server_selector(&self) -> Option<ServerSelector> {
        match *self {
            Fault::IsolateFromPeers { server, .. }
            | Fault::LagServer { server, .. }
            | Fault::CrashServer { server, .. }
            | Fault::PauseServer { server, .. } => Some(server),
            Fault::SlowServerLinks { server, .. } => server,
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
            | Fault::PauseServer { resolved, .. }
            | Fault::SlowServerLinks { resolved, .. } => *resolved = named,
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
            | Fault::PauseServer { resolved, .. }
            | Fault::SlowServerLinks { resolved, .. } => resolved,
            _ => None,
        }
    }

    /// A `slow_server_links`' `(min_ms, max_ms, loss_percent)`, as [`slow_link_delay_ms`]
    /// takes them; `None` for any other fault.
    pub fn slowness(&self) -> Option<(u64, u64, u8)> {
        match *self {
            Fault::SlowServerLinks {
                min_ms,
                max_ms,
                loss_percent,
                ..
            } => Some((min_ms, max_ms, loss_percent)),
            _ => None,
        }
    }

    /// This `split_servers` with the groups it cuts when it starts among `servers` servers
    /// (random halves drawn with `draw`, see [`ServerGroups::resolve`]), as traces record it;
    /// any other fault is returned unchanged.
    pub fn split_resolved(&self, servers: u16, draw: impl FnMut(u64, u64) -> u64) -> Fault {
        let mut fault = self.clone();
        if let Fault::SplitServers {
            groups, resolved, ..
        } = &mut fault
        {
            *resolved = Some(groups.resolve(servers, draw));
        }
        fault
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    #[test]
    fn random_halves_are_a_minority_and_a_majority_holding_every_server_once() {
        let mut rng = SplitMix64::new(11);
        let mut minorities = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let halves = random_halves(5, |min, max| rng.in_range(min, max));
            let [minority, majority] = &halves[..] else {
                panic!("{halves:?}")
            };
            assert_eq!((minority.len(), majority.len()), (2, 3), "{halves:?}");
            let mut all: Vec<u16> = halves.concat();
            all.sort_unstable();
            assert_eq!(all, [0, 1, 2, 3, 4]);
            assert!(minority.is_sorted() && majority.is_sorted());
            minorities.insert(minority.clone());
        }
        assert_eq!(
            minorities.len(),
            10,
            "every pair of 5 servers: {minorities:?}"
        );
    }

    #[test]
    fn a_lost_message_waits_a_doubling_retransmission_timeout_per_loss() {
        // Draws: the delay, then one per transmission (below 30 lost).
        let scripted = |draws: &[u64]| {
            let mut draws = draws.iter().copied();
            slow_link_delay_ms((10, 50, 30), move |_, _| draws.next().expect("a draw"))
        };
        assert_eq!(scripted(&[17, 30]), 17, "sent once");
        assert_eq!(scripted(&[17, 29, 99]), 17 + 200, "lost once");
        assert_eq!(scripted(&[17, 0, 5, 31]), 17 + 200 + 400, "lost twice");
        let mut draws = 0;
        let lossless = slow_link_delay_ms((10, 10, 0), |min, _| {
            draws += 1;
            min
        });
        assert_eq!((lossless, draws), (10, 1), "no loss draw without loss");
    }

    #[test]
    fn server_groups_read_and_write_a_list_or_random_halves() {
        let groups: Vec<ServerGroups> =
            serde_json::from_str(r#"[[[0], [1, 2]], "random_halves"]"#).unwrap();
        assert_eq!(
            groups,
            [
                ServerGroups::Given(vec![vec![0], vec![1, 2]]),
                ServerGroups::RandomHalves
            ]
        );
        assert_eq!(
            serde_json::to_string(&groups).unwrap(),
            r#"[[[0],[1,2]],"random_halves"]"#
        );
    }
}
