//! The client–server wire: ZooKeeper's protocol carried over madsim datagrams.
//!
//! madsim's reliable connections never lose data (a clogged link delivers late, with a
//! backoff of up to 10 s), which would let a short partition expire a session and could not
//! model real loss. So each connection is our own: a random 64-bit id chosen by the client,
//! and per-direction sequence numbers. The receiver delivers a direction in sequence order
//! and holds back anything after a gap; since nothing is retransmitted, a lost datagram
//! stalls that direction for good, like a TCP connection to a peer that vanished. The client
//! notices the silence (2/3 of the session timeout), drops the connection and re-attaches its
//! session on a new one; datagrams of an old connection are then ignored. The one exception
//! is the client's `Connect` (sequence 0), which it repeats every T/10 until answered; the
//! server answers a repeat by repeating its `Accepted` (a repeat after an `Expired` answer
//! gets a reset, and the client's next connection hears `Expired` again).

use std::collections::BTreeMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use lock::ids::OpId;
use lock::zk::watches::WatchSet;
use lock::zk::{OpResult, Request, SessionId, WatchedEvent, Zxid};
use madsim::net::{Endpoint, Payload};
use scenarios::fault::Node;

use crate::links::{Links, Verdict};

/// The datagram tag every message of ours uses.
const TAG: u64 = 0x2181;

/// The server's port.
pub const SERVER_PORT: u16 = 2181;

/// A connection's id, chosen at random by the client.
pub type ConnId = u64;

/// The server's address.
pub fn server_addr() -> SocketAddr {
    SocketAddr::new(node_ip(Node::Server), SERVER_PORT)
}

/// The IP address of a node: 10.0.0.1 for the server, 10.1.x.y for the clients.
pub fn node_ip(node: Node) -> IpAddr {
    match node {
        Node::Server => IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        Node::Client(i) => {
            let [hi, lo] = i.to_be_bytes();
            IpAddr::V4(Ipv4Addr::new(10, 1, hi, lo))
        }
    }
}

/// The client whose IP address `addr` has, if any.
pub fn client_of(addr: SocketAddr) -> Option<u16> {
    match addr.ip() {
        IpAddr::V4(ip) => match ip.octets() {
            [10, 1, hi, lo] => Some(u16::from_be_bytes([hi, lo])),
            _ => None,
        },
        IpAddr::V6(_) => None,
    }
}

/// What a reconnecting client presents to re-attach its session (with SetWatches).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resume {
    /// The session.
    pub session: SessionId,
    /// The last zxid the client saw in a reply.
    pub last_zxid: Zxid,
    /// The watches the client still expects.
    pub watches: WatchSet,
}

/// A client-to-server message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToServer {
    /// Opens the connection (sequence 0): a new session, or `resume` an existing one.
    Connect {
        /// The session timeout the client asks for.
        timeout: Duration,
        /// The session to re-attach.
        resume: Option<Resume>,
    },
    /// A request.
    Request {
        /// The client's id for it.
        op: OpId,
        /// The request.
        request: Request,
    },
    /// Keeps the session alive.
    Ping,
    /// Closes the session.
    Close,
}

/// A server-to-client message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToClient {
    /// The connection is attached to `session` (sequence 0).
    Accepted {
        /// The session.
        session: SessionId,
        /// The negotiated timeout.
        timeout: Duration,
    },
    /// The session to re-attach has expired (sequence 0; the connection ends).
    Expired,
    /// The reply to a request.
    Reply {
        /// The request's id.
        op: OpId,
        /// Its outcome.
        result: OpResult,
        /// The server's zxid when it replied.
        zxid: Zxid,
    },
    /// A watch fired.
    Watch {
        /// The event.
        event: WatchedEvent,
    },
    /// The answer to a ping.
    Pong,
    /// The session is closed.
    Closed,
}

/// One datagram of a connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Datagram<M> {
    /// The `seq`-th message of connection `conn` in this direction.
    Seq {
        /// The connection.
        conn: ConnId,
        /// Its position in the direction's stream.
        seq: u64,
        /// The message.
        body: M,
    },
    /// The server knows no such connection (or just ended it): the client drops it.
    Reset {
        /// The connection.
        conn: ConnId,
    },
}

/// The receiving half of one direction of a connection: delivers messages in sequence
/// order, holding back those after a gap.
#[derive(Debug)]
pub struct Inbox<M> {
    next: u64,
    held: BTreeMap<u64, M>,
}

impl<M> Default for Inbox<M> {
    fn default() -> Self {
        Inbox::starting_at(0)
    }
}

impl<M> Inbox<M> {
    /// An inbox whose next message is the `next`-th.
    pub fn starting_at(next: u64) -> Inbox<M> {
        Inbox {
            next,
            held: BTreeMap::new(),
        }
    }

    /// Takes the `seq`-th message; returns the messages now deliverable, in order. A repeat
    /// of a delivered sequence number is dropped.
    pub fn accept(&mut self, seq: u64, body: M) -> Vec<M> {
        if seq >= self.next {
            self.held.entry(seq).or_insert(body);
        }
        let mut ready = Vec::new();
        while let Some(body) = self.held.remove(&self.next) {
            ready.push(body);
            self.next += 1;
        }
        ready
    }
}

/// The sending side of a node: its endpoint, who it is, and the network faults in force.
#[derive(Clone)]
pub struct Wire {
    endpoint: Endpoint,
    me: Node,
    links: Arc<Mutex<Links>>,
}

impl Wire {
    /// Binds `addr` on the current node, which is `me`.
    pub async fn bind(addr: SocketAddr, me: Node, links: Arc<Mutex<Links>>) -> io::Result<Wire> {
        Ok(Wire {
            endpoint: Endpoint::bind(addr).await?,
            me,
            links,
        })
    }

    /// Sends `datagram` to node `to` at `dst`, unless a fault loses it; a delayed datagram
    /// goes out from a task of its own, so the caller is not held up.
    pub async fn send<M: Send + Sync + 'static>(
        &self,
        to: Node,
        dst: SocketAddr,
        datagram: Datagram<M>,
    ) {
        let verdict = {
            let links = self.links.lock().expect("links lock");
            links.verdict(self.me, to, &mut madsim::rand::thread_rng())
        };
        let payload: Payload = Box::new(datagram);
        match verdict {
            Verdict::Lost => {}
            Verdict::Send(delay) if delay.is_zero() => {
                // A send fails only when the destination is gone, which is a loss too.
                let _ = self.endpoint.send_to_raw(dst, TAG, payload).await;
            }
            Verdict::Send(delay) => {
                let endpoint = self.endpoint.clone();
                madsim::task::spawn(async move {
                    madsim::time::sleep(delay).await;
                    let _ = endpoint.send_to_raw(dst, TAG, payload).await;
                });
            }
        }
    }

    /// A future for the next datagram of type `M` (others are dropped). Keep it across
    /// `select!` rounds: dropping it may lose a datagram.
    pub fn receive<M: Send + 'static>(&self) -> BoxFuture<'static, (Datagram<M>, SocketAddr)> {
        let endpoint = self.endpoint.clone();
        Box::pin(async move {
            loop {
                let Ok((payload, from)) = endpoint.recv_from_raw(TAG).await else {
                    // The endpoint is closed: nothing more will ever arrive.
                    return futures::future::pending().await;
                };
                if let Ok(datagram) = payload.downcast::<Datagram<M>>() {
                    return (*datagram, from);
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inbox_delivers_in_order_and_holds_back_after_a_gap() {
        let mut inbox = Inbox::default();
        assert_eq!(inbox.accept(1, 'b'), Vec::<char>::new());
        assert_eq!(inbox.accept(0, 'a'), ['a', 'b']);
        assert_eq!(inbox.accept(0, 'x'), Vec::<char>::new(), "repeat dropped");
        assert_eq!(inbox.accept(3, 'd'), Vec::<char>::new(), "2 is missing");
        assert_eq!(inbox.accept(4, 'e'), Vec::<char>::new());
        assert_eq!(inbox.accept(2, 'c'), ['c', 'd', 'e']);
    }

    #[test]
    fn addresses_round_trip() {
        assert_eq!(
            client_of(SocketAddr::new(node_ip(Node::Client(300)), 9)),
            Some(300)
        );
        assert_eq!(client_of(server_addr()), None);
    }
}
