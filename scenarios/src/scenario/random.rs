//! Randomized faults: a scenario lists generators, each drawing a number of faults per seed,
//! each at a drawn instant, of a kind picked uniformly from its templates, with drawn clients
//! and durations.
//!
//! ```json
//! { "count": { "min": 1, "max": 3 },
//!   "at_ms": { "min": 0, "max": 8000 },
//!   "pick": [
//!     { "kind": "pause", "client": "any", "for_ms": { "min": 100, "max": 2500 } },
//!     { "kind": "partition", "a": "any_client", "b": "server", "for_ms": { "min": 100, "max": 2000 } },
//!     { "kind": "expire_session", "client": 1 },
//!     { "kind": "restart_server" } ] }
//! ```
//!
//! In an ensemble, a template may address one server by its selector (resolved when the drawn
//! fault starts): `{ "kind": "crash_server", "server": "leader", "down_ms": {...} }`,
//! `pause_server` (`pause_ms`), `isolate_from_peers` (`for_ms`), `lag_server` (`lag_ms`,
//! `for_ms`) and `slow_server_links` (`for_ms`; `server` optional, its delay and loss fixed);
//! and `split_servers` splits the servers (`groups`, or `"random_halves"` drawn when the fault
//! starts; `for_ms`). A generator draws them only when its `pick` lists them, so generators
//! without them draw as before.
//!
//! A generator whose templates all cut one client's links can draw faults that start at that
//! client's request: `"on_request": { "ops": ["create", "get_children"], "path_contains": "" }`
//! draws one request kind per fault (after its other parts, so generators without it draw
//! as before).

use std::fmt;

use serde::de::{self, Unexpected, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::span::Span;
use crate::fault::{
    DEFAULT_RESTART_DOWN_MS, Fault, Node, RequestOp, RequestTrigger, ScheduledFault, ServerGroups,
    ServerSelector,
};
use crate::rng::SplitMix64;

/// One generator of randomized faults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomFaults {
    /// How many faults to draw.
    pub count: Span,
    /// When each one starts, in ms of simulated time.
    pub at_ms: Span,
    /// What each one is: one template, picked uniformly.
    pub pick: Vec<FaultTemplate>,
    /// When given, each fault drawn starts at its client's request instead of at its instant
    /// (then only armed): every template must cut one client's links, and each fault's
    /// request kind is drawn from `ops` (see [`ScheduledFault::on_request`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_request: Option<RequestPick>,
}

/// The requests that start drawn faults: a kind drawn per fault, a path text for all.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestPick {
    /// The kinds to draw from, uniformly.
    pub ops: Vec<RequestOp>,
    /// Text the request's path contains; empty matches every path.
    #[serde(default)]
    pub path_contains: String,
}

impl RequestPick {
    fn draw(&self, rng: &mut SplitMix64) -> RequestTrigger {
        RequestTrigger {
            op: self.ops[rng.index(self.ops.len())],
            path_contains: self.path_contains.clone(),
        }
    }
}

/// A client: a fixed index, or `"any"` (drawn per fault).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClientPick {
    /// This client.
    Client(u16),
    /// Any client, drawn uniformly.
    Any,
}

/// A machine: `"server"`, `{"client": n}`, or `"any_client"` (drawn per fault).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodePick {
    /// The server.
    Server,
    /// This client.
    Client(u16),
    /// Any client, drawn uniformly (never the node at the other end of the same fault).
    AnyClient,
}

/// A fault with drawn parts: the [`Fault`] vocabulary with [`ClientPick`]s, [`NodePick`]s and
/// [`Span`]s where the fault has clients, nodes and durations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FaultTemplate {
    /// [`Fault::Pause`].
    Pause {
        /// Who pauses.
        client: ClientPick,
        /// How long.
        for_ms: Span,
    },
    /// [`Fault::Partition`].
    Partition {
        /// One end.
        a: NodePick,
        /// The other end.
        b: NodePick,
        /// Cut `a → b` only.
        #[serde(default)]
        oneway: bool,
        /// Heal by itself after this long (else at the next `heal`).
        #[serde(default)]
        for_ms: Option<Span>,
    },
    /// [`Fault::Isolate`].
    Isolate {
        /// The isolated node.
        node: NodePick,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<Span>,
    },
    /// [`Fault::Heal`].
    Heal,
    /// [`Fault::ExpireSession`].
    ExpireSession {
        /// Whose session.
        client: ClientPick,
    },
    /// [`Fault::Crash`].
    Crash {
        /// Which client.
        client: ClientPick,
    },
    /// [`Fault::RestartServer`].
    RestartServer {
        /// How long the server is down ([`crate::fault::DEFAULT_RESTART_DOWN_MS`] unless
        /// given).
        #[serde(default)]
        down_ms: Option<Span>,
    },
    /// [`Fault::IsolateFromPeers`]: the server its selector names when the fault starts.
    IsolateFromPeers {
        /// Which server.
        server: ServerSelector,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<Span>,
    },
    /// [`Fault::LagServer`].
    LagServer {
        /// Which server.
        server: ServerSelector,
        /// How late its peers' messages reach it.
        lag_ms: Span,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<Span>,
    },
    /// [`Fault::SplitServers`].
    SplitServers {
        /// The groups, or `"random_halves"` (drawn when the fault starts).
        groups: ServerGroups,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<Span>,
    },
    /// [`Fault::SlowServerLinks`].
    SlowServerLinks {
        /// Whose links; every link between servers when absent.
        #[serde(default)]
        server: Option<ServerSelector>,
        /// Smallest extra delay of a message.
        min_ms: u64,
        /// Largest extra delay of a message.
        max_ms: u64,
        /// Loss probability of a message in percent.
        #[serde(default)]
        loss_percent: u8,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<Span>,
    },
    /// [`Fault::CrashServer`].
    CrashServer {
        /// Which server.
        server: ServerSelector,
        /// How long it is down ([`crate::fault::DEFAULT_RESTART_DOWN_MS`] unless given).
        #[serde(default)]
        down_ms: Option<Span>,
    },
    /// [`Fault::PauseServer`].
    PauseServer {
        /// Which server.
        server: ServerSelector,
        /// How long it is paused.
        pause_ms: Span,
    },
    /// [`Fault::Delay`].
    Delay {
        /// Sender.
        from: NodePick,
        /// Receiver.
        to: NodePick,
        /// Smallest extra delay.
        min_ms: u64,
        /// Largest extra delay.
        max_ms: u64,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<Span>,
    },
    /// [`Fault::Drop`].
    Drop {
        /// Sender.
        from: NodePick,
        /// Receiver.
        to: NodePick,
        /// Loss probability in percent.
        percent: u8,
        /// Heal by itself after this long.
        #[serde(default)]
        for_ms: Option<Span>,
    },
}

impl RandomFaults {
    /// Draws this generator's faults for a run with `clients` clients, appending them.
    pub fn draw(&self, clients: u16, rng: &mut SplitMix64, out: &mut Vec<ScheduledFault>) {
        if self.pick.is_empty() {
            return;
        }
        for _ in 0..self.count.draw(rng) {
            let at_ms = self.at_ms.draw(rng);
            let template = &self.pick[rng.index(self.pick.len())];
            let fault = template.draw(clients, rng);
            let on_request = self.on_request.as_ref().map(|pick| pick.draw(rng));
            out.push(ScheduledFault {
                on_request,
                ..ScheduledFault::at(at_ms, fault)
            });
        }
    }
}

impl FaultTemplate {
    /// Draws one concrete fault for a run with `clients` clients.
    pub fn draw(&self, clients: u16, rng: &mut SplitMix64) -> Fault {
        let mut client = |pick: ClientPick| pick.draw(clients, rng);
        match *self {
            FaultTemplate::Pause { client: c, for_ms } => Fault::Pause {
                client: client(c),
                for_ms: for_ms.draw(rng),
            },
            FaultTemplate::ExpireSession { client: c } => {
                Fault::ExpireSession { client: client(c) }
            }
            FaultTemplate::Crash { client: c } => Fault::Crash { client: client(c) },
            FaultTemplate::Heal => Fault::Heal,
            FaultTemplate::RestartServer { down_ms } => Fault::RestartServer {
                down_ms: down_ms.map_or(DEFAULT_RESTART_DOWN_MS, |d| d.draw(rng)),
            },
            FaultTemplate::IsolateFromPeers { server, for_ms } => Fault::IsolateFromPeers {
                server,
                resolved: None,
                for_ms: for_ms.map(|d| d.draw(rng)),
            },
            FaultTemplate::LagServer {
                server,
                lag_ms,
                for_ms,
            } => Fault::LagServer {
                server,
                resolved: None,
                lag_ms: lag_ms.draw(rng),
                for_ms: for_ms.map(|d| d.draw(rng)),
            },
            FaultTemplate::SplitServers { ref groups, for_ms } => Fault::SplitServers {
                groups: groups.clone(),
                resolved: None,
                for_ms: for_ms.map(|d| d.draw(rng)),
            },
            FaultTemplate::SlowServerLinks {
                server,
                min_ms,
                max_ms,
                loss_percent,
                for_ms,
            } => Fault::SlowServerLinks {
                server,
                resolved: None,
                min_ms,
                max_ms,
                loss_percent,
                for_ms: for_ms.map(|d| d.draw(rng)),
            },
            FaultTemplate::CrashServer { server, down_ms } => Fault::CrashServer {
                server,
                resolved: None,
                down_ms: down_ms.map_or(DEFAULT_RESTART_DOWN_MS, |d| d.draw(rng)),
            },
            FaultTemplate::PauseServer { server, pause_ms } => Fault::PauseServer {
                server,
                resolved: None,
                pause_ms: pause_ms.draw(rng),
            },
            FaultTemplate::Partition {
                a,
                b,
                oneway,
                for_ms,
            } => {
                let (a, b) = draw_pair(a, b, clients, rng);
                Fault::Partition {
                    a,
                    b,
                    oneway,
                    for_ms: for_ms.map(|d| d.draw(rng)),
                }
            }
            FaultTemplate::Isolate { node, for_ms } => Fault::Isolate {
                node: node.draw(clients, None, rng),
                for_ms: for_ms.map(|d| d.draw(rng)),
            },
            FaultTemplate::Delay {
                from,
                to,
                min_ms,
                max_ms,
                for_ms,
            } => {
                let (from, to) = draw_pair(from, to, clients, rng);
                Fault::Delay {
                    from,
                    to,
                    min_ms,
                    max_ms,
                    for_ms: for_ms.map(|d| d.draw(rng)),
                }
            }
            FaultTemplate::Drop {
                from,
                to,
                percent,
                for_ms,
            } => {
                let (from, to) = draw_pair(from, to, clients, rng);
                Fault::Drop {
                    from,
                    to,
                    percent,
                    for_ms: for_ms.map(|d| d.draw(rng)),
                }
            }
        }
    }

    /// The clients and nodes the template names, and its spans, for validation.
    pub(super) fn parts(&self) -> (Vec<ClientPick>, Vec<NodePick>, Vec<Span>) {
        let spans = |for_ms: &Option<Span>| for_ms.iter().copied().collect::<Vec<_>>();
        match self {
            FaultTemplate::Pause { client, for_ms } => (vec![*client], vec![], vec![*for_ms]),
            FaultTemplate::ExpireSession { client } | FaultTemplate::Crash { client } => {
                (vec![*client], vec![], vec![])
            }
            FaultTemplate::Heal => (vec![], vec![], vec![]),
            FaultTemplate::RestartServer { down_ms }
            | FaultTemplate::CrashServer { down_ms, .. } => (vec![], vec![], spans(down_ms)),
            FaultTemplate::IsolateFromPeers { for_ms, .. }
            | FaultTemplate::LagServer { for_ms, .. }
            | FaultTemplate::SplitServers { for_ms, .. }
            | FaultTemplate::SlowServerLinks { for_ms, .. } => (vec![], vec![], spans(for_ms)),
            FaultTemplate::PauseServer { pause_ms, .. } => (vec![], vec![], vec![*pause_ms]),
            FaultTemplate::Partition { a, b, for_ms, .. } => (vec![], vec![*a, *b], spans(for_ms)),
            FaultTemplate::Isolate { node, for_ms } => (vec![], vec![*node], spans(for_ms)),
            FaultTemplate::Delay {
                from, to, for_ms, ..
            }
            | FaultTemplate::Drop {
                from, to, for_ms, ..
            } => (vec![], vec![*from, *to], spans(for_ms)),
        }
    }
}

/// Draws the two ends of a link fault; a drawn end is never the other end.
fn draw_pair(a: NodePick, b: NodePick, clients: u16, rng: &mut SplitMix64) -> (Node, Node) {
    let a = a.draw(clients, None, rng);
    let b = b.draw(clients, Some(a), rng);
    (a, b)
}

impl ClientPick {
    /// The client index.
    pub fn draw(self, clients: u16, rng: &mut SplitMix64) -> u16 {
        match self {
            ClientPick::Client(client) => client,
            ClientPick::Any => rng.in_range(0, u64::from(clients.max(1)) - 1) as u16,
        }
    }
}

impl NodePick {
    /// The node; a drawn client is never `other` (unless it is the only client).
    pub fn draw(self, clients: u16, other: Option<Node>, rng: &mut SplitMix64) -> Node {
        match self {
            NodePick::Server => Node::Server,
            NodePick::Client(client) => Node::Client(client),
            NodePick::AnyClient => {
                let excluded = match other {
                    Some(Node::Client(c)) if clients > 1 => Some(c),
                    _ => None,
                };
                let choices = clients.max(1) - u16::from(excluded.is_some());
                let mut pick = rng.in_range(0, u64::from(choices) - 1) as u16;
                if excluded.is_some_and(|c| pick >= c) {
                    pick += 1;
                }
                Node::Client(pick)
            }
        }
    }
}

impl Serialize for ClientPick {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ClientPick::Client(client) => serializer.serialize_u16(*client),
            ClientPick::Any => serializer.serialize_str("any"),
        }
    }
}

struct ClientPickVisitor;

impl Visitor<'_> for ClientPickVisitor {
    type Value = ClientPick;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a client index or \"any\"")
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<ClientPick, E> {
        u16::try_from(value)
            .map(ClientPick::Client)
            .map_err(|_| E::invalid_value(Unexpected::Unsigned(value), &self))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<ClientPick, E> {
        u16::try_from(value)
            .map(ClientPick::Client)
            .map_err(|_| E::invalid_value(Unexpected::Signed(value), &self))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<ClientPick, E> {
        match value {
            "any" => Ok(ClientPick::Any),
            _ => Err(E::invalid_value(Unexpected::Str(value), &self)),
        }
    }
}

impl<'de> Deserialize<'de> for ClientPick {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ClientPick, D::Error> {
        deserializer.deserialize_any(ClientPickVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generator(text: &str) -> RandomFaults {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn a_generator_draws_its_count_within_its_window() {
        let random = generator(
            r#"{"count": {"min": 2, "max": 4}, "at_ms": {"min": 100, "max": 900},
                "pick": [{"kind": "pause", "client": "any", "for_ms": {"min": 10, "max": 20}}]}"#,
        );
        for seed in 0..50 {
            let mut out = Vec::new();
            random.draw(3, &mut SplitMix64::new(seed), &mut out);
            assert!((2..=4).contains(&out.len()));
            for fault in out {
                assert!((100..=900).contains(&fault.at_ms));
                let Fault::Pause { client, for_ms } = fault.fault else {
                    panic!("{fault:?}")
                };
                assert!(client < 3 && (10..=20).contains(&for_ms));
            }
        }
    }

    #[test]
    fn drawn_link_ends_differ() {
        let template: FaultTemplate =
            serde_json::from_str(r#"{"kind": "partition", "a": "any_client", "b": "any_client"}"#)
                .unwrap();
        let mut rng = SplitMix64::new(5);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..100 {
            let Fault::Partition { a, b, .. } = template.draw(3, &mut rng) else {
                panic!()
            };
            assert_ne!(a, b);
            seen.insert((a, b));
        }
        assert_eq!(seen.len(), 6, "every ordered pair of 3 clients: {seen:?}");
    }

    #[test]
    fn client_picks_read_indices_and_any() {
        let picks: Vec<ClientPick> = serde_json::from_str(r#"[2, "any"]"#).unwrap();
        assert_eq!(picks, [ClientPick::Client(2), ClientPick::Any]);
        assert_eq!(serde_json::to_string(&picks).unwrap(), r#"[2,"any"]"#);
        let error = serde_json::from_str::<ClientPick>(r#""all""#).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("expected a client index or \"any\"")
        );
    }
}
