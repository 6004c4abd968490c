//! The executor's interface to one raw ZooKeeper session.
//!
//! A [`Coordination`] reports raw states only (`Connected`, `Disconnected`, `Expired`); the
//! Curator-style policy on top of them (Suspended, LOST, a new session) is the framework
//! layer's, so it runs, and is model-checked, unchanged over every implementation.
//!
//! Contract, for every implementation:
//! - Everything the session hears arrives on **one ordered stream** ([`Coordination::next_event`]):
//!   replies, watch events and state changes, in the order the server produced them. A watch
//!   event comes before any later reply that reflects the change that fired it.
//! - Every submitted request gets exactly one reply on that stream, carrying the caller's
//!   [`OpId`]: `ConnectionLoss` when the connection dropped before the reply arrived (the
//!   request may or may not have been applied), `SessionExpired` when the session is gone.
//!   Replies to requests in flight when the connection drops come before the `Disconnected`.
//! - After a reconnect to the same session, the implementation re-registers its outstanding
//!   watches with the last zxid it saw, so watches whose nodes changed meanwhile fire.
//! - A closed handle produces nothing more: `next_event` returns `None`.

use std::future::Future;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ids::OpId;
use crate::relabel::Relabel;
use crate::zk::{OpResult, Request, SessionId, WatchedEvent};

/// A raw session state, as the ZooKeeper client library reports it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Relabel,
)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RawState {
    /// Connected (or reconnected) to the server with this session.
    Connected {
        /// The session.
        session: SessionId,
        /// The negotiated session timeout.
        timeout: Duration,
    },
    /// The connection dropped; the session may still be alive on the server.
    Disconnected,
    /// The server said the session has expired.
    Expired,
}

/// One item of a session's ordered event stream.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Relabel)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RawEvent {
    /// The reply to request `op`.
    Reply {
        /// The request's id.
        op: OpId,
        /// Its outcome.
        result: OpResult,
    },
    /// A watch fired.
    Watch {
        /// The event.
        event: WatchedEvent,
    },
    /// The session's state changed.
    State {
        /// The new state.
        state: RawState,
    },
}

/// One raw ZooKeeper session handle. See the module documentation for the contract.
pub trait Coordination: Send + Sync {
    /// Sends `request`; its reply arrives on the event stream tagged with `op`.
    fn submit(&self, op: OpId, request: Request) -> impl Future<Output = ()> + Send;

    /// The next event of the session, in server order; `None` once the handle is closed.
    /// Cancel-safe: dropping the future loses no event.
    fn next_event(&self) -> impl Future<Output = Option<RawEvent>> + Send;

    /// Closes the session (if the server can be reached) and the handle.
    fn close(&self) -> impl Future<Output = ()> + Send;

    /// Sleeps on this implementation's clock (simulated, real or test).
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send + 'static;
}

/// Opens sessions: the first one, and a new one each time the framework layer gives up on
/// the previous one.
pub trait Connector: Send + Sync {
    /// The session handle type.
    type Session: Coordination;

    /// Opens a new session. The handle's first event is `Connected` once the server accepted it.
    fn connect(&self) -> impl Future<Output = Self::Session> + Send;
}

/// A session's ordered event stream as an implementation keeps it: the receiving end of the
/// channel its I/O side feeds, read by [`Coordination::next_event`] (cancel-safe: an event
/// is taken only when it is returned).
pub struct EventInbox(std::sync::Mutex<futures::channel::mpsc::UnboundedReceiver<RawEvent>>);

impl EventInbox {
    /// The inbox reading `events`.
    pub fn new(events: futures::channel::mpsc::UnboundedReceiver<RawEvent>) -> EventInbox {
        EventInbox(std::sync::Mutex::new(events))
    }

    /// The next event; `None` once the channel is closed and empty.
    pub async fn next(&self) -> Option<RawEvent> {
        use futures::StreamExt;
        std::future::poll_fn(|cx| self.0.lock().expect("events lock").poll_next_unpin(cx)).await
    }

    /// Closes the stream: nothing more arrives, not even what was already queued.
    pub fn close(&self) {
        let mut events = self.0.lock().expect("events lock");
        events.close();
        while events.try_recv().is_ok() {}
    }
}

/// Asks an implementation's I/O side to close its session: sends the command `close` makes
/// around a completion signal, then waits for the signal (at once if the I/O side is gone).
pub async fn close_and_wait<C>(
    commands: &futures::channel::mpsc::UnboundedSender<C>,
    close: impl FnOnce(futures::channel::oneshot::Sender<()>) -> C,
) {
    let (done, closed) = futures::channel::oneshot::channel();
    if commands.unbounded_send(close(done)).is_ok() {
        let _ = closed.await;
    }
}
