//! The server's end of byte streams ([`crate::stream`]): ZooKeeper's wire protocol, cut into
//! frames with [`jute`] and served by the [`frontend`] over the server's tree and session
//! table, so that a client program speaking it meets the same sessions, expiry clock,
//! restarts and faults as the simulator's own clients.
//!
//! A stream is accepted on its `Open`; its first frame is the connect request, every later
//! one a request. The connection closes (end of stream to the client) after a close-session's
//! reply, an expired session's connect response, a refused connect, a frame that does not
//! decode or is over [`jute::frame::MAX_FRAME`], the client's own end of stream, or the
//! session's expiry; the server's exit resets it. Children are listed in an order drawn from
//! the run's seed, as they are to the simulator's own clients.

use std::net::SocketAddr;
use std::time::Duration;

use coordination::zk::SessionId;
use coordination::zk::tree::Fired;
use frontend::Handshake;
use frontend::convert::notification;
use jute::frame::{Splitter, body};
use jute::responses::{GetChildren2Response, GetChildrenResponse};
use jute::session::ConnectRequest;
use jute::{Record, ReplyBody, RequestMessage, Response};
use trace::ServerSession;

use super::{Out, Session, State, shuffle};
use crate::stream::Segment;
use crate::wire::{ConnId, Datagram, Inbox, client_of};

/// A byte stream the server has accepted.
#[derive(Debug)]
pub(super) struct Stream {
    /// The client node.
    pub(super) client: u16,
    /// Its address.
    pub(super) peer: SocketAddr,
    inbox: Inbox<Segment>,
    /// The next sequence number to the client.
    sent: u64,
    frames: Splitter,
    /// The session, once the connect request was accepted.
    session: Option<SessionId>,
}

impl State {
    /// Takes a datagram of a byte stream.
    pub(super) fn on_segment(&mut self, datagram: Datagram<Segment>, from: SocketAddr) -> Vec<Out> {
        let mut out = Vec::new();
        // A reset comes back as the other kind's (see `Wire::receive_either`).
        let (Datagram::Seq { conn, seq, body }, Some(client)) = (datagram, client_of(from)) else {
            return out;
        };
        if self.retired.contains(&conn) {
            out.push((client, from, Datagram::<Segment>::Reset { conn }.into()));
            return out;
        }
        let Some(stream) = self.streams.get_mut(&conn) else {
            match (seq, body) {
                (0, Segment::Open) => self.accept(conn, client, from, &mut out),
                // A stream the server never saw open (its `Open` was lost).
                _ => out.push((client, from, Datagram::<Segment>::Reset { conn }.into())),
            }
            return out;
        };
        let segments = stream.inbox.accept(seq, body);
        for segment in segments {
            match segment {
                // A retransmitted `Open` is a repeat of sequence 0, dropped by the inbox.
                Segment::Open => {}
                Segment::Bytes(bytes) => self.on_bytes(conn, &bytes, &mut out),
                Segment::End => self.close_stream(conn, &mut out),
            }
        }
        out
    }

    /// Accepts stream `conn` from `client` at `peer`: its `Open` is answered.
    fn accept(&mut self, conn: ConnId, client: u16, peer: SocketAddr, out: &mut Vec<Out>) {
        let stream = Stream {
            client,
            peer,
            // Sequence 0 was the `Open` itself.
            inbox: Inbox::starting_at(1),
            sent: 0,
            frames: Splitter::default(),
            session: None,
        };
        self.streams.insert(conn, stream);
        self.transmit(conn, Segment::Open, out);
    }

    /// Serves the whole frames `bytes` completes, until the stream closes.
    fn on_bytes(&mut self, conn: ConnId, bytes: &[u8], out: &mut Vec<Out>) {
        if let Some(stream) = self.streams.get_mut(&conn) {
            stream.frames.push(bytes);
        }
        while let Some(stream) = self.streams.get_mut(&conn) {
            let frame = match stream.frames.next_frame() {
                Ok(Some(frame)) => frame,
                Ok(None) => return,
                // Over-size or negative length: ZooKeeper closes the connection.
                Err(_) => return self.close_stream(conn, out),
            };
            match stream.session {
                None => self.handshake(conn, body(&frame), out),
                Some(session) => self.request(conn, session, body(&frame), out),
            }
        }
    }

    /// Answers the connect request in `frame` (the stream's first frame).
    fn handshake(&mut self, conn: ConnId, frame: &[u8], out: &mut Vec<Out>) {
        let Ok(request) = ConnectRequest::from_bytes(frame) else {
            return self.close_stream(conn, out);
        };
        match self.front.connect(&request) {
            Handshake::Accepted {
                session,
                resumed,
                response,
            } => {
                let timeout = Duration::from_millis(u64::try_from(response.time_out).unwrap_or(0));
                self.attach(conn, session, resumed, timeout);
                self.write(conn, response.to_frame(), out);
            }
            Handshake::Expired { response } => {
                self.write(conn, response.to_frame(), out);
                self.close_stream(conn, out);
            }
            Handshake::Refused { .. } => self.close_stream(conn, out),
        }
    }

    /// Puts `session`, opened or resumed with `timeout` by the front end, on the server's
    /// clock with `conn` as its connection (a resumed session's old one ends).
    fn attach(&mut self, conn: ConnId, session: SessionId, resumed: bool, timeout: Duration) {
        let Some(stream) = self.streams.get_mut(&conn) else {
            return;
        };
        stream.session = Some(session);
        let client = stream.client;
        let deadline = self.time.now() + timeout;
        let old = match self.sessions.get_mut(&session) {
            Some(entry) => {
                entry.timeout = timeout;
                entry.deadline = deadline;
                entry.conn.replace(conn)
            }
            None => {
                let entry = Session::on(client, conn, timeout, deadline);
                self.sessions.insert(session, entry);
                None
            }
        };
        if let Some(old) = old {
            self.detach(old);
        }
        let change = match resumed {
            true => ServerSession::Reattached,
            false => ServerSession::Created,
        };
        self.record_session(session, change);
    }

    /// Serves the request in `frame` for `session`, whose connection is `conn`.
    fn request(&mut self, conn: ConnId, session: SessionId, frame: &[u8], out: &mut Vec<Out>) {
        let Ok(message) = RequestMessage::from_bytes(frame) else {
            return self.close_stream(conn, out);
        };
        if let Some(entry) = self.sessions.get_mut(&session) {
            entry.deadline = self.time.now() + entry.timeout;
        }
        let before = self.tree().zxid();
        let mut served = self.front.serve(session, &message);
        if let ReplyBody::Response(
            Response::GetChildren(GetChildrenResponse { children })
            | Response::GetChildren2(GetChildren2Response { children, .. }),
        ) = &mut served.reply.body
        {
            // In an order drawn from the run's seed, as the simulator's own clients get them.
            shuffle(children);
        }
        let zxid = (self.tree().zxid() != before).then_some(self.tree().zxid());
        // Watch events before the reply that reflects their change.
        self.deliver(served.fired, zxid, out);
        self.write(conn, served.reply.to_frame(), out);
        if served.close {
            if !self.front.sessions().is_live(session) {
                self.forget(session, ServerSession::Closed, out);
            }
            self.close_stream(conn, out);
        }
    }

    /// Sends the notification of `fired` on stream `conn`.
    pub(super) fn notify(&mut self, conn: ConnId, fired: Fired, out: &mut Vec<Out>) {
        self.write(conn, notification(fired).reply.to_frame(), out);
    }

    /// Closes stream `conn`: the client reads end of stream, its session (which lives on)
    /// loses its connection and its watches, as ZooKeeper's do with a closed connection.
    pub(super) fn close_stream(&mut self, conn: ConnId, out: &mut Vec<Out>) {
        self.transmit(conn, Segment::End, out);
        let Some(stream) = self.streams.remove(&conn) else {
            return;
        };
        self.retired.insert(conn);
        let Some(session) = stream.session else {
            return;
        };
        if let Some(entry) = self.sessions.get_mut(&session)
            && entry.conn == Some(conn)
        {
            entry.conn = None;
            self.front.disconnect(session);
        }
    }

    /// Sends `frame` on stream `conn`.
    fn write(&mut self, conn: ConnId, frame: Vec<u8>, out: &mut Vec<Out>) {
        self.transmit(conn, Segment::Bytes(frame), out);
    }

    /// Sends `segment` on stream `conn`, if it is open.
    fn transmit(&mut self, conn: ConnId, segment: Segment, out: &mut Vec<Out>) {
        if let Some(stream) = self.streams.get_mut(&conn) {
            let seq = stream.sent;
            stream.sent += 1;
            let datagram = Datagram::Seq {
                conn,
                seq,
                body: segment,
            };
            out.push((stream.client, stream.peer, datagram.into()));
        }
    }
}
