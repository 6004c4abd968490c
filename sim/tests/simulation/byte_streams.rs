//! Byte streams on the simulated wire, served in ZooKeeper's wire protocol: raw jute frames
//! written through [`SimStream`]s against the simulated server, under the wire's faults.

use std::io;
use std::time::Duration;

use coordination::ids::OpId;
use coordination::session::{Connector, Coordination, RawEvent, RawState};
use coordination::zk::{EventKind, Path, Request as ZkRequest, SessionId, WatchedEvent};
use futures::io::{AsyncReadExt, AsyncWriteExt};
use jute::codes::{CreateMode, EventType, OpCode, xid};
use jute::frame::{MAX_FRAME, Splitter, body};
use jute::requests::CreateRequest;
use jute::responses::{GetChildrenResponse, GetDataResponse, Reply, ReplyBody, Response};
use jute::session::{ConnectRequest, ConnectResponse};
use jute::{Record, Request, RequestMessage};
use madsim::runtime::{Handle, NodeHandle, Runtime};
use scenarios::fault::Node;
use scenarios::scenario::ServerSettings;
use sim::client::{SimConnector, SimSession};
use sim::links::{Effect, End, Rule};
use sim::net::Network;
use sim::recorder::{Recorder, SimClock};
use sim::server::{Control, ServerHandle};
use sim::stream::{SimDialer, SimStream};
use sim::time::SimTime;
use sim::wire::{node_ip, server_addr};
use trace::EventKind as TraceEvent;

/// How long a test waits for anything before it fails (simulated time).
const PATIENCE: Duration = Duration::from_secs(60);

/// A simulated server and the run's network, in the current runtime.
struct World {
    network: Network,
    server: ServerHandle,
    server_node: NodeHandle,
    recorder: Recorder,
}

impl World {
    /// Starts the server (tick 200 ms: timeouts of 400 ms to 4 s) and waits until it listens.
    async fn start() -> World {
        let time = SimTime::current();
        let recorder = Recorder::new(SimClock::start(time.clone()));
        let network = Network::new(time);
        let settings = ServerSettings::standalone(200, 4_000, 60_000);
        let server = ServerHandle::new(settings, recorder.clone(), network.clone());
        let server_node = server.start_node().await;
        World {
            network,
            server,
            server_node,
            recorder,
        }
    }

    async fn until_listening(&self) {
        while !self.network.is_bound(server_addr()) {
            madsim::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// A stream from client `client` to the server.
    async fn dial(&self, client: u16) -> io::Result<SimStream> {
        let dialer = SimDialer::new(Node::Client(client), self.network.clone());
        dialer.connect(server_addr()).await
    }

    /// A client speaking jute on a new stream from `client`.
    async fn zk(&self, client: u16) -> Zk {
        Zk::new(self.dial(client).await.expect("the server accepts"))
    }

    /// Cuts every link between `client` and the server, as fault `fault`.
    fn partition(&self, fault: usize, client: u16) {
        let (c, s) = (End::Is(Node::Client(client)), End::Is(Node::Server));
        let mut links = self.network.links();
        links.add(
            fault,
            Rule {
                from: c,
                to: s,
                effect: Effect::Cut,
            },
        );
        links.add(
            fault,
            Rule {
                from: s,
                to: c,
                effect: Effect::Cut,
            },
        );
    }
}

/// One client's end of a stream, reading and writing jute frames.
struct Zk {
    stream: SimStream,
    frames: Splitter,
    /// Every byte read, in order.
    read: Vec<u8>,
}

impl Zk {
    fn new(stream: SimStream) -> Zk {
        Zk {
            stream,
            frames: Splitter::default(),
            read: Vec::new(),
        }
    }

    async fn write(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("written");
    }

    async fn send(&mut self, xid: i32, request: Request) {
        self.write(&RequestMessage { xid, request }.to_frame())
            .await;
    }

    /// The next frame's body, or `None` at end of stream.
    async fn frame(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut buf = [0; 64];
        loop {
            if let Some(frame) = self.frames.next_frame().expect("a valid frame") {
                return Ok(Some(body(&frame).to_vec()));
            }
            let read = madsim::time::timeout(PATIENCE, self.stream.read(&mut buf));
            let n = read.await.expect("the server answers in time")?;
            if n == 0 {
                return Ok(None);
            }
            self.read.extend_from_slice(&buf[..n]);
            self.frames.push(&buf[..n]);
        }
    }

    /// The next frame's body; fails at end of stream.
    async fn next(&mut self) -> Vec<u8> {
        (self.frame().await)
            .expect("no reset")
            .expect("not at end of stream")
    }

    /// Asserts that the server closed the stream (after any frames still to read).
    async fn closed(&mut self) {
        while self.frame().await.expect("closed, not reset").is_some() {}
    }

    /// Connects `session` (0: a new one) and returns the server's answer.
    async fn handshake(
        &mut self,
        session: i64,
        passwd: Vec<u8>,
        timeout_ms: i32,
    ) -> ConnectResponse {
        let request = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            time_out: timeout_ms,
            session_id: session,
            passwd,
            read_only: Some(false),
        };
        self.write(&request.to_frame()).await;
        ConnectResponse::from_bytes(&self.next().await).expect("a connect response")
    }

    /// A new session, asking for `timeout_ms`.
    async fn open(&mut self, timeout_ms: i32) -> ConnectResponse {
        self.handshake(0, vec![0; 16], timeout_ms).await
    }

    /// The reply to `request` (sent with `xid`), after any notifications.
    async fn call(&mut self, xid: i32, request: Request) -> Reply {
        let op = OpCode::try_from(request.op()).ok();
        self.send(xid, request).await;
        loop {
            let reply = Reply::from_bytes(&self.next().await, op).expect("a reply");
            if reply.header.xid == xid {
                return reply;
            }
        }
    }

    /// The next notification.
    async fn notification(&mut self) -> (EventType, String) {
        let reply = Reply::from_bytes(&self.next().await, None).expect("a reply");
        assert_eq!(reply.header.xid, xid::NOTIFICATION);
        let ReplyBody::Notification(event) = reply.body else {
            panic!("a notification: {reply:?}");
        };
        (EventType::try_from(event.event_type).unwrap(), event.path)
    }
}

fn create(path: &str, data: &[u8]) -> Request {
    Request::Create2(CreateRequest::open(
        path,
        Some(data),
        CreateMode::Persistent,
    ))
}

/// Runs `test` in a fresh runtime seeded with `seed`.
fn simulate<F, R>(seed: u64, test: impl FnOnce() -> F + Send + 'static) -> R
where
    F: Future<Output = R> + 'static,
    R: Send + 'static,
{
    let runtime = Runtime::with_seed_and_config(seed, madsim::Config::default());
    runtime.block_on(async move { test().await })
}

/// Two sessions: a watch set by one fires on the other's change, pings are answered, and a
/// close is answered, then the stream ends; the bytes read, for the determinism test.
async fn two_sessions() -> (Vec<u8>, Vec<u8>, String) {
    let world = World::start().await;
    let mut a = world.zk(0).await;
    let response = a.open(4_000).await;
    assert_eq!(response.time_out, 4_000);
    assert_eq!(response.session_id, 1);
    assert_eq!(response.passwd.len(), 16);
    let created = a.call(1, create("/a", b"x")).await;
    assert_eq!(created.header.err, 0);
    let read = a.call(2, Request::get_data("/a", true)).await;
    let ReplyBody::Response(Response::GetData(GetDataResponse { data, .. })) = read.body else {
        panic!("getData's response: {read:?}");
    };
    assert_eq!(data.as_deref(), Some(&b"x"[..]));

    let mut b = world.zk(1).await;
    assert_eq!(b.open(1_000).await.session_id, 2);
    let set = b.call(1, Request::set_data("/a", b"y", -1)).await;
    assert_eq!(set.header.err, 0);
    assert_eq!(set.header.zxid, 2, "the create, then the set");
    assert_eq!(
        a.notification().await,
        (EventType::NodeDataChanged, "/a".into())
    );

    let pong = a.call(xid::PING, Request::Ping).await;
    assert_eq!((pong.header.xid, pong.header.err), (xid::PING, 0));
    let closed = a.call(3, Request::CloseSession).await;
    assert_eq!(closed.header.err, 0);
    a.closed().await;
    assert_eq!(world.server.sessions(), [SessionId(2)]);
    let events = serde_json::to_string(&world.recorder.take_events()).unwrap();
    (a.read, b.read, events)
}

#[test]
fn a_byte_stream_speaks_zookeeper_s_protocol_with_watches_pings_and_close() {
    simulate(7, two_sessions);
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_events() {
    let first = simulate(11, two_sessions);
    let second = simulate(11, two_sessions);
    assert!(!first.0.is_empty() && !first.1.is_empty());
    assert_eq!(first, second);
}

#[test]
fn a_session_partitioned_past_its_timeout_is_answered_expired() {
    simulate(3, || async {
        let world = World::start().await;
        let mut a = world.zk(0).await;
        let session = a.open(1_000).await;
        assert_eq!(session.time_out, 1_000);
        world.partition(0, 0);
        madsim::time::sleep(Duration::from_secs(3)).await;
        assert_eq!(world.server.sessions(), [], "expired by the server's clock");
        world.network.links().remove(0);
        // The server closed the connection at the expiry; its end of stream arrives once
        // retransmitted past the partition.
        a.closed().await;
        let mut again = world.zk(0).await;
        let answer = (again.handshake(session.session_id, session.passwd, 1_000)).await;
        assert_eq!(answer, ConnectResponse::expired(Some(false)));
        again.closed().await;
    });
}

#[test]
fn a_server_restart_resets_the_stream_and_the_session_survives() {
    simulate(5, || async {
        let world = World::start().await;
        let mut a = world.zk(0).await;
        let session = a.open(4_000).await;
        assert_eq!(a.call(1, create("/kept", b"k")).await.header.err, 0);

        world.network.links().take_down(Node::Server);
        world.server.control(Control::Exit);
        let reset = a.frame().await.expect_err("the exit resets the stream");
        assert_eq!(reset.kind(), io::ErrorKind::ConnectionReset);
        let write = a
            .stream
            .write(b"more")
            .await
            .expect_err("reset for writing too");
        assert_eq!(write.kind(), io::ErrorKind::ConnectionReset);
        let refused = world.dial(0).await.expect_err("the host is down");
        assert_eq!(refused.kind(), io::ErrorKind::ConnectionRefused);

        madsim::time::sleep(Duration::from_secs(1)).await;
        assert!(world.network.links().bring_up(Node::Server));
        let handle = Handle::current();
        handle.kill(world.server_node.id());
        handle.restart(world.server_node.id());
        world.until_listening().await;
        let mut again = world.zk(0).await;
        let resumed = (again.handshake(session.session_id, session.passwd.clone(), 4_000)).await;
        assert_eq!(resumed, session, "the same session, resumed");
        let read = again.call(1, Request::get_data("/kept", false)).await;
        assert_eq!(read.header.err, 0);
    });
}

#[test]
fn malformed_and_over_size_frames_close_the_stream() {
    simulate(9, || async {
        let world = World::start().await;
        // A connect request cut short.
        let mut a = world.zk(0).await;
        a.write(&[0, 0, 0, 3, 0, 0, 0]).await;
        a.closed().await;
        // A request header cut short, after a good handshake.
        let mut b = world.zk(1).await;
        b.open(4_000).await;
        b.write(&[0, 0, 0, 4, 0, 0, 0, 1]).await;
        b.closed().await;
        // A length past the largest frame.
        let mut c = world.zk(2).await;
        c.open(4_000).await;
        let over = u32::try_from(MAX_FRAME + 1).unwrap();
        c.write(&over.to_be_bytes()).await;
        c.closed().await;
        // The server serves on.
        let mut d = world.zk(3).await;
        assert_eq!(d.open(4_000).await.session_id, 3);
        assert_eq!(
            world.server.sessions(),
            [SessionId(1), SessionId(2), SessionId(3)],
            "a closed connection leaves its session to expire"
        );
    });
}

/// The next event of a simulator's own session, in time.
async fn event(session: &SimSession) -> RawEvent {
    let next = madsim::time::timeout(PATIENCE, session.next_event());
    (next.await)
        .expect("an event in time")
        .expect("the session lives")
}

#[test]
fn byte_streams_and_the_simulator_s_own_clients_share_the_tree_sessions_and_expiry() {
    simulate(13, || async {
        let world = World::start().await;
        let connector = SimConnector::new(
            Node::Client(5),
            Duration::from_millis(4_000),
            world.network.clone(),
        );
        let own = connector.connect().await;
        let RawEvent::State {
            state: RawState::Connected { session, .. },
        } = event(&own).await
        else {
            panic!("connected first");
        };
        assert_eq!(session, SessionId(1));
        let mut a = world.zk(0).await;
        assert_eq!(a.open(4_000).await.session_id, 2, "one table of sessions");

        // A watch set over the stream fires on the simulator's client's change...
        assert_eq!(a.call(1, create("/m", b"x")).await.header.err, 0);
        a.call(2, Request::get_data("/m", true)).await;
        let path = Path::new("/m").unwrap();
        let set = ZkRequest::SetData {
            path: path.clone(),
            data: b"y".to_vec(),
            version: None,
        };
        own.submit(OpId(1), set).await;
        assert!(matches!(
            event(&own).await,
            RawEvent::Reply {
                op: OpId(1),
                result: Ok(_)
            }
        ));
        assert_eq!(
            a.notification().await,
            (EventType::NodeDataChanged, "/m".into())
        );

        // ... and the other way round.
        let get = ZkRequest::GetData {
            path: path.clone(),
            watch: true,
        };
        own.submit(OpId(2), get).await;
        assert!(matches!(
            event(&own).await,
            RawEvent::Reply {
                op: OpId(2),
                result: Ok(_)
            }
        ));
        assert_eq!(
            a.call(3, Request::set_data("/m", b"z", -1))
                .await
                .header
                .err,
            0
        );
        let changed = WatchedEvent {
            kind: EventKind::NodeDataChanged,
            path,
        };
        assert_eq!(event(&own).await, RawEvent::Watch { event: changed });

        // The environment's expiry reaches the stream's session.
        world.server.control(Control::ExpireClient(0));
        a.closed().await;
        assert_eq!(world.server.sessions(), [SessionId(1)]);
    });
}

#[test]
fn a_stream_closed_by_its_client_is_closed_by_the_server_and_its_session_lives_on() {
    simulate(15, || async {
        let world = World::start().await;
        let mut a = world.zk(0).await;
        let session = a.open(4_000).await;
        a.stream.close().await.expect("closed");
        a.closed().await;
        let write = a
            .stream
            .write(b"late")
            .await
            .expect_err("closed for writing");
        assert_eq!(write.kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(world.server.sessions(), [SessionId(1)]);
        let mut again = world.zk(0).await;
        let resumed = (again.handshake(session.session_id, session.passwd.clone(), 4_000)).await;
        assert_eq!(resumed, session);
    });
}

#[test]
fn a_killed_client_s_stream_ends_at_the_server_with_its_watches() {
    simulate(17, || async {
        let world = World::start().await;
        let handle = Handle::current();
        let client = handle
            .create_node()
            .name("client-0")
            .ip(node_ip(Node::Client(0)))
            .build();
        let (opened_tx, opened_rx) = futures::channel::oneshot::channel();
        let network = world.network.clone();
        client.spawn(async move {
            let dialer = SimDialer::new(Node::Client(0), network);
            let mut zk = Zk::new(dialer.connect(server_addr()).await.expect("accepted"));
            let session = zk.open(4_000).await;
            zk.call(1, create("/w", b"x")).await;
            zk.call(2, Request::get_data("/w", true)).await;
            let _ = opened_tx.send(session);
            futures::future::pending::<()>().await;
        });
        let session = opened_rx.await.expect("the session opened");
        // The killed process's socket sends its end of stream.
        handle.kill(client.id());
        madsim::time::sleep(Duration::from_secs(1)).await;
        // The server closed the stream, and the watch with it ...
        let mut other = world.zk(1).await;
        other.open(4_000).await;
        assert_eq!(
            other
                .call(1, Request::set_data("/w", b"y", -1))
                .await
                .header
                .err,
            0
        );
        let fired = (world.recorder.take_events().into_iter())
            .filter(|event| matches!(event.kind, TraceEvent::WatchFired { .. }))
            .count();
        assert_eq!(fired, 0, "no watch is left to fire");
        // ... and the session lives on: a new stream resumes it.
        let mut again = world.zk(2).await;
        let resumed = (again.handshake(session.session_id, session.passwd.clone(), 4_000)).await;
        assert_eq!(resumed, session);
    });
}

#[test]
fn children_come_in_an_order_drawn_from_the_seed() {
    let children = |seed| {
        simulate(seed, || async {
            let world = World::start().await;
            let mut a = world.zk(0).await;
            a.open(4_000).await;
            for (xid, name) in (1..).zip(["a", "b", "c", "d", "e", "f"]) {
                assert_eq!(
                    a.call(xid, create(&format!("/{name}"), b""))
                        .await
                        .header
                        .err,
                    0
                );
            }
            let listed = a.call(10, Request::get_children("/", false)).await;
            let ReplyBody::Response(Response::GetChildren(GetChildrenResponse { children })) =
                listed.body
            else {
                panic!("getChildren's response: {listed:?}");
            };
            children
        })
    };
    let orders: std::collections::BTreeSet<Vec<String>> = (0..8).map(children).collect();
    assert!(orders.len() > 1, "the seed decides the order: {orders:?}");
    for order in &orders {
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, ["a", "b", "c", "d", "e", "f"]);
    }
}
