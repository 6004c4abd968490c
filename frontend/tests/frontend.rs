//! The front end, op by op: what ZooKeeper 3.8 answers (pinned against a real server by
//! `real/tests/jute.rs` and `real/tests/frontend.rs`), from the shared tree.

use coordination::zk::SessionId;
use frontend::sessions::password;
use frontend::{Delivery, FrontEnd, Handshake, Limits, Output};
use jute::codes::{CreateMode, ErrorCode, EventType, KeeperState, xid};
use jute::data::Stat;
use jute::multi::{MultiRequest, MultiResponse, MultiResult};
use jute::requests::{CreateRequest, GetChildren2Request, RemoveWatchesRequest, SyncRequest};
use jute::responses::{
    Create2Response, CreateResponse, ErrorResponse, GetChildren2Response, GetChildrenResponse,
    GetDataResponse, SyncResponse,
};
use jute::session::{ConnectRequest, ConnectResponse, SetWatches, SetWatches2, WatcherEvent};
use jute::{ReplyBody, Request, RequestMessage, Response};

fn server() -> FrontEnd {
    FrontEnd::new(Limits::from_tick(200))
}

fn connect_request(session_id: i64, passwd: Vec<u8>, last_zxid_seen: i64) -> ConnectRequest {
    ConnectRequest {
        protocol_version: 0,
        last_zxid_seen,
        time_out: 4_000,
        session_id,
        passwd,
        read_only: Some(false),
    }
}

/// A new session's id.
fn open(zk: &mut FrontEnd) -> SessionId {
    match zk.connect(&connect_request(0, vec![0; 16], 0)) {
        Handshake::Accepted { session, .. } => session,
        other => panic!("a new session: {other:?}"),
    }
}

/// The reply to `request` from `session` (its xid is 1), the notifications before it.
fn call(zk: &mut FrontEnd, session: SessionId, request: Request) -> (Vec<Delivery>, i32, Response) {
    let Output {
        mut deliveries,
        close,
    } = zk.receive(session, &RequestMessage { xid: 1, request });
    assert!(!close);
    let reply = deliveries.pop().expect("a reply");
    assert_eq!((reply.session, reply.reply.header.xid), (session, 1));
    assert_eq!(reply.reply.header.zxid, zk.tree().zxid().0 as i64);
    let ReplyBody::Response(response) = reply.reply.body else {
        panic!("a response")
    };
    if reply.reply.header.err != 0 {
        assert_eq!(response, Response::Empty, "an error has no body");
    }
    (deliveries, reply.reply.header.err, response)
}

/// The response to `request`, which fired nothing and did not fail.
fn ok(zk: &mut FrontEnd, session: SessionId, request: Request) -> Response {
    let (fired, err, response) = call(zk, session, request);
    assert_eq!((fired, err), (vec![], 0));
    response
}

/// The error `request` failed with.
fn fails(zk: &mut FrontEnd, session: SessionId, request: Request) -> ErrorCode {
    let (_, err, _) = call(zk, session, request);
    ErrorCode::try_from(err).unwrap()
}

fn create2(path: &str, mode: CreateMode) -> Request {
    Request::Create2(CreateRequest::open(path, Some(b"x"), mode))
}

/// The path and stat create2 answered.
fn created(zk: &mut FrontEnd, session: SessionId, path: &str, mode: CreateMode) -> (String, Stat) {
    match ok(zk, session, create2(path, mode)) {
        Response::Create2(Create2Response { path, stat }) => (path, stat),
        other => panic!("create2's response: {other:?}"),
    }
}

/// The notification of `event_type` on `path`, to `session`.
fn event(session: SessionId, event_type: EventType, path: &str) -> (SessionId, WatcherEvent) {
    let event = WatcherEvent {
        event_type: event_type.into(),
        state: KeeperState::SyncConnected.into(),
        path: path.to_owned(),
    };
    (session, event)
}

/// The notifications among `deliveries`, checking their headers.
fn events(deliveries: Vec<Delivery>) -> Vec<(SessionId, WatcherEvent)> {
    (deliveries.into_iter())
        .map(|delivery| {
            let header = delivery.reply.header;
            assert_eq!(
                (header.xid, header.zxid, header.err),
                (xid::NOTIFICATION, -1, 0)
            );
            match delivery.reply.body {
                ReplyBody::Notification(event) => (delivery.session, event),
                other => panic!("a notification: {other:?}"),
            }
        })
        .collect()
}

fn error(code: ErrorCode) -> MultiResult {
    MultiResult::Error(ErrorResponse { err: code.into() })
}

#[test]
fn a_new_session_gets_a_negotiated_timeout_and_a_password() {
    let mut zk = server();
    let asked = ConnectRequest {
        time_out: 60_000,
        ..connect_request(0, vec![0; 16], 0)
    };
    let Handshake::Accepted {
        session,
        resumed,
        response,
    } = zk.connect(&asked)
    else {
        panic!("accepted")
    };
    assert!(!resumed);
    let expected = ConnectResponse {
        protocol_version: 0,
        time_out: 4_000,
        session_id: session.0 as i64,
        passwd: password(session),
        read_only: Some(false),
    };
    assert_eq!(response, expected);
    let old_client = ConnectRequest {
        read_only: None,
        ..connect_request(0, vec![0; 16], 0)
    };
    let Handshake::Accepted { response, .. } = zk.connect(&old_client) else {
        panic!("accepted")
    };
    assert_eq!(
        response.read_only, None,
        "no readOnly to a client that sent none"
    );
}

#[test]
fn a_session_resumes_with_its_password_and_not_without() {
    let mut zk = server();
    let session = open(&mut zk);
    let id = session.0 as i64;
    let resumed = zk.connect(&connect_request(id, password(session), 0));
    assert!(matches!(
        resumed,
        Handshake::Accepted { session: s, resumed: true, .. } if s == session
    ));
    let zeroes = ConnectResponse::expired(Some(false));
    let wrong = zk.connect(&connect_request(id, vec![1; 16], 0));
    assert_eq!(
        wrong,
        Handshake::Expired {
            response: zeroes.clone()
        }
    );
    zk.expire(session);
    let expired = zk.connect(&connect_request(id, password(session), 0));
    assert_eq!(expired, Handshake::Expired { response: zeroes });
}

#[test]
fn a_client_ahead_of_the_server_is_refused() {
    let mut zk = server();
    let session = open(&mut zk);
    created(&mut zk, session, "/a", CreateMode::Persistent);
    assert!(matches!(
        zk.connect(&connect_request(0, vec![0; 16], 1)),
        Handshake::Accepted { .. }
    ));
    assert_eq!(
        zk.connect(&connect_request(0, vec![0; 16], 2)),
        Handshake::Refused { seen: 2 }
    );
}

#[test]
fn creates_answer_the_path_and_stat_of_each_mode() {
    let mut zk = server();
    let session = open(&mut zk);
    let (path, stat) = created(&mut zk, session, "/p", CreateMode::Persistent);
    assert_eq!(path, "/p");
    assert_eq!((stat.czxid, stat.mzxid, stat.pzxid), (1, 1, 1));
    assert_eq!(
        (stat.version, stat.data_length, stat.ephemeral_owner),
        (0, 1, 0)
    );
    let (path, stat) = created(&mut zk, session, "/p/e-", CreateMode::EphemeralSequential);
    assert_eq!(path, "/p/e-0000000000");
    assert_eq!(stat.ephemeral_owner, session.0 as i64);
    let (path, _) = created(&mut zk, session, "/p/s-", CreateMode::PersistentSequential);
    assert_eq!(path, "/p/s-0000000001");
    let (_, stat) = created(&mut zk, session, "/p/e", CreateMode::Ephemeral);
    assert_eq!(stat.ephemeral_owner, session.0 as i64);
    let container =
        Request::CreateContainer(CreateRequest::open("/c", Some(b"x"), CreateMode::Container));
    assert!(matches!(
        ok(&mut zk, session, container),
        Response::Create2(_)
    ));
    assert!(
        zk.tree()
            .get(&coordination::zk::Path::new("/c").unwrap())
            .unwrap()
            .container
    );
    // create (op 1) answers the path alone.
    let plain = Request::Create(CreateRequest::open(
        "/q",
        Some(b"x"),
        CreateMode::Persistent,
    ));
    let expected = Response::Create(CreateResponse {
        path: "/q".to_owned(),
    });
    assert_eq!(ok(&mut zk, session, plain), expected);
}

#[test]
fn create_errors() {
    let mut zk = server();
    let session = open(&mut zk);
    created(&mut zk, session, "/e", CreateMode::Ephemeral);
    let cases = [
        (
            create2("/missing/child", CreateMode::Persistent),
            ErrorCode::NoNode,
        ),
        (create2("/e", CreateMode::Persistent), ErrorCode::NodeExists),
        (
            create2("/e/c", CreateMode::Persistent),
            ErrorCode::NoChildrenForEphemerals,
        ),
        (
            create2("relative", CreateMode::Persistent),
            ErrorCode::BadArguments,
        ),
        (
            create2("/a/", CreateMode::Persistent),
            ErrorCode::BadArguments,
        ),
        (
            create2("/t", CreateMode::PersistentWithTtl),
            ErrorCode::Unimplemented,
        ),
    ];
    for (request, code) in cases {
        assert_eq!(
            fails(&mut zk, session, request.clone()),
            code,
            "{request:?}"
        );
    }
    let mut unknown_mode = CreateRequest::open("/u", Some(b"x"), CreateMode::Persistent);
    unknown_mode.flags = 42;
    assert_eq!(
        fails(&mut zk, session, Request::Create2(unknown_mode)),
        ErrorCode::BadArguments
    );
    let mut no_acl = CreateRequest::open("/u", Some(b"x"), CreateMode::Persistent);
    no_acl.acl.clear();
    assert_eq!(
        fails(&mut zk, session, Request::Create2(no_acl)),
        ErrorCode::InvalidAcl
    );
    assert_eq!(zk.tree().zxid().0, 1, "no failure changed the tree");
}

#[test]
fn delete_checks_the_version_and_the_children() {
    let mut zk = server();
    let session = open(&mut zk);
    created(&mut zk, session, "/d", CreateMode::Persistent);
    created(&mut zk, session, "/d/c", CreateMode::Persistent);
    assert_eq!(
        fails(&mut zk, session, Request::delete("/d", -1)),
        ErrorCode::NotEmpty
    );
    assert_eq!(
        fails(&mut zk, session, Request::delete("/d/c", 3)),
        ErrorCode::BadVersion
    );
    assert_eq!(
        fails(&mut zk, session, Request::delete("/none", -1)),
        ErrorCode::NoNode
    );
    assert_eq!(
        ok(&mut zk, session, Request::delete("/d/c", 0)),
        Response::Empty
    );
    assert_eq!(
        ok(&mut zk, session, Request::delete("/d", -1)),
        Response::Empty
    );
}

#[test]
fn exists_of_a_missing_node_fails_with_no_node_and_leaves_its_watch() {
    let mut zk = server();
    let watcher = open(&mut zk);
    let writer = open(&mut zk);
    assert_eq!(
        fails(&mut zk, watcher, Request::exists("/later", true)),
        ErrorCode::NoNode
    );
    let (fired, err, _) = call(&mut zk, writer, create2("/later", CreateMode::Persistent));
    assert_eq!(err, 0);
    assert_eq!(
        events(fired),
        [event(watcher, EventType::NodeCreated, "/later")]
    );
    let Response::Exists(found) = ok(&mut zk, watcher, Request::exists("/later", false)) else {
        panic!("exists' response")
    };
    assert_eq!(found.stat.czxid, 1);
}

#[test]
fn get_data_and_set_data_with_a_watch_and_versions() {
    let mut zk = server();
    let watcher = open(&mut zk);
    let writer = open(&mut zk);
    created(&mut zk, writer, "/n", CreateMode::Persistent);
    let Response::GetData(read) = ok(&mut zk, watcher, Request::get_data("/n", true)) else {
        panic!("getData's response")
    };
    assert_eq!(read.data.as_deref(), Some(&b"x"[..]));
    assert_eq!(
        fails(&mut zk, writer, Request::set_data("/n", b"new", 1)),
        ErrorCode::BadVersion
    );
    let (fired, err, response) = call(&mut zk, writer, Request::set_data("/n", b"new", 0));
    assert_eq!(err, 0);
    assert_eq!(
        events(fired),
        [event(watcher, EventType::NodeDataChanged, "/n")]
    );
    let Response::SetData(written) = response else {
        panic!("setData's response")
    };
    assert_eq!(
        (
            written.stat.version,
            written.stat.mzxid,
            written.stat.data_length
        ),
        (1, 2, 3)
    );
    assert_eq!(
        fails(&mut zk, writer, Request::set_data("/none", b"new", -1)),
        ErrorCode::NoNode
    );
    assert_eq!(
        fails(&mut zk, watcher, Request::get_data("/none", true)),
        ErrorCode::NoNode
    );
}

#[test]
fn get_children_and_get_children2_with_the_parent_s_stat_and_a_watch() {
    let mut zk = server();
    let watcher = open(&mut zk);
    let writer = open(&mut zk);
    created(&mut zk, writer, "/l", CreateMode::Persistent);
    created(&mut zk, writer, "/l/a", CreateMode::Persistent);
    let Response::GetChildren(GetChildrenResponse { children: names }) =
        ok(&mut zk, watcher, Request::get_children("/l", true))
    else {
        panic!("getChildren's response")
    };
    assert_eq!(names, ["a"]);
    let (fired, _, _) = call(&mut zk, writer, create2("/l/b", CreateMode::Ephemeral));
    assert_eq!(
        events(fired),
        [event(watcher, EventType::NodeChildrenChanged, "/l")]
    );
    let list2 = Request::GetChildren2(GetChildren2Request {
        path: "/l".to_owned(),
        watch: false,
    });
    let Response::GetChildren2(GetChildren2Response {
        children: mut names,
        stat,
    }) = ok(&mut zk, watcher, list2)
    else {
        panic!("getChildren2's response")
    };
    names.sort();
    assert_eq!(names, ["a", "b"]);
    assert_eq!((stat.num_children, stat.cversion, stat.pzxid), (2, 2, 3));
    assert_eq!(
        fails(&mut zk, watcher, Request::get_children("/none", true)),
        ErrorCode::NoNode
    );
}

#[test]
fn a_multi_applies_every_op_in_one_zxid() {
    let mut zk = server();
    let session = open(&mut zk);
    created(&mut zk, session, "/m", CreateMode::Persistent);
    let ops = vec![
        Request::Create(CreateRequest::open(
            "/m/a",
            Some(b"x"),
            CreateMode::Persistent,
        )),
        create2("/m/a/b-", CreateMode::EphemeralSequential),
        Request::check("/m/a", 0),
        Request::set_data("/m/a", b"new", 0),
        Request::check("/m/a", -1),
        Request::delete("/m/a/b-0000000000", 0),
    ];
    let Response::Multi(MultiResponse { results }) =
        ok(&mut zk, session, Request::Multi(MultiRequest { ops }))
    else {
        panic!("multi's response")
    };
    let [create, create2, check, set, any, delete] = &results[..] else {
        panic!("six results: {results:?}")
    };
    assert_eq!(
        create,
        &MultiResult::Create(CreateResponse {
            path: "/m/a".to_owned()
        })
    );
    // A create2 in a multi answers its path alone (a createContainer its stat too).
    assert_eq!(
        create2,
        &MultiResult::Create(CreateResponse {
            path: "/m/a/b-0000000000".to_owned()
        })
    );
    assert_eq!(
        (check, any, delete),
        (
            &MultiResult::Check,
            &MultiResult::Check,
            &MultiResult::Delete
        )
    );
    let MultiResult::SetData(set) = set else {
        panic!("setData's result")
    };
    assert_eq!(
        (set.stat.version, set.stat.czxid, set.stat.mzxid),
        (1, 2, 2)
    );
    assert_eq!(zk.tree().zxid().0, 2, "one zxid for the transaction");
}

#[test]
fn a_failed_multi_keeps_nothing_and_answers_an_error_for_every_op() {
    let mut zk = server();
    let watcher = open(&mut zk);
    let session = open(&mut zk);
    created(&mut zk, session, "/m", CreateMode::Persistent);
    ok(&mut zk, watcher, Request::get_children("/m", true));
    let ops = vec![
        create2("/m/a", CreateMode::Persistent),
        Request::check("/m", 5),
        create2("/m/b", CreateMode::Persistent),
    ];
    let (fired, err, response) = call(&mut zk, session, Request::Multi(MultiRequest { ops }));
    assert_eq!((fired, err), (vec![], 0));
    let results = vec![
        error(ErrorCode::Ok),
        error(ErrorCode::BadVersion),
        error(ErrorCode::RuntimeInconsistency),
    ];
    assert_eq!(response, Response::Multi(MultiResponse { results }));
    assert_eq!(
        fails(&mut zk, session, Request::exists("/m/a", false)),
        ErrorCode::NoNode
    );
    assert_eq!(zk.tree().zxid().0, 1);
    // An op a multi may not hold fails in its turn; one before it that fails comes first.
    let reads = vec![
        create2("/m/a", CreateMode::Persistent),
        Request::get_data("/m", false),
    ];
    let response = ok(
        &mut zk,
        session,
        Request::Multi(MultiRequest { ops: reads }),
    );
    let results = vec![error(ErrorCode::Ok), error(ErrorCode::BadArguments)];
    assert_eq!(response, Response::Multi(MultiResponse { results }));
    let earlier = vec![Request::delete("/none", -1), Request::get_data("/m", false)];
    let response = ok(
        &mut zk,
        session,
        Request::Multi(MultiRequest { ops: earlier }),
    );
    let results = vec![
        error(ErrorCode::NoNode),
        error(ErrorCode::RuntimeInconsistency),
    ];
    assert_eq!(response, Response::Multi(MultiResponse { results }));
    assert_eq!(zk.tree().zxid().0, 1);
    // The watch is still there: no failed op fired it.
    let (fired, _, _) = call(&mut zk, session, create2("/m/c", CreateMode::Persistent));
    assert_eq!(
        events(fired),
        [event(watcher, EventType::NodeChildrenChanged, "/m")]
    );
}

#[test]
fn a_multi_read_answers_each_op_on_its_own() {
    let mut zk = server();
    let session = open(&mut zk);
    created(&mut zk, session, "/r", CreateMode::Persistent);
    created(&mut zk, session, "/r/a", CreateMode::Persistent);
    let ops = vec![
        Request::get_children("/r", false),
        Request::get_data("/none", false),
        Request::get_data("/r/a", false),
    ];
    let Response::Multi(MultiResponse { results }) =
        ok(&mut zk, session, Request::MultiRead(MultiRequest { ops }))
    else {
        panic!("multiRead's response")
    };
    let [listed, missing, read] = &results[..] else {
        panic!("three results")
    };
    assert_eq!(
        listed,
        &MultiResult::GetChildren(GetChildrenResponse {
            children: vec!["a".to_owned()]
        })
    );
    assert_eq!(missing, &error(ErrorCode::NoNode));
    let MultiResult::GetData(GetDataResponse { data, stat }) = read else {
        panic!("getData's result")
    };
    assert_eq!((data.as_deref(), stat.czxid), (Some(&b"x"[..]), 2));
}

#[test]
fn ping_sync_and_ops_the_tree_does_not_serve() {
    let mut zk = server();
    let session = open(&mut zk);
    let Output { deliveries, close } = zk.receive(
        session,
        &RequestMessage {
            xid: xid::PING,
            request: Request::Ping,
        },
    );
    assert!(!close);
    let [pong] = &deliveries[..] else {
        panic!("a pong")
    };
    assert_eq!(
        (pong.reply.header.xid, pong.reply.header.err),
        (xid::PING, 0)
    );
    assert_eq!(pong.reply.body, ReplyBody::Response(Response::Empty));
    let sync = Request::Sync(SyncRequest {
        path: "/".to_owned(),
    });
    let expected = Response::Sync(SyncResponse {
        path: "/".to_owned(),
    });
    assert_eq!(ok(&mut zk, session, sync), expected);
    assert_eq!(
        fails(&mut zk, session, Request::WhoAmI),
        ErrorCode::Unimplemented
    );
    let unknown = Request::Unknown {
        op: 999,
        body: vec![1, 2],
    };
    assert_eq!(fails(&mut zk, session, unknown), ErrorCode::Unimplemented);
}

#[test]
fn remove_watches_removes_the_session_s_watches() {
    let mut zk = server();
    let session = open(&mut zk);
    created(&mut zk, session, "/w", CreateMode::Persistent);
    let remove = Request::RemoveWatches(RemoveWatchesRequest {
        path: "/w".to_owned(),
        watcher_type: 3,
    });
    assert_eq!(
        fails(&mut zk, session, remove.clone()),
        ErrorCode::NoWatcher
    );
    ok(&mut zk, session, Request::get_data("/w", true));
    assert_eq!(ok(&mut zk, session, remove), Response::Empty);
    // The watch is gone: the write fires nothing (`ok` checks).
    ok(&mut zk, session, Request::set_data("/w", b"new", -1));
}

#[test]
fn close_session_deletes_its_ephemerals_notifies_the_others_and_closes() {
    let mut zk = server();
    let watcher = open(&mut zk);
    let session = open(&mut zk);
    created(&mut zk, watcher, "/l", CreateMode::Persistent);
    created(&mut zk, session, "/l/e", CreateMode::Ephemeral);
    ok(&mut zk, watcher, Request::get_children("/l", true));
    let Output { deliveries, close } = zk.receive(
        session,
        &RequestMessage {
            xid: 7,
            request: Request::CloseSession,
        },
    );
    assert!(close);
    let (reply, fired) = deliveries.split_last().unwrap();
    assert_eq!(
        events(fired.to_vec()),
        [event(watcher, EventType::NodeChildrenChanged, "/l")]
    );
    assert_eq!((reply.reply.header.xid, reply.reply.header.err), (7, 0));
    assert!(!zk.sessions().is_live(session));
    let after = zk.receive(
        session,
        &RequestMessage {
            xid: 8,
            request: Request::Ping,
        },
    );
    assert!(after.close);
    assert_eq!(
        after.deliveries[0].reply.header.err,
        ErrorCode::SessionExpired.into()
    );
}

#[test]
fn an_expired_session_s_ephemerals_go_and_its_watchers_hear() {
    let mut zk = server();
    let watcher = open(&mut zk);
    let session = open(&mut zk);
    created(&mut zk, session, "/e", CreateMode::Ephemeral);
    ok(&mut zk, watcher, Request::exists("/e", true));
    let fired = zk.expire(session);
    assert_eq!(
        events(fired),
        [event(watcher, EventType::NodeDeleted, "/e")]
    );
    assert!(zk.expire(session).is_empty(), "expired once");
}

#[test]
fn set_watches_after_a_reconnect_fires_what_changed_and_keeps_the_rest() {
    let mut zk = server();
    let session = open(&mut zk);
    let writer = open(&mut zk);
    created(&mut zk, writer, "/same", CreateMode::Persistent);
    created(&mut zk, writer, "/changed", CreateMode::Persistent);
    ok(&mut zk, session, Request::get_data("/changed", true));
    let last_seen = zk.tree().zxid().0 as i64;
    zk.disconnect(session);
    let (fired, _, _) = call(&mut zk, writer, Request::set_data("/changed", b"new", -1));
    assert_eq!(fired, [], "the watch went with the connection");
    created(&mut zk, writer, "/born", CreateMode::Persistent);
    let resume = connect_request(session.0 as i64, password(session), last_seen);
    assert!(matches!(
        zk.connect(&resume),
        Handshake::Accepted { resumed: true, .. }
    ));
    let watches = SetWatches {
        relative_zxid: last_seen,
        data_watches: vec!["/changed".to_owned(), "/same".to_owned()],
        exist_watches: vec!["/born".to_owned(), "/unborn".to_owned()],
        child_watches: vec!["/".to_owned()],
    };
    let Output { deliveries, close } = zk.receive(
        session,
        &RequestMessage {
            xid: xid::SET_WATCHES,
            request: Request::SetWatches(watches.clone()),
        },
    );
    assert!(!close);
    let (reply, fired) = deliveries.split_last().unwrap();
    assert_eq!(
        (reply.reply.header.xid, reply.reply.header.err),
        (xid::SET_WATCHES, 0)
    );
    assert_eq!(
        events(fired.to_vec()),
        [
            event(session, EventType::NodeDataChanged, "/changed"),
            event(session, EventType::NodeCreated, "/born"),
            event(session, EventType::NodeChildrenChanged, "/"),
        ]
    );
    let (fired, _, _) = call(&mut zk, writer, Request::set_data("/same", b"new", -1));
    assert_eq!(
        events(fired),
        [event(session, EventType::NodeDataChanged, "/same")]
    );
    // setWatches2 with persistent watches: the tree has none.
    let persistent = SetWatches2 {
        relative_zxid: last_seen,
        persistent_watches: vec!["/same".to_owned()],
        ..SetWatches2::default()
    };
    assert_eq!(
        fails(&mut zk, session, Request::SetWatches2(persistent)),
        ErrorCode::Unimplemented
    );
    let plain = SetWatches2 {
        relative_zxid: zk.tree().zxid().0 as i64,
        exist_watches: vec!["/unborn".to_owned()],
        ..SetWatches2::default()
    };
    assert_eq!(
        ok(&mut zk, session, Request::SetWatches2(plain)),
        Response::Empty
    );
    let (fired, _, _) = call(&mut zk, writer, create2("/unborn", CreateMode::Persistent));
    assert_eq!(
        events(fired),
        [event(session, EventType::NodeCreated, "/unborn")]
    );
}
