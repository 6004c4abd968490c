//! The fault vocabulary, shared by scenario files, property-test generators, the simulator's
//! fault injector and traces. Times and durations are milliseconds of simulated time.

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

/// How long a restarted server is down unless its fault says otherwise: 2 s, a ZooKeeper 3.8
/// standalone server's usual restart (the JVM starts in about a second, loading the snapshot
/// and replaying the transaction log of a small data tree takes a few hundred ms, then it
/// listens again), before any supervisor's restart delay.
pub const DEFAULT_RESTART_DOWN_MS: u64 = 2_000;

fn default_restart_down_ms() -> u64 {
    DEFAULT_RESTART_DOWN_MS
}

/// A fault at a point of simulated time.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduledFault {
    /// When, in ms of simulated time from the start of the run.
    pub at_ms: u64,
    /// What.
    pub fault: Fault,
}
