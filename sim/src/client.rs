//! The raw ZooKeeper client: a [`Coordination`] session over the simulated wire, and the
//! [`Connector`] that opens them.
//!
//! Each session handle is served by a task on the client's node that owns the connection,
//! timed as ZooKeeper 3.8's `ClientCnxn` (T is the negotiated session timeout, or the one
//! asked for before the first answer; the read timeout is 2T/3). With one server in its host
//! list:
//! - Every event (replies, watch events, raw states) goes to one ordered stream, in the
//!   order the server sent it.
//! - While connected it pings after half the read timeout without sending (at once, if it
//!   wakes for anything else once idle more than a second within a second of that), and
//!   drops the connection after the read timeout without hearing from the server, or at once
//!   on a reset (end of stream). Dropping it answers the requests in flight with
//!   `ConnectionLoss`, then reports `Disconnected`.
//! - Before every connection attempt but the first it sleeps: 1 s because its host list has
//!   wrapped round to the server it last used (`StaticHostProvider`; always so with one
//!   server), plus a random 0–1000 ms drawn from the run's seed once it has ever reached a
//!   server (`startConnect`). An attempt re-attaches the session with the last zxid it saw
//!   and the watches it still expects (SetWatches); unanswered after the connect timeout
//!   (T ÷ the one server), or refused, it is abandoned, reported as `Disconnected` again
//!   (`ClientCnxn.cleanAndNotifyState` at the end of every failed attempt, which fails the
//!   requests ZooKeeper's client had queued), and the next one sleeps again. The server's
//!   answer is `Connected` again, or `Expired`.
//! - Requests submitted while disconnected are answered `ConnectionLoss` at once (the
//!   framework layer queues its requests itself, and fails them at each `Disconnected`),
//!   after expiry `SessionExpired`.
//! - A lost connection never ends the session; only `close` (which sends a close-session if
//!   connected) or the server's expiry does.
//!
//! With the servers of an ensemble, the host list is shuffled from the run's seed
//! (`StaticHostProvider`), every attempt goes to the next server round-robin, the 1 s sleep
//! comes only when the list has wrapped round to the server last connected to, and the
//! connect timeout is T ÷ the number of servers.
//!
//! So a partition shorter than T can cost the session: the client notices it only after
//! the read timeout and then sleeps at least a second before trying again, while the server
//! expires the session T after it last heard from the client, unless a retransmission of
//! what the client sent during the partition reaches it in time (see [`crate::wire`]).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use coordination::ids::OpId;
use coordination::session::{
    Connector, Coordination, EventInbox, RawEvent, RawState, close_and_wait,
};
use coordination::zk::watches::WatchSet;
use coordination::zk::{Request, SessionId, ZkError, Zxid};
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::channel::oneshot;
use futures::{FutureExt, StreamExt, select_biased};
use madsim::rand::Rng;
use madsim::time::Instant;

use scenarios::fault::Node;

use crate::net::Network;
use crate::stream::SimDialer;
use crate::wire::{ConnId, Datagram, Inbox, Resume, ToClient, ToServer, Wire, server_addr};

/// Opens sessions from one client node. Cheap to clone.
#[derive(Clone)]
pub struct SimConnector {
    me: Node,
    timeout: Duration,
    network: Network,
    servers: Vec<SocketAddr>,
}

impl SimConnector {
    /// A connector for the node `me` (call it on that node), asking for session timeout
    /// `timeout`, over the run's `network`.
    pub fn new(me: Node, timeout: Duration, network: Network) -> SimConnector {
        SimConnector {
            me,
            timeout,
            network,
            servers: vec![server_addr()],
        }
    }

    /// The servers sessions connect to (the standalone server's address unless given): the
    /// servers of an ensemble.
    pub fn servers(mut self, servers: Vec<SocketAddr>) -> SimConnector {
        self.servers = servers;
        self
    }

    /// A dialer of byte connections from this connector's node: how a program's client
    /// library connects.
    pub fn dialer(&self) -> SimDialer {
        SimDialer::new(self.me, self.network.clone())
    }

    /// The session timeout this connector's sessions ask for.
    pub fn session_timeout(&self) -> Duration {
        self.timeout
    }

    /// Starts the faults armed to start when this connector's client sends `request` (a
    /// scenario fault's `on_request`): what a program's tap calls just before one of its
    /// client library's requests leaves, as the built-in client does.
    pub fn before_request(&self, request: &Request) {
        if let Node::Client(client) = self.me {
            self.network.before_request(client, request);
        }
    }
}

impl Connector for SimConnector {
    type Session = SimSession;

    async fn connect(&self) -> SimSession {
        let wire = Wire::bind(0, self.me, self.network.clone());
        let now = wire.now();
        let (commands_tx, commands_rx) = unbounded();
        let (events_tx, events_rx) = unbounded();
        let task = SessionTask {
            wire,
            asked: self.timeout,
            events: events_tx,
            session: None,
            last_zxid: Zxid::default(),
            watches: WatchSet::default(),
            phase: Phase::Waiting { until: now },
            conn: Conn::open(now),
            reached: false,
            hosts: Hosts::new(self.servers.clone()),
        };
        madsim::task::spawn(task.run(commands_rx));
        SimSession {
            commands: commands_tx,
            events: EventInbox::new(events_rx),
        }
    }
}

/// One session handle. See the module documentation.
pub struct SimSession {
    commands: UnboundedSender<Command>,
    events: EventInbox,
}

enum Command {
    Submit { op: OpId, request: Request },
    Close(oneshot::Sender<()>),
}

impl Coordination for SimSession {
    async fn submit(&self, op: OpId, request: Request) {
        // The task is gone only after close, when nothing is to be answered any more.
        let _ = self
            .commands
            .unbounded_send(Command::Submit { op, request });
    }

    async fn next_event(&self) -> Option<RawEvent> {
        self.events.next().await
    }

    async fn close(&self) {
        close_and_wait(&self.commands, Command::Close).await;
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send + 'static {
        madsim::time::sleep(duration)
    }
}

/// The sleep before every connection attempt but the first: `StaticHostProvider.next`'s spin
/// delay when the host list wraps round to the last server used, always so with one server.
const WRAP_SLEEP: Duration = Duration::from_secs(1);

/// The bound of the random sleep `ClientCnxn.startConnect` adds before every attempt once a
/// server has ever been reached.
const RANDOM_SLEEP_MS: u64 = 1_000;

/// Idle time past which the client pings up to a second early when it wakes for anything
/// else (`ClientCnxn`: a second off the ping interval once idle more than a second).
const EARLY_PING: Duration = Duration::from_secs(1);

#[derive(Debug)]
enum Phase {
    /// Sleeping before the next connection attempt.
    Waiting {
        /// When the attempt starts.
        until: Instant,
    },
    /// Waiting for the server to answer the current connection's `Connect`.
    Connecting {
        /// When the attempt is abandoned (the connect timeout).
        deadline: Instant,
    },
    /// Attached to the session.
    Connected,
    /// A close-session is out; the task ends on its answer or when the connection drops.
    Closing(oneshot::Sender<()>),
    /// The server said the session has expired.
    Expired,
    /// The task is done.
    Finished,
}

/// One connection, from the client's side.
struct Conn {
    id: ConnId,
    sent: u64,
    inbox: Inbox<ToClient>,
    in_flight: VecDeque<(OpId, Request)>,
    last_sent: Instant,
    last_heard: Instant,
}

impl Conn {
    fn open(now: Instant) -> Conn {
        Conn {
            id: madsim::rand::random(),
            sent: 0,
            inbox: Inbox::default(),
            in_flight: VecDeque::new(),
            last_sent: now,
            last_heard: now,
        }
    }
}

struct SessionTask {
    wire: Wire,
    asked: Duration,
    events: UnboundedSender<RawEvent>,
    session: Option<(SessionId, Duration)>,
    last_zxid: Zxid,
    watches: WatchSet,
    phase: Phase,
    conn: Conn,
    /// Whether a connection has ever reached the server (`ClientCnxn`'s `!isFirstConnect`).
    reached: bool,
    hosts: Hosts,
}

/// The client's host list, as ZooKeeper's `StaticHostProvider` keeps it.
struct Hosts {
    /// The servers, shuffled from the run's seed when there is more than one.
    servers: Vec<SocketAddr>,
    /// The server of the current attempt.
    current: usize,
    /// The server of the last connection that was answered, or the first one tried
    /// (`StaticHostProvider` sets `lastIndex` to its first server before it ever connects).
    last_connected: usize,
}

impl Hosts {
    fn new(mut servers: Vec<SocketAddr>) -> Hosts {
        if servers.len() > 1 {
            crate::server::shuffle(&mut servers);
        }
        Hosts {
            servers,
            current: 0,
            last_connected: 0,
        }
    }

    fn current(&self) -> SocketAddr {
        self.servers[self.current]
    }

    /// Moves on to the next server; true when the list has wrapped round to the server last
    /// connected to (always so with one server), which costs the next attempt a sleep.
    fn advance(&mut self) -> bool {
        self.current = (self.current + 1) % self.servers.len();
        self.current == self.last_connected
    }
}

impl SessionTask {
    async fn run(mut self, mut commands: UnboundedReceiver<Command>) {
        // The first attempt is at once.
        self.attempt();
        let mut receive = self.wire.receive::<ToClient>().fuse();
        let mut alarm = self.wire.alarm();
        while !matches!(self.phase, Phase::Finished) {
            if self.early_ping_due() {
                self.send(ToServer::Ping);
            }
            let deadline = self.deadline();
            select_biased! {
                (datagram, _) = receive => {
                    receive = self.wire.receive::<ToClient>().fuse();
                    self.on_datagram(datagram);
                }
                command = commands.next() => match command {
                    Some(Command::Submit { op, request }) => self.submit(op, request),
                    Some(Command::Close(done)) => self.close(done),
                    // The handle was dropped without a close: just go.
                    None => self.phase = Phase::Finished,
                },
                () = alarm.until(deadline).fuse() => self.on_deadline(),
            }
        }
    }

    fn now(&self) -> Instant {
        self.wire.now()
    }

    /// The negotiated session timeout, or the one asked for until the server answered.
    fn timeout(&self) -> Duration {
        self.session.map_or(self.asked, |(_, timeout)| timeout)
    }

    /// `ClientCnxn`'s read timeout: 2/3 of the session timeout.
    fn read_timeout(&self) -> Duration {
        self.timeout() * 2 / 3
    }

    /// `ClientCnxn`'s connect timeout: the session timeout ÷ the number of servers.
    fn connect_timeout(&self) -> Duration {
        let servers = u32::try_from(self.hosts.servers.len()).unwrap_or(u32::MAX);
        self.timeout() / servers
    }

    fn deadline(&self) -> Option<Instant> {
        match self.phase {
            Phase::Waiting { until } => Some(until),
            Phase::Connecting { deadline } => Some(deadline),
            Phase::Connected => {
                let ping = self.conn.last_sent + self.read_timeout() / 2;
                Some(ping.min(self.silence_limit()))
            }
            Phase::Closing(_) => Some(self.silence_limit()),
            Phase::Expired | Phase::Finished => None,
        }
    }

    fn silence_limit(&self) -> Instant {
        self.conn.last_heard + self.read_timeout()
    }

    /// Connected and idle more than a second, within a second of the ping interval.
    fn early_ping_due(&self) -> bool {
        if !matches!(self.phase, Phase::Connected) {
            return false;
        }
        let idle = self.now().duration_since(self.conn.last_sent);
        idle > EARLY_PING && idle + EARLY_PING >= self.read_timeout() / 2
    }

    fn on_deadline(&mut self) {
        match self.phase {
            Phase::Waiting { .. } => self.attempt(),
            Phase::Connecting { .. } => self.fail_attempt(),
            Phase::Connected | Phase::Closing(_) if self.now() >= self.silence_limit() => {
                self.drop_connection();
            }
            Phase::Connected => self.send(ToServer::Ping),
            Phase::Closing(_) | Phase::Expired | Phase::Finished => {}
        }
    }

    fn emit(&self, event: RawEvent) {
        // Nobody listens any more only after the handle was dropped.
        let _ = self.events.unbounded_send(event);
    }

    fn answer(&self, op: OpId, error: ZkError) {
        self.emit(RawEvent::Reply {
            op,
            result: Err(error),
        });
    }

    fn send(&mut self, body: ToServer) {
        let datagram = self.next_datagram(body);
        self.wire.send(Node::Server, self.hosts.current(), datagram);
    }

    fn next_datagram(&mut self, body: ToServer) -> Datagram<ToServer> {
        let datagram = Datagram::Seq {
            conn: self.conn.id,
            seq: self.conn.sent,
            body,
        };
        self.conn.sent += 1;
        self.conn.last_sent = self.now();
        datagram
    }

    /// Sends the current connection's `Connect` (its sequence 0), which asks for a new
    /// session or re-attaches the current one.
    fn attempt(&mut self) {
        let resume = self.session.map(|(session, _)| Resume {
            session,
            last_zxid: self.last_zxid,
            watches: self.watches.clone(),
        });
        let deadline = self.now() + self.connect_timeout();
        self.phase = Phase::Connecting { deadline };
        let timeout = self.asked;
        let connect = self.next_datagram(ToServer::Connect { timeout, resume });
        (self.wire).open(Node::Server, self.hosts.current(), connect, deadline);
    }

    /// The current connection is given up (an attempt unanswered or refused, or a connection
    /// lost): the stream says `Disconnected`, what still arrives on it is ignored, and the
    /// next attempt, on a new connection, sleeps first.
    fn fail_attempt(&mut self) {
        self.emit(RawEvent::State {
            state: RawState::Disconnected,
        });
        self.conn = Conn::open(self.now());
        let mut sleep = Duration::ZERO;
        if self.hosts.advance() {
            sleep += WRAP_SLEEP;
        }
        if self.reached {
            let ms = madsim::rand::thread_rng().gen_range(0..RANDOM_SLEEP_MS);
            sleep += Duration::from_millis(ms);
        }
        self.phase = Phase::Waiting {
            until: self.now() + sleep,
        };
    }

    fn submit(&mut self, op: OpId, request: Request) {
        match self.phase {
            Phase::Connected => {
                self.wire.before_request(&request);
                self.conn.in_flight.push_back((op, request.clone()));
                self.send(ToServer::Request { op, request });
            }
            Phase::Expired => self.answer(op, ZkError::SessionExpired),
            _ => self.answer(op, ZkError::ConnectionLoss),
        }
    }

    fn close(&mut self, done: oneshot::Sender<()>) {
        if let Phase::Connected = self.phase {
            self.phase = Phase::Closing(done);
            self.send(ToServer::Close);
        } else {
            self.phase = Phase::Finished;
        }
    }

    fn on_datagram(&mut self, datagram: Datagram<ToClient>) {
        match datagram {
            Datagram::Seq { conn, seq, body } if conn == self.conn.id => {
                self.reached = true;
                for message in self.conn.inbox.accept(seq, body) {
                    self.conn.last_heard = self.now();
                    self.on_message(message);
                }
            }
            Datagram::Reset { conn }
                if conn == self.conn.id
                    && !matches!(self.phase, Phase::Expired | Phase::Finished) =>
            {
                self.drop_connection();
            }
            // Datagrams of an older connection.
            _ => {}
        }
    }

    fn on_message(&mut self, message: ToClient) {
        match message {
            ToClient::Accepted { session, timeout } => {
                self.session = Some((session, timeout));
                self.hosts.last_connected = self.hosts.current;
                if let Phase::Connecting { .. } = self.phase {
                    self.phase = Phase::Connected;
                    self.emit(RawEvent::State {
                        state: RawState::Connected { session, timeout },
                    });
                }
            }
            ToClient::Expired => {
                self.phase = Phase::Expired;
                self.emit(RawEvent::State {
                    state: RawState::Expired,
                });
            }
            ToClient::Reply { op, result, zxid } => {
                if let Some((sent, request)) = self.conn.in_flight.pop_front() {
                    debug_assert_eq!(sent, op, "replies come in request order");
                    self.watches.record(&request, &result);
                }
                self.last_zxid = self.last_zxid.max(zxid);
                self.emit(RawEvent::Reply { op, result });
            }
            ToClient::Watch { event } => {
                self.watches.consume(&event);
                self.emit(RawEvent::Watch { event });
            }
            ToClient::Pong => {}
            ToClient::Closed => self.finish_close(),
        }
    }

    fn finish_close(&mut self) {
        if let Phase::Closing(done) = std::mem::replace(&mut self.phase, Phase::Finished) {
            let _ = done.send(());
        }
    }

    /// The connection is gone: answer what was in flight, report `Disconnected`, and (unless
    /// closing) sleep before re-attaching on a new connection.
    fn drop_connection(&mut self) {
        for (op, _) in std::mem::take(&mut self.conn.in_flight) {
            self.answer(op, ZkError::ConnectionLoss);
        }
        if let Phase::Closing(_) = self.phase {
            self.finish_close();
            return;
        }
        self.fail_attempt();
    }
}
