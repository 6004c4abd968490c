//! Byte streams over the wire ([`crate::wire`]): what a client program's TCP connection is
//! inside the simulation, with the wire's timing and faults (retransmission, blackholes under
//! partition, resets from a host whose process is down).
//!
//! A stream is a connection of [`Segment`]s: the client's [`Segment::Open`] (its sequence 0,
//! the SYN) is answered by the server's (the SYN-ACK), then each direction carries what was
//! written, in order, and a [`Segment::End`] (the FIN) after which its reader sees end of
//! stream. [`SimDialer`] opens them from a client node, for the I/O shims through
//! [`simio::Dial`]; the server accepts them in `server::protocol`.

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use futures::io::{AsyncRead, AsyncWrite};
use scenarios::fault::Node;

use crate::net::Network;
use crate::wire::{ConnId, Datagram, Inbox, Wire, client_of, node_ip};

/// How long a connect waits for its answer before it fails: Linux's SYN retransmissions
/// (`tcp_syn_retries`, 6, from the 1 s initial RTO doubling) and the last one's wait,
/// 1 + 2 + … + 64 s.
pub const CONNECT_GIVE_UP: Duration = Duration::from_secs(127);

/// One segment of a byte stream, in one direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// Opens the stream (the client's SYN, the server's SYN-ACK): each direction's
    /// sequence 0.
    Open,
    /// Bytes written, in order.
    Bytes(Vec<u8>),
    /// Nothing more comes this way: the reader sees end of stream after what came before.
    End,
}

/// Opens byte streams from one client node, over the run's network: the dialer the
/// simulator puts in scope for that node's code ([`simio::Dialing`]).
#[derive(Clone)]
pub struct SimDialer {
    me: Node,
    network: Network,
}

impl SimDialer {
    /// A dialer for node `me` over the run's `network`.
    pub fn new(me: Node, network: Network) -> SimDialer {
        SimDialer { me, network }
    }

    /// Opens a stream to `addr`: a new socket, its `Open`, and the peer's answer (or a
    /// reset: refused; or nothing for [`CONNECT_GIVE_UP`]: timed out).
    pub async fn connect(&self, addr: SocketAddr) -> io::Result<SimStream> {
        let Some(to) = node_at(addr) else {
            let message = format!("no simulated host at {addr}");
            return Err(io::Error::new(io::ErrorKind::HostUnreachable, message));
        };
        let wire = Wire::bind(0, self.me, self.network.clone());
        let conn: ConnId = madsim::rand::random();
        let until = wire.now() + CONNECT_GIVE_UP;
        let open = Datagram::Seq {
            conn,
            seq: 0,
            body: Segment::Open,
        };
        wire.open(to, addr, open, until);
        let mut stream = SimStream {
            receive: wire.receive::<Segment>(),
            wire,
            conn,
            to,
            addr,
            sent: 1,
            inbox: Inbox::default(),
            opened: false,
            readable: VecDeque::new(),
            end: None,
            shut: false,
        };
        let answered = std::future::poll_fn(|cx| stream.poll_open(cx));
        match madsim::time::timeout(CONNECT_GIVE_UP, answered).await {
            Ok(Ok(())) => Ok(stream),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("connecting to {addr}: no answer"),
            )),
        }
    }
}

impl simio::Dial for SimDialer {
    fn dial(&self, addr: SocketAddr) -> simio::Connecting {
        let dialer = self.clone();
        async move {
            let stream = dialer.connect(addr).await?;
            Ok(Box::new(stream) as Box<dyn simio::Connection>)
        }
        .boxed()
    }
}

/// The node whose address `addr` is, if any.
fn node_at(addr: SocketAddr) -> Option<Node> {
    if addr.ip() == node_ip(Node::Server) {
        return Some(Node::Server);
    }
    client_of(addr).map(Node::Client)
}

/// How a stream's reading ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// The peer sent its `End`: end of stream once what came before is read.
    Closed,
    /// A reset (the peer's process is down or no longer knows the stream).
    Reset,
}

/// The client's end of a byte stream, as a TCP socket behaves: a write sends at once, a
/// read takes what has arrived in order, a reset is [`io::ErrorKind::ConnectionReset`], and
/// closing (or dropping) sends the peer end of stream.
pub struct SimStream {
    wire: Wire,
    conn: ConnId,
    to: Node,
    addr: SocketAddr,
    /// The next sequence number this way.
    sent: u64,
    inbox: Inbox<Segment>,
    /// Whether the peer's `Open` has arrived.
    opened: bool,
    /// Bytes arrived and not yet read.
    readable: VecDeque<u8>,
    end: Option<End>,
    /// Whether this end has sent its `End`.
    shut: bool,
    receive: BoxFuture<'static, (Datagram<Segment>, SocketAddr)>,
}

impl SimStream {
    /// Takes the datagrams that have arrived, until none is ready; `Pending` then (with the
    /// task to be woken by the next).
    fn poll_arrivals(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        while let Poll::Ready((datagram, _)) = self.receive.poll_unpin(cx) {
            self.receive = self.wire.receive::<Segment>();
            self.on_datagram(datagram);
            if self.end.is_some() {
                return Poll::Ready(());
            }
        }
        Poll::Pending
    }

    fn on_datagram(&mut self, datagram: Datagram<Segment>) {
        match datagram {
            Datagram::Seq { conn, seq, body } if conn == self.conn && self.end.is_none() => {
                for segment in self.inbox.accept(seq, body) {
                    match segment {
                        Segment::Open => self.opened = true,
                        Segment::Bytes(bytes) => self.readable.extend(bytes),
                        Segment::End => self.end = Some(End::Closed),
                    }
                }
            }
            Datagram::Reset { conn } if conn == self.conn && self.end.is_none() => {
                self.end = Some(End::Reset);
            }
            // An older socket's, or after the end.
            _ => {}
        }
    }

    /// Ready once the peer answered the `Open` (a reset: refused).
    fn poll_open(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            if self.opened {
                return Poll::Ready(Ok(()));
            }
            if self.end.is_some() {
                let message = format!("connecting to {}: refused", self.addr);
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    message,
                )));
            }
            if self.poll_arrivals(cx).is_pending() && !self.opened {
                return Poll::Pending;
            }
        }
    }

    fn reset(&self) -> io::Error {
        let message = format!("connection to {} reset", self.addr);
        io::Error::new(io::ErrorKind::ConnectionReset, message)
    }

    fn send(&mut self, body: Segment) {
        let datagram = Datagram::Seq {
            conn: self.conn,
            seq: self.sent,
            body,
        };
        self.sent += 1;
        self.wire.send(self.to, self.addr, datagram);
    }

    /// Sends this end's `End`, once, on a stream that opened and was not reset.
    fn shut(&mut self) {
        if self.opened && !self.shut && self.end != Some(End::Reset) {
            self.shut = true;
            self.send(Segment::End);
        }
    }
}

impl AsyncRead for SimStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        loop {
            if !this.readable.is_empty() || buf.is_empty() {
                let n = buf.len().min(this.readable.len());
                for (slot, byte) in buf.iter_mut().zip(this.readable.drain(..n)) {
                    *slot = byte;
                }
                return Poll::Ready(Ok(n));
            }
            match this.end {
                Some(End::Closed) => return Poll::Ready(Ok(0)),
                Some(End::Reset) => return Poll::Ready(Err(this.reset())),
                None => {}
            }
            if this.poll_arrivals(cx).is_pending() && this.readable.is_empty() {
                return Poll::Pending;
            }
        }
    }
}

impl AsyncWrite for SimStream {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.end == Some(End::Reset) {
            return Poll::Ready(Err(this.reset()));
        }
        if this.shut {
            let message = format!("connection to {} closed for writing", this.addr);
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, message)));
        }
        if !buf.is_empty() {
            this.send(Segment::Bytes(buf.to_vec()));
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().shut();
        Poll::Ready(Ok(()))
    }
}

impl Drop for SimStream {
    /// A socket closed without a shutdown still sends its end of stream.
    fn drop(&mut self) {
        self.shut();
    }
}

impl fmt::Debug for SimStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimStream")
            .field("conn", &self.conn)
            .field("to", &self.addr)
            .field("sent", &self.sent)
            .field("readable", &self.readable.len())
            .field("end", &self.end)
            .field("shut", &self.shut)
            .finish()
    }
}
