//! A [`Coordination`] over a real ZooKeeper, through the `zookeeper-client` crate (0.11).
//!
//! # Shape
//! [`RealConnector::connect`] returns a [`RealSession`] at once and starts one OS thread for
//! the session, running a current-thread tokio runtime. On that runtime run both the crate's
//! own session task (it spawns it on the runtime that connects) and our **pump**, one task
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
//!    *called*, not when its future is polled; the pump calls them in submission order, so
//!    the server receives requests in our order, and ZooKeeper answers a session's requests
//!    in order. The pump keeps the reply futures in a FIFO and emits only the head: replies
//!    come out in request order.
//! 2. The crate's session task handles every frame of a socket read in one synchronous pass
//!    (`handle_recv_buf`): a notification is sent into its watcher's channel and a reply into
//!    its future's channel in socket order. So when the pump sees a reply ready, every
//!    notification the server sent *before* that reply is already in its watcher's channel.
//!    Before emitting a reply the pump drains every ready watcher: **a watch event always
//!    comes before any later reply**, in particular one that reflects the change.
//! 3. On a connection loss the crate sets the state to `Disconnected` and fails every
//!    in-flight request with `ConnectionLoss` in one synchronous step; on expiry it sets
//!    `Expired` and fails everything with `SessionExpired`. Because the pump runs on the same
//!    current-thread runtime as the session task, it never observes half of such a step. It
//!    emits ready replies (the failed ones) before the state change: **replies to requests in
//!    flight when the connection dropped come before `Disconnected`**.
//! 4. The `watch` channel of states can coalesce `Disconnected` + `SyncConnected` when the
//!    pump does not run in between. The pump notices (a new state change while it has emitted
//!    `Connected`, or a `ConnectionLoss` reply while it believes it is connected) and emits
//!    the missed `Disconnected` before the `Connected`.
//!
//! What cannot be guaranteed with this crate, precisely:
//! - Two watch events, or a watch event and a reply, that the crate handled between two runs
//!   of the pump cannot be told apart in time: the pump emits the ready watch events (in the
//!   order their watches were registered) before the next reply. So a notification the
//!   server sent just *after* a reply may come out just *before* it. (The reverse, a reply
//!   overtaking an earlier notification, cannot happen: point 2.) ZooKeeper 3.8 puts no zxid
//!   in notifications and the crate exposes no reply zxid, so there is nothing to sort by.
//!   Among watch events ready together, node events (created, deleted, data changed) come
//!   before child events, which is the server's order within one transaction.
//! - When the pump did not run between a disconnect and the reconnect, a watch event fired
//!   before the disconnect may come after the emitted `Disconnected`/`Connected` pair (still
//!   before any later reply).
//! - The crate expires a session **on its own** when it cannot reconnect within 7/5 of the
//!   negotiated timeout (`Error::Timeout` becomes `SessionState::Expired`); the Java client
//!   keeps trying and learns of expiry only from the server. We report both as `Expired`.
//!
//! # Watches
//! One server notification can fire several local watchers (a data and a child watch on a
//! deleted node, or two get_data watches on one node): the pump keeps one crate watcher per
//! path and watch table (data/exist vs child), drops duplicates (the crate then keeps the
//! server watch, since another local watcher of that mode remains), and emits one event per
//! path and kind among those that became ready together — one event per notification, as
//! the server's per-session watch tables and our in-memory tree give. Watches are
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
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::channel::oneshot;
use futures::{FutureExt, StreamExt};
use lock::coordination::{Connector, Coordination, RawEvent, RawState};
use lock::ids::OpId;
use lock::zk::{
    CreateMode, EventKind, OpOk, OpResult, Path, Request, SessionId, Stat, WatchedEvent,
    WatcherKind, ZkError, Zxid,
};
use zookeeper_client as zk;

/// How long the pump waits between failed connection attempts.
const RETRY_CONNECT: Duration = Duration::from_millis(200);
/// How many second connections `expire` tries (see [`expire_session`]).
const EXPIRE_ATTEMPTS: u32 = 5;
/// How long `close` waits for the server to confirm the close.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Opens sessions on a real ZooKeeper.
#[derive(Clone, Debug)]
pub struct RealConnector {
    connect_string: String,
    session_timeout: Duration,
}

impl RealConnector {
    /// Sessions on `connect_string` (`host:port[,host:port...]`) asking for `session_timeout`
    /// (the server clamps it to its 2–20 ticks).
    pub fn new(connect_string: impl Into<String>, session_timeout: Duration) -> RealConnector {
        RealConnector {
            connect_string: connect_string.into(),
            session_timeout,
        }
    }
}

impl Connector for RealConnector {
    type Session = RealSession;

    async fn connect(&self) -> RealSession {
        RealSession::start(self.connect_string.clone(), self.session_timeout)
    }
}

enum Command {
    Submit(OpId, Request),
    Expire(oneshot::Sender<Result<(), String>>),
    Close(oneshot::Sender<()>),
}

/// One session on a real ZooKeeper. See the module documentation for the ordering contract.
pub struct RealSession {
    commands: UnboundedSender<Command>,
    events: Mutex<UnboundedReceiver<RawEvent>>,
    last_error: Arc<Mutex<Option<String>>>,
}

impl RealSession {
    fn start(connect_string: String, session_timeout: Duration) -> RealSession {
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
        let spawned = std::thread::Builder::new()
            .name("zk-session".into())
            .spawn(move || {
                match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime.block_on(pump.run()),
                    Err(error) => pump.fail(format!("cannot build a tokio runtime: {error}")),
                }
            });
        if let Err(error) = spawned {
            *last_error.lock().expect("last error") =
                Some(format!("cannot start the session thread: {error}"));
        }
        RealSession {
            commands: commands_tx,
            events: Mutex::new(events_rx),
            last_error,
        }
    }

    /// Expires this session the way Curator's test utilities do: a second connection with
    /// the same session id and password, then closed, so the server ends the session (and
    /// deletes its ephemerals). This handle then sees `Disconnected` and `Expired` when it
    /// reconnects. Returns once the server confirmed the second connection's close; this
    /// session's thread is held meanwhile (see `Live::expire`).
    pub async fn expire(&self) -> Result<(), String> {
        let (done_tx, done_rx) = oneshot::channel();
        self.commands
            .unbounded_send(Command::Expire(done_tx))
            .map_err(|_| "the session is closed".to_string())?;
        done_rx
            .await
            .map_err(|_| "the session closed during the expiry".to_string())?
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
        poll_fn(|cx| self.events.lock().expect("events").poll_next_unpin(cx)).await
    }

    async fn close(&self) {
        let (done_tx, done_rx) = oneshot::channel();
        if self
            .commands
            .unbounded_send(Command::Close(done_tx))
            .is_ok()
        {
            let _ = done_rx.await;
        }
        // Nothing more after a close, not even what was already queued.
        let mut events = self.events.lock().expect("events");
        events.close();
        while events.try_recv().is_ok() {}
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send + 'static {
        tokio::time::sleep(duration)
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

struct Watch {
    path: Path,
    table: Table,
    fired: BoxFuture<zk::WatchedEvent>,
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
    fn fail(self, message: String) {
        *self.last_error.lock().expect("last error") = Some(message);
    }

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
            replies: VecDeque::new(),
            watches: Vec::new(),
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
            let mut attempt = Box::pin(attempt);
            let result = loop {
                tokio::select! {
                    biased;
                    command = self.commands.next() => match command {
                        Some(Command::Submit(op, request)) => early.push_back((op, request)),
                        Some(Command::Expire(done)) => {
                            let _ = done.send(Err("not connected yet".to_string()));
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
                    tokio::time::sleep(RETRY_CONNECT).await;
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
    replies: VecDeque<(OpId, BoxFuture<Outcome>)>,
    watches: Vec<Watch>,
    view: View,
    events: UnboundedSender<RawEvent>,
    closing: Option<Option<oneshot::Sender<()>>>,
}

impl Live {
    fn emit(&mut self, event: RawEvent) {
        if let RawEvent::State { state } = &event {
            self.view = match state {
                RawState::Connected { .. } => View::Connected,
                RawState::Disconnected => View::Disconnected,
                RawState::Expired => View::Expired,
            };
        }
        let _ = self.events.unbounded_send(event);
    }

    fn arm_state(&mut self) {
        let mut states = self.states.clone();
        self.state_change = Some(Box::pin(async move {
            let state = states.changed().await;
            (states, state)
        }));
    }

    fn connected(&self) -> RawEvent {
        RawEvent::State {
            state: RawState::Connected {
                session: self.session,
                timeout: self.timeout,
            },
        }
    }

    /// One run: takes commands, then emits everything that is ready, in the documented
    /// order. Ready when the session is closing.
    fn poll(
        &mut self,
        cx: &mut Context<'_>,
        commands: &mut UnboundedReceiver<Command>,
    ) -> Poll<()> {
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
        if let Some(change) = self.state_change.as_mut()
            && let Poll::Ready((states, new)) = change.poll_unpin(cx)
        {
            self.states = states;
            state = Some(new);
            if is_connected(new) && self.view == View::Connected {
                missed_disconnect = true;
            }
            self.arm_state();
            // Re-arm registers the waker for the next change.
            if let Some(change) = self.state_change.as_mut() {
                let _ = change.poll_unpin(cx);
            }
        }
        let state = state.unwrap_or_else(|| self.states.peek_state());
        // Replies, each after the watch events that are ready before it.
        while let Some((_, head)) = self.replies.front_mut() {
            let Poll::Ready(outcome) = head.poll_unpin(cx) else {
                break;
            };
            let Some((op, _)) = self.replies.pop_front() else {
                break;
            };
            let failed = matches!(
                outcome.result,
                Err(ZkError::ConnectionLoss | ZkError::SessionExpired)
            );
            if failed {
                if outcome.result == Err(ZkError::ConnectionLoss) && self.view == View::Connected {
                    missed_disconnect = true;
                }
            } else {
                self.catch_up(&mut missed_disconnect, state);
            }
            self.drain_watches(cx);
            self.emit(RawEvent::Reply {
                op,
                result: outcome.result,
            });
            if let Some((path, table, watcher)) = outcome.watch {
                self.add_watch(path, table, watcher, cx);
            }
        }
        // Events after a reconnect come after the Connected.
        if is_connected(state) {
            self.catch_up(&mut missed_disconnect, state);
        }
        self.drain_watches(cx);
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
            .spawn(move || {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| format!("cannot build a tokio runtime: {e}"))?
                    .block_on(expire_session(session, &connect_string, timeout))
            });
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

    /// Emits the watch events that are ready, one per path and kind.
    fn drain_watches(&mut self, cx: &mut Context<'_>) {
        let mut fired: Vec<WatchedEvent> = Vec::new();
        self.watches
            .retain_mut(|watch| match watch.fired.poll_unpin(cx) {
                Poll::Ready(event) => {
                    if let Some(event) = watched_event(&event)
                        && !fired.contains(&event)
                    {
                        fired.push(event);
                    }
                    false
                }
                Poll::Pending => true,
            });
        // One transaction fires node events before its parent's child event; events that
        // became ready together are emitted in that order (their true order is unknown).
        fired.sort_by_key(|e| e.kind == EventKind::NodeChildrenChanged);
        for event in fired {
            self.emit(RawEvent::Watch { event });
        }
    }

    fn add_watch(
        &mut self,
        path: Path,
        table: Table,
        watcher: zk::OneshotWatcher,
        cx: &mut Context<'_>,
    ) {
        if self
            .watches
            .iter()
            .any(|w| w.path == path && w.table == table)
        {
            // The server keeps one watch per path and table: the one we hold fires for both.
            return;
        }
        let mut fired: BoxFuture<zk::WatchedEvent> = Box::pin(watcher.changed());
        // Registers the waker; an event cannot be ready yet (its reply was just handled).
        if let Poll::Ready(event) = fired.poll_unpin(cx) {
            if let Some(event) = watched_event(&event) {
                self.emit(RawEvent::Watch { event });
            }
            return;
        }
        self.watches.push(Watch { path, table, fired });
    }

    /// Sends `request` now (the crate writes it when the method is called) and queues its
    /// reply.
    fn submit(&mut self, op: OpId, request: Request) {
        let reply: BoxFuture<Outcome> = match (&self.client, request) {
            (None, _) => Box::pin(std::future::ready(Outcome {
                result: Err(ZkError::SessionExpired),
                watch: None,
            })),
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
                let result = if self.watches.len() < before {
                    Ok(OpOk::WatchesRemoved)
                } else {
                    Err(ZkError::NoWatcher)
                };
                Box::pin(std::future::ready(Outcome {
                    result,
                    watch: None,
                }))
            }
            (Some(client), request) => send(client, request),
        };
        self.replies.push_back((op, reply));
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
            let _ = tokio::time::timeout(CLOSE_WAIT, closed).await;
        }
        self.events.close_channel();
        if let Some(done) = done {
            let _ = done.send(());
        }
    }
}

/// Ends `session` on the server with a second connection that closes it. Should the first
/// connection take the session back before the close (the server then drops the second
/// connection: "session moved"), it is retried; a second connection refused because the
/// session has expired means it is done.
async fn expire_session(
    session: zk::SessionInfo,
    connect_string: &str,
    timeout: Duration,
) -> Result<(), String> {
    let mut last = String::new();
    for _ in 0..EXPIRE_ATTEMPTS {
        let other = zk::Client::connector()
            .with_session(session.clone())
            .with_session_timeout(timeout)
            .connect(connect_string)
            .await;
        let other = match other {
            Ok(other) => other,
            Err(zk::Error::SessionExpired) => return Ok(()),
            Err(error) => {
                last = format!("a second connection to {connect_string}: {error}");
                continue;
            }
        };
        let mut states = other.state_watcher();
        drop(other);
        let ended = async {
            while !states.peek_state().is_terminated() {
                states.changed().await;
            }
            states.peek_state()
        };
        match tokio::time::timeout(CLOSE_WAIT, ended).await {
            Ok(zk::SessionState::Closed) => return Ok(()),
            Ok(state) => last = format!("the second connection ended {state} instead of closing"),
            Err(_) => last = format!("the server did not confirm the close within {CLOSE_WAIT:?}"),
        }
    }
    Err(format!("expiring session {}: {last}", session.id()))
}

fn is_connected(state: zk::SessionState) -> bool {
    matches!(
        state,
        zk::SessionState::SyncConnected | zk::SessionState::ConnectedReadOnly
    )
}

/// Issues `request` on `client`: the crate sends it during this call. The future owns a
/// clone of the client (cheap: shared handles).
fn send(client: &zk::Client, request: Request) -> BoxFuture<Outcome> {
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
                    .list_children(path.as_str())
                    .await
                    .map(|names| OpOk::Children { names })
                    .map_err(zk_error),
                watch: None,
            },
            Request::GetChildren { path, watch: true } => {
                match client.list_and_watch_children(path.as_str()).await {
                    Ok((names, watcher)) => Outcome {
                        result: Ok(OpOk::Children { names }),
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
    // in submission order. A waker-less poll is enough; the pump polls it again later.
    let mut cx = Context::from_waker(std::task::Waker::noop());
    if let Poll::Ready(outcome) = future.as_mut().poll(&mut cx) {
        return Box::pin(std::future::ready(outcome));
    }
    future
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

/// The crate's error in our vocabulary (see the module documentation for the fallbacks).
pub fn zk_error(error: zk::Error) -> ZkError {
    match error {
        zk::Error::NoNode => ZkError::NoNode,
        zk::Error::NodeExists => ZkError::NodeExists,
        zk::Error::BadVersion => ZkError::BadVersion,
        zk::Error::NotEmpty => ZkError::NotEmpty,
        zk::Error::NoChildrenForEphemerals => ZkError::NoChildrenForEphemerals,
        zk::Error::NoWatcher => ZkError::NoWatcher,
        zk::Error::SessionExpired | zk::Error::ClientClosed => ZkError::SessionExpired,
        _ => ZkError::ConnectionLoss,
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
