//! A server of a simulated ensemble: the leader, which orders the log and commits what a
//! quorum has logged, or a follower, which logs what the leader proposes and applies what it
//! commits. Each serves its own clients over the same connection code as the standalone
//! server (`sim/src/server.rs`); what differs is here, and how a leader is chosen is in
//! `sim/src/server/election.rs`.
//!
//! - **One log, decided at the leader, committed by a quorum.** Every change (a session
//!   opened or ended, a write, a container sweep) is a [`Txn`] the leader decides on its
//!   *prepared* state (ZooKeeper's `PrepRequestProcessor` and its outstanding changes: the
//!   committed tree plus every change proposed since) — the session id, a sequence number, a
//!   version check, the ephemerals a session's end deletes — then logs and proposes to every
//!   follower. A follower logs a proposal and acknowledges it; an entry is committed once a
//!   quorum (the leader and the followers' acks) has logged it. Only committed entries are
//!   applied, to each server's tree in log order (so every server reaches the leader's
//!   outcome, checked in debug builds), answered and recorded in the trace: once, by the
//!   first server to apply the entry (the leader, as it commits it).
//! - **Reads and watches are local.** A server answers reads from its own applied tree and
//!   fires the watches its own clients set as it applies each entry; a follower that has not
//!   heard of a change serves the state before it.
//! - **Writes, session opens and closes are forwarded** to the leader; the server whose
//!   client asked answers it when it applies the committed entry.
//! - **Sessions as ZooKeeper keeps them.** A server answers its clients' pings itself. The
//!   leader pings every follower each tick/2 (with how far it has committed); a follower
//!   answers with the sessions its clients touched since its last answer, and the leader's
//!   session tracker expires a session nobody touched for its timeout, through the log. A
//!   server that has applied less than the client has seen refuses it (`sim/src/server.rs`).
//! - **A session moves through the leader.** A reconnecting client is re-attached once the
//!   leader has revalidated its session (`REVALIDATE`), and told it expired if the leader
//!   says it has ended. The leader keeps each session's owner (the server it was opened or
//!   last revalidated on) and refuses a write another server forwards (`SESSIONMOVED`); the
//!   server that forwarded it closes that client connection.
//!
//! Peer messages travel in order on each link; a cut link holds them until it is torn down
//! (syncLimit ticks without hearing the peer), which loses them: a follower that rejoins
//! takes the leader's whole log again, and one that finds a gap in the numbered proposals
//! goes LOOKING to rejoin. A lagging server (`lag_server`) hears its peers late on
//! these links (`Wire::post`). The leader drops a follower it has not heard for syncLimit
//! (its `LearnerHandler`'s read timeout) or that leaves a proposal unacknowledged that long
//! (`SyncLimitCheck`, `sim/src/server/sync_limit.rs`): it stops proposing to it and closes
//! its connection, and the follower, reading that close after what was sent before it, goes
//! LOOKING and joins again; a joining follower answers no ping sent before the leader had its
//! acknowledgement of the log (ZooKeeper's follower answers none before `UPTODATE`). Not
//! modelled: a session's requests ordered across its connections, snapshots (the
//! log is never trimmed) and the byte-stream clients of programs.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use coordination::ids::OpId;
use coordination::zk::tree::Applied;
use coordination::zk::{OpResult, Request, SessionId, ZkError};
use frontend::FrontEnd;
use futures::channel::mpsc::{UnboundedReceiver, unbounded};
use futures::future::Either;
use futures::{FutureExt, StreamExt, select_biased};
use madsim::runtime::{Handle, NodeHandle};
use madsim::time::Instant;
use scenarios::fault::Node;
use scenarios::scenario::ServerSettings;
use trace::ServerSession;

use super::election::{Acked, Role, Vote};
use super::{Control, Out, ServerHandle, Session, State, millis, send_all, yield_now};
use crate::net::Network;
use crate::pauses::Pauses;
use crate::recorder::Recorder;
use crate::settings::{negotiate, tick};
use crate::stream::Segment;
use crate::trigger::Triggers;
use crate::wire::{
    ConnId, Datagram, QUORUM_PORT, Resume, SERVER_PORT, ToClient, ToServer, Wire, member_addr,
};

/// How many entries of the ensemble's committed log the trace has recorded, shared by its
/// servers: a committed entry keeps its position in every later leader's log, so the first
/// server to apply a position records it, once.
pub type Recorded = Arc<Mutex<usize>>;

/// A fresh count: nothing recorded yet.
pub fn recorded() -> Recorded {
    Arc::new(Mutex::new(0))
}

/// One logged change, as a leader decided it.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    /// The epoch of the leader that proposed it.
    pub(super) epoch: u32,
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
    /// A write refused at prepare, answered `error`: `SessionExpired` for a session the
    /// leader no longer holds, `SessionMoved` for one forwarded by a server that no longer
    /// owns the session (ZooKeeper's error txn).
    Reject { op: OpId, error: ZkError },
    /// `closeSession`, or the session tracker's expiry.
    End {
        session: SessionId,
        change: ServerSession,
    },
    /// A container sweep that reaped something.
    Reap,
}

impl Txn {
    /// Replays this change on `front`, a leader's prepared state, with nothing to answer.
    fn prepare(&self, front: &mut FrontEnd) {
        match self {
            Txn::Open {
                session, timeout, ..
            } => {
                let opened = front.open(millis(*timeout));
                debug_assert_eq!(opened, *session, "the log's session");
            }
            Txn::Write {
                session, request, ..
            } => {
                front.tree_mut().apply(*session, request);
            }
            Txn::Reject { .. } => {}
            Txn::End { session, .. } => {
                front.end(*session);
            }
            Txn::Reap => {
                front.tree_mut().reap_containers();
            }
        }
    }
}

/// A message between two servers of the ensemble.
#[derive(Clone, Debug)]
pub(super) enum Peer {
    /// A LOOKING server's vote for itself, every tick/2 (FLE's notification).
    Looking { from: u16, vote: Vote },
    /// A leader's answer to a LOOKING server, and its announcement once elected.
    Leading { from: u16, epoch: u32 },
    /// A follower asks to join the leader (`FOLLOWERINFO`).
    Join { from: u16 },
    /// The leader's log and how far it is committed, to a joining follower (`SNAP`/`DIFF`/
    /// `TRUNC` in one: the follower's log becomes the leader's).
    Sync {
        from: u16,
        epoch: u32,
        log: Vec<Entry>,
        committed: usize,
    },
    /// Leader to follower: one more entry to log (`PROPOSAL`), at position `at` of the log.
    Propose { epoch: u32, at: usize, entry: Entry },
    /// Follower to leader: how long its log is (`ACK`).
    Ack {
        from: u16,
        epoch: u32,
        logged: usize,
    },
    /// Leader to follower, every tick/2 and after each commit: how far the log is committed
    /// (`PING` and `COMMIT`). The follower answers it (`answer`) only if the leader had its
    /// acknowledgement of the leader's log when it sent it: ZooKeeper's follower answers no
    /// ping before `UPTODATE`, which the leader sends on that acknowledgement.
    Commit {
        epoch: u32,
        upto: usize,
        answer: bool,
    },
    /// Follower to leader, answering a `Commit`: the sessions its clients touched since.
    Touch { from: u16, sessions: Vec<SessionId> },
    /// Leader to follower: the leader closed its connection to the follower, which left a
    /// proposal unacknowledged for syncLimit (`LearnerHandler.shutdown()`); the follower reads
    /// the end of that connection after what was sent on it before.
    Close { epoch: u32 },
    /// Follower to leader: a client of connection `conn` asks for a session.
    Open {
        from: u16,
        conn: ConnId,
        client: u16,
        asked: Duration,
    },
    /// Follower to leader: a client's write (or, with `None`, its close-session).
    Forward {
        from: u16,
        conn: ConnId,
        session: SessionId,
        op: Option<(OpId, Request)>,
    },
    /// Follower to leader: a client of connection `conn` asks to resume `session` on this
    /// follower (`REVALIDATE`).
    Revalidate {
        from: u16,
        conn: ConnId,
        session: SessionId,
    },
    /// Leader to follower: whether the session connection `conn` asked to resume lives (the
    /// answer to `REVALIDATE`); if it does, the follower owns it now.
    Validated { conn: ConnId, valid: bool },
}

/// What a server of an ensemble keeps beside what every server keeps.
pub(super) struct Member {
    pub(super) id: u16,
    pub(super) servers: u16,
    /// syncLimit × tick.
    pub(super) sync_limit: Duration,
    pub(super) role: Role,
    /// The epoch of the leader it last followed or led.
    pub(super) epoch: u32,
    /// What it has logged (on disk: it survives a crash).
    pub(super) log: Vec<Entry>,
    /// How many entries of the log it has applied.
    pub(super) applied: usize,
    /// How many it knows are committed.
    pub(super) committed: usize,
    recorded: Recorded,
    /// Whether the entry being applied is recorded in the trace (this server applies it
    /// first).
    recording: bool,
    pub(super) serving: bool,
    /// When it last heard each peer.
    pub(super) heard: BTreeMap<u16, Instant>,
    /// Sessions its clients touched since it last told the leader.
    touched: BTreeSet<SessionId>,
    /// Per connection, its requests not answered yet in order: `None` for a write (or close)
    /// out to the leader, a read held behind it otherwise (ZooKeeper's `CommitProcessor`
    /// answers a session's requests in order).
    queues: BTreeMap<ConnId, VecDeque<Option<(OpId, Request)>>>,
    /// Connections waiting for the session they asked the leader for: client and address.
    pending: BTreeMap<ConnId, (u16, SocketAddr)>,
    /// Connections waiting for the leader to revalidate the session they resume: client,
    /// address and what they resume.
    revalidating: BTreeMap<ConnId, (u16, SocketAddr, Resume)>,
    /// Per peer, the messages not sent yet, in order: the new ones, and those held while the
    /// link is cut (a TCP connection's unacknowledged data, until the link is torn down).
    outbox: BTreeMap<u16, VecDeque<Peer>>,
    /// Per peer, when the last message sent on the link is delivered.
    last: BTreeMap<u16, Instant>,
    /// How many crashes keep this server's machine down now.
    down: usize,
    /// The pause faults (by index in the schedule) that keep its process stopped now; a
    /// crash ends them all (the restarted process is a new one).
    pauses: Pauses,
    /// Whether its node has started once (a later start is a restart after a crash).
    started: bool,
    /// The run's faults armed to start at a request, which a leader's proposal may fire.
    triggers: Triggers,
}

impl Member {
    /// Queues `message` for peer `to`.
    pub(super) fn post(&mut self, to: u16, message: Peer) {
        self.outbox.entry(to).or_default().push_back(message);
    }

    /// A leader tells every follower how far its log is committed (a ping, or a commit),
    /// to be answered by those that acknowledged its log ([`Peer::Commit`]'s `answer`).
    pub(super) fn post_commits(&mut self) {
        let (epoch, upto) = (self.epoch, self.committed);
        let followers: Vec<(u16, bool)> = match &self.role {
            Role::Leading { followers, .. } => (followers.iter())
                .map(|(&follower, acked)| (follower, acked.is_some()))
                .collect(),
            _ => Vec::new(),
        };
        for (follower, answer) in followers {
            let commit = Peer::Commit {
                epoch,
                upto,
                answer,
            };
            self.post(follower, commit);
        }
    }

    /// Every other server's id.
    pub(super) fn peers(&self) -> impl Iterator<Item = u16> + use<> {
        let me = self.id;
        (0..self.servers).filter(move |&n| n != me)
    }

    /// How many servers make a quorum.
    pub(super) fn quorum(&self) -> usize {
        usize::from(self.servers) / 2 + 1
    }

    /// Sends what it can of every peer's queue, in order, over `peers`: a cut link keeps the
    /// rest queued, but for votes (FLE's notifications are sent afresh, not replayed: a vote
    /// held on a cut link would arrive stale).
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
                        queue.retain(|message| !matches!(message, Peer::Looking { .. }));
                        break;
                    }
                }
            }
        }
    }

    /// The link to `peer` is torn down (syncLimit passed without hearing it): what was
    /// queued for it is gone.
    pub(super) fn tear_down(&mut self, peer: u16) {
        self.outbox.remove(&peer);
    }

    /// Forgets every client's request in flight and every queued peer message: the server
    /// stops serving, or its machine went down.
    pub(super) fn forget_in_flight(&mut self) {
        self.pending.clear();
        self.revalidating.clear();
        self.queues.clear();
        self.outbox.clear();
        self.touched.clear();
    }

    /// This server's vote for itself: its epoch, its last entry's epoch and its log's length
    /// (ZooKeeper's last zxid), its id.
    pub(super) fn vote(&self) -> Vote {
        Vote {
            epoch: self.epoch,
            last: self.log.last().map_or(0, |entry| entry.epoch),
            logged: self.log.len(),
            sid: self.id,
        }
    }

    /// Whether this server leads, and in which epoch.
    fn leading(&self) -> Option<u32> {
        matches!(self.role, Role::Leading { .. }).then_some(self.epoch)
    }

    /// The leader it follows (or leads).
    pub(super) fn leader(&self) -> Option<u16> {
        match self.role {
            Role::Following { leader, .. } => Some(leader),
            Role::Leading { .. } => Some(self.id),
            Role::Looking { .. } => None,
        }
    }
}

/// Whether `request` changes the tree, and so goes through the leader.
fn is_write(request: &Request) -> bool {
    matches!(
        request,
        Request::Create { .. } | Request::Delete { .. } | Request::SetData { .. }
    )
}

impl ServerHandle {
    /// Server `id` of an ensemble of `settings.ensemble` servers sharing the trace's count of
    /// `recorded` entries, recording into `recorder` and sending through the run's `network`.
    /// It starts as the first election leaves an ensemble whose logs are empty: the server
    /// with the highest id leads epoch 1, every other follows it.
    pub fn member(
        settings: ServerSettings,
        id: u16,
        recorded: Recorded,
        recorder: Recorder,
        network: Network,
    ) -> ServerHandle {
        let handle = ServerHandle::new(settings, recorder, network);
        let now = handle.network.time().now();
        let leader = settings.ensemble - 1;
        let role = if id == leader {
            let prep = Box::new(handle.lock().front.clone());
            let followers = (0..leader).map(|n| (n, Some(Acked::default()))).collect();
            Role::leading(now, prep, followers)
        } else {
            Role::Following {
                leader,
                synced: true,
            }
        };
        let member = Member {
            id,
            servers: settings.ensemble,
            sync_limit: tick(&settings) * u32::try_from(settings.sync_limit).unwrap_or(u32::MAX),
            role,
            epoch: 1,
            log: Vec::new(),
            applied: 0,
            committed: 0,
            recorded,
            recording: false,
            serving: true,
            heard: (0..settings.ensemble)
                .filter(|&n| n != id)
                .map(|n| (n, now))
                .collect(),
            touched: BTreeSet::new(),
            queues: BTreeMap::new(),
            pending: BTreeMap::new(),
            revalidating: BTreeMap::new(),
            outbox: BTreeMap::new(),
            last: BTreeMap::new(),
            down: 0,
            pauses: Pauses::default(),
            started: false,
            triggers: handle.network.triggers().clone(),
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

    /// Whether this server of an ensemble serves clients now: it leads or follows, synced,
    /// and is up.
    pub fn serves(&self) -> bool {
        !self.lock().refuses()
    }

    /// Whether this server serves client `client` now.
    pub fn serves_client(&self, client: u16) -> bool {
        self.lock().conns.values().any(|c| c.client == client)
    }

    /// The epoch this server of an ensemble leads, if it leads (and is up).
    pub fn leading(&self) -> Option<u32> {
        let state = self.lock();
        let member = state.member.as_ref().filter(|m| m.down == 0)?;
        member.leading()
    }

    /// The epoch this server of an ensemble last followed or led.
    pub fn epoch(&self) -> u32 {
        self.lock().member.as_ref().map_or(0, |m| m.epoch)
    }

    /// The leader this server of an ensemble follows or is, if it is up and not looking for
    /// one.
    pub fn leader(&self) -> Option<u16> {
        let state = self.lock();
        let member = state.member.as_ref().filter(|m| m.down == 0)?;
        member.leader()
    }

    /// One more crash takes this server's machine down: true when it was up (then stop its
    /// node). Its connections are gone without a word to its clients; its log, its applied
    /// tree and its sessions stay (on disk). It neither leads nor follows from then on: back
    /// up, it looks for a leader, also in the instant before its restarted node runs (where a
    /// fault starting as the crash ends resolves its selector), and that node draws when it
    /// decides.
    pub fn crash(&self) -> bool {
        let mut state = self.lock();
        let now = state.time.now();
        let member = state.member();
        member.pauses.clear();
        member.down += 1;
        if member.down > 1 {
            return false;
        }
        member.role = Role::Looking {
            decide: now,
            votes: BTreeMap::new(),
        };
        state.lose_connections();
        true
    }

    /// Pause fault `fault` stops this server's process: true when it ran (then pause its
    /// node).
    pub fn pause(&self, fault: usize) -> bool {
        let mut state = self.lock();
        state.member().pauses.start(fault)
    }

    /// Pause fault `fault` ends: true when it was one of those stopping the process and no
    /// other is (then resume its node).
    pub fn unpause(&self, fault: usize) -> bool {
        let mut state = self.lock();
        state.member().pauses.end(fault)
    }

    /// One crash fewer keeps this server's machine down: true when it is up again (then
    /// restart its node).
    pub fn recover(&self) -> bool {
        let mut state = self.lock();
        let member = state.member();
        member.down = member.down.saturating_sub(1);
        member.down == 0
    }

    async fn run_member(self, id: u16) {
        let (control_tx, control) = unbounded();
        let (tick, sweep) = {
            let mut state = self.lock();
            state.control = Some(control_tx);
            if std::mem::replace(&mut state.member().started, true) {
                // A restart after a crash: it looks for a leader.
                let out = state.look();
                debug_assert!(out.is_empty(), "no connection outlives a crash: {out:?}");
            }
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
        let mut deadline = self.lock().member().read_deadline();
        loop {
            let next = next_beat.min(next_tick).min(next_sweep);
            let wake = deadline.map_or(next, |deadline| deadline.min(next));
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
                () = alarm.until(Some(wake)).fuse() => {
                    let mut state = self.lock();
                    if wake < next {
                        state.read_timeout()
                    } else if next == next_beat {
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
            let mut state = self.lock();
            let member = state.member();
            member.flush(&peers);
            deadline = member.read_deadline();
        }
    }
}

impl State {
    pub(super) fn member(&mut self) -> &mut Member {
        self.member.as_mut().expect("a server of an ensemble")
    }

    /// Whether this server is a server of an ensemble that serves no clients now.
    pub(super) fn refuses(&self) -> bool {
        self.member.as_ref().is_some_and(|m| !m.serving)
    }

    /// Whether this server records session changes: a standalone server, or a server of an
    /// ensemble applying an entry first.
    pub(super) fn records_sessions(&self) -> bool {
        self.member.as_ref().is_none_or(|m| m.recording)
    }

    /// Notes that `session`'s client was heard, for the leader's session tracker.
    pub(super) fn touched(&mut self, session: SessionId) {
        if let Some(member) = &mut self.member {
            member.touched.insert(session);
        }
    }

    /// Forgets every connection and every request in flight, without a word to the clients
    /// (the machine went down); the sessions stay.
    fn lose_connections(&mut self) {
        for session in self.sessions.values_mut() {
            session.conn = None;
        }
        let conns = std::mem::take(&mut self.conns).into_keys();
        let streams = std::mem::take(&mut self.streams).into_keys();
        self.retired.extend(conns.chain(streams));
        self.drop_every_watch();
        self.member().forget_in_flight();
        self.member().serving = false;
    }

    /// Stops serving: every connection dropped (the returned resets) with the watches set
    /// over it, as ZooKeeper removes a closed connection's watches, and every request in
    /// flight forgotten.
    pub(super) fn stop_serving(&mut self) -> Vec<Out> {
        let member = self.member();
        member.serving = false;
        member.forget_in_flight();
        self.drop_every_watch();
        self.drop_clients()
    }

    /// Drops every watch this server holds: the connections they were set over are gone (a
    /// client that resumes its session re-registers the ones it still wants).
    fn drop_every_watch(&mut self) {
        let sessions: Vec<SessionId> = self.sessions.keys().copied().collect();
        for session in sessions {
            self.tree_mut().drop_watches(session);
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
        let from = self.member().id;
        self.member().pending.insert(conn, (client, peer));
        let open = Peer::Open {
            from,
            conn,
            client,
            asked,
        };
        self.ask_leader(open, out);
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

    /// The oldest write (or close) of this server's connection `conn` was answered: the
    /// reads held behind it are answered now.
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
        let from = self.member().id;
        self.member()
            .queues
            .entry(conn)
            .or_default()
            .push_back(None);
        let forward = Peer::Forward {
            from,
            conn,
            session,
            op,
        };
        self.ask_leader(forward, out);
    }

    /// Hands a client's ask (an `Open`, `Forward` or `Revalidate` from this server) to the
    /// leader: taken at once when this server leads, posted to the leader otherwise, and
    /// dropped while none leads (the connection waits, until the client gives up on it or a
    /// leader's election drops it).
    fn ask_leader(&mut self, ask: Peer, out: &mut Vec<Out>) {
        match self.member().leader() {
            Some(leader) if leader == self.member().id => self.take(ask, out),
            Some(leader) => self.member().post(leader, ask),
            None => {}
        }
    }

    /// The leader takes a client's ask that a server handed it (itself, or a follower).
    fn take(&mut self, ask: Peer, out: &mut Vec<Out>) {
        match ask {
            Peer::Open {
                from,
                conn,
                client,
                asked,
            } => self.take_open(from, conn, client, asked, out),
            Peer::Forward {
                from,
                conn,
                session,
                op,
            } => self.take_forwarded(from, conn, session, op, out),
            Peer::Revalidate {
                from,
                conn,
                session,
            } => self.take_revalidate(from, conn, session, out),
            _ => unreachable!("only a client's ask is taken by the leader"),
        }
    }

    fn on_peer(&mut self, message: Peer) -> Vec<Out> {
        let mut out = Vec::new();
        let now = self.time.now();
        let leading = self.member().leading().is_some();
        match message {
            Peer::Looking { from, vote } => self.on_looking(from, vote),
            Peer::Leading { from, epoch } => self.on_leading(from, epoch),
            Peer::Join { from } => self.on_join(from),
            Peer::Sync {
                from,
                epoch,
                log,
                committed,
            } => self.on_sync(from, epoch, log, committed, &mut out),
            Peer::Ack {
                from,
                epoch,
                logged,
            } => self.on_ack(from, epoch, logged, &mut out),
            Peer::Propose { epoch, at, entry } => {
                if self.follows_in(epoch) {
                    let member = self.member();
                    if at != member.log.len() {
                        // Proposals were lost with a torn-down link, and the log would have
                        // a gap: its connection to the leader is broken, so it goes LOOKING
                        // (dropping its clients) and joins again, taking the leader's log.
                        out.extend(self.look());
                        return out;
                    }
                    member.log.push(entry);
                    let (from, logged) = (member.id, member.log.len());
                    self.post_to_leader(Peer::Ack {
                        from,
                        epoch,
                        logged,
                    });
                }
            }
            Peer::Commit {
                epoch,
                upto,
                answer,
            } => {
                if self.follows_in(epoch) {
                    let member = self.member();
                    member.committed = member.committed.max(upto).min(member.log.len());
                    if answer {
                        let sessions = std::mem::take(&mut member.touched).into_iter().collect();
                        let from = member.id;
                        self.post_to_leader(Peer::Touch { from, sessions });
                    }
                    self.catch_up(&mut out);
                }
            }
            Peer::Close { epoch } => {
                if self.follows_in(epoch) {
                    // Its connection to the leader ended: it goes LOOKING (dropping its
                    // clients) and joins again.
                    out.extend(self.look());
                }
            }
            Peer::Touch { from, sessions } => {
                if self.leads_follower(from) {
                    self.member().heard.insert(from, now);
                    for session in sessions {
                        self.touch(session);
                    }
                }
            }
            Peer::Validated { conn, valid } => self.validated(conn, valid, &mut out),
            _ if !leading => {}
            Peer::Revalidate { from, .. } if !self.leads_follower(from) => {}
            ask @ (Peer::Open { .. } | Peer::Forward { .. } | Peer::Revalidate { .. }) => {
                self.take(ask, &mut out);
            }
        }
        out
    }

    /// The leader's session tracker heard of `session` now: its timeout starts again.
    fn touch(&mut self, session: SessionId) {
        let now = self.time.now();
        if let Some(entry) = self.sessions.get_mut(&session) {
            entry.deadline = now + entry.timeout;
        }
    }

    /// A client on connection `conn` asks to resume a session: the leader revalidates it at
    /// once, a follower asks the leader (ZooKeeper's `revalidateSession`), and the connection
    /// waits for the answer.
    pub(super) fn revalidate_in_ensemble(
        &mut self,
        conn: ConnId,
        (client, peer): (u16, SocketAddr),
        resume: Resume,
        out: &mut Vec<Out>,
    ) {
        let (from, session) = (self.member().id, resume.session);
        (self.member().revalidating).insert(conn, (client, peer, resume));
        let revalidate = Peer::Revalidate {
            from,
            conn,
            session,
        };
        self.ask_leader(revalidate, out);
    }

    /// The leader revalidates `session` for server `from`'s connection `conn`: a live session
    /// is touched and owned by `from` from now on, so that a write its earlier server still
    /// forwards is refused (`Leader.revalidateSession` and `setOwner`).
    fn take_revalidate(&mut self, from: u16, conn: ConnId, session: SessionId, out: &mut Vec<Out>) {
        let valid = self.prep().sessions().is_live(session);
        if valid {
            self.touch(session);
            self.owners().insert(session, from);
        }
        if from == self.member().id {
            self.validated(conn, valid, out);
        } else {
            self.member().post(from, Peer::Validated { conn, valid });
        }
    }

    /// The leader's answer for connection `conn`: it resumes its session here if the session
    /// lives, and is told it expired if not. A live session this server has not applied the
    /// opening of yet is refused (the client tries another server).
    fn validated(&mut self, conn: ConnId, valid: bool, out: &mut Vec<Out>) {
        let Some((client, peer, resume)) = self.member().revalidating.remove(&conn) else {
            return;
        };
        if !valid {
            self.refuse_expired(conn, (client, peer), out);
        } else if self.sessions.contains_key(&resume.session) {
            self.reattach(conn, (client, peer), resume, out);
        } else {
            self.refuse(conn, (client, peer), out);
        }
    }

    /// Whether this server follows, synced, the leader of `epoch` (and so takes its
    /// proposals and commits); it heard the leader now if so.
    fn follows_in(&mut self, epoch: u32) -> bool {
        let now = self.time.now();
        let member = self.member();
        match member.role {
            Role::Following {
                leader,
                synced: true,
            } if member.epoch == epoch => {
                member.heard.insert(leader, now);
                true
            }
            _ => false,
        }
    }

    /// Whether this server leads `follower`.
    fn leads_follower(&mut self, follower: u16) -> bool {
        matches!(&self.member().role, Role::Leading { followers, .. } if followers.contains_key(&follower))
    }

    /// Queues `message` for the leader this server follows.
    fn post_to_leader(&mut self, message: Peer) {
        if let Some(leader) = self.member().leader() {
            self.member().post(leader, message);
        }
    }

    /// The leader's prepared state, on which it decides what it takes.
    fn prep(&mut self) -> &mut FrontEnd {
        match &mut self.member().role {
            Role::Leading { prep, .. } => prep,
            _ => unreachable!("only a leader takes changes"),
        }
    }

    /// Whether server `from` owns `session`, the leader's check of a write it forwards; a
    /// session no server owns yet (one a new leader inherited) becomes `from`'s
    /// (`SessionTrackerImpl.checkSession`).
    fn owned_by(&mut self, session: SessionId, from: u16) -> bool {
        *self.owners().entry(session).or_insert(from) == from
    }

    /// The leader's session owners: which server each session's writes must come from.
    fn owners(&mut self) -> &mut BTreeMap<SessionId, u16> {
        match &mut self.member().role {
            Role::Leading { owners, .. } => owners,
            _ => unreachable!("only a leader tracks owners"),
        }
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
        let session = self.prep().open(millis(timeout));
        self.owners().insert(session, from);
        let txn = Txn::Open {
            session,
            client,
            timeout,
        };
        self.propose(txn, Some((from, conn)), out);
    }

    /// The leader takes a write (or, with `None`, a close-session) asked for on server
    /// `from`'s connection `conn`: applying a write to its prepared state decides its outcome.
    /// A write is refused with `SessionMoved` unless `from` owns the session
    /// ([`State::owned_by`]). A close is not checked, as ZooKeeper does not.
    fn take_forwarded(
        &mut self,
        from: u16,
        conn: ConnId,
        session: SessionId,
        op: Option<(OpId, Request)>,
        out: &mut Vec<Out>,
    ) {
        let origin = Some((from, conn));
        let live = self.prep().sessions().is_live(session);
        let txn = match op {
            None if live => {
                self.prep().end(session);
                Txn::End {
                    session,
                    change: ServerSession::Closed,
                }
            }
            // A close of a session that has ended already has nothing left to do.
            None => return,
            Some((op, _)) if !live => Txn::Reject {
                op,
                error: ZkError::SessionExpired,
            },
            Some((op, _)) if !self.owned_by(session, from) => Txn::Reject {
                op,
                error: ZkError::SessionMoved,
            },
            Some((op, request)) => {
                let result = self.prep().tree_mut().apply(session, &request).result;
                Txn::Write {
                    session,
                    op,
                    request,
                    result,
                }
            }
        };
        self.propose(txn, origin, out);
    }

    /// The leader logs `txn`, decided on its prepared state, proposes it to every follower,
    /// and commits what a quorum has logged.
    fn propose(&mut self, txn: Txn, origin: Option<(u16, ConnId)>, out: &mut Vec<Out>) {
        let now = self.time.now();
        let member = self.member();
        let entry = Entry {
            epoch: member.epoch,
            txn,
            origin,
        };
        member.log.push(entry.clone());
        let (epoch, at) = (member.epoch, member.log.len() - 1);
        let followers: Vec<u16> = match &mut member.role {
            Role::Leading { followers, .. } => {
                for acked in followers.values_mut().flatten() {
                    acked.check.proposed(at, now);
                }
                followers.keys().copied().collect()
            }
            _ => Vec::new(),
        };
        for follower in followers {
            let entry = entry.clone();
            member.post(follower, Peer::Propose { epoch, at, entry });
        }
        // A crash armed for this write's proposal is carried out once the leader yields, by
        // when its proposals have gone out (`sim/src/trigger.rs`).
        if let Txn::Write { request, .. } = &entry.txn {
            self.member().triggers.fire_at_proposal(request);
        }
        self.advance(out);
    }

    /// The leader commits what a quorum has logged (itself and the followers' acks), applies
    /// it and tells every follower; it serves once a quorum has taken its log, re-arming
    /// every session it inherits with a full timeout, as a newly elected leader does.
    pub(super) fn advance(&mut self, out: &mut Vec<Out>) {
        let now = self.time.now();
        let member = self.member();
        let quorum = member.quorum();
        let Role::Leading { followers, .. } = &member.role else {
            return;
        };
        let mut logged: Vec<usize> = followers.values().flatten().map(|a| a.logged).collect();
        logged.push(member.log.len());
        logged.sort_unstable_by(|a, b| b.cmp(a));
        let synced = logged.len() >= quorum;
        if synced && logged[quorum - 1] > member.committed {
            member.committed = logged[quorum - 1];
            member.post_commits();
            self.catch_up(out);
        }
        if synced && !self.member().serving {
            self.member().serving = true;
            for session in self.sessions.values_mut() {
                session.deadline = now + session.timeout;
            }
        }
    }

    /// Applies the log up to where this server knows it is committed.
    pub(super) fn catch_up(&mut self, out: &mut Vec<Out>) {
        let member = self.member();
        let (from, upto) = (member.applied, member.committed);
        let entries: Vec<Entry> = member.log[from..upto].to_vec();
        member.applied = upto;
        let recorded = member.recorded.clone();
        for (position, entry) in (from..upto).zip(entries) {
            let first = {
                let mut recorded = recorded.lock().expect("recorded lock");
                let first = *recorded <= position;
                *recorded = (*recorded).max(position + 1);
                first
            };
            self.member().recording = first;
            self.apply_entry(entry, out);
            self.member().recording = false;
        }
    }

    /// The connection `origin` names when it is this server's.
    fn mine(&mut self, origin: Option<(u16, ConnId)>) -> Option<ConnId> {
        let me = self.member().id;
        origin
            .filter(|(server, _)| *server == me)
            .map(|(_, conn)| conn)
    }

    /// Applies one committed entry of the log.
    fn apply_entry(&mut self, Entry { txn, origin, .. }: Entry, out: &mut Vec<Out>) {
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
            Txn::Reject { op, error } => {
                let Some(conn) = self.mine(origin) else {
                    return;
                };
                if error == ZkError::SessionMoved {
                    // A connection-level error: the server closes the connection instead of
                    // answering, so that a client still on it reconnects, and the server it
                    // reaches owns the session again (`FinalRequestProcessor`, ZOOKEEPER-710).
                    self.member().queues.remove(&conn);
                    self.close_conn(conn, out);
                } else {
                    let result = Err(error);
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

    /// A write applied to this server's tree: recorded if this server applies it first, the
    /// watches it fired go to this server's clients, and the client that asked for it, if
    /// this server's, gets the reply.
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
        self.applied(session, (op, request), applied, None, (record, mine), out);
        if let Some(conn) = mine {
            self.answered(conn, out);
        }
    }

    /// The leader's session tracker: expires, through the log, every session nobody touched
    /// within its timeout (while it serves) and not ended already.
    pub(super) fn expire_in_ensemble(&mut self, due: Vec<SessionId>, out: &mut Vec<Out>) {
        if self.member().leading().is_none() || !self.member().serving {
            return;
        }
        for session in due {
            if self.prep().sessions().is_live(session) {
                self.prep().end(session);
                let change = ServerSession::Expired;
                self.propose(Txn::End { session, change }, None, out);
            }
        }
    }

    /// The leader's container sweep, through the log when it reaped something.
    pub(super) fn sweep_in_ensemble(&mut self) -> Vec<Out> {
        let mut out = Vec::new();
        if self.member().leading().is_none() || !self.member().serving {
            return out;
        }
        let prep = self.prep().tree_mut();
        let before = prep.zxid();
        prep.reap_containers();
        if prep.zxid() != before {
            self.propose(Txn::Reap, None, &mut out);
        }
        out
    }

    /// A leader's prepared state for its log: its applied state, with every entry it logged
    /// beyond replayed.
    pub(super) fn prepared(&mut self) -> FrontEnd {
        let mut prep = self.front.clone();
        let member = self.member();
        for entry in &member.log[member.applied..] {
            entry.txn.prepare(&mut prep);
        }
        prep
    }
}
