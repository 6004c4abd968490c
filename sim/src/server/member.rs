//! A server of a simulated ensemble: the leader, which orders one committed log, or a
//! follower, which applies it. Each serves its own clients over the same connection code as
//! the standalone server (`sim/src/server.rs`); what differs is here.
//!
//! - **One log, decided at the leader.** Every change (a session opened or ended, a write, a
//!   container sweep) is a [`Txn`] the leader applies to its own tree when it takes it, which
//!   decides its outcome (the session id, a sequence number, a version check, the ephemerals
//!   a session's end deletes), then appends to the log. A follower applies the log in order
//!   up to the position the leader last told it, each entry to a tree at the same position,
//!   so it reaches the leader's outcome (checked). Commits need no acknowledgements: with no
//!   election a committed entry is never lost, so a quorum's acks would change nothing here.
//! - **Reads and watches are local.** A server answers reads from its own applied tree and
//!   fires the watches its own clients set as it applies each entry; a follower that has not
//!   heard of a change serves the state before it.
//! - **Writes, session opens and closes are forwarded** to the leader; the follower answers
//!   its client when it applies the entry.
//! - **Sessions as ZooKeeper keeps them.** A server answers its clients' pings itself. The
//!   leader pings every follower each tick/2 (with the log's length); a follower answers with
//!   the sessions its clients touched since its last answer, and the leader's session tracker
//!   expires a session nobody touched for its timeout, through the log (so its ephemerals go
//!   on every server as each applies that entry). A reconnecting client is re-attached by any
//!   serving server whose applied state still holds its session, and told it expired by one
//!   that applied its end.
//! - **Serving.** A follower that has not heard the leader for syncLimit ticks drops its
//!   clients' connections and refuses new ones until it hears the leader again (then it
//!   catches up on the log); a leader that has not heard a quorum does the same until it
//!   hears one again, then re-arms every session's timeout, as a newly elected leader does.
//!
//! The leader is the server with the highest id, the one ZooKeeper's first election picks
//! when every log is empty. Peer messages travel once ([`Wire::post`]): a server cut off from
//! its peers loses them, and the protocol recovers by the next ping. Not modelled: leader
//! election (a leader that regains its quorum leads again), replication lag beyond the
//! network's latency, re-validation of a moved session through the leader, server restarts,
//! and the byte-stream clients of programs.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use coordination::ids::OpId;
use coordination::zk::tree::Applied;
use coordination::zk::{OpResult, Request, SessionId, ZkError};
use futures::channel::mpsc::{UnboundedReceiver, unbounded};
use futures::future::Either;
use futures::{FutureExt, StreamExt, select_biased};
use madsim::runtime::{Handle, NodeHandle};
use madsim::time::Instant;
use scenarios::fault::Node;
use scenarios::scenario::ServerSettings;
use trace::ServerSession;

use super::{Control, Out, ServerHandle, Session, State, millis, send_all, yield_now};
use crate::net::Network;
use crate::recorder::Recorder;
use crate::settings::{negotiate, tick};
use crate::stream::Segment;
use crate::wire::{
    ConnId, Datagram, QUORUM_PORT, SERVER_PORT, ToClient, ToServer, Wire, member_addr,
};

/// The ensemble's committed log, shared by its servers: the content of what the leader
/// replicates (when each follower learns of it travels over the network).
pub type Log = Arc<Mutex<Vec<Entry>>>;

/// One committed change, as the leader decided it.
#[derive(Clone, Debug)]
pub struct Entry {
    txn: Txn,
    /// The server and connection of the client that asked for it, which that server answers
    /// when it applies the entry.
    origin: Option<(u16, ConnId)>,
}

#[derive(Clone, Debug)]
enum Txn {
    /// `createSession`: the session's id and negotiated timeout.
    Open {
        session: SessionId,
        client: u16,
        timeout: Duration,
    },
    /// A write and its outcome.
    Write {
        session: SessionId,
        op: OpId,
        request: Request,
        result: OpResult,
    },
    /// A write of a session the leader no longer holds: answered `SessionExpired`.
    Reject { op: OpId },
    /// `closeSession`, or the session tracker's expiry.
    End {
        session: SessionId,
        change: ServerSession,
    },
    /// A container sweep that reaped something.
    Reap,
}

/// A message between two servers of the ensemble.
#[derive(Clone, Debug)]
enum Peer {
    /// Leader to follower, every tick/2 and after new commits: the log's length.
    Commit { upto: usize },
    /// Follower to leader, answering a `Commit`: the sessions its clients touched since.
    Touch { from: u16, sessions: Vec<SessionId> },
    /// Follower to leader: a client of connection `conn` asks for a session.
    Open {
        from: u16,
        conn: ConnId,
        client: u16,
        asked: Duration,
    },
    /// Follower to leader: a client's write (or, with `close`, its close-session).
    Forward {
        from: u16,
        conn: ConnId,
        session: SessionId,
        op: Option<(OpId, Request)>,
    },
}

/// What a server of an ensemble keeps beside what every server keeps.
pub(super) struct Member {
    id: u16,
    leader: u16,
    servers: u16,
    /// syncLimit × tick.
    sync_limit: Duration,
    log: Log,
    /// How many entries of the log this server has applied.
    applied: usize,
    /// How many the leader has told it are committed (the leader: how many it told).
    committed: usize,
    serving: bool,
    /// When it last heard the leader (a follower) or each follower (the leader).
    heard: BTreeMap<u16, Instant>,
    /// Sessions its clients touched since it last told the leader.
    touched: BTreeSet<SessionId>,
    /// Per connection, its requests not answered yet in order: `None` for a write (or close)
    /// out to the leader, a read held behind it otherwise (ZooKeeper's `CommitProcessor`
    /// answers a session's requests in order).
    queues: BTreeMap<ConnId, VecDeque<Option<(OpId, Request)>>>,
    /// Connections waiting for the session they asked the leader for: client and address.
    pending: BTreeMap<ConnId, (u16, SocketAddr)>,
    /// Per peer, the messages not sent yet, in order: the new ones, and those held while the
    /// link is cut (a TCP connection's unacknowledged data, until the link is torn down).
    outbox: BTreeMap<u16, VecDeque<Peer>>,
    /// Per peer, when the last message sent on the link is delivered.
    last: BTreeMap<u16, Instant>,
}

impl Member {
    fn leads(&self) -> bool {
        self.id == self.leader
    }

    fn followers(&self) -> impl Iterator<Item = u16> + use<> {
        let leader = self.leader;
        (0..self.servers).filter(move |&n| n != leader)
    }

    /// Queues `message` for peer `to`.
    fn post(&mut self, to: u16, message: Peer) {
        self.outbox.entry(to).or_default().push_back(message);
    }

    /// Sends what it can of every peer's queue, in order, over `peers`: a cut link keeps the
    /// rest queued.
    fn flush(&mut self, peers: &Wire) {
        for (&to, queue) in &mut self.outbox {
            while let Some(body) = queue.pop_front() {
                let datagram = Datagram::Seq {
                    conn: 0,
                    seq: 0,
                    body,
                };
                let dst = member_addr(to, QUORUM_PORT);
                match peers.post((self.id, to), dst, datagram, self.last.get(&to).copied()) {
                    Ok(Some(at)) => {
                        self.last.insert(to, at);
                    }
                    Ok(None) => {}
                    Err(datagram) => {
                        if let Datagram::Seq { body, .. } = datagram {
                            queue.push_front(body);
                        }
                        break;
                    }
                }
            }
        }
    }

    /// The link to `peer` is torn down (syncLimit passed without hearing it): what was
    /// queued for it is gone.
    fn tear_down(&mut self, peer: u16) {
        self.outbox.remove(&peer);
    }
}

/// The id of the leader of an ensemble of `servers`: the highest.
pub fn leader_of(servers: u16) -> u16 {
    servers - 1
}

/// Whether `request` changes the tree, and so goes through the leader.
fn is_write(request: &Request) -> bool {
    matches!(
        request,
        Request::Create { .. } | Request::Delete { .. } | Request::SetData { .. }
    )
}

/// A new, empty log.
pub fn new_log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

impl ServerHandle {
    /// Server `id` of an ensemble of `settings.ensemble` servers sharing `log`, recording into
    /// `recorder` and sending through the run's `network`.
    pub fn member(
        settings: ServerSettings,
        id: u16,
        log: Log,
        recorder: Recorder,
        network: Network,
    ) -> ServerHandle {
        let handle = ServerHandle::new(settings, recorder, network);
        let now = handle.network.time().now();
        let leader = leader_of(settings.ensemble);
        let member = Member {
            id,
            leader,
            servers: settings.ensemble,
            sync_limit: tick(&settings) * u32::try_from(settings.sync_limit).unwrap_or(u32::MAX),
            log,
            applied: 0,
            committed: 0,
            serving: true,
            heard: (0..settings.ensemble)
                .filter(|&n| n != id && (id == leader || n == leader))
                .map(|n| (n, now))
                .collect(),
            touched: BTreeSet::new(),
            queues: BTreeMap::new(),
            pending: BTreeMap::new(),
            outbox: BTreeMap::new(),
            last: BTreeMap::new(),
        };
        handle.lock().member = Some(member);
        handle
    }

    /// Starts this server of an ensemble on a node of its own at its address (`start_node`'s
    /// counterpart), and returns the node once it listens.
    pub async fn start_member_node(&self, id: u16) -> NodeHandle {
        let server = self.clone();
        let node = Handle::current()
            .create_node()
            .name(format!("zookeeper-{id}"))
            .ip(member_addr(id, SERVER_PORT).ip())
            .init(move || server.clone().run_member(id))
            .build();
        while !self.network.is_bound(member_addr(id, SERVER_PORT)) {
            yield_now().await;
        }
        node
    }

    /// Whether this server serves client `client` now.
    pub fn serves_client(&self, client: u16) -> bool {
        self.lock().conns.values().any(|c| c.client == client)
    }

    async fn run_member(self, id: u16) {
        let (control_tx, control) = unbounded();
        let (tick, sweep) = {
            let mut state = self.lock();
            state.control = Some(control_tx);
            let sweep = Duration::from_millis(state.settings.container_sweep_ms);
            (tick(&state.settings), sweep)
        };
        let wire = Wire::bind_at(
            member_addr(id, SERVER_PORT),
            Node::Server,
            self.network.clone(),
        );
        let peers = Wire::bind_at(
            member_addr(id, QUORUM_PORT),
            Node::Server,
            self.network.clone(),
        );
        self.serve_member((wire, peers), control, tick, sweep).await;
    }

    async fn serve_member(
        &self,
        (wire, peers): (Wire, Wire),
        mut control: UnboundedReceiver<Control>,
        tick: Duration,
        sweep: Duration,
    ) {
        let mut receive = wire.receive_either::<ToServer, Segment>().fuse();
        let mut hear = peers.receive::<Peer>().fuse();
        let beat = tick / 2;
        let mut next_beat = wire.now() + beat;
        let mut next_tick = wire.now() + tick;
        let mut next_sweep = wire.now() + sweep;
        let mut alarm = wire.alarm();
        loop {
            let next = next_beat.min(next_tick).min(next_sweep);
            let out = select_biased! {
                command = control.next() => match command {
                    Some(Control::ExpireClient(client)) => self.lock().expire_client(client),
                    Some(Control::Exit) | None => return,
                },
                (datagram, from) = receive => {
                    receive = wire.receive_either::<ToServer, Segment>().fuse();
                    match datagram {
                        Either::Left(datagram) => self.lock().on_datagram(datagram, from),
                        Either::Right(datagram) => self.lock().on_segment(datagram, from),
                    }
                }
                (datagram, _) = hear => {
                    hear = peers.receive::<Peer>().fuse();
                    match datagram {
                        Datagram::Seq { body, .. } => self.lock().on_peer(body),
                        Datagram::Reset { .. } => Vec::new(),
                    }
                }
                () = alarm.until(Some(next)).fuse() => {
                    let mut state = self.lock();
                    if next == next_beat {
                        next_beat += beat;
                        state.beat()
                    } else if next == next_tick {
                        next_tick += tick;
                        state.expire_due()
                    } else {
                        next_sweep += sweep;
                        state.sweep_containers()
                    }
                },
            };
            send_all(&wire, out);
            self.lock().member().flush(&peers);
        }
    }
}

impl State {
    fn member(&mut self) -> &mut Member {
        self.member.as_mut().expect("a server of an ensemble")
    }

    /// Whether this server is a follower of an ensemble that serves no clients now.
    pub(super) fn refuses(&self) -> bool {
        self.member.as_ref().is_some_and(|m| !m.serving)
    }

    /// Whether this server records session changes: a standalone server or the leader (a
    /// follower applies what the leader recorded).
    pub(super) fn records_sessions(&self) -> bool {
        self.member.as_ref().is_none_or(Member::leads)
    }

    /// Notes that `session`'s client was heard, for the leader's session tracker.
    pub(super) fn touched(&mut self, session: SessionId) {
        if let Some(member) = &mut self.member {
            member.touched.insert(session);
        }
    }

    /// A client on connection `conn` asks for a new session: the leader takes it at once, a
    /// follower forwards it.
    pub(super) fn open_in_ensemble(
        &mut self,
        conn: ConnId,
        (client, peer): (u16, SocketAddr),
        asked: Duration,
        out: &mut Vec<Out>,
    ) {
        let me = self.member().id;
        self.member().pending.insert(conn, (client, peer));
        if self.member().leads() {
            self.take_open(me, conn, client, asked, out);
        } else {
            let leader = self.member().leader;
            let open = Peer::Open {
                from: me,
                conn,
                client,
                asked,
            };
            self.member().post(leader, open);
        }
    }

    /// A client's request: a write goes through the leader, a read is answered from this
    /// server's tree once the connection's earlier writes are answered.
    pub(super) fn request_in_ensemble(
        &mut self,
        conn: ConnId,
        session: SessionId,
        (op, request): (OpId, Request),
        out: &mut Vec<Out>,
    ) {
        let queue = self.member().queues.entry(conn).or_default();
        if is_write(&request) {
            self.forward(conn, session, Some((op, request)), out);
        } else if queue.is_empty() {
            self.apply(conn, session, op, request, out);
        } else {
            queue.push_back(Some((op, request)));
        }
    }

    /// The leader answered the oldest write (or close) of this server's connection `conn`:
    /// the reads held behind it are answered now.
    fn answered(&mut self, conn: ConnId, out: &mut Vec<Out>) {
        let Some(queue) = self.member().queues.get_mut(&conn) else {
            return;
        };
        queue.pop_front();
        let mut reads = Vec::new();
        while let Some(Some(_)) = queue.front() {
            reads.extend(queue.pop_front().flatten());
        }
        if queue.is_empty() {
            self.member().queues.remove(&conn);
        }
        let Some(session) = self.conns.get(&conn).map(|c| c.session) else {
            return;
        };
        for (op, request) in reads {
            self.apply(conn, session, op, request, out);
        }
    }

    /// A client's write (`op`), or with `None` its close-session: the leader takes it at once,
    /// a follower forwards it.
    pub(super) fn forward(
        &mut self,
        conn: ConnId,
        session: SessionId,
        op: Option<(OpId, Request)>,
        out: &mut Vec<Out>,
    ) {
        let me = self.member().id;
        self.member()
            .queues
            .entry(conn)
            .or_default()
            .push_back(None);
        if self.member().leads() {
            self.take_forwarded(me, conn, session, op, out);
        } else {
            let leader = self.member().leader;
            let forward = Peer::Forward {
                from: me,
                conn,
                session,
                op,
            };
            self.member().post(leader, forward);
        }
    }

    fn on_peer(&mut self, message: Peer) -> Vec<Out> {
        let mut out = Vec::new();
        let now = self.time.now();
        match message {
            Peer::Commit { upto } => {
                let member = self.member();
                let leader = member.leader;
                member.heard.insert(leader, now);
                member.committed = member.committed.max(upto);
                member.serving = true;
                let sessions = std::mem::take(&mut member.touched).into_iter().collect();
                let from = member.id;
                member.post(leader, Peer::Touch { from, sessions });
                self.catch_up(&mut out);
            }
            Peer::Touch { from, sessions } => {
                self.member().heard.insert(from, now);
                for session in sessions {
                    if let Some(entry) = self.sessions.get_mut(&session) {
                        entry.deadline = now + entry.timeout;
                    }
                }
            }
            _ if !self.member().serving => {}
            Peer::Open {
                from,
                conn,
                client,
                asked,
            } => self.take_open(from, conn, client, asked, &mut out),
            Peer::Forward {
                from,
                conn,
                session,
                op,
            } => self.take_forwarded(from, conn, session, op, &mut out),
        }
        out
    }

    /// The leader takes a session open asked for on server `from`'s connection `conn`: it
    /// decides the session's id and timeout.
    fn take_open(
        &mut self,
        from: u16,
        conn: ConnId,
        client: u16,
        asked: Duration,
        out: &mut Vec<Out>,
    ) {
        let timeout = negotiate(&self.settings, asked);
        let session = self.front.open(millis(timeout));
        let txn = Txn::Open {
            session,
            client,
            timeout,
        };
        self.append(txn, Some((from, conn)));
        self.opened(session, client, timeout, Some((from, conn)), out);
        self.notify_followers();
    }

    /// The leader takes a write (or, with `None`, a close-session) asked for on server
    /// `from`'s connection `conn`: applying a write to its tree decides its outcome.
    fn take_forwarded(
        &mut self,
        from: u16,
        conn: ConnId,
        session: SessionId,
        op: Option<(OpId, Request)>,
        out: &mut Vec<Out>,
    ) {
        let origin = Some((from, conn));
        let live = self.sessions.contains_key(&session);
        match op {
            None if live => {
                let change = ServerSession::Closed;
                self.commit(Txn::End { session, change }, origin, out);
            }
            // A close of a session that has ended already has nothing left to do.
            None => {}
            Some((op, _)) if !live => self.commit(Txn::Reject { op }, origin, out),
            Some((op, request)) => {
                let applied = self.tree_mut().apply(session, &request);
                let txn = Txn::Write {
                    session,
                    op,
                    request: request.clone(),
                    result: applied.result.clone(),
                };
                self.append(txn, origin);
                self.written(session, (op, request), applied, origin, out);
                self.notify_followers();
            }
        }
    }

    /// The leader appends `txn`, which it has applied (or is about to), to the log.
    fn append(&mut self, txn: Txn, origin: Option<(u16, ConnId)>) {
        let member = self.member();
        member
            .log
            .lock()
            .expect("log lock")
            .push(Entry { txn, origin });
        member.applied += 1;
    }

    /// The leader appends `txn`, which needs no decision, and applies it.
    fn commit(&mut self, txn: Txn, origin: Option<(u16, ConnId)>, out: &mut Vec<Out>) {
        self.append(txn.clone(), origin);
        self.apply_entry(Entry { txn, origin }, out);
        self.notify_followers();
    }

    /// The leader tells every follower the log's new length.
    fn notify_followers(&mut self) {
        let member = self.member();
        let upto = member.log.lock().expect("log lock").len();
        if upto == member.committed {
            return;
        }
        member.committed = upto;
        let followers: Vec<u16> = member.followers().collect();
        for follower in followers {
            member.post(follower, Peer::Commit { upto });
        }
    }

    /// A follower applies the log up to the position the leader last told it.
    fn catch_up(&mut self, out: &mut Vec<Out>) {
        let member = self.member();
        let entries: Vec<Entry> = {
            let log = member.log.lock().expect("log lock");
            log[member.applied..member.committed].to_vec()
        };
        member.applied = member.committed;
        for entry in entries {
            self.apply_entry(entry, out);
        }
    }

    /// The connection `origin` names when it is this server's.
    fn mine(&mut self, origin: Option<(u16, ConnId)>) -> Option<ConnId> {
        let me = self.member().id;
        origin
            .filter(|(server, _)| *server == me)
            .map(|(_, conn)| conn)
    }

    /// A follower applies one entry of the log the leader decided.
    fn apply_entry(&mut self, Entry { txn, origin }: Entry, out: &mut Vec<Out>) {
        match txn {
            Txn::Open {
                session,
                client,
                timeout,
            } => {
                let opened = self.front.open(millis(timeout));
                debug_assert_eq!(opened, session, "every server opens the leader's session");
                self.opened(session, client, timeout, origin, out);
            }
            Txn::Write {
                session,
                op,
                request,
                result,
            } => {
                let applied = self.tree_mut().apply(session, &request);
                debug_assert_eq!(applied.result, result, "the leader's outcome");
                self.written(session, (op, request), applied, origin, out);
            }
            Txn::Reject { op } => {
                if let Some(conn) = self.mine(origin) {
                    let result = Err(ZkError::SessionExpired);
                    let zxid = self.tree().zxid();
                    self.send(conn, ToClient::Reply { op, result, zxid }, out);
                    self.answered(conn, out);
                }
            }
            Txn::End { session, change } => {
                if let Some(conn) = self
                    .mine(origin)
                    .filter(|_| change == ServerSession::Closed)
                {
                    self.send(conn, ToClient::Closed, out);
                }
                self.end_session(session, change, out);
            }
            Txn::Reap => out.extend(self.reap()),
        }
    }

    /// A session opened in the tree: every server tracks it; the one its client waits on
    /// attaches the connection and answers.
    fn opened(
        &mut self,
        session: SessionId,
        client: u16,
        timeout: Duration,
        origin: Option<(u16, ConnId)>,
        out: &mut Vec<Out>,
    ) {
        let deadline = self.time.now() + timeout;
        self.sessions
            .insert(session, Session::detached(client, timeout, deadline));
        if self.records_sessions() {
            self.record_session(session, ServerSession::Created);
        }
        let Some(conn) = self.mine(origin) else {
            return;
        };
        let Some((client, peer)) = self.member().pending.remove(&conn) else {
            return;
        };
        (self.sessions.get_mut(&session).expect("just opened")).conn = Some(conn);
        self.attach_conn(conn, session, (client, peer));
        self.send(conn, ToClient::Accepted { session, timeout }, out);
    }

    /// A write applied to this server's tree: the leader records it, the watches it fired
    /// go to this server's clients, and the client that asked for it, if this server's, gets
    /// the reply.
    fn written(
        &mut self,
        session: SessionId,
        (op, request): (OpId, Request),
        applied: Applied,
        origin: Option<(u16, ConnId)>,
        out: &mut Vec<Out>,
    ) {
        let record = self.records_sessions();
        let mine = self.mine(origin);
        self.applied(session, (op, request), applied, (record, mine), out);
        if let Some(conn) = mine {
            self.answered(conn, out);
        }
    }

    /// Every tick/2: the leader pings its followers and checks it hears a quorum; a follower
    /// checks it hears the leader. Either stops serving when it does not.
    fn beat(&mut self) -> Vec<Out> {
        let now = self.time.now();
        let member = self.member();
        let sync_limit = member.sync_limit;
        let heard_within = |at: &Instant| now.duration_since(*at) < sync_limit;
        // A link silent for syncLimit is torn down first: a new one carries what follows.
        let silent: Vec<u16> = (member.heard.iter())
            .filter(|(_, at)| !heard_within(at))
            .map(|(&peer, _)| peer)
            .collect();
        for peer in silent {
            member.tear_down(peer);
        }
        let hears = if member.leads() {
            let upto = member.log.lock().expect("log lock").len();
            let followers: Vec<u16> = member.followers().collect();
            for follower in followers {
                member.post(follower, Peer::Commit { upto });
            }
            let heard = member.heard.values().filter(|at| heard_within(at)).count();
            (heard + 1) * 2 > usize::from(member.servers)
        } else {
            member.heard.get(&member.leader).is_some_and(heard_within)
        };
        match (hears, member.serving) {
            (false, true) => {
                member.serving = false;
                member.pending.clear();
                member.queues.clear();
                self.drop_clients()
            }
            (true, false) if member.leads() => {
                member.serving = true;
                for session in self.sessions.values_mut() {
                    session.deadline = now + session.timeout;
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// The leader's session tracker: expires, through the log, every session nobody touched
    /// within its timeout (while it serves).
    pub(super) fn expire_in_ensemble(&mut self, due: Vec<SessionId>, out: &mut Vec<Out>) {
        if !self.member().leads() || !self.member().serving {
            return;
        }
        for session in due {
            let change = ServerSession::Expired;
            self.commit(Txn::End { session, change }, None, out);
        }
    }

    /// The leader's container sweep, through the log when it reaped something.
    pub(super) fn sweep_in_ensemble(&mut self) -> Vec<Out> {
        if !self.member().leads() || !self.member().serving {
            return Vec::new();
        }
        let before = self.tree().zxid();
        let out = self.reap();
        if self.tree().zxid() != before {
            self.append(Txn::Reap, None);
            self.notify_followers();
        }
        out
    }
}
