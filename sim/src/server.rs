//! The simulated ZooKeeper server: a single-threaded service over the shared data tree,
//! with sessions, connections and the periodic expiry and container sweeps.
//!
//! Its state lives in a [`ServerHandle`] owned by the run, outside the node, so that a
//! restart keeps the tree, the zxid and the sessions. A restart is the process exiting
//! ([`Control::Exit`]: its host closes every connection, so each client sees end of stream at
//! once) and, after a downtime, starting again (madsim kills the node's tasks and runs its
//! init again). A restarted ZooKeeper re-tracks every session it restores with its full
//! timeout when its session tracker starts, and serves clients only after the rest of its
//! startup ([`STARTUP_TAIL_MS`]): so a surviving session's expiry clock restarts that tail
//! *before* the server serves again, drawn from the run's seed for each restart.
//!
//! Besides the simulator's own clients, it serves byte streams ([`crate::stream`]) in
//! ZooKeeper's wire protocol (`sim/src/server/protocol.rs`), over the same tree, sessions and clocks.
//!
//! The same server, started with [`ServerHandle::member`] and
//! [`ServerHandle::start_member_node`], is one server of an ensemble
//! (`sim/src/server/member.rs`): its clients' connections are served here, what differs is
//! there.

mod election;
mod member;
mod protocol;
mod sync_limit;

pub use election::ELECTION_MS;
pub use member::{Recorded, recorded};

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use coordination::ids::OpId;
use coordination::zk::tree::{Applied, Fired, Tree};
use coordination::zk::{OpOk, Request, SessionId, Zxid};
use frontend::{FrontEnd, Limits};
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::future::Either;
use futures::{FutureExt, StreamExt, select_biased};
use madsim::rand::Rng;
use madsim::runtime::{Handle, NodeHandle};
use madsim::time::Instant;

use scenarios::fault::Node;
use trace::{EventKind, ReadFrom, ServerSession};

use crate::net::Network;
use crate::recorder::Recorder;
use crate::settings::{negotiate, tick};
use crate::stream::Segment;
use crate::time::SimTime;
use crate::wire::{
    ConnId, Datagram, Inbox, Resume, SERVER_PORT, ToClient, ToServer, Wire, client_of, node_ip,
    server_addr,
};
use scenarios::scenario::ServerSettings;

/// From the start of a restarted ZooKeeper's session tracker, which restores the sessions
/// with their full timeouts (`SessionTrackerImpl`), to its serving clients: the rest of
/// `ZooKeeperServer.startupWithServerState` (request processors, JMX registration,
/// metrics), while it closes every connection ("ZooKeeperServer not running"). Measured on
/// Debian's ZooKeeper 3.8 (the real executor's local server, 2-core machine): the restored
/// sessions expired 357-822 ms after the server served again with T = 1 s, a tail of about
/// 180-740 ms, over 11 restarts.
pub const STARTUP_TAIL_MS: std::ops::RangeInclusive<u64> = 150..=750;

/// A command from the environment (the fault injector).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Expire the newest live session of this client now.
    ExpireClient(u16),
    /// Exit: close every connection and stop serving.
    Exit,
}

#[derive(Debug)]
struct Session {
    client: u16,
    timeout: Duration,
    deadline: Instant,
    conn: Option<ConnId>,
}

impl Session {
    /// A session of `client` on connection `conn`, due to expire at `deadline`.
    fn on(client: u16, conn: ConnId, timeout: Duration, deadline: Instant) -> Session {
        Session {
            conn: Some(conn),
            ..Session::detached(client, timeout, deadline)
        }
    }

    /// A session of `client` attached to no connection of this server.
    fn detached(client: u16, timeout: Duration, deadline: Instant) -> Session {
        Session {
            client,
            timeout,
            deadline,
            conn: None,
        }
    }
}

#[derive(Debug)]
struct Conn {
    session: SessionId,
    client: u16,
    peer: SocketAddr,
    inbox: Inbox<ToServer>,
    sent: u64,
}

/// A datagram to send once the state lock is released: to a client, at its address.
type Out = (u16, SocketAddr, Outgoing);

/// A datagram of one of the two kinds of connection the server serves.
#[derive(Debug)]
enum Outgoing {
    /// To one of the simulator's own clients.
    Message(Datagram<ToClient>),
    /// On a byte stream.
    Stream(Datagram<Segment>),
}

impl From<Datagram<ToClient>> for Outgoing {
    fn from(datagram: Datagram<ToClient>) -> Outgoing {
        Outgoing::Message(datagram)
    }
}

impl From<Datagram<Segment>> for Outgoing {
    fn from(datagram: Datagram<Segment>) -> Outgoing {
        Outgoing::Stream(datagram)
    }
}

struct State {
    settings: ServerSettings,
    /// The tree and the session table (ids, passwords, negotiated timeouts) of every kind
    /// of client; `sessions` holds what the server's clock needs of each.
    front: FrontEnd,
    sessions: BTreeMap<SessionId, Session>,
    conns: BTreeMap<ConnId, Conn>,
    /// The byte streams, in ZooKeeper's wire protocol.
    streams: BTreeMap<ConnId, protocol::Stream>,
    /// Connections that ended; their datagrams get a reset.
    retired: BTreeSet<ConnId>,
    /// When the process last exited.
    exited: Option<Instant>,
    control: Option<UnboundedSender<Control>>,
    recorder: Recorder,
    time: SimTime,
    /// What a server of an ensemble keeps besides; `None` for a standalone server.
    member: Option<member::Member>,
}

/// The server's state, shared by the run and the server node's incarnations. Cheap to clone.
#[derive(Clone)]
pub struct ServerHandle {
    state: Arc<Mutex<State>>,
    network: Network,
}

impl ServerHandle {
    /// A fresh server (an empty tree at zxid 0) that records into `recorder` and sends through
    /// the run's `network`.
    pub fn new(settings: ServerSettings, recorder: Recorder, network: Network) -> Self {
        let tick_ms = i32::try_from(settings.tick_ms).unwrap_or(i32::MAX);
        let state = State {
            settings,
            front: FrontEnd::new(Limits::from_tick(tick_ms)),
            sessions: BTreeMap::new(),
            conns: BTreeMap::new(),
            streams: BTreeMap::new(),
            retired: BTreeSet::new(),
            exited: None,
            control: None,
            recorder,
            time: network.time().clone(),
            member: None,
        };
        ServerHandle {
            state: Arc::new(Mutex::new(state)),
            network,
        }
    }

    /// A copy of the data tree.
    pub fn tree(&self) -> Tree {
        self.lock().tree().clone()
    }

    /// The sessions the server holds, in id order.
    pub fn sessions(&self) -> Vec<SessionId> {
        self.lock().sessions.keys().copied().collect()
    }

    /// Sends a command to the running server (dropped while it is down).
    pub fn control(&self, command: Control) {
        if let Some(control) = &self.lock().control {
            let _ = control.unbounded_send(command);
        }
    }

    /// Starts the server on a node of its own at the server's address, with [`Self::run`] as
    /// the node's init (so that a restart of the node starts it again), and returns the node
    /// once the server listens.
    pub async fn start_node(&self) -> NodeHandle {
        let server = self.clone();
        let node = Handle::current()
            .create_node()
            .name("zookeeper")
            .ip(node_ip(Node::Server))
            .init(move || server.clone().run())
            .build();
        while !self.network.is_bound(server_addr()) {
            yield_now().await;
        }
        node
    }

    /// The server node's main: call it from the node's init. Starts (or restarts) the server.
    pub async fn run(self) {
        let (control_tx, control_rx) = unbounded();
        let (tick, sweep) = {
            let mut state = self.lock();
            state.restart(control_tx);
            let sweep = Duration::from_millis(state.settings.container_sweep_ms);
            (tick(&state.settings), sweep)
        };
        let wire = Wire::bind(SERVER_PORT, Node::Server, self.network.clone());
        self.serve(wire, control_rx, tick, sweep).await;
    }

    async fn serve(
        &self,
        wire: Wire,
        mut control: UnboundedReceiver<Control>,
        tick: Duration,
        sweep: Duration,
    ) {
        let mut receive = wire.receive_either::<ToServer, Segment>().fuse();
        let mut next_tick = wire.now() + tick;
        let mut next_sweep = wire.now() + sweep;
        let mut alarm = wire.alarm();
        loop {
            let out = select_biased! {
                command = control.next() => match command {
                    Some(Control::ExpireClient(client)) => self.lock().expire_client(client),
                    Some(Control::Exit) => {
                        let closed = self.lock().exit();
                        send_all(&wire, closed);
                        return;
                    }
                    None => Vec::new(),
                },
                (datagram, from) = receive => {
                    receive = wire.receive_either::<ToServer, Segment>().fuse();
                    match datagram {
                        Either::Left(datagram) => self.lock().on_datagram(datagram, from),
                        Either::Right(datagram) => self.lock().on_segment(datagram, from),
                    }
                }
                () = alarm.until(Some(next_tick.min(next_sweep))).fuse() => {
                    if next_tick <= next_sweep {
                        next_tick += tick;
                        self.lock().expire_due()
                    } else {
                        next_sweep += sweep;
                        self.lock().sweep_containers()
                    }
                },
            };
            send_all(&wire, out);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("server state lock")
    }
}

impl State {
    /// The process serves (again). After an exit, every session it holds got its full timeout
    /// when its session tracker started, a startup tail ago (drawn from the run's seed, not
    /// before the exit); those already due expire now, with nothing to send: every
    /// connection ended with the exit.
    fn restart(&mut self, control: UnboundedSender<Control>) {
        self.control = Some(control);
        let Some(exited) = self.exited else {
            return;
        };
        let now = self.time.now();
        let drawn = madsim::rand::thread_rng().gen_range(STARTUP_TAIL_MS);
        let tracked = now - Duration::from_millis(drawn).min(now - exited);
        for session in self.sessions.values_mut() {
            session.deadline = tracked + session.timeout;
        }
        let out = self.expire_due();
        debug_assert!(out.is_empty(), "no connection outlives an exit: {out:?}");
    }

    /// The process exits: it takes no more commands, and its host closes every connection
    /// (the returned resets, one per connection).
    fn exit(&mut self) -> Vec<Out> {
        self.control = None;
        self.exited = Some(self.time.now());
        self.drop_clients()
    }

    /// Closes every connection (the returned resets, one per connection); the sessions stay.
    fn drop_clients(&mut self) -> Vec<Out> {
        for session in self.sessions.values_mut() {
            session.conn = None;
        }
        let conns = std::mem::take(&mut self.conns);
        let streams = std::mem::take(&mut self.streams);
        self.retired.extend(conns.keys().chain(streams.keys()));
        let conns = (conns.into_iter()).map(|(conn, c)| {
            (
                c.client,
                c.peer,
                Datagram::<ToClient>::Reset { conn }.into(),
            )
        });
        let streams = (streams.into_iter())
            .map(|(conn, s)| (s.client, s.peer, Datagram::<Segment>::Reset { conn }.into()));
        conns.chain(streams).collect()
    }

    /// The data tree.
    fn tree(&self) -> &Tree {
        self.front.tree()
    }

    fn tree_mut(&mut self) -> &mut Tree {
        self.front.tree_mut()
    }

    fn record(&self, kind: EventKind) {
        self.recorder.record(None, kind);
    }

    fn on_datagram(&mut self, datagram: Datagram<ToServer>, from: SocketAddr) -> Vec<Out> {
        let Datagram::Seq { conn, seq, body } = datagram else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let Some(client) = client_of(from) else {
            return out;
        };
        if self.retired.contains(&conn) {
            out.push((client, from, Datagram::<ToClient>::Reset { conn }.into()));
            return out;
        }
        let Some(known) = self.conns.get_mut(&conn) else {
            match body {
                ToServer::Connect { timeout, resume } if seq == 0 => {
                    self.connect(conn, client, from, timeout, resume, &mut out);
                }
                // A connection the server never saw open (its Connect was lost).
                _ => out.push((client, from, Datagram::<ToClient>::Reset { conn }.into())),
            }
            return out;
        };
        for message in known.inbox.accept(seq, body) {
            self.on_message(conn, message, &mut out);
        }
        out
    }

    fn connect(
        &mut self,
        conn: ConnId,
        client: u16,
        peer: SocketAddr,
        asked: Duration,
        resume: Option<Resume>,
        out: &mut Vec<Out>,
    ) {
        // A client that has seen a later zxid than this server has applied is refused, as
        // ZooKeeper's `processConnectRequest` refuses it ("client must try another server"): a
        // follower behind the client would answer it with older state than it has read.
        let ahead = resume
            .as_ref()
            .is_some_and(|r| r.last_zxid > self.tree().zxid());
        if self.refuses() || ahead {
            return self.refuse(conn, (client, peer), out);
        }
        match resume {
            None if self.member.is_some() => {
                self.open_in_ensemble(conn, (client, peer), asked, out);
            }
            None => {
                let timeout = negotiate(&self.settings, asked);
                let session = self.front.open(millis(timeout));
                let deadline = self.time.now() + timeout;
                self.sessions
                    .insert(session, Session::on(client, conn, timeout, deadline));
                self.record_session(session, ServerSession::Created);
                self.attach_conn(conn, session, (client, peer));
                self.send(conn, ToClient::Accepted { session, timeout }, out);
            }
            Some(resume) if self.member.is_some() => {
                self.revalidate_in_ensemble(conn, (client, peer), resume, out);
            }
            Some(resume) => self.reattach(conn, (client, peer), resume, out),
        }
    }

    /// Resumes the session `resume` names on the new connection `conn`, with the watches the
    /// client still expects (those whose change it missed fire now); a session this server
    /// no longer holds is told it expired.
    fn reattach(
        &mut self,
        conn: ConnId,
        (client, peer): (u16, SocketAddr),
        resume: Resume,
        out: &mut Vec<Out>,
    ) {
        let now = self.time.now();
        let session = resume.session;
        let Some(entry) = self.sessions.get_mut(&session) else {
            return self.refuse_expired(conn, (client, peer), out);
        };
        entry.deadline = now + entry.timeout;
        let timeout = entry.timeout;
        if let Some(old) = entry.conn.replace(conn) {
            self.detach(old);
        }
        self.tree_mut().drop_watches(session);
        let fired = (self.tree_mut()).set_watches(session, resume.last_zxid, &resume.watches);
        self.record_session(session, ServerSession::Reattached);
        self.attach_conn(conn, session, (client, peer));
        self.send(conn, ToClient::Accepted { session, timeout }, out);
        self.deliver(fired, None, out);
    }

    /// Resets connection `conn` and retires it: a client on a new connection tries another
    /// server, one on an established connection hears end of stream.
    fn refuse(&mut self, conn: ConnId, (client, peer): (u16, SocketAddr), out: &mut Vec<Out>) {
        self.retired.insert(conn);
        out.push((client, peer, Datagram::<ToClient>::Reset { conn }.into()));
    }

    /// Tells the client on connection `conn` that the session it resumes has expired.
    fn refuse_expired(
        &mut self,
        conn: ConnId,
        (client, peer): (u16, SocketAddr),
        out: &mut Vec<Out>,
    ) {
        self.retired.insert(conn);
        let body = ToClient::Expired;
        out.push((client, peer, Datagram::Seq { conn, seq: 0, body }.into()));
    }

    /// Serves `session` on the new connection `conn` of `client` at `peer`.
    fn attach_conn(&mut self, conn: ConnId, session: SessionId, (client, peer): (u16, SocketAddr)) {
        self.conns.insert(
            conn,
            Conn {
                session,
                client,
                peer,
                // Sequence 0 was the Connect itself.
                inbox: Inbox::starting_at(1),
                sent: 0,
            },
        );
    }

    fn on_message(&mut self, conn: ConnId, message: ToServer, out: &mut Vec<Out>) {
        // Nothing follows a close on its connection; anything that did is dropped.
        let Some(session) = self.conns.get(&conn).map(|c| c.session) else {
            return;
        };
        if let Some(entry) = self.sessions.get_mut(&session) {
            entry.deadline = self.time.now() + entry.timeout;
        }
        self.touched(session);
        match message {
            // Only sequence 0 is a Connect, and it was handled when the connection opened.
            ToServer::Connect { .. } => {}
            ToServer::Ping => self.send(conn, ToClient::Pong, out),
            ToServer::Request { op, request } if self.member.is_some() => {
                self.request_in_ensemble(conn, session, (op, request), out);
            }
            ToServer::Close if self.member.is_some() => self.forward(conn, session, None, out),
            ToServer::Request { op, request } => self.apply(conn, session, op, request, out),
            ToServer::Close => {
                self.send(conn, ToClient::Closed, out);
                self.end_session(session, ServerSession::Closed, out);
            }
        }
    }

    fn apply(
        &mut self,
        conn: ConnId,
        session: SessionId,
        op: OpId,
        request: Request,
        out: &mut Vec<Out>,
    ) {
        let mut applied = self.tree_mut().apply(session, &request);
        if let Ok(OpOk::Children { names, pzxid }) = &mut applied.result {
            shuffle(names);
            *pzxid = (self.tree().get(request.path())).map(|parent| parent.stat.pzxid);
        }
        // In an ensemble only reads are applied here (writes go through the leader's log).
        let read_from = (self.member.as_ref()).map(|member| ReadFrom {
            server: member.id,
            zxid: self.tree().zxid(),
        });
        let reply = (true, Some(conn));
        self.applied(session, (op, request), applied, read_from, reply, out);
    }

    /// What follows a request's application to the tree: recorded (when `record`, with where
    /// a read was answered in an ensemble), its watch events delivered, then the reply sent on
    /// `reply_to`, if any.
    fn applied(
        &mut self,
        session: SessionId,
        (op, request): (OpId, Request),
        applied: Applied,
        read_from: Option<ReadFrom>,
        (record, reply_to): (bool, Option<ConnId>),
        out: &mut Vec<Out>,
    ) {
        let result = applied.result.clone();
        if record {
            self.record(EventKind::OpApplied {
                session,
                op,
                request,
                result: applied.result,
                zxid: applied.zxid,
                read_from,
            });
        }
        // Watch events before the reply that reflects their change.
        self.deliver(applied.fired, applied.zxid, out);
        if let Some(conn) = reply_to {
            let zxid = self.tree().zxid();
            self.send(conn, ToClient::Reply { op, result, zxid }, out);
        }
    }

    /// Delivers fired watches to their sessions' connections, recording each with `zxid`.
    fn deliver(&mut self, fired: Vec<Fired>, zxid: Option<Zxid>, out: &mut Vec<Out>) {
        for Fired { session, event } in fired {
            self.record(EventKind::WatchFired {
                session,
                event: event.clone(),
                zxid,
            });
            let Some(conn) = self.sessions.get(&session).and_then(|s| s.conn) else {
                continue;
            };
            if self.streams.contains_key(&conn) {
                self.notify(conn, Fired { session, event }, out);
            } else {
                self.send(conn, ToClient::Watch { event }, out);
            }
        }
    }

    fn send(&mut self, conn: ConnId, body: ToClient, out: &mut Vec<Out>) {
        if let Some(c) = self.conns.get_mut(&conn) {
            let seq = c.sent;
            c.sent += 1;
            out.push((c.client, c.peer, Datagram::Seq { conn, seq, body }.into()));
        }
    }

    /// Ends `session` (close or expiry): its ephemerals go in one zxid, its watches are
    /// dropped, its connection ends (see [`State::forget`]).
    fn end_session(&mut self, session: SessionId, change: ServerSession, out: &mut Vec<Out>) {
        if !self.sessions.contains_key(&session) {
            return;
        }
        let before = self.tree().zxid();
        let fired = self.front.end(session);
        let zxid = (self.tree().zxid() != before).then_some(self.tree().zxid());
        self.forget(session, change, out);
        self.deliver(fired, zxid, out);
    }

    /// Drops `session`, already ended in the tree and the table, from the server's clock, and
    /// ends its connection: the simulator's own client's with a reset on expiry (as the
    /// server closes the socket), a byte stream with end of stream.
    fn forget(&mut self, session: SessionId, change: ServerSession, out: &mut Vec<Out>) {
        let Some(entry) = self.sessions.remove(&session) else {
            return;
        };
        if self.records_sessions() {
            self.record_session(session, change);
        }
        let Some(conn) = entry.conn else {
            return;
        };
        if let Some(c) = self.conns.remove(&conn) {
            self.retired.insert(conn);
            if change == ServerSession::Expired {
                out.push((
                    c.client,
                    c.peer,
                    Datagram::<ToClient>::Reset { conn }.into(),
                ));
            }
        } else {
            self.close_stream(conn, out);
        }
    }

    /// Closes the client connection `conn` from the server's side: the client hears a reset
    /// (end of stream); the session stays, without the watches set over this connection if it
    /// was the session's current one.
    fn close_conn(&mut self, conn: ConnId, out: &mut Vec<Out>) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        if let Some(session) = self.sessions.get_mut(&c.session)
            && session.conn == Some(conn)
        {
            session.conn = None;
            self.tree_mut().drop_watches(c.session);
        }
        self.refuse(conn, (c.client, c.peer), out);
    }

    /// A session's connection `conn` (of either kind) is replaced by a new one: it ends, and
    /// what still arrives on it gets a reset.
    fn detach(&mut self, conn: ConnId) {
        self.conns.remove(&conn);
        self.streams.remove(&conn);
        self.retired.insert(conn);
    }

    fn expire_due(&mut self) -> Vec<Out> {
        let now = self.time.now();
        let due: Vec<SessionId> = (self.sessions.iter())
            .filter(|(_, s)| s.deadline <= now)
            .map(|(id, _)| *id)
            .collect();
        let mut out = Vec::new();
        if self.member.is_some() {
            self.expire_in_ensemble(due, &mut out);
            return out;
        }
        for session in due {
            self.end_session(session, ServerSession::Expired, &mut out);
        }
        out
    }

    fn expire_client(&mut self, client: u16) -> Vec<Out> {
        let newest = (self.sessions.iter().rev())
            .find(|(_, s)| s.client == client)
            .map(|(id, _)| *id);
        let mut out = Vec::new();
        match newest {
            Some(session) if self.member.is_some() => {
                self.expire_in_ensemble(vec![session], &mut out);
            }
            Some(session) => self.end_session(session, ServerSession::Expired, &mut out),
            None => {}
        }
        out
    }

    fn sweep_containers(&mut self) -> Vec<Out> {
        if self.member.is_some() {
            return self.sweep_in_ensemble();
        }
        self.reap()
    }

    /// Reaps the empty containers and fires their watches.
    fn reap(&mut self) -> Vec<Out> {
        let before = self.tree().zxid();
        let fired = self.tree_mut().reap_containers();
        // Each reaped container has its own zxid; the events are stamped with the sweep's last.
        let zxid = (self.tree().zxid() != before).then_some(self.tree().zxid());
        let mut out = Vec::new();
        self.deliver(fired, zxid, &mut out);
        out
    }

    fn record_session(&self, session: SessionId, change: ServerSession) {
        self.record(EventKind::ServerSession { session, change });
    }
}

/// Sends the server's datagrams.
fn send_all(wire: &Wire, out: Vec<Out>) {
    for (client, peer, datagram) in out {
        match datagram {
            Outgoing::Message(datagram) => wire.send(Node::Client(client), peer, datagram),
            Outgoing::Stream(datagram) => wire.send(Node::Client(client), peer, datagram),
        }
    }
}

/// `timeout` in whole milliseconds, as ZooKeeper's session table holds it.
fn millis(timeout: Duration) -> i32 {
    i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX)
}

/// Puts `items` in an order drawn from the run's seed: ZooKeeper lists children from a hash
/// set, so a recipe must sort them itself; its client shuffles its host list.
pub(crate) fn shuffle<T>(items: &mut [T]) {
    let mut rng = madsim::rand::thread_rng();
    for i in (1..items.len()).rev() {
        items.swap(i, rng.gen_range(0..=i));
    }
}

/// Lets every other ready task run once before the caller goes on.
async fn yield_now() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if std::mem::replace(&mut yielded, true) {
            std::task::Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
    .await
}
