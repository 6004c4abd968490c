//! The protocol front end against a real ZooKeeper 3.8: one script of connections and
//! requests runs on both, and what each connection receives (connect responses, error codes,
//! response records, notifications) is compared after normalising what legitimately differs:
//! zxids (only whether a stat's mzxid and pzxid equal its czxid is kept), times, session ids
//! (as which of the script's sessions), passwords (as their length), and the children's order.
//!
//! The one difference found is [`CVERSION_COUNTS_DELETES`]; the test fails if it goes away
//! or another appears.

// Shared with jute.rs, which uses the rest of it.
#[allow(dead_code)]
mod wire;

use coordination::zk::SessionId;
use frontend::{FrontEnd, Handshake, Limits};
use jute::codes::{CreateMode, xid};
use jute::data::Stat;
use jute::multi::{MultiRequest, MultiResult};
use jute::requests::{CreateRequest, SyncRequest};
use jute::session::{ConnectRequest, ConnectResponse, ReplyHeader, SetWatches, WatcherEvent};
use jute::{ReplyBody, Request, RequestMessage, Response};
use real::local::Standalone;
use wire::Connection;

/// The steps whose answers differ only in a parent's `cversion`: ZooKeeper counts each
/// delete of a child in it (a `delete`, or an ephemeral's at `closeSession`), the tree counts
/// creates only (the sequential names agree: ZooKeeper's do not count deletes either). A
/// finding about the tree, kept as it is so that the model and the simulator keep their
/// behaviour; any other difference fails the test.
const CVERSION_COUNTS_DELETES: &[usize] = &[22, 33, 47];

/// How a connection's connect request is made.
#[derive(Clone, Copy, Debug)]
enum Connect {
    /// A new session.
    New,
    /// Resumes the session of connection `of`, with its password or a wrong one, having
    /// seen the last zxid that connection saw.
    Resume { of: usize, right_password: bool },
    /// A new session from a client that has seen a zxid past the server's.
    Ahead,
}

/// One step of the script.
#[derive(Clone, Debug)]
enum Step {
    /// Opens connection `conn`.
    Open(usize, Connect),
    /// Sends a request on a connection.
    Call(usize, Request),
    /// Drops a connection without closing its session.
    Drop(usize),
}

/// A connect response, normalised: the timeout, the session as the script's index (`None`
/// for session 0), the password's length and whether it is all zeroes, readOnly.
type Connected = (i32, Option<usize>, usize, bool, Option<bool>);

/// What a connection received at one step, normalised.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    /// A connect response, or none (the connection closed).
    Connected(Option<Connected>),
    /// A reply: its error, its response, and the notifications each open connection got
    /// (the requester's before its reply).
    Replied(i32, Response, Vec<(usize, WatcherEvent)>),
    /// Nothing: the connection was dropped.
    Dropped,
}

/// A ZooKeeper, real or the front end, as the script drives it.
trait Server {
    /// Sends `request` on the new connection `conn`: the response, if any.
    fn connect(&mut self, conn: usize, request: &ConnectRequest) -> Option<ConnectResponse>;
    /// Sends `request` on `conn`: the notifications before its reply, the reply's header
    /// and its response.
    fn call(&mut self, conn: usize, request: Request)
    -> (Vec<WatcherEvent>, ReplyHeader, Response);
    /// The notifications `conn` got since its last reply.
    fn pending(&mut self, conn: usize) -> Vec<WatcherEvent>;
    /// Closes `conn` from the client's side.
    fn drop_conn(&mut self, conn: usize);
}

/// The real ZooKeeper, a TCP connection per script connection.
struct Real<'a> {
    server: &'a Standalone,
    conns: Vec<Option<Connection>>,
}

impl Server for Real<'_> {
    fn connect(&mut self, conn: usize, request: &ConnectRequest) -> Option<ConnectResponse> {
        let mut connection = Connection::open(self.server);
        let response = connection.connect(request);
        let live = response.as_ref().is_some_and(|r| r.session_id != 0);
        place(&mut self.conns, conn, live.then_some(connection));
        response
    }

    fn call(
        &mut self,
        conn: usize,
        request: Request,
    ) -> (Vec<WatcherEvent>, ReplyHeader, Response) {
        let closing = request == Request::CloseSession;
        let connection = self.conns[conn].as_mut().expect("an open connection");
        let (events, reply, _) = connection.call(request);
        if closing {
            assert_eq!(connection.frame(), None, "closed after closeSession");
            self.conns[conn] = None;
        }
        let ReplyBody::Response(response) = reply.body else {
            unreachable!("a response")
        };
        (events, reply.header, response)
    }

    fn pending(&mut self, conn: usize) -> Vec<WatcherEvent> {
        match &mut self.conns[conn] {
            Some(connection) => connection.call(Request::Ping).0,
            None => Vec::new(),
        }
    }

    fn drop_conn(&mut self, conn: usize) {
        self.conns[conn] = None;
    }
}

/// The front end, a session per open script connection.
struct Front {
    zk: FrontEnd,
    /// Each connection's session while it is open, and the notifications it got.
    conns: Vec<Option<(SessionId, Vec<WatcherEvent>)>>,
}

impl Server for Front {
    fn connect(&mut self, conn: usize, request: &ConnectRequest) -> Option<ConnectResponse> {
        match self.zk.connect(request) {
            Handshake::Accepted {
                session, response, ..
            } => {
                // The server closes the session's older connection.
                for open in &mut self.conns {
                    if open.as_ref().is_some_and(|(s, _)| *s == session) {
                        *open = None;
                    }
                }
                place(&mut self.conns, conn, Some((session, Vec::new())));
                Some(response)
            }
            Handshake::Expired { response } => Some(response),
            Handshake::Refused { .. } => None,
        }
    }

    fn call(
        &mut self,
        conn: usize,
        request: Request,
    ) -> (Vec<WatcherEvent>, ReplyHeader, Response) {
        let (session, _) = self.conns[conn].clone().expect("an open connection");
        let xid = match request {
            Request::Ping => xid::PING,
            Request::SetWatches(_) | Request::SetWatches2(_) => xid::SET_WATCHES,
            _ => 1,
        };
        let output = self.zk.receive(session, &RequestMessage { xid, request });
        let (reply, notifications) = output.deliveries.split_last().expect("a reply");
        for delivery in notifications {
            let ReplyBody::Notification(event) = &delivery.reply.body else {
                unreachable!("a notification")
            };
            let inbox = self.conns.iter_mut().flatten();
            if let Some((_, events)) = inbox.into_iter().find(|(s, _)| *s == delivery.session) {
                events.push(event.clone());
            }
        }
        let events = self.pending(conn);
        if output.close {
            self.conns[conn] = None;
        }
        let ReplyBody::Response(response) = reply.reply.body.clone() else {
            unreachable!("a response")
        };
        (events, reply.reply.header.clone(), response)
    }

    fn pending(&mut self, conn: usize) -> Vec<WatcherEvent> {
        match &mut self.conns[conn] {
            Some((_, events)) => std::mem::take(events),
            None => Vec::new(),
        }
    }

    fn drop_conn(&mut self, conn: usize) {
        if let Some((session, _)) = self.conns[conn].take() {
            self.zk.disconnect(session);
        }
    }
}

/// Puts `value` at `conn`, growing `slots` as needed.
fn place<T>(slots: &mut Vec<Option<T>>, conn: usize, value: Option<T>) {
    if slots.len() <= conn {
        slots.resize_with(conn + 1, || None);
    }
    slots[conn] = value;
}

/// Runs `script` on `server`: what each step's connection saw.
fn run(server: &mut dyn Server, script: &[Step]) -> Vec<Seen> {
    // Each connection's session id and password, and the last zxid it saw.
    let mut sessions: Vec<Option<(i64, Vec<u8>)>> = Vec::new();
    let mut last_zxid: Vec<i64> = Vec::new();
    let mut ids: Vec<i64> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut seen = Vec::new();
    for step in script {
        match step {
            Step::Open(conn, how) => {
                let (session_id, passwd, last) = match *how {
                    Connect::New => (0, vec![0; 16], 0),
                    Connect::Ahead => (0, vec![0; 16], last_zxid.iter().max().unwrap() + 1_000),
                    Connect::Resume { of, right_password } => {
                        let (id, passwd) = sessions[of].clone().unwrap();
                        let passwd = if right_password { passwd } else { vec![7; 16] };
                        (id, passwd, last_zxid[of])
                    }
                };
                let request = ConnectRequest {
                    protocol_version: 0,
                    last_zxid_seen: last,
                    time_out: 4_000,
                    session_id,
                    passwd,
                    read_only: Some(false),
                };
                let response = server.connect(*conn, &request);
                let accepted = response.as_ref().filter(|r| r.session_id != 0);
                place(
                    &mut sessions,
                    *conn,
                    accepted.map(|r| (r.session_id, r.passwd.clone())),
                );
                if last_zxid.len() <= *conn {
                    last_zxid.resize(conn + 1, 0);
                }
                last_zxid[*conn] = last;
                if let Some(r) = accepted {
                    if !ids.contains(&r.session_id) {
                        ids.push(r.session_id);
                    }
                    open.push(*conn);
                }
                seen.push(Seen::Connected(response.map(|r| {
                    let session = ids.iter().position(|&id| id == r.session_id);
                    let zeroes = r.passwd.iter().all(|&b| b == 0);
                    (r.time_out, session, r.passwd.len(), zeroes, r.read_only)
                })));
            }
            Step::Call(conn, request) => {
                let closing = *request == Request::CloseSession;
                let mut request = request.clone();
                if let Request::SetWatches(watches) = &mut request {
                    watches.relative_zxid = last_zxid[*conn];
                }
                let (mine, header, response) = server.call(*conn, request);
                if header.zxid > 0 {
                    last_zxid[*conn] = header.zxid;
                }
                if closing {
                    open.retain(|c| c != conn);
                }
                let mut events: Vec<(usize, WatcherEvent)> =
                    mine.into_iter().map(|event| (*conn, event)).collect();
                for &other in open.iter().filter(|&c| c != conn) {
                    let got = server.pending(other);
                    events.extend(got.into_iter().map(|event| (other, event)));
                }
                seen.push(Seen::Replied(header.err, normal(response, &ids), events));
            }
            Step::Drop(conn) => {
                server.drop_conn(*conn);
                open.retain(|c| c != conn);
                seen.push(Seen::Dropped);
            }
        }
    }
    seen
}

/// `stat` without what legitimately differs: its zxids become whether mzxid and pzxid equal
/// czxid (0) or not (1), its times 0, its ephemeral owner the script's session index + 1.
fn normal_stat(stat: Stat, ids: &[i64]) -> Stat {
    let owner = match stat.ephemeral_owner {
        0 => 0,
        id => ids
            .iter()
            .position(|&known| known == id)
            .map_or(-1, |i| i as i64 + 1),
    };
    Stat {
        czxid: 0,
        mzxid: i64::from(stat.mzxid != stat.czxid),
        pzxid: i64::from(stat.pzxid != stat.czxid),
        ctime: 0,
        mtime: 0,
        ephemeral_owner: owner,
        ..stat
    }
}

/// `response` without what legitimately differs: stats as [`normal_stat`], children sorted.
fn normal(response: Response, ids: &[i64]) -> Response {
    let sorted = |children: &mut Vec<String>| children.sort();
    match map_stats(response, &|stat| normal_stat(stat, ids)) {
        Response::GetChildren(mut r) => {
            sorted(&mut r.children);
            Response::GetChildren(r)
        }
        Response::GetChildren2(mut r) => {
            sorted(&mut r.children);
            Response::GetChildren2(r)
        }
        Response::Multi(mut r) => {
            for result in &mut r.results {
                if let MultiResult::GetChildren(r) = result {
                    sorted(&mut r.children);
                }
            }
            Response::Multi(r)
        }
        other => other,
    }
}

/// `response` with `f` applied to each stat in it.
fn map_stats(response: Response, f: &dyn Fn(Stat) -> Stat) -> Response {
    let stat = |stat: &mut Stat| *stat = f(stat.clone());
    let mut response = response;
    match &mut response {
        Response::Create2(r) => stat(&mut r.stat),
        Response::Exists(r) => stat(&mut r.stat),
        Response::GetData(r) => stat(&mut r.stat),
        Response::SetData(r) => stat(&mut r.stat),
        Response::GetChildren2(r) => stat(&mut r.stat),
        Response::Multi(r) => {
            for result in &mut r.results {
                match result {
                    MultiResult::Create2(r) => stat(&mut r.stat),
                    MultiResult::SetData(r) => stat(&mut r.stat),
                    MultiResult::GetData(r) => stat(&mut r.stat),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    response
}

/// What `seen` would be if a delete did not count in a parent's cversion: the stats'
/// cversions are dropped.
fn without_cversion(seen: &Seen) -> Seen {
    match seen.clone() {
        Seen::Replied(err, response, events) => {
            let response = map_stats(response, &|stat| Stat {
                cversion: 0,
                ..stat
            });
            Seen::Replied(err, response, events)
        }
        other => other,
    }
}

fn create2(path: &str, mode: CreateMode) -> Request {
    Request::Create2(CreateRequest::open(path, Some(b"x"), mode))
}

fn create(path: &str) -> Request {
    Request::Create(CreateRequest::open(path, None, CreateMode::Persistent))
}

fn multi(ops: Vec<Request>) -> Request {
    Request::Multi(MultiRequest { ops })
}

/// The script: sessions A (connection 0) and B (1) build and read a tree under /diff and
/// watch each other's changes; A reconnects (2) and sets its watches again; B closes and
/// tries to come back (3); a client ahead of the server (4) and A with a wrong password (5)
/// are turned away.
fn script() -> Vec<Step> {
    use CreateMode::*;
    use Step::{Call, Drop, Open};
    let (a, b) = (0, 1);
    vec![
        Open(a, Connect::New),
        Open(b, Connect::New),
        Call(a, Request::Ping),
        Call(
            a,
            Request::Create2(CreateRequest::open("/diff", Some(b"hello"), Persistent)),
        ),
        Call(a, create("/diff/p")),
        Call(
            a,
            Request::Create2(CreateRequest::open("/diff/e-", None, EphemeralSequential)),
        ),
        Call(b, create2("/diff/e-", EphemeralSequential)),
        Call(a, Request::get_data("/diff/e-0000000000", false)),
        Call(a, Request::get_children2("/diff", true)),
        Call(b, Request::exists("/diff/later", true)),
        Call(a, create2("/diff/later", Persistent)),
        Call(b, Request::get_data("/diff", true)),
        Call(a, Request::set_data("/diff", b"new data", 0)),
        Call(a, Request::set_data("/diff", b"new data", 0)),
        Call(a, Request::delete("/diff", -1)),
        Call(a, Request::delete("/diff/p", 5)),
        Call(a, create2("/diff/e-0000000000/c", Persistent)),
        Call(a, create2("/nowhere/child", Persistent)),
        Call(a, create2("/diff/p", Persistent)),
        Call(a, create2("/diff/", Persistent)),
        Call(a, Request::delete("/diff/p", 0)),
        Call(a, create2("/diff/e-", EphemeralSequential)),
        Call(a, Request::get_children2("/diff", false)),
        Call(
            a,
            Request::CreateContainer(CreateRequest::open("/diff/c", None, Container)),
        ),
        Call(a, Request::exists("/diff/c", false)),
        Call(a, Request::get_data("/diff/none", true)),
        Call(a, Request::set_data("/diff/none", b"new data", -1)),
        Call(a, Request::delete("/diff/none", -1)),
        Call(b, Request::get_children("/diff", true)),
        Call(
            a,
            multi(vec![
                create("/diff/m1"),
                create2("/diff/m2", Persistent),
                Request::CreateContainer(CreateRequest::open("/diff/m3", None, Container)),
                Request::set_data("/diff/later", b"new data", 0),
                Request::check("/diff", 1),
                Request::check("/diff/m1", -1),
                Request::delete("/diff/m1", 0),
            ]),
        ),
        Call(
            a,
            multi(vec![
                create2("/diff/n", Persistent),
                Request::check("/diff/later", 7),
                Request::delete("/diff/m2", -1),
            ]),
        ),
        Call(
            a,
            multi(vec![Request::delete("/diff/absent", -1), create("/diff/x")]),
        ),
        Call(a, Request::exists("/diff/n", false)),
        Call(
            a,
            Request::MultiRead(MultiRequest {
                ops: vec![
                    Request::get_children("/diff", false),
                    Request::get_data("/diff/absent", false),
                    Request::get_data("/diff", false),
                ],
            }),
        ),
        Call(
            a,
            Request::Sync(SyncRequest {
                path: "/diff".to_owned(),
            }),
        ),
        // A reconnects: its watches went with its connection, and it sets them again.
        Call(a, Request::get_data("/diff/later", true)),
        Call(a, Request::exists("/diff/born", true)),
        Call(a, Request::get_children("/diff/c", true)),
        Drop(a),
        Call(b, Request::set_data("/diff/later", b"new data", -1)),
        Call(b, create2("/diff/born", Persistent)),
        Open(
            2,
            Connect::Resume {
                of: a,
                right_password: true,
            },
        ),
        Call(
            2,
            Request::SetWatches(SetWatches {
                // The connection's last zxid.
                relative_zxid: 0,
                data_watches: vec!["/diff".to_owned(), "/diff/later".to_owned()],
                exist_watches: vec!["/diff/born".to_owned(), "/diff/unborn".to_owned()],
                child_watches: vec!["/diff/c".to_owned()],
            }),
        ),
        Call(b, create2("/diff/unborn", Persistent)),
        Call(b, create2("/diff/c/child", Persistent)),
        // B closes: its ephemeral goes, A's child watch (set again) hears of it.
        Call(2, Request::get_children("/diff", true)),
        Call(b, Request::CloseSession),
        Call(2, Request::get_children2("/diff", false)),
        Open(
            3,
            Connect::Resume {
                of: b,
                right_password: true,
            },
        ),
        Open(4, Connect::Ahead),
        Call(2, Request::exists("/diff/e-0000000001", false)),
        // The sequence number after three deletes under /diff.
        Call(2, create2("/diff/e-", EphemeralSequential)),
        Open(
            5,
            Connect::Resume {
                of: 2,
                right_password: false,
            },
        ),
    ]
}

#[test]
#[ignore = "needs ZooKeeper (Debian's zookeeper package)"]
fn the_front_end_answers_as_zookeeper_does() {
    let _serial = real::testing::one_server_at_a_time();
    let server = Standalone::start().unwrap_or_else(|e| panic!("{e}"));
    let script = script();
    let mut zookeeper = Real {
        server: &server,
        conns: Vec::new(),
    };
    let real = run(&mut zookeeper, &script);
    let mut front = Front {
        zk: FrontEnd::new(Limits::from_tick(200)),
        conns: Vec::new(),
    };
    let ours = run(&mut front, &script);
    let mut differences: Vec<usize> = Vec::new();
    let mut cversions: Vec<usize> = Vec::new();
    for (index, ((step, real), ours)) in script.iter().zip(&real).zip(&ours).enumerate() {
        if real == ours {
            continue;
        }
        eprintln!("{index}: {step:?}:\n  ZooKeeper: {real:?}\n  front end: {ours:?}\n");
        match without_cversion(real) == without_cversion(ours) {
            true => cversions.push(index),
            false => differences.push(index),
        }
    }
    assert_eq!(
        differences,
        Vec::<usize>::new(),
        "steps answered otherwise than by ZooKeeper"
    );
    assert_eq!(cversions, CVERSION_COUNTS_DELETES);
}
