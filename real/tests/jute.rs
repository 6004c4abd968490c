//! splitbrain's jute codec against a real ZooKeeper 3.8: a plain `TcpStream` that speaks only
//! `jute` (no ZooKeeper client) runs a session's life, and every reply must decode exactly,
//! with no byte left over. It pins what is on the wire where ZooKeeper's sources leave room
//! for doubt: no body after an `exists` of a missing node, a failed multi's error results,
//! the notification's place before the reply of the write that fired it, and the connect
//! response to an expired session.

mod wire;

use jute::codes::{CreateMode, ErrorCode, EventType, KeeperState, xid};
use jute::multi::{MultiRequest, MultiResponse, MultiResult};
use jute::requests::{
    CheckVersionRequest, CreateRequest, ExistsRequest, GetChildren2Request, GetDataRequest,
    SetDataRequest,
};
use jute::responses::ErrorResponse;
use jute::session::{ConnectResponse, WatcherEvent};
use jute::{ReplyBody, Request, Response};
use real::local::Standalone;
use wire::Connection;

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

    let Response::Create2(parent) = zk.ok(Request::Create2(CreateRequest::open(
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

    let Response::Create2(member) = zk.ok(Request::Create2(CreateRequest::open(
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
            Request::Create(CreateRequest::open("/jute/m", None, CreateMode::Persistent)),
            Request::Check(CheckVersionRequest {
                path: "/jute/missing".to_owned(),
                version: 0,
            }),
            Request::Create(CreateRequest::open("/jute/n", None, CreateMode::Persistent)),
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
    let (_, orphan, length) = zk.call(Request::Create(CreateRequest::open(
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
    let zeroes = ConnectResponse::expired(Some(false));
    assert_eq!(expired, zeroes);
    assert_eq!(again.frame(), None, "the server closed the connection");
}
