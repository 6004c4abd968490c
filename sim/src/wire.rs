//! The client–server wire: ZooKeeper's protocol carried over the run's datagrams
//! ([`crate::net`]).
//!
//! madsim's reliable connections never lose data and retransmit on a backoff of their own
//! (1 ms up to 10 s), unlike TCP. So each connection is our own, carried over datagrams: a
//! random 64-bit id chosen by the client, and per-direction sequence numbers.
//! The receiver delivers a direction in sequence order and holds back anything after a gap.
//!
//! Retransmission is TCP's (Linux's constants): a datagram lost to a fault is sent again
//! after the retransmission timeout, which starts at the 200 ms minimum RTO (1 s for a
//! connection's opening datagram, the SYN's initial RTO) and doubles on every loss, up to
//! 15 retransmissions. So short loss is late delivery on a surviving connection, a partition
//! is a silent blackhole that only the client's read timeout notices, and what was sent
//! before a partition may still arrive after it ends, even on a connection its sender has
//! given up (a closed socket's kernel keeps retransmitting). The sender learns of a loss
//! without acknowledgements (the simulation knows the link's verdict), which is TCP's
//! timing without its acknowledgement traffic.
//!
//! A datagram that reaches a host whose process is down is answered by a reset (a refused
//! connection, or a connection the host no longer knows), which the wire hands its sender
//! as a [`Datagram::Reset`].

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use coordination::ids::OpId;
use coordination::zk::watches::WatchSet;
use coordination::zk::{OpResult, Request, SessionId, WatchedEvent, Zxid};
use futures::future::{BoxFuture, Either};
use madsim::time::Instant;
use scenarios::fault::Node;

use crate::links::Verdict;
use crate::net::{Network, Payload, Socket};

/// Linux's minimum retransmission timeout (`TCP_RTO_MIN`): on a LAN, where round trips are
/// far shorter, every segment's first RTO.
pub const MIN_RTO: Duration = Duration::from_millis(200);

/// Linux's initial retransmission timeout of a connection's opening segment
/// (`TCP_TIMEOUT_INIT`, the SYN's).
pub const SYN_RTO: Duration = Duration::from_secs(1);

/// Linux's largest retransmission timeout (`TCP_RTO_MAX`).
const MAX_RTO: Duration = Duration::from_secs(120);

/// Retransmissions of a segment before TCP gives up (Linux's `tcp_retries2`).
const MAX_RETRANSMISSIONS: u32 = 15;

/// The server's port.
pub const SERVER_PORT: u16 = 2181;

/// The port servers of an ensemble talk to one another on (ZooKeeper's quorum port).
pub const QUORUM_PORT: u16 = 2888;

/// A connection's id, chosen at random by the client.
pub type ConnId = u64;

/// The server's address.
pub fn server_addr() -> SocketAddr {
    SocketAddr::new(node_ip(Node::Server), SERVER_PORT)
}

/// The address server `n` of an ensemble serves clients at on `port`: server 0 at the
/// standalone server's address, server `n` at 10.0.0.(n + 1).
pub fn member_addr(n: u16, port: u16) -> SocketAddr {
    let [a, b, c, d] = match node_ip(Node::Server) {
        IpAddr::V4(ip) => ip.octets(),
        IpAddr::V6(_) => unreachable!("the server's address is IPv4"),
    };
    let host = u32::from_be_bytes([a, b, c, d]) + u32::from(n);
    SocketAddr::new(IpAddr::V4(Ipv4Addr::from(host)), port)
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

/// The server of an ensemble whose IP address `addr` has (server `n` at
/// [`member_addr`]`(n, _)`), if any.
pub fn member_of(addr: SocketAddr) -> Option<u16> {
    match addr.ip() {
        IpAddr::V4(ip) => match ip.octets() {
            [10, 0, 0, host] => host.checked_sub(1).map(u16::from),
            _ => None,
        },
        IpAddr::V6(_) => None,
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
    /// The connection ended at the server's end (its process exited or ended it, it knows no
    /// such connection, or its host refused it): the client drops it.
    Reset {
        /// The connection.
        conn: ConnId,
    },
}

impl<M> Datagram<M> {
    /// The connection the datagram belongs to.
    pub fn conn(&self) -> ConnId {
        match *self {
            Datagram::Seq { conn, .. } | Datagram::Reset { conn } => conn,
        }
    }
}

/// A datagram of one of two kinds of connection served on one socket.
pub type EitherDatagram<A, B> = Either<Datagram<A>, Datagram<B>>;

/// How a datagram is retransmitted: its first RTO, and when its sender stops trying.
#[derive(Clone, Copy, Debug)]
struct Retry {
    rto: Duration,
    until: Option<Instant>,
}

/// The reset a host whose process is down sends back for a datagram of connection `conn`.
struct Refusal {
    conn: ConnId,
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
        if seq == self.next && self.held.is_empty() {
            // In order with nothing held back, as almost every message is.
            self.next += 1;
            return vec![body];
        }
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

/// A node's end of the wire: its socket (where resets for its datagrams are handed back
/// too), who it is, and the run's network.
#[derive(Clone)]
pub struct Wire {
    socket: Arc<Socket>,
    me: Node,
    network: Network,
}

impl Wire {
    /// Binds `me`'s address at `port` (0: a fresh one) on `network`.
    pub fn bind(port: u16, me: Node, network: Network) -> Wire {
        Wire::bind_at(SocketAddr::new(node_ip(me), port), me, network)
    }

    /// Binds `addr` for node `me` (a server of an ensemble has an address of its own) on
    /// `network`.
    pub fn bind_at(addr: SocketAddr, me: Node, network: Network) -> Wire {
        let socket = network.bind(addr);
        Wire {
            socket: Arc::new(socket),
            me,
            network,
        }
    }

    /// Sends `datagram`, a segment of an open connection, to node `to` at `dst`,
    /// retransmitting it from the minimum RTO while faults lose it (also after its sender
    /// has given the connection up, as a closed socket's kernel does).
    pub fn send<M: Send + Sync + 'static>(&self, to: Node, dst: SocketAddr, datagram: Datagram<M>) {
        let retry = Retry {
            rto: MIN_RTO,
            until: None,
        };
        self.transmit(to, dst, datagram, retry);
    }

    /// Sends `datagram`, the opening segment of a connection, to node `to` at `dst`,
    /// retransmitting it from the SYN's initial RTO while faults lose it, but not after
    /// `until`, when its sender abandons the attempt (closing a socket that is still
    /// connecting stops its SYNs).
    pub fn open<M: Send + Sync + 'static>(
        &self,
        to: Node,
        dst: SocketAddr,
        datagram: Datagram<M>,
        until: Instant,
    ) {
        let retry = Retry {
            rto: SYN_RTO,
            until: Some(until),
        };
        self.transmit(to, dst, datagram, retry);
    }

    /// Sends `datagram` from server `from` of an ensemble to server `to` at `dst`, delivered
    /// no earlier than `earliest` (the link's previous datagram: the servers' links keep their
    /// order, as TCP does) nor before `to`'s lag from its peers and the link's slowness (a
    /// drawn delay and lost transmissions' timeouts) have passed; returns when it is
    /// delivered (`None`: nobody listens there), or gives the datagram back when the link is
    /// cut (a server cut off from its peers, or the two split apart), for its sender to hold
    /// (see `sim/src/server/member.rs`).
    pub fn post<M: Send + Sync + 'static>(
        &self,
        (from, to): (u16, u16),
        dst: SocketAddr,
        datagram: Datagram<M>,
        earliest: Option<Instant>,
    ) -> Result<Option<Instant>, Datagram<M>> {
        let lag = {
            let mut links = self.network.links();
            if !links.peers_linked(from, to) {
                return Err(datagram);
            }
            links.peer_lag(to) + links.peer_link_delay(from, to)
        };
        let earliest = match earliest {
            _ if lag.is_zero() => earliest,
            Some(earliest) => Some(earliest.max(self.now() + lag)),
            None => Some(self.now() + lag),
        };
        Ok(self
            .socket
            .send_no_earlier(dst, Box::new(datagram), earliest))
    }

    /// Starts the faults armed to start when this client sends `request` (see
    /// the simulator's `trigger` module); call it just before sending the request.
    pub fn before_request(&self, request: &Request) {
        if let Node::Client(client) = self.me {
            self.network.before_request(client, request);
        }
    }

    /// Now, on the simulation's clock.
    pub fn now(&self) -> Instant {
        self.network.time().now()
    }

    /// An alarm for the task that owns this end of the wire.
    pub fn alarm(&self) -> crate::alarm::Alarm {
        crate::alarm::Alarm::new(self.network.time().clone())
    }

    /// The fate of a datagram to node `to` at `dst`: lost when it is between a client and a
    /// server of an ensemble that `cut_from_server` cuts apart, else as the link table says.
    fn verdict(&self, to: Node, dst: SocketAddr) -> Verdict {
        let mut links = self.network.links();
        let (client, server) = match (self.me, to) {
            (Node::Client(client), Node::Server) => (client, member_of(dst)),
            (Node::Server, Node::Client(client)) => (client, member_of(self.socket.local_addr())),
            _ => return links.verdict(self.me, to),
        };
        if server.is_some_and(|server| links.client_cut_from(client, server)) {
            return Verdict::Lost;
        }
        links.verdict(self.me, to)
    }

    /// Sends at once when nothing is in the way; otherwise a task of its own carries the
    /// datagram to its fate, so the caller is not held up.
    fn transmit<M: Send + Sync + 'static>(
        &self,
        to: Node,
        dst: SocketAddr,
        datagram: Datagram<M>,
        retry: Retry,
    ) {
        match self.verdict(to, dst) {
            Verdict::Send(delay) if delay.is_zero() => self.deliver(dst, datagram),
            verdict => {
                let wire = self.clone();
                madsim::task::spawn(wire.carry(verdict, to, dst, datagram, retry));
            }
        }
    }

    /// Carries `datagram`, whose first transmission met `verdict`, to delivery, refusal or
    /// giving up: each loss waits the RTO (doubling) before the next transmission.
    async fn carry<M: Send + Sync + 'static>(
        self,
        mut verdict: Verdict,
        to: Node,
        dst: SocketAddr,
        datagram: Datagram<M>,
        Retry { mut rto, until }: Retry,
    ) {
        let mut retransmissions = 0;
        loop {
            match verdict {
                Verdict::Send(delay) => {
                    madsim::time::sleep(delay).await;
                    return self.deliver(dst, datagram);
                }
                Verdict::Refused(delay) => {
                    madsim::time::sleep(delay).await;
                    return self.refuse(datagram.conn());
                }
                Verdict::Lost
                    if retransmissions == MAX_RETRANSMISSIONS
                        || until.is_some_and(|until| self.now() + rto >= until) =>
                {
                    return;
                }
                Verdict::Lost => {
                    madsim::time::sleep(rto).await;
                    rto = (rto * 2).min(MAX_RTO);
                    retransmissions += 1;
                    verdict = self.verdict(to, dst);
                }
            }
        }
    }

    /// Hands `datagram` to the network for `dst`; when nothing listens there, the host
    /// answers with a reset, as TCP's does for a closed port.
    fn deliver<M: Send + Sync + 'static>(&self, dst: SocketAddr, datagram: Datagram<M>) {
        let conn = datagram.conn();
        if !self.socket.send_to(dst, Box::new(datagram)) {
            self.refuse(conn);
        }
    }

    /// Hands this node the reset its datagram of connection `conn` met.
    fn refuse(&self, conn: ConnId) {
        self.socket
            .send_to(self.socket.local_addr(), Box::new(Refusal { conn }));
    }

    /// A future for the next datagram of type `M`, or a reset for one this node sent
    /// (others are dropped). Keep it across `select!` rounds: dropping it may lose a
    /// datagram.
    pub fn receive<M: Send + 'static>(&self) -> BoxFuture<'static, (Datagram<M>, SocketAddr)> {
        self.receive_as(take::<M>, |conn| Datagram::Reset { conn })
    }

    /// A future for the next datagram of type `A` or `B`, for a node that serves connections
    /// of both kinds on one socket; a reset for one this node sent comes as an `A`. Keep it
    /// as [`Wire::receive`]'s.
    pub fn receive_either<A: Send + 'static, B: Send + 'static>(
        &self,
    ) -> BoxFuture<'static, (EitherDatagram<A, B>, SocketAddr)> {
        let open = |payload: Payload| match take::<A>(payload) {
            Ok(a) => Ok(Either::Left(a)),
            Err(payload) => take::<B>(payload).map(Either::Right),
        };
        self.receive_as(open, |conn| Either::Left(Datagram::Reset { conn }))
    }

    /// The next datagram `open` takes, or `refused` for a reset this node's datagram met
    /// (others are dropped).
    fn receive_as<T: Send + 'static>(
        &self,
        open: fn(Payload) -> Result<T, Payload>,
        refused: fn(ConnId) -> T,
    ) -> BoxFuture<'static, (T, SocketAddr)> {
        let socket = self.socket.clone();
        Box::pin(async move {
            loop {
                let (payload, from) = socket.recv_from().await;
                match open(payload) {
                    Ok(datagram) => return (datagram, from),
                    Err(payload) => {
                        if let Ok(refusal) = payload.downcast::<Refusal>() {
                            return (refused(refusal.conn), from);
                        }
                    }
                }
            }
        })
    }
}

/// `payload` as a datagram of type `M`, or back as it was.
fn take<M: 'static>(payload: Payload) -> Result<Datagram<M>, Payload> {
    payload.downcast::<Datagram<M>>().map(|datagram| *datagram)
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
