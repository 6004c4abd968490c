//! A connection to a real ZooKeeper that speaks only jute, over a plain `TcpStream`: what
//! the tests that pin ZooKeeper's wire behaviour share.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use jute::codes::{OpCode, xid};
use jute::frame::{Splitter, body};
use jute::session::{ConnectRequest, ConnectResponse, WatcherEvent};
use jute::{Record, Reply, ReplyBody, Request, RequestMessage, Response};
use real::local::Standalone;

/// The bound on any read.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// One connection, speaking jute.
pub struct Connection {
    stream: TcpStream,
    frames: Splitter,
    next_xid: i32,
}

impl Connection {
    pub fn open(server: &Standalone) -> Connection {
        let stream = TcpStream::connect(server.client_addr()).expect("connect");
        stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
        Connection {
            stream,
            frames: Splitter::default(),
            next_xid: 1,
        }
    }

    /// The handshake: a client that saw no zxid asks for a 4 s session `session_id` (0 for
    /// a new one); the server's response.
    pub fn handshake(&mut self, session_id: i64, passwd: Vec<u8>) -> ConnectResponse {
        let connect = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            time_out: 4_000,
            session_id,
            passwd,
            read_only: Some(false),
        };
        self.connect(&connect).expect("a connect response")
    }

    /// Sends `request` and reads the server's response; `None` if the server closed the
    /// connection without one.
    pub fn connect(&mut self, request: &ConnectRequest) -> Option<ConnectResponse> {
        self.stream.write_all(&request.to_frame()).unwrap();
        let frame = self.frame()?;
        Some(ConnectResponse::from_bytes(body(&frame)).unwrap())
    }

    /// The next frame from the server, `None` at the end of the stream.
    pub fn frame(&mut self) -> Option<Vec<u8>> {
        let mut chunk = [0; 7];
        loop {
            if let Some(frame) = self.frames.next_frame().unwrap() {
                return Some(frame);
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return None,
                Ok(n) => self.frames.push(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => panic!("reading from the server: {e}"),
            }
        }
    }

    /// Sends `request` (with its own xid, or the next one) and returns its xid.
    pub fn send(&mut self, request: Request) -> i32 {
        let xid = match request {
            Request::Ping => xid::PING,
            Request::SetWatches(_) | Request::SetWatches2(_) => xid::SET_WATCHES,
            _ => {
                self.next_xid += 1;
                self.next_xid - 1
            }
        };
        let op = request.op();
        let message = RequestMessage { xid, request };
        self.stream.write_all(&message.to_frame()).unwrap();
        assert_eq!(
            RequestMessage::from_bytes(body(&message.to_frame())).unwrap(),
            message
        );
        assert_eq!(OpCode::try_from(op).map(i32::from), Ok(op));
        xid
    }

    /// The replies up to the answer of `request`: the notifications before it, and it.
    pub fn call(&mut self, request: Request) -> (Vec<WatcherEvent>, Reply, usize) {
        let op = OpCode::try_from(request.op()).ok();
        let xid = self.send(request);
        let mut events = Vec::new();
        loop {
            let frame = self.frame().expect("a reply");
            let reply = Reply::from_bytes(body(&frame), op).unwrap();
            assert_eq!(reply.to_frame(), frame, "re-encoded byte for byte");
            match reply.body {
                ReplyBody::Notification(event) => {
                    assert_eq!(reply.header.xid, xid::NOTIFICATION);
                    events.push(event);
                }
                ReplyBody::Response(_) => {
                    assert_eq!(reply.header.xid, xid);
                    return (events, reply, body(&frame).len());
                }
            }
        }
    }

    /// The response to `request`, with no notification before it and no error.
    pub fn ok(&mut self, request: Request) -> Response {
        let (events, reply, _) = self.call(request);
        assert_eq!(events, []);
        assert_eq!(reply.header.err, 0, "{reply:?}");
        let ReplyBody::Response(response) = reply.body else {
            unreachable!("a response")
        };
        response
    }
}
