//! splitbrain's jute codec against a real ZooKeeper 3.8: a plain `TcpStream` that speaks only
//! `jute` (no ZooKeeper client) runs a session's life, and every reply must decode exactly,
//! with no byte left over. It pins what is on the wire where ZooKeeper's sources leave room
//! for doubt: no body after an `exists` of a missing node, a failed multi's error results,
//! the notification's place before the reply of the write that fired it, and the connect
//! response to an expired session.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use jute::codes::{CreateMode, ErrorCode, EventType, KeeperState, OpCode, xid};
use jute::data::Acl;
use jute::frame::{Splitter, body};
use jute::multi::{MultiRequest, MultiResponse, MultiResult};
use jute::requests::{
    CheckVersionRequest, CreateRequest, ExistsRequest, GetChildren2Request, GetDataRequest,
    SetDataRequest,
};
use jute::responses::ErrorResponse;
use jute::session::{ConnectRequest, ConnectResponse, WatcherEvent};
use jute::{Record, Reply, ReplyBody, Request, RequestMessage, Response};
use real::local::Standalone;

/// The bound on any read.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// One connection, speaking jute.
struct Connection {
    stream: TcpStream,
    frames: Splitter,
    next_xid: i32,
}

impl Connection {
    fn open(server: &Standalone) -> Connection {
        let stream = TcpStream::connect(server.client_addr()).expect("connect");
        stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
        Connection {
            stream,
            frames: Splitter::default(),
            next_xid: 1,
        }
    }

    /// The handshake: the connect request and the server's response.
    fn handshake(&mut self, session_id: i64, passwd: Vec<u8>) -> ConnectResponse {
        let connect = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            time_out: 4_000,
            session_id,
            passwd,
            read_only: Some(false),
        };
        self.stream.write_all(&connect.to_frame()).unwrap();
        let frame = self.frame().expect("a connect response");
        ConnectResponse::from_bytes(body(&frame)).unwrap()
    }

    /// The next frame from the server, `None` at the end of the stream.
    fn frame(&mut self) -> Option<Vec<u8>> {
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
    fn send(&mut self, request: Request) -> i32 {
        let xid = match request {
            Request::Ping => xid::PING,
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
    fn call(&mut self, request: Request) -> (Vec<WatcherEvent>, Reply, usize) {
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
    fn ok(&mut self, request: Request) -> Response {
        let (events, reply, _) = self.call(request);
        assert_eq!(events, []);
        assert_eq!(reply.header.err, 0, "{reply:?}");
        let ReplyBody::Response(response) = reply.body else {
            unreachable!("a response")
        };
        response
    }
}

fn create(path: &str, data: Option<&[u8]>, mode: CreateMode) -> CreateRequest {
    CreateRequest {
        path: path.to_owned(),
        data: data.map(<[u8]>::to_vec),
        acl: Acl::open_unsafe(),
        flags: mode.into(),
    }
}

/// The length of a reply header: a reply with nothing after it.
const HEADER_ONLY: usize = 4 + 8 + 4;

#[test]
#[ignore = "needs ZooKeeper (Debian's zookeeper package)"]
fn a_session_s_life_decodes_exactly_against_zookeeper() {
    let _serial = real::testing::one_server_at_a_time();
    let server = Standalone::start().unwrap_or_else(|e| panic!("{e}"));
    let mut zk = Connection::open(&server);

    let session = zk.handshake(0, vec![0; 16]);
    assert_eq!(session.protocol_version, 0);
    assert_ne!(session.session_id, 0);
    assert_eq!(session.passwd.len(), 16);
    assert_eq!(session.time_out, 4_000, "within the 200 ms tick's 0.4-4 s");
    assert_eq!(session.read_only, Some(false), "answered to a new client");

    // A ping: xid -2, no body.
    let (_, pong, length) = zk.call(Request::Ping);
    assert_eq!((pong.header.xid, pong.header.err), (xid::PING, 0));
    assert_eq!(pong.body, ReplyBody::Response(Response::Empty));
    assert_eq!(length, HEADER_ONLY);

    let Response::Create2(parent) = zk.ok(Request::Create2(create(
        "/jute",
        Some(b"hello"),
        CreateMode::Persistent,
    ))) else {
        panic!("create2's response")
    };
    assert_eq!(parent.path, "/jute");
    assert_eq!(
        (parent.stat.data_length, parent.stat.ephemeral_owner),
        (5, 0)
    );
    assert_eq!(parent.stat.czxid, parent.stat.mzxid);

    let Response::Create2(member) = zk.ok(Request::Create2(create(
        "/jute/e-",
        None,
        CreateMode::EphemeralSequential,
    ))) else {
        panic!("create2's response")
    };
    assert_eq!(member.path, "/jute/e-0000000000");
    assert_eq!(member.stat.ephemeral_owner, session.session_id);
    assert_eq!(member.stat.data_length, 0);

    // Null data stays null.
    let read_member = GetDataRequest {
        path: member.path.clone(),
        watch: false,
    };
    let Response::GetData(null) = zk.ok(Request::GetData(read_member)) else {
        panic!("getData's response")
    };
    assert_eq!((null.data, null.stat), (None, member.stat));

    let Response::GetChildren2(listing) = zk.ok(Request::GetChildren2(GetChildren2Request {
        path: "/jute".to_owned(),
        watch: false,
    })) else {
        panic!("getChildren2's response")
    };
    assert_eq!(listing.children, ["e-0000000000"]);
    assert_eq!(listing.stat.num_children, 1);

    // exists on a missing node: NoNode and nothing after the header (no null stat).
    let (_, missing, length) = zk.call(Request::Exists(ExistsRequest {
        path: "/jute/missing".to_owned(),
        watch: true,
    }));
    assert_eq!(
        ErrorCode::try_from(missing.header.err),
        Ok(ErrorCode::NoNode)
    );
    assert_eq!(length, HEADER_ONLY);

    // A data watch, then a write from the same session: the notification comes first.
    let Response::GetData(data) = zk.ok(Request::GetData(GetDataRequest {
        path: "/jute".to_owned(),
        watch: true,
    })) else {
        panic!("getData's response")
    };
    assert_eq!(data.data.as_deref(), Some(&b"hello"[..]));
    let (events, written, _) = zk.call(Request::SetData(SetDataRequest {
        path: "/jute".to_owned(),
        data: Some(b"world".to_vec()),
        version: 0,
    }));
    let changed = WatcherEvent {
        event_type: EventType::NodeDataChanged.into(),
        state: KeeperState::SyncConnected.into(),
        path: "/jute".to_owned(),
    };
    assert_eq!(events, [changed]);
    let ReplyBody::Response(Response::SetData(written)) = written.body else {
        panic!("setData's response: {written:?}")
    };
    assert_eq!(written.stat.version, 1);

    // A multi whose second op fails: err 0 in the header, and an error result for every op.
    let (_, failed, _) = zk.call(Request::Multi(MultiRequest {
        ops: vec![
            Request::Create(create("/jute/m", None, CreateMode::Persistent)),
            Request::Check(CheckVersionRequest {
                path: "/jute/missing".to_owned(),
                version: 0,
            }),
            Request::Create(create("/jute/n", None, CreateMode::Persistent)),
        ],
    }));
    assert_eq!(failed.header.err, 0);
    let error = |code: ErrorCode| MultiResult::Error(ErrorResponse { err: code.into() });
    let results = vec![
        error(ErrorCode::Ok),
        error(ErrorCode::NoNode),
        error(ErrorCode::RuntimeInconsistency),
    ];
    let expected = Response::Multi(MultiResponse { results });
    assert_eq!(failed.body, ReplyBody::Response(expected));

    // A create under a missing parent: NoNode, no body.
    let (_, orphan, length) = zk.call(Request::Create(create(
        "/nowhere/child",
        None,
        CreateMode::Persistent,
    )));
    assert_eq!(
        ErrorCode::try_from(orphan.header.err),
        Ok(ErrorCode::NoNode)
    );
    assert_eq!(length, HEADER_ONLY);

    // closeSession: answered, then the server closes the connection.
    let (_, closed, length) = zk.call(Request::CloseSession);
    assert_eq!((closed.header.err, length), (0, HEADER_ONLY));
    assert_eq!(zk.frame(), None, "the server closed the connection");

    // The closed session, resumed: a connect response of zeroes, then the end of the stream.
    let mut again = Connection::open(&server);
    let expired = again.handshake(session.session_id, session.passwd.clone());
    let zeroes = ConnectResponse {
        protocol_version: 0,
        time_out: 0,
        session_id: 0,
        passwd: vec![0; 16],
        read_only: Some(false),
    };
    assert_eq!(expired, zeroes);
    assert_eq!(again.frame(), None, "the server closed the connection");
}
