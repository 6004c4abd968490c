//! A [`Coordination`] over a real ZooKeeper, through the `zookeeper-client` crate (0.11).
//!
//! # Shape
//! [`RealConnector::connect`] returns a [`RealSession`] at once and starts one OS thread for
//! the session, running [`crate::executor`]'s one-thread executor (which waits on the crate's
//! reactor itself), or, for a connector made [`RealConnector::on_the_calling_thread`], runs
//! it on the executor of the thread that connects. On that one thread run both the crate's
//! own session task (it spawns it on the executor that connects) and our **pump**, one task
//! that owns the crate's `Client`, takes the submitted requests in order, and merges replies,
//! watch events and state changes into the session's one ordered stream (an unbounded
//! channel that [`RealSession::next_event`] reads). The pump connects (retrying every 200 ms
//! until the server accepts; the last error is kept, see [`RealSession::last_error`]) and
//! emits `Connected` first.
//!
//! # How the order is kept, and what the crate guarantees
//! The crate gives no single stream: each request's reply is its own future, each one-shot
//! watch is its own [`zookeeper_client::OneshotWatcher`], and session states come through a
//! `watch` channel that keeps only the latest value. What it does guarantee, from its source
//! (`session/mod.rs`, `session/watch.rs`, `client/mod.rs` of 0.11.2):
//! 1. A request is written to the crate's request channel when the `Client` method is
//!    *called*, not when its future is polled; the pump calls them in submission order (and
//!    polls each once at once), so the server receives requests in our order, and ZooKeeper
//!    answers a session's requests in order.
//! 2. The crate's session task handles the frames of a socket read in socket order, in one
//!    synchronous pass (`handle_recv_buf`): it completes a reply's channel or a watcher's
//!    channel frame by frame, and completing a channel wakes the waker its receiver was
//!    last polled with, right then.
//! 3. On a connection loss it sets the state to `Disconnected`, then fails every in-flight
//!    request with the error that ended the connection, in one synchronous step (not always
//!    `ConnectionLoss`: a connection given up for want of a reply fails them with
//!    `Error::Custom`, which [`zk_error`] reads as a connection loss); on expiry it sets
//!    `Expired` and fails everything with `SessionExpired`.
//!
//! So the pump polls every pending reply future, every watcher and the state channel with a
//! waker of its own that appends "reply n", "watch n" or "state" to a **wake log**, and
//! each time it runs it emits what was delivered in the log's order. Both the crate's session
//! task and the pump run on the same one thread, so the log is appended
//! only between runs of the pump and in exactly the crate's order — the server's order on the
//! socket. Hence:
//! - replies come in request order (a reply's wake emits every earlier reply first: they are
//!   complete, as on a disconnect, where the crate fails them in a hash map's order);
//! - **a watch event comes before a reply exactly when the server sent it before that reply**
//!   (a test races 200 changes against reads: every read that reflects the change comes
//!   after its watch event, every read that misses it comes before the event);
//! - replies failed by a connection loss come **before `Disconnected`** (the state is
//!   emitted at the end of the run), and after a reconnect (a `state` entry in the log)
//!   replies and watch events come after `Connected`;
//! - a `Disconnected` + `SyncConnected` pair that the state channel coalesced is noticed (a
//!   state change while `Connected` was emitted, or a `ConnectionLoss` reply) and emitted.
//!
//! What cannot be guaranteed with this crate, precisely:
//! - A watch whose event arrives in the **same socket read** as the reply that set it is
//!   already fired when the pump first polls it, so no wake recorded its place: it is emitted
//!   right after that reply, even if the server sent other replies in between.
//! - The state channel's wake records only the first change after it was polled; when a
//!   disconnect, the reconnect and new traffic all happen between two runs of the pump, a
//!   watch event that the server sent before the disconnect is still emitted in place, but
//!   the emitted `Disconnected` may come after it and `Connected` before later items, as the
//!   log shows them (no test has produced this case).
//! - The crate expires a session **on its own** when it cannot reconnect within 7/5 of the
//!   negotiated timeout (`Error::Timeout` becomes `SessionState::Expired`); the Java client
//!   keeps trying and learns of expiry only from the server. We report both as `Expired`,
//!   always after a `Disconnected`.
//!
//! # Watches
//! One server notification can fire several local watchers (a data and a child watch on a
//! deleted node): the pump keeps one crate watcher per path and watch table (data/exist vs
//! child), drops duplicates (the crate then keeps the server watch, since another local
//! watcher of that mode remains), and emits an event once among consecutive wakes — one
//! event per notification, as the server's per-session watch tables and our in-memory tree
//! give. Watches are
//! re-registered after a reconnect **by the crate itself** (`resend_watches`: SetWatches
//! with the last zxid it saw), so the server fires those whose nodes changed meanwhile.
//! `RemoveWatches` drops the matching watchers (the crate then sends RemoveWatches to the
//! server, after the requests submitted before it) and replies at once, in order:
//! `WatchesRemoved`, or `NoWatcher` when this session held none.
//!
//! # Errors
//! Crate errors map to [`ZkError`]; ones with no counterpart (throttled, unmarshalling, auth
//! and so on) become `ConnectionLoss` — "the request may or may not have been applied" is the
//! safe reading — and a closed client becomes `SessionExpired`.

use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use coordination::ids::OpId;
use coordination::session::{
    Connector, Coordination, EventInbox, RawEvent, RawState, close_and_wait,
};
use coordination::zk::{
    CreateMode, EventKind, OpOk, OpResult, Path, Request, SessionId, Stat, WatchedEvent,
    WatcherKind, ZkError, Zxid,
};
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::channel::oneshot;
use futures::task::AtomicWaker;
use futures::{FutureExt, StreamExt};
use zookeeper_client as zk;

use crate::executor;

/// How long the pump waits between failed connection attempts.
const RETRY_CONNECT: Duration = Duration::from_millis(200);
/// How many second connections `expire` tries (see [`expire_session`]).
const EXPIRE_ATTEMPTS: u32 = 5;
/// How long `close` waits for the server to confirm the close.
pub(crate) const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Opens sessions on a real ZooKeeper.
#[derive(Clone, Debug)]
pub struct RealConnector {
    connect_string: String,
    session_timeout: Duration,
    /// Whether sessions run on the connecting thread's executor instead of threads of their own.
    on_calling_thread: bool,
    /// The commands of the session this connector opened last (shared by its clones). Weak:
    /// dropping that session still closes it.
    latest: Arc<Mutex<Weak<UnboundedSender<Command>>>>,
}

impl RealConnector {
    /// Sessions on `connect_string` (`host:port[,host:port...]`) asking for `session_timeout`
    /// (the server clamps it to its 2–20 ticks).
    pub fn new(connect_string: impl Into<String>, session_timeout: Duration) -> RealConnector {
        RealConnector {
            connect_string: connect_string.into(),
            session_timeout,
            on_calling_thread: false,
            latest: Arc::default(),
        }
    }

    /// This connector, its sessions run on the thread that connects them instead of threads
    /// of their own: that thread must be running [`executor::block_on`] (a session connected
    /// elsewhere ends at once, its [`RealSession::last_error`] says why). One thread then
    /// drives the socket, the session and its caller; an expiry ([`RealSession::expire`])
    /// holds that thread while the server closes the session.
    pub fn on_the_calling_thread(mut self) -> RealConnector {
        self.on_calling_thread = true;
        self
    }

    /// The connect string sessions are opened on.
    pub fn connect_string(&self) -> &str {
        &self.connect_string
    }

    /// Whether the session this connector (or a clone) opened last is still open.
    pub fn has_open_session(&self) -> bool {
        self.latest.lock().expect("latest session").strong_count() > 0
    }

    /// Expires the session this connector (or a clone) opened last, as
    /// [`RealSession::expire`] does: for a session a driver owns.
    pub async fn expire_latest(&self) -> Result<(), String> {
        let commands = self.latest.lock().expect("latest session").upgrade();
        let commands = commands.ok_or_else(|| "no open session".to_string())?;
        expire_through(&commands).await
    }
}

/// Asks a session's pump to expire it and waits for the outcome.
async fn expire_through(commands: &UnboundedSender<Command>) -> Result<(), String> {
    let (done_tx, done_rx) = oneshot::channel();
    commands
        .unbounded_send(Command::Expire(done_tx))
        .map_err(|_| "the session is closed".to_string())?;
    done_rx
        .await
        .map_err(|_| "the session closed during the expiry".to_string())?
}

impl Connector for RealConnector {
    type Session = RealSession;

    async fn connect(&self) -> RealSession {
        let session = RealSession::start(
            self.connect_string.clone(),
            self.session_timeout,
            self.on_calling_thread,
        );
        *self.latest.lock().expect("latest session") = Arc::downgrade(&session.commands);
        session
    }
}

enum Command {
    Submit(OpId, Request),
    Expire(oneshot::Sender<Result<(), String>>),
    Close(oneshot::Sender<()>),
}

/// One session on a real ZooKeeper. See the module documentation for the ordering contract.
pub struct RealSession {
    commands: Arc<UnboundedSender<Command>>,
    events: EventInbox,
    last_error: Arc<Mutex<Option<String>>>,
}

impl RealSession {
    fn start(
        connect_string: String,
        session_timeout: Duration,
        on_calling_thread: bool,
    ) -> RealSession {
        let (commands_tx, commands_rx) = unbounded();
        let (events_tx, events_rx) = unbounded();
        let last_error = Arc::new(Mutex::new(None));
        let pump = Pump {
            connect_string,
            session_timeout,
            commands: commands_rx,
            events: events_tx,
            last_error: last_error.clone(),
        };
        let started = if on_calling_thread {
            executor::spawn(pump.run())
                .map_err(|_| "connected outside `real::executor::block_on`".to_string())
        } else {
            std::thread::Builder::new()
                .name("zk-session".into())
                .spawn(move || executor::block_on(pump.run()))
                .map(drop)
                .map_err(|error| format!("cannot start the session thread: {error}"))
        };
        if let Err(error) = started {
            *last_error.lock().expect("last error") = Some(error);
        }
        RealSession {
            commands: Arc::new(commands_tx),
            events: EventInbox::new(events_rx),
            last_error,
        }
    }

    /// Expires this session the way Curator's test utilities do: a second connection with
    /// the same session id and password, then closed, so the server ends the session (and
    /// deletes its ephemerals). This handle then sees `Disconnected` and `Expired` when it
    /// reconnects. Returns once the server confirmed the second connection's close; this
    /// session's thread is held meanwhile (see `Live::expire`). A session that has not
    /// connected yet has no id to expire: that expires nothing (as the simulated server does
    /// for a client it has no session of) and returns `Ok`.
    pub async fn expire(&self) -> Result<(), String> {
        expire_through(&self.commands).await
    }

    /// The last error met while connecting (or why the session thread stopped), if any.
    pub fn last_error(&self) -> Option<String> {
        self.last_error.lock().expect("last error").clone()
    }
}

impl Coordination for RealSession {
    async fn submit(&self, op: OpId, request: Request) {
        // A closed session takes no more requests; the stream has ended.
        let _ = self.commands.unbounded_send(Command::Submit(op, request));
    }

    async fn next_event(&self) -> Option<RawEvent> {
        self.events.next().await
    }

    async fn close(&self) {
        close_and_wait(&self.commands, Command::Close).await;
        // Nothing more after a close, not even what was already queued.
        self.events.close();
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send + 'static {
        let timer = async_io::Timer::after(duration);
        async move {
            timer.await;
        }
    }
}

/// Which server-side watch table a watch lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Table {
    /// get_data and exists watches.
    Data,
    /// get_children watches.
    Child,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A reply, and the watcher the request left.
struct Outcome {
    result: OpResult,
    watch: Option<(Path, Table, zk::OneshotWatcher)>,
}

/// A watch the crate may fire, with the waker that records when it does.
struct Watch {
    id: u64,
    path: Path,
    table: Table,
    fired: BoxFuture<zk::WatchedEvent>,
    waker: Waker,
}

/// A submitted request's reply: the crate's future (polled only with `waker`, which records
/// its completion), or the outcome once known. `local` replies (RemoveWatches, a request the
/// crate refused before sending) never wait for the server.
struct PendingReply {
    seq: u64,
    op: OpId,
    outcome: Option<Outcome>,
    future: Option<BoxFuture<Outcome>>,
    waker: Waker,
    local: bool,
}

impl PendingReply {
    /// True once the outcome is known (polling the future with its own waker).
    fn ready(&mut self) -> bool {
        if let Some(future) = self.future.as_mut()
            && let Poll::Ready(outcome) = future.poll_unpin(&mut Context::from_waker(&self.waker))
        {
            self.outcome = Some(outcome);
            self.future = None;
        }
        self.outcome.is_some()
    }
}

/// What woke: a reply, a watch or the state channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Reply(u64),
    Watch(u64),
    State,
}

/// The order in which the crate's session task completed our futures. It completes them
/// (and so wakes their wakers) in socket order, on the pump's own thread.
#[derive(Default)]
struct WakeLog {
    entries: Mutex<Vec<Source>>,
    task: AtomicWaker,
}

impl WakeLog {
    fn push(&self, source: Source) {
        self.entries.lock().expect("wake log").push(source);
        self.task.wake();
    }

    fn take(&self) -> Vec<Source> {
        std::mem::take(&mut *self.entries.lock().expect("wake log"))
    }
}

/// A waker that notes its source in the log, then wakes the pump.
struct Recorder {
    source: Source,
    log: Arc<WakeLog>,
}

impl Wake for Recorder {
    fn wake(self: Arc<Self>) {
        self.log.push(self.source);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.log.push(self.source);
    }
}

/// The connection state last emitted on the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum View {
    Connected,
    Disconnected,
    Expired,
}

struct Pump {
    connect_string: String,
    session_timeout: Duration,
    commands: UnboundedReceiver<Command>,
    events: UnboundedSender<RawEvent>,
    last_error: Arc<Mutex<Option<String>>>,
}

impl Pump {
    async fn run(mut self) {
        let mut early = VecDeque::new();
        let Some(client) = self.connect(&mut early).await else {
            return;
        };
        let mut live = Live {
            session: SessionId(client.session_id().0 as u64),
            timeout: client.session_timeout(),
            states: client.state_watcher(),
            state_change: None,
            client: Some(client),
            connect_string: self.connect_string.clone(),
            log: Arc::default(),
            next_seq: 0,
            completed_through: 0,
            replies: VecDeque::new(),
            watches: Vec::new(),
            group: Vec::new(),
            view: View::Connected,
            events: self.events.clone(),
            closing: None,
        };
        live.emit(RawEvent::State {
            state: RawState::Connected {
                session: live.session,
                timeout: live.timeout,
            },
        });
        live.arm_state();
        for (op, request) in early {
            live.submit(op, request);
        }
        poll_fn(|cx| live.poll(cx, &mut self.commands)).await;
        live.finish().await;
    }

    /// Connects, retrying until the server accepts; requests submitted meanwhile are kept.
    /// `None` when the session was closed (or dropped) first.
    async fn connect(&mut self, early: &mut VecDeque<(OpId, Request)>) -> Option<zk::Client> {
        loop {
            let attempt = zk::Client::connector()
                .with_session_timeout(self.session_timeout)
                .connect(&self.connect_string);
            let mut attempt = Box::pin(attempt).fuse();
            let result = loop {
                futures::select_biased! {
                    command = self.commands.next() => match command {
                        Some(Command::Submit(op, request)) => early.push_back((op, request)),
                        // No session id yet, so none on the server to expire: the expiry
                        // expires nothing, as the simulated server's does for a client it
                        // has no session of.
                        Some(Command::Expire(done)) => {
                            let _ = done.send(Ok(()));
                        }
                        Some(Command::Close(done)) => {
                            let _ = done.send(());
                            return None;
                        }
                        None => return None,
                    },
                    result = &mut attempt => break result,
                }
            };
            match result {
                Ok(client) => return Some(client),
                Err(error) => {
                    *self.last_error.lock().expect("last error") =
                        Some(format!("connecting to {}: {error}", self.connect_string));
                    async_io::Timer::after(RETRY_CONNECT).await;
                }
            }
        }
    }
}

/// The pump's state once connected.
struct Live {
    session: SessionId,
    timeout: Duration,
    states: zk::StateWatcher,
    state_change: Option<BoxFuture<(zk::StateWatcher, zk::SessionState)>>,
    client: Option<zk::Client>,
    connect_string: String,
    log: Arc<WakeLog>,
    next_seq: u64,
    /// The highest reply whose completion the log reported.
    completed_through: u64,
    replies: VecDeque<PendingReply>,
    watches: Vec<Watch>,
    /// Watch events emitted since the last reply or state change (one notification can wake
    /// several local watchers: it is emitted once).
    group: Vec<WatchedEvent>,
    view: View,
    events: UnboundedSender<RawEvent>,
    closing: Option<Option<oneshot::Sender<()>>>,
}

impl Live {
    fn emit(&mut self, event: RawEvent) {
        match &event {
            RawEvent::State { state } => {
                self.view = match state {
                    RawState::Connected { .. } => View::Connected,
                    RawState::Disconnected => View::Disconnected,
                    RawState::Expired => View::Expired,
                };
                self.group.clear();
            }
            RawEvent::Reply { .. } => self.group.clear(),
            RawEvent::Watch { .. } => {}
        }
        let _ = self.events.unbounded_send(event);
    }

    fn waker(&self, source: Source) -> Waker {
        Waker::from(Arc::new(Recorder {
            source,
            log: self.log.clone(),
        }))
    }

    /// Waits for the next state change, recording when it happens.
    fn arm_state(&mut self) {
        let mut states = self.states.clone();
        let mut change: BoxFuture<_> = Box::pin(async move {
            let state = states.changed().await;
            (states, state)
        });
        let waker = self.waker(Source::State);
        match change.poll_unpin(&mut Context::from_waker(&waker)) {
            // Changed already: the next run sees it (no wake was recorded for it).
            Poll::Ready(changed) => {
                self.state_change = Some(Box::pin(std::future::ready(changed)));
                self.log.push(Source::State);
            }
            Poll::Pending => self.state_change = Some(change),
        }
    }

    fn connected(&self) -> RawEvent {
        RawEvent::State {
            state: RawState::Connected {
                session: self.session,
                timeout: self.timeout,
            },
        }
    }

    /// One run: takes commands, then emits what the crate delivered since the last run, in
    /// the order it delivered it (the wake log), as the module documentation describes.
    /// Ready when the session is closing.
    fn poll(
        &mut self,
        cx: &mut Context<'_>,
        commands: &mut UnboundedReceiver<Command>,
    ) -> Poll<()> {
        self.log.task.register(cx.waker());
        while self.closing.is_none() {
            match commands.poll_next_unpin(cx) {
                Poll::Ready(Some(Command::Submit(op, request))) => self.submit(op, request),
                Poll::Ready(Some(Command::Expire(done))) => self.expire(done),
                Poll::Ready(Some(Command::Close(done))) => self.closing = Some(Some(done)),
                Poll::Ready(None) => self.closing = Some(None),
                Poll::Pending => break,
            }
        }
        if self.closing.is_some() {
            return Poll::Ready(());
        }
        // The crate's current state, with a coalesced Disconnected noticed.
        let mut missed_disconnect = false;
        let mut state = None;
        let state_waker = self.waker(Source::State);
        if let Some(change) = self.state_change.as_mut()
            && let Poll::Ready((states, new)) =
                change.poll_unpin(&mut Context::from_waker(&state_waker))
        {
            self.states = states;
            state = Some(new);
            if is_connected(new) && self.view == View::Connected {
                missed_disconnect = true;
            }
            self.arm_state();
        }
        let state = state.unwrap_or_else(|| self.states.peek_state());
        // What the crate delivered, in order. After a state change (`crossed`), events and
        // replies come from the new connection: the Connected goes first.
        let entries = self.log.take();
        let mut crossed = false;
        for entry in entries {
            match entry {
                Source::State => {
                    crossed = true;
                    self.group.clear();
                }
                Source::Reply(seq) => {
                    self.completed_through = self.completed_through.max(seq);
                    self.emit_replies(Some(seq), crossed, &mut missed_disconnect, state)
                }
                Source::Watch(id) => {
                    let Some(index) = self.watches.iter().position(|w| w.id == id) else {
                        continue;
                    };
                    let watch = &mut self.watches[index];
                    let Poll::Ready(event) = watch
                        .fired
                        .poll_unpin(&mut Context::from_waker(&watch.waker))
                    else {
                        continue;
                    };
                    self.watches.remove(index);
                    if crossed || self.view == View::Disconnected {
                        self.catch_up(&mut missed_disconnect, state);
                    }
                    self.emit_watch(&event);
                }
            }
        }
        // Local replies (RemoveWatches, refused requests) that reached the head, and (should a
        // wake ever come before its predecessors completed) replies the log reported.
        let through = Some(self.completed_through);
        self.emit_replies(through, crossed, &mut missed_disconnect, state);
        match state {
            zk::SessionState::Disconnected => {
                if self.view == View::Connected {
                    self.emit(RawEvent::State {
                        state: RawState::Disconnected,
                    });
                }
            }
            zk::SessionState::SyncConnected | zk::SessionState::ConnectedReadOnly => {
                self.catch_up(&mut missed_disconnect, state)
            }
            _ => {
                if self.view == View::Connected {
                    // A client learns of expiry when it reconnects: it was disconnected first.
                    self.emit(RawEvent::State {
                        state: RawState::Disconnected,
                    });
                }
                if self.view != View::Expired {
                    self.emit(RawEvent::State {
                        state: RawState::Expired,
                    });
                    self.watches.clear();
                }
            }
        }
        Poll::Pending
    }

    /// Emits replies from the head of the queue: through the one numbered `through` (the
    /// crate completes them in order, failures on a disconnect all at once), then any local
    /// ones that follow; `None` emits only local ones.
    fn emit_replies(
        &mut self,
        through: Option<u64>,
        crossed: bool,
        missed_disconnect: &mut bool,
        state: zk::SessionState,
    ) {
        while let Some(head) = self.replies.front_mut() {
            let due = head.local || through.is_some_and(|seq| head.seq <= seq);
            if !due || !head.ready() {
                break;
            }
            let Some(PendingReply {
                op,
                outcome: Some(outcome),
                ..
            }) = self.replies.pop_front()
            else {
                break;
            };
            let failed = matches!(
                outcome.result,
                Err(ZkError::ConnectionLoss | ZkError::SessionExpired)
            );
            if failed {
                if outcome.result == Err(ZkError::ConnectionLoss) && self.view == View::Connected {
                    *missed_disconnect = true;
                }
            } else if crossed || self.view == View::Disconnected {
                self.catch_up(missed_disconnect, state);
            }
            self.emit(RawEvent::Reply {
                op,
                result: outcome.result,
            });
            if let Some((path, table, watcher)) = outcome.watch {
                self.add_watch(path, table, watcher);
            }
        }
    }

    /// Emits a watch event, once per notification.
    fn emit_watch(&mut self, event: &zk::WatchedEvent) {
        let Some(event) = watched_event(event) else {
            return;
        };
        if self.group.contains(&event) {
            return;
        }
        self.group.push(event.clone());
        self.emit(RawEvent::Watch { event });
    }

    /// Opens a second connection on this session and closes it (see [`RealSession::expire`]),
    /// on a task of the pump's runtime.
    fn expire(&mut self, done: oneshot::Sender<Result<(), String>>) {
        let Some(client) = self.client.as_ref() else {
            let _ = done.send(Err("the session is closed".to_string()));
            return;
        };
        let session = client.session().clone();
        let connect_string = self.connect_string.clone();
        let timeout = self.timeout;
        // The crate reconnects at once (the Java client waits 0–1 s), so this session would
        // take itself back from the second connection before the close. Holding this
        // session's thread (the crate's session task runs on it) until the close is done
        // keeps it from reconnecting: a pause, as a GC pause would be.
        let worker = std::thread::Builder::new()
            .name("zk-expire".into())
            .spawn(move || executor::block_on(expire_session(session, &connect_string, timeout)));
        let result = match worker {
            Ok(worker) => worker
                .join()
                .unwrap_or_else(|_| Err("the expiry thread panicked".to_string())),
            Err(e) => Err(format!("cannot start the expiry thread: {e}")),
        };
        let _ = done.send(result);
    }

    /// Emits a missed `Disconnected`, and `Connected` when the crate is connected again.
    fn catch_up(&mut self, missed_disconnect: &mut bool, state: zk::SessionState) {
        if std::mem::take(missed_disconnect) && self.view == View::Connected {
            self.emit(RawEvent::State {
                state: RawState::Disconnected,
            });
        }
        if is_connected(state) && self.view == View::Disconnected {
            let connected = self.connected();
            self.emit(connected);
        }
    }

    fn add_watch(&mut self, path: Path, table: Table, watcher: zk::OneshotWatcher) {
        if self
            .watches
            .iter()
            .any(|w| w.path == path && w.table == table)
        {
            // The server keeps one watch per path and table: the one we hold fires for both.
            return;
        }
        self.next_seq += 1;
        let id = self.next_seq;
        let waker = self.waker(Source::Watch(id));
        let mut fired: BoxFuture<zk::WatchedEvent> = Box::pin(watcher.changed());
        // Registers the recording waker. Ready already: the notification came in the same
        // read as the reply that set the watch, so no wake recorded its place; it goes right
        // after that reply (the documented imprecision).
        if let Poll::Ready(event) = fired.poll_unpin(&mut Context::from_waker(&waker)) {
            self.emit_watch(&event);
            return;
        }
        self.watches.push(Watch {
            id,
            path,
            table,
            fired,
            waker,
        });
    }

    /// Sends `request` now (the crate writes it when the method is called) and queues its
    /// reply.
    fn submit(&mut self, op: OpId, request: Request) {
        self.next_seq += 1;
        let seq = self.next_seq;
        let waker = self.waker(Source::Reply(seq));
        let local = |result| {
            (
                Some(Outcome {
                    result,
                    watch: None,
                }),
                None,
                true,
            )
        };
        let (outcome, future, local) = match (&self.client, request) {
            (None, _) => local(Err(ZkError::SessionExpired)),
            (Some(_), Request::RemoveWatches { path, kind }) => {
                let before = self.watches.len();
                self.watches.retain(|w| {
                    w.path != path
                        || !matches!(
                            (kind, w.table),
                            (WatcherKind::Any, _)
                                | (WatcherKind::Data, Table::Data)
                                | (WatcherKind::Children, Table::Child)
                        )
                });
                local(if self.watches.len() < before {
                    Ok(OpOk::WatchesRemoved)
                } else {
                    Err(ZkError::NoWatcher)
                })
            }
            (Some(client), request) => match send(client, request, &waker) {
                Ok(outcome) => local(outcome.result),
                Err(future) => (None, Some(future), false),
            },
        };
        self.replies.push_back(PendingReply {
            seq,
            op,
            outcome,
            future,
            waker,
            local,
        });
    }

    /// Closes: drops every reply and watcher, then the client (the crate sends
    /// CloseSession), and waits for the crate to confirm, bounded by [`CLOSE_WAIT`].
    async fn finish(mut self) {
        self.replies.clear();
        self.watches.clear();
        self.state_change = None;
        let done = self.closing.take().flatten();
        if let Some(client) = self.client.take() {
            let mut states = client.state_watcher();
            drop(client);
            let closed = async {
                while !states.peek_state().is_terminated() {
                    states.changed().await;
                }
            };
            executor::within(CLOSE_WAIT, closed).await;
        }
        self.events.close_channel();
        if let Some(done) = done {
            let _ = done.send(());
        }
    }
}

/// Ends `session` on the server with a second connection that closes it ([`expire_with`]).
async fn expire_session(
    session: zk::SessionInfo,
    connect_string: &str,
    timeout: Duration,
) -> Result<(), String> {
    let id = session.id().0;
    expire_with(id, || {
        second_connection(session.clone(), connect_string, timeout)
    })
    .await
}

/// Ends session `id` on the server with second connections on it, each made and closed by
/// `second_connection`: `Ok` once one closed it (or found it expired already), `Err` saying
/// why it did not. Should the session's own connection take it back before the close (the
/// server then drops the second connection: "session moved"), it is tried again, up to
/// [`EXPIRE_ATTEMPTS`] times.
pub(crate) async fn expire_with<F>(
    id: i64,
    mut second_connection: impl FnMut() -> F,
) -> Result<(), String>
where
    F: Future<Output = Result<(), String>>,
{
    let mut last = String::new();
    for _ in 0..EXPIRE_ATTEMPTS {
        match second_connection().await {
            Ok(()) => return Ok(()),
            Err(why) => last = why,
        }
    }
    Err(format!("expiring session {id:#x}: {last}"))
}

/// One second connection on `session`, closed: `Ok` once the server confirms the close, or
/// refuses the connection because the session has expired.
async fn second_connection(
    session: zk::SessionInfo,
    connect_string: &str,
    timeout: Duration,
) -> Result<(), String> {
    let other = zk::Client::connector()
        .with_session(session)
        .with_session_timeout(timeout)
        .connect(connect_string)
        .await;
    let other = match other {
        Ok(other) => other,
        Err(zk::Error::SessionExpired) => return Ok(()),
        Err(error) => return Err(format!("a second connection to {connect_string}: {error}")),
    };
    let mut states = other.state_watcher();
    drop(other);
    let ended = async {
        while !states.peek_state().is_terminated() {
            states.changed().await;
        }
        states.peek_state()
    };
    match executor::within(CLOSE_WAIT, ended).await {
        Some(zk::SessionState::Closed) => Ok(()),
        Some(state) => Err(format!(
            "the second connection ended {state} instead of closing"
        )),
        None => Err(format!(
            "the server did not confirm the close within {CLOSE_WAIT:?}"
        )),
    }
}

fn is_connected(state: zk::SessionState) -> bool {
    matches!(
        state,
        zk::SessionState::SyncConnected | zk::SessionState::ConnectedReadOnly
    )
}

/// Issues `request` on `client`: the crate sends it during this call. The future owns a
/// clone of the client (cheap: shared handles).
fn send(
    client: &zk::Client,
    request: Request,
    waker: &Waker,
) -> Result<Outcome, BoxFuture<Outcome>> {
    let client = client.clone();
    let mut future: BoxFuture<Outcome> = Box::pin(async move {
        match request {
            Request::Create { path, data, mode } => {
                let options = create_mode(mode).with_acls(zk::Acls::anyone_all());
                let result = client
                    .create(path.as_str(), &data, &options)
                    .await
                    .map_err(zk_error)
                    .and_then(|(stat, sequence)| {
                        let created = if mode.is_sequential() {
                            format!("{}{sequence}", path.as_str())
                        } else {
                            path.as_str().to_string()
                        };
                        let created = Path::new(&created).map_err(|_| ZkError::ConnectionLoss)?;
                        Ok(OpOk::Created {
                            path: created,
                            stat: stat_of(&stat),
                        })
                    });
                Outcome {
                    result,
                    watch: None,
                }
            }
            Request::Delete { path, version } => Outcome {
                result: client
                    .delete(path.as_str(), version)
                    .await
                    .map(|()| OpOk::Deleted)
                    .map_err(zk_error),
                watch: None,
            },
            Request::SetData {
                path,
                data,
                version,
            } => Outcome {
                result: client
                    .set_data(path.as_str(), &data, version)
                    .await
                    .map(|stat| OpOk::DataSet {
                        stat: stat_of(&stat),
                    })
                    .map_err(zk_error),
                watch: None,
            },
            Request::GetData { path, watch: false } => Outcome {
                result: client
                    .get_data(path.as_str())
                    .await
                    .map(|(data, stat)| OpOk::Data {
                        data,
                        stat: stat_of(&stat),
                    })
                    .map_err(zk_error),
                watch: None,
            },
            Request::GetData { path, watch: true } => {
                match client.get_and_watch_data(path.as_str()).await {
                    Ok((data, stat, watcher)) => Outcome {
                        result: Ok(OpOk::Data {
                            data,
                            stat: stat_of(&stat),
                        }),
                        watch: Some((path, Table::Data, watcher)),
                    },
                    Err(error) => Outcome {
                        result: Err(zk_error(error)),
                        watch: None,
                    },
                }
            }
            Request::Exists { path, watch: false } => Outcome {
                result: client
                    .check_stat(path.as_str())
                    .await
                    .map(|stat| OpOk::Exists {
                        stat: stat.as_ref().map(stat_of),
                    })
                    .map_err(zk_error),
                watch: None,
            },
            Request::Exists { path, watch: true } => {
                match client.check_and_watch_stat(path.as_str()).await {
                    Ok((stat, watcher)) => Outcome {
                        result: Ok(OpOk::Exists {
                            stat: stat.as_ref().map(stat_of),
                        }),
                        watch: Some((path, Table::Data, watcher)),
                    },
                    Err(error) => Outcome {
                        result: Err(zk_error(error)),
                        watch: None,
                    },
                }
            }
            Request::GetChildren { path, watch: false } => Outcome {
                result: client
                    .get_children(path.as_str())
                    .await
                    .map(|(names, stat)| children(names, &stat))
                    .map_err(zk_error),
                watch: None,
            },
            Request::GetChildren { path, watch: true } => {
                match client.get_and_watch_children(path.as_str()).await {
                    Ok((names, stat, watcher)) => Outcome {
                        result: Ok(children(names, &stat)),
                        watch: Some((path, Table::Child, watcher)),
                    },
                    Err(error) => Outcome {
                        result: Err(zk_error(error)),
                        watch: None,
                    },
                }
            }
            Request::RemoveWatches { .. } => Outcome {
                // Handled by the pump without the crate; unreachable here.
                result: Err(ZkError::NoWatcher),
                watch: None,
            },
        }
    });
    // The first poll runs the body up to the reply's await: the crate sends the request now,
    // in submission order, and the reply's completion will wake `waker`.
    match future.as_mut().poll(&mut Context::from_waker(waker)) {
        Poll::Ready(outcome) => Ok(outcome),
        Poll::Pending => Err(future),
    }
}

fn create_mode(mode: CreateMode) -> zk::CreateMode {
    match mode {
        CreateMode::Persistent => zk::CreateMode::Persistent,
        CreateMode::PersistentSequential => zk::CreateMode::PersistentSequential,
        CreateMode::Ephemeral => zk::CreateMode::Ephemeral,
        CreateMode::EphemeralSequential => zk::CreateMode::EphemeralSequential,
        CreateMode::Container => zk::CreateMode::Container,
    }
}

/// The crate's `Stat` in our vocabulary (no wall-clock times).
pub fn stat_of(stat: &zk::Stat) -> Stat {
    Stat {
        czxid: Zxid(stat.czxid as u64),
        mzxid: Zxid(stat.mzxid as u64),
        pzxid: Zxid(stat.pzxid as u64),
        version: stat.version,
        cversion: stat.cversion,
        ephemeral_owner: (stat.ephemeral_owner != 0)
            .then_some(SessionId(stat.ephemeral_owner as u64)),
        num_children: u32::try_from(stat.num_children).unwrap_or(0),
        data_length: u32::try_from(stat.data_length).unwrap_or(0),
    }
}

/// A listing's reply: the children's names and their parent's pzxid.
fn children(names: Vec<String>, stat: &zk::Stat) -> OpOk {
    let pzxid = Some(Zxid(stat.pzxid as u64));
    OpOk::Children { names, pzxid }
}

/// The crate's error in our vocabulary (see the module documentation for the fallbacks).
pub fn zk_error(error: zk::Error) -> ZkError {
    match error {
        zk::Error::ClientClosed => ZkError::SessionExpired,
        error => programs::zookeeper_error(&error).unwrap_or(ZkError::ConnectionLoss),
    }
}

/// A node event in our vocabulary; `None` for the crate's session events (a terminal state
/// wakes every watcher; the state stream reports it).
fn watched_event(event: &zk::WatchedEvent) -> Option<WatchedEvent> {
    let kind = match event.event_type {
        zk::EventType::NodeCreated => EventKind::NodeCreated,
        zk::EventType::NodeDeleted => EventKind::NodeDeleted,
        zk::EventType::NodeDataChanged => EventKind::NodeDataChanged,
        zk::EventType::NodeChildrenChanged => EventKind::NodeChildrenChanged,
        _ => return None,
    };
    let path = Path::new(&event.path).ok()?;
    Some(WatchedEvent { kind, path })
}
