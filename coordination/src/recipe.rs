//! The recipe contract: a recipe is a pure state machine that takes [`Input`]s and emits
//! [`Effect`]s through a [`Ctx`]. It never sees time (timers are opaque ids with relative
//! durations), does no I/O and draws no randomness, which is what lets one implementation
//! run under the model checker, the simulator and a real ZooKeeper.
//!
//! A recipe is always composed with the [`Framework`] layer into
//! a [`Client`](crate::client::Client): the framework owns the session, retries requests
//! across connection loss and session changes, runs protected creates and guaranteed
//! deletes, and translates raw session states into [`SessionEvent`]s.
//!
//! # Implementing a recipe
//!
//! A recipe of your own (see `examples/home-grown-lock` for a whole one) is a type
//! implementing [`Recipe`] with the shared vocabulary
//! ([`Call`](crate::recipes::Call), [`Notice`](crate::recipes::Notice)) and
//! [`Relabel`](crate::relabel::Relabel). What the executors rely on:
//!
//! - **The state is a value.** `Clone + Eq + Ord + Hash`: the model checker stores, compares
//!   and hashes every state it reaches, so keep it canonical — two states that behave alike
//!   should be equal (no counters or histories you do not need, no ids where an order will
//!   do). No `Rc`, no interior mutability, no clock, no randomness, no I/O.
//! - **One input at a time.** [`Recipe::handle`] gets one [`Input`] and acts only through its
//!   [`Ctx`]; everything it emits is carried out in order after it returns.
//!   - `Input::Call`: a user call. The workload makes `Acquire`/`Release` (locks),
//!     `Start`/`Close` (latches), `Start`/`Requeue`/`Relinquish` (selectors); a call you do
//!     not serve may be answered with `Notice::Failed`.
//!   - `Input::Reply`: the final reply to a request you submitted, by the [`OpId`]
//!     [`Ctx::submit`] returned. `ConnectionLoss` only when the framework's retry policy
//!     gave up on it (Curator rethrows it then); `SessionExpired` for a plain request still
//!     pending at `Lost`.
//!   - `Input::Watch`: a one-shot watch fired. ZooKeeper sets a data watch only on a node
//!     that exists (`GetData`), an exists watch either way (`Exists`); watches die with
//!     their session.
//!   - `Input::Session`: `Suspended` (nothing held is safe now), `Lost` (the session is gone,
//!     or the client stopped waiting for it), `Reconnected` (same or new session).
//!   - `Input::Timer`: a timer you set fired. Durations are hints: the simulator waits them,
//!     the model fires a timer at any point.
//! - **Notices are the truth the checkers judge.** `Acquired { token }` starts a hold (the
//!   token, the lock node's czxid, fences the resource), `Released`, `Lost`, `Suspended`,
//!   `Reconnected`, `TimedOut`, `IsLeader`/`NotLeader`… mean what
//!   [`Notice`](crate::recipes::Notice) says; a hold the recipe never reports is not checked,
//!   and one it reports wrongly is a violation.
//! - **Composition.** [`Ctx::run_inner`] runs a recipe inside yours (an internal mutex, or a
//!   recipe your application wraps) and hands you its notices.
//! - **Relabelling.** `relabel` rewrites every client slot, session id and protection id the
//!   state keeps (node names too: [`ClientMap::name`](crate::relabel::ClientMap::name)), and
//!   nothing else; a recipe that keeps none returns a clone.
//!
//! Then give it a row (`recipe_table::recipes::RecipeDef`) and test it with
//! `splitbrain::testing`.

use std::convert::Infallible;
use std::fmt::Debug;
use std::hash::Hash;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::framework::{ErrorPolicy, Framework, OnLost};
use crate::ids::{OpId, TimerId};
use crate::retry::RetryPolicy;
use crate::zk::{CreateMode, OpResult, Path, Request, SessionId, WatchedEvent};

/// A connection-state change as recipes see it (Curator's `ConnectionState`, minus the raw
/// states): "the client gave up" and "the server deleted my ephemerals" are told apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "session", rename_all = "snake_case")]
pub enum SessionEvent {
    /// The connection dropped; the session may come back. Nothing held is safe now.
    Suspended,
    /// The session is gone: the server said so (`server_confirmed`), or the client stopped
    /// waiting after the configured share of the session timeout, in which case the server
    /// may still hold the old session (and its ephemerals) for a while.
    Lost {
        /// True when the server reported the expiry.
        server_confirmed: bool,
    },
    /// Connected again after `Suspended` (same session) or after `Lost` (a new one).
    Reconnected {
        /// True when this is a new session.
        session_changed: bool,
    },
}

/// What a recipe is asked to handle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input<C> {
    /// A user call.
    Call(C),
    /// The final reply to one of the recipe's requests: `ConnectionLoss` only once the retry
    /// policy gave up; `SessionExpired` for a plain request still pending when the session
    /// was lost (it comes right after `Session(Lost)`).
    Reply {
        /// The id `Ctx::submit` returned.
        op: OpId,
        /// The outcome.
        result: OpResult,
    },
    /// A watch fired.
    Watch(WatchedEvent),
    /// The connection state changed.
    Session(SessionEvent),
    /// A timer the recipe set has fired.
    Timer(TimerId),
}

impl<C> Input<C> {
    /// The call, or else the input as one that carries no call.
    pub fn into_call(self) -> Result<C, Input<Infallible>> {
        match self {
            Input::Call(call) => Ok(call),
            Input::Reply { op, result } => Err(Input::Reply { op, result }),
            Input::Watch(event) => Err(Input::Watch(event)),
            Input::Session(event) => Err(Input::Session(event)),
            Input::Timer(timer) => Err(Input::Timer(timer)),
        }
    }
}

impl Input<Infallible> {
    /// The same input, for a recipe whose calls are `C` (a lock handing an
    /// [`Event`](crate::recipes::Event) on to the locks it is made of).
    pub fn widen<C>(self) -> Input<C> {
        match self {
            Input::Reply { op, result } => Input::Reply { op, result },
            Input::Watch(event) => Input::Watch(event),
            Input::Session(event) => Input::Session(event),
            Input::Timer(timer) => Input::Timer(timer),
        }
    }
}

/// What a client (framework + recipe) asks its executor to do.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Effect<N> {
    /// Send a request on the current session.
    Op {
        /// Its id; the reply carries it.
        op: OpId,
        /// The request.
        request: Request,
    },
    /// Fire `Input::Timer(timer)` after `after` (the model ignores the duration).
    SetTimer {
        /// The timer.
        timer: TimerId,
        /// Relative delay.
        after: Duration,
    },
    /// Forget a timer (a no-op if it already fired).
    CancelTimer(TimerId),
    /// Close the current session handle (without waiting for the server).
    CloseSession,
    /// Open a new session.
    OpenSession,
    /// The framework's view of the connection changed (for traces).
    Session(SessionEvent),
    /// Tell the user something.
    Notify(N),
}

/// One recipe instance. Pure: no I/O, no clock, no RNG.
pub trait Recipe: Clone + Eq + Ord + Hash + Debug + Send + Sync {
    /// User calls (acquire, release, start, ...).
    type Call: Clone + Debug + Send + Sync;
    /// Notices to the user (acquired with a token, released, lost, ...).
    type Notice: Clone + Debug + Send + Sync;

    /// Handles one input, acting through `cx`.
    fn handle(&mut self, input: Input<Self::Call>, cx: &mut Ctx<'_, Self::Notice>);
}

/// A recipe's handle on the framework layer and its effect buffer for one `handle` call.
pub struct Ctx<'a, N> {
    pub(crate) framework: &'a mut Framework,
    pub(crate) out: &'a mut Vec<Effect<N>>,
}

impl<N> Ctx<'_, N> {
    /// Sends `request` (now, or once connected); the final reply comes as `Input::Reply`.
    /// The framework retries it after `ConnectionLoss` under its retry policy.
    pub fn submit(&mut self, request: Request) -> OpId {
        self.framework.submit_for_recipe(request, self.out)
    }

    /// Sends `request` with retries like [`Ctx::submit`], and drops its reply. Used for
    /// guaranteed deletes and idempotent set-up such as creating parent containers.
    pub fn submit_detached(&mut self, request: Request) {
        self.framework.submit_detached(request, self.out)
    }

    /// Deletes `path`, retrying until it succeeds or the node is gone.
    pub fn delete_guaranteed(&mut self, path: Path) {
        self.submit_detached(Request::Delete {
            path,
            version: None,
        })
    }

    /// Creates `parent/<protection prefix><name>` in protection mode: after a connection
    /// loss the framework finds the node by its protection id instead of creating a second
    /// one, adopting it only if the current session owns it. Replies like a create.
    pub fn create_protected(
        &mut self,
        parent: &Path,
        name: &str,
        data: Vec<u8>,
        mode: CreateMode,
    ) -> OpId {
        self.framework
            .create_protected(parent, name, data, mode, self.out)
    }

    /// Sets a timer that fires `Input::Timer` after `after`.
    pub fn set_timer(&mut self, after: Duration) -> TimerId {
        let timer = self.framework.next_timer();
        self.out.push(Effect::SetTimer { timer, after });
        timer
    }

    /// Cancels a timer.
    pub fn cancel_timer(&mut self, timer: TimerId) {
        self.out.push(Effect::CancelTimer(timer));
    }

    /// Emits a notice to the user.
    pub fn notify(&mut self, notice: N) {
        self.out.push(Effect::Notify(notice));
    }

    /// The error policy: whether `Suspended` ends holds and leadership.
    pub fn error_policy(&self) -> ErrorPolicy {
        self.framework.config().error_policy
    }

    /// What a lock hold becomes at LOST.
    pub fn on_lost(&self) -> OnLost {
        self.framework.config().on_lost
    }

    /// The retry policy, which also bounds a recipe's own retry loops (Curator's
    /// `attemptLock` asks it before starting over with a new node).
    pub fn retry_policy(&self) -> RetryPolicy {
        self.framework.config().retry
    }

    /// The current session, if connected.
    pub fn session(&self) -> Option<SessionId> {
        self.framework.session()
    }

    /// Hands `input` to a recipe composed into this one (an internal mutex, or the recipe a
    /// user's wrapper adapts), carrying out its effects through this context except its
    /// notices, which are returned in order for the outer recipe to act on (or pass on).
    pub fn run_inner<R: Recipe<Notice = N>>(
        &mut self,
        inner: &mut R,
        input: Input<R::Call>,
    ) -> Vec<N> {
        let mut effects = Vec::new();
        inner.handle(
            input,
            &mut Ctx {
                framework: &mut *self.framework,
                out: &mut effects,
            },
        );
        let mut notices = Vec::new();
        for effect in effects {
            match effect {
                Effect::Notify(notice) => notices.push(notice),
                effect => self.out.push(effect),
            }
        }
        notices
    }
}
