//! The framework layer: Curator's connection-state manager and retry machinery as a sans-IO
//! component, composed into every recipe so that the model checker explores it too.
//!
//! - [`FrameworkConfig::error_policy`] says whether `Suspended` ends holds and leadership
//!   (recipes ask it through [`Ctx::error_policy`](crate::recipe::Ctx::error_policy)).
//! - Raw `Disconnected` becomes [`SessionEvent::Suspended`]; LOST is declared after
//!   [`FrameworkConfig::lost_after_percent`] of the negotiated session timeout without
//!   reconnecting, or at once when the server reports `Expired`. Then the old handle is
//!   closed and a *new* session opened, while the server may still hold the old one.
//! - Requests are retried as Curator's `RetryLoop` does, under
//!   [`FrameworkConfig::retry`] (a [`RetryPolicy`]): an attempt that fails with
//!   `ConnectionLoss` sleeps the policy's sleep (a timer) and is tried again, sent at once if
//!   connected or held until the next connection; when the policy allows no more retries, the
//!   recipe gets the `ConnectionLoss` (Curator rethrows it). At LOST, a plain request still
//!   pending fails with `SessionExpired` (after the recipe has been told `Lost`): it belonged
//!   to the old session, and re-sending a watch-setting read on the new one would leave a
//!   watch nobody waits for; the recipes re-issue what they need after `Reconnected`.
//! - Protected creates: each gets a fresh [`ProtectionId`], reused by its retries, and one
//!   retry count for all its steps. A create answered `NoNode` makes its parent and the
//!   parent's ancestors as containers and is sent again under the same id, once per attempt
//!   (Curator's `creatingParentContainersIfNeeded`). After an interruption the framework sleeps, lists the
//!   parent, and adopts a node carrying the id only if its `ephemeral_owner` is the current
//!   session; a node of another session gets a guaranteed delete and the create is redone
//!   (the outcome of Curator 5's `ProtectedMode.validateFoundNode`, which deletes a found
//!   ephemeral node whenever the session changed since the create began). When its retries
//!   run out the create fails to the recipe and the framework looks for its node in the
//!   background and deletes it (`FindAndDeleteProtectedNodeInBackground`).
//! - Guaranteed deletes (and other detached requests) are retried the same way, their
//!   replies dropped; when the policy runs out they start over with a fresh count, as
//!   Curator's `FailedDeleteManager` re-issues a guaranteed delete in the background.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ids::{ClientSlot, OpId, ProtectionId, TimerId};
use crate::recipe::{Effect, SessionEvent};
use crate::relabel::{ClientMap, Relabel};
use crate::retry::{self, RetryPolicy};
use crate::session::{RawEvent, RawState};
use crate::zk::{CreateMode, OpOk, OpResult, Path, Request, SessionId, WatchedEvent, ZkError};

/// Curator's `ConnectionStateErrorPolicy`: which connection states end what a client holds
/// (a lock hold, a lease, leadership).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorPolicy {
    /// `StandardConnectionStateErrorPolicy` (Curator's default): `SUSPENDED` ends holds and
    /// leadership (a holder hears `Suspended`, a leader `NotLeader`); a reconnect to the same
    /// session restores a hold.
    #[default]
    Standard,
    /// `SessionConnectionStateErrorPolicy`: only `LOST` does; a holder or leader keeps its
    /// hold through `SUSPENDED`, and hears nothing until the session comes back or is lost.
    SessionBased,
}

impl ErrorPolicy {
    /// True when `SUSPENDED` ends holds and leadership.
    pub fn suspended_ends_holds(self) -> bool {
        self == ErrorPolicy::Standard
    }

    /// Whether a client's hearing `event` obliges its holders to have given up (`Lost`
    /// always does).
    pub fn obliges(self, event: SessionEvent) -> bool {
        match event {
            SessionEvent::Lost { .. } => true,
            SessionEvent::Suspended => self.suspended_ends_holds(),
            SessionEvent::Reconnected { .. } => false,
        }
    }

    /// The names scenario files and `check --error-policy` use.
    pub const NAMES: [&'static str; 2] = ["standard", "session-based"];
}

/// What a lock recipe does at LOST with its holds (a mutex's, a lease, a multi-lock's) and
/// with its queued waiters (a mutex's, a read-write lock's side, a selector's internal mutex).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum OnLost {
    /// Curator's `InterProcessMutex`: the holder hears `Lost`, but the hold is not ended and
    /// its node not deleted; the node stays until the server expires the old session or the
    /// application releases (which deletes it, guaranteed, from the new session). A queued
    /// waiter does not fail (`LockInternals.internalLockLoop` ignores connection state): it
    /// lists again with its old node on the new session, and starts over with a new node
    /// when its own has vanished (`attemptLock` catching `NoNode`).
    #[default]
    Curator,
    /// splitbrain's safer choice: the hold ends at LOST and a waiter fails with
    /// `SessionLost` (one whose node vanished, with `NodeVanished`); every node gets a
    /// guaranteed delete at once, sent on the new session, so an abandoned node of a session
    /// the server still holds leaves the queue as early as the client can make it.
    Release,
}

impl OnLost {
    /// The names scenario files and `check --on-lost` use.
    pub const NAMES: [&'static str; 2] = ["curator", "release"];
}

/// A timer of the framework's own, and what it is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OwnTimer {
    /// The LOST timer of a suspended connection.
    Lost,
    /// The retry policy's sleep before the next attempt of this request.
    RetrySleep(OpId),
    /// The connection timeout of this request's call, made while not connected.
    ConnectionTimeout(OpId),
    /// The back-off of this protected create before it looks for its node.
    Backoff(OpId),
}

/// Settings of the framework layer, Curator's defaults unless set (a scenario's `framework`
/// object, `check --error-policy … --session-expiration-percent …`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FrameworkConfig {
    /// Which connection states end holds and leadership.
    pub error_policy: ErrorPolicy,
    /// What a lock hold becomes at LOST.
    pub on_lost: OnLost,
    /// LOST is declared after this percentage of the negotiated session timeout spent
    /// disconnected (Curator's `sessionExpirationPercent`, default 100).
    #[serde(rename = "session_expiration_percent")]
    pub lost_after_percent: u32,
    /// How failed requests are retried (Curator's `RetryPolicy`; default
    /// `ExponentialBackoffRetry(1000, 3)`).
    #[serde(skip_serializing_if = "RetryPolicy::is_default")]
    pub retry: RetryPolicy,
    /// How long a call made while not connected waits for a connection before its first
    /// attempt is made anyway (Curator's `connectionTimeoutMs`, default 15,000 ms).
    #[serde(skip_serializing_if = "FrameworkConfig::is_default_connection_timeout")]
    pub connection_timeout_ms: u32,
}

impl Default for FrameworkConfig {
    fn default() -> Self {
        FrameworkConfig {
            error_policy: ErrorPolicy::Standard,
            on_lost: OnLost::Curator,
            lost_after_percent: 100,
            retry: RetryPolicy::DEFAULT,
            connection_timeout_ms: FrameworkConfig::DEFAULT_CONNECTION_TIMEOUT_MS,
        }
    }
}

impl FrameworkConfig {
    /// The session-expiration percents Curator accepts (`CuratorFrameworkFactory.Builder`
    /// refuses 0 and anything above 100).
    pub const SESSION_EXPIRATION_PERCENTS: std::ops::RangeInclusive<u32> = 1..=100;

    /// Curator's default connection timeout (`CuratorFrameworkFactory`'s 15 s).
    pub const DEFAULT_CONNECTION_TIMEOUT_MS: u32 = 15_000;

    /// The connection timeouts a scenario may set: Curator refuses none that is positive;
    /// past ten minutes no call of a run would ever be made.
    pub const CONNECTION_TIMEOUTS_MS: std::ops::RangeInclusive<u32> = 1..=600_000;

    /// True when `ms` is Curator's default connection timeout (left out of scenario files
    /// and traces, which predate the setting).
    fn is_default_connection_timeout(ms: &u32) -> bool {
        *ms == FrameworkConfig::DEFAULT_CONNECTION_TIMEOUT_MS
    }

    /// True when every setting is Curator's default (scenario files and traces leave the
    /// object out).
    pub fn is_default(config: &FrameworkConfig) -> bool {
        *config == FrameworkConfig::default()
    }
}

/// What the framework hands on to the recipe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Delivery {
    Reply { op: OpId, result: OpResult },
    Watch(WatchedEvent),
    Session(SessionEvent),
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
enum Connection {
    /// Waiting for the first `Connected` of a session; `after_loss` when it replaces a lost one.
    Connecting { after_loss: bool },
    Connected {
        session: SessionId,
        timeout: Duration,
    },
    Suspended {
        session: SessionId,
        lost_timer: TimerId,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
enum Purpose {
    /// The reply goes to the recipe.
    Recipe,
    /// The reply is dropped.
    Detached,
    /// A step of the protected create the recipe knows as this op.
    Protected(OpId),
}

/// Where one attempt of a request stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
enum Attempt {
    /// A call made while not connected waits for a connection, at most the connection
    /// timeout (`timer`), before its first attempt (Curator's `RetryLoop.callWithRetry`
    /// starts with `blockUntilConnectedOrTimedOut`; its retries do not wait again).
    Blocked(TimerId),
    /// Made while not connected, so queued by the ZooKeeper client: sent at the next
    /// connection, failed with `ConnectionLoss` when a connection attempt fails first
    /// (`ClientCnxn.cleanup`), and with `SessionExpired` at LOST.
    Queued,
    /// Sent on the current connection, not yet answered.
    Sent,
    /// The last attempt failed; the retry policy's sleep ends when this timer fires.
    Sleeping(TimerId),
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
struct Pending {
    request: Request,
    purpose: Purpose,
    attempt: Attempt,
    /// Retries so far (Curator's `retryCount`).
    retries: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
enum Step {
    /// The create request is pending.
    Creating,
    /// The create request again, after its `NoNode` had the parent made as containers
    /// (Curator's `creatingParentContainersIfNeeded`, once per attempt): a second `NoNode`
    /// fails the create.
    CreatingAfterParents,
    /// An attempt was interrupted; the retry policy's sleep ends when this timer fires.
    Backoff(TimerId),
    /// Listing the parent for a node with our protection id.
    Finding,
    /// Reading the stat of the node found, to check its owner.
    Checking(Path),
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
struct Protected {
    parent: Path,
    /// The full name to create: protection prefix + the recipe's name.
    name: String,
    protection: ProtectionId,
    #[relabel(skip)]
    data: Vec<u8>,
    mode: CreateMode,
    step: Step,
    /// Retries so far, all steps together (Curator's one `RetryLoop` per create).
    retries: u32,
    /// The create has failed to the recipe; its node is looked for only to be deleted.
    abandoned: bool,
}

/// The framework layer's state for one client. Pure, like recipes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Framework {
    config: FrameworkConfig,
    client: ClientSlot,
    nonce: u32,
    connection: Connection,
    next_op: u32,
    next_timer: u32,
    next_protection: u32,
    pending: BTreeMap<OpId, Pending>,
    protected: BTreeMap<OpId, Protected>,
}

impl Framework {
    /// A framework for client `client` whose protection ids carry `nonce` (drawn from the
    /// run's seeded source; any constant in the model). Starts waiting for its first session.
    pub fn new(config: FrameworkConfig, client: ClientSlot, nonce: u32) -> Framework {
        Framework {
            config,
            client,
            nonce,
            connection: Connection::Connecting { after_loss: false },
            next_op: 0,
            next_timer: 0,
            next_protection: 0,
            pending: BTreeMap::new(),
            protected: BTreeMap::new(),
        }
    }

    /// The framework's settings.
    pub fn config(&self) -> &FrameworkConfig {
        &self.config
    }

    /// The client this framework belongs to.
    pub fn client(&self) -> ClientSlot {
        self.client
    }

    /// The current session, while connected.
    pub fn session(&self) -> Option<SessionId> {
        match self.connection {
            Connection::Connected { session, .. } => Some(session),
            _ => None,
        }
    }

    /// Requests not yet answered (sent or waiting for a connection).
    pub fn pending_requests(&self) -> usize {
        self.pending.len()
    }

    /// The timers of the retry policy's sleeps now running.
    pub(crate) fn retry_sleeps(&self) -> Vec<TimerId> {
        let requests = self.pending.values().filter_map(|p| match p.attempt {
            Attempt::Sleeping(timer) => Some(timer),
            Attempt::Blocked(_) | Attempt::Queued | Attempt::Sent => None,
        });
        let creates = self.protected.values().filter_map(|p| match p.step {
            Step::Backoff(timer) => Some(timer),
            _ => None,
        });
        requests.chain(creates).collect()
    }

    pub(crate) fn next_timer(&mut self) -> TimerId {
        self.next_timer += 1;
        TimerId(self.next_timer)
    }

    pub(crate) fn submit_for_recipe<N>(
        &mut self,
        request: Request,
        out: &mut Vec<Effect<N>>,
    ) -> OpId {
        self.send(request, Purpose::Recipe, out)
    }

    pub(crate) fn submit_detached<N>(&mut self, request: Request, out: &mut Vec<Effect<N>>) {
        self.send(request, Purpose::Detached, out);
    }

    pub(crate) fn create_protected<N>(
        &mut self,
        parent: &Path,
        name: &str,
        data: Vec<u8>,
        mode: CreateMode,
        out: &mut Vec<Effect<N>>,
    ) -> OpId {
        self.next_protection += 1;
        let protection = ProtectionId {
            nonce: self.nonce,
            client: self.client,
            serial: self.next_protection,
        };
        let handle = self.next_op_id();
        let mut prefixed = String::with_capacity(ProtectionId::PREFIX_LEN + name.len());
        protection.write_prefix(&mut prefixed);
        prefixed.push_str(name);
        let protected = Protected {
            parent: parent.clone(),
            name: prefixed,
            protection,
            data,
            mode,
            step: Step::Creating,
            retries: 0,
            abandoned: false,
        };
        let create = protected.create_request();
        self.protected.insert(handle, protected);
        self.send(create, Purpose::Protected(handle), out);
        handle
    }

    /// Handles one raw event; returns what the recipe must be told, in order.
    pub(crate) fn on_event<N>(
        &mut self,
        event: RawEvent,
        out: &mut Vec<Effect<N>>,
    ) -> Vec<Delivery> {
        match event {
            RawEvent::Reply { op, result } => self.on_reply(op, result, out),
            RawEvent::Watch { event } => vec![Delivery::Watch(event)],
            RawEvent::State { state } => self.on_state(state, out),
        }
    }

    /// Handles a timer: `Ok` with deliveries when it was the framework's own, `Err` with the
    /// timer when it belongs to the recipe.
    pub(crate) fn on_timer<N>(
        &mut self,
        timer: TimerId,
        out: &mut Vec<Effect<N>>,
    ) -> Result<Vec<Delivery>, TimerId> {
        match self.own_timer(timer) {
            Some(OwnTimer::Lost) => Ok(self.declare_lost(false, out)),
            Some(OwnTimer::RetrySleep(op) | OwnTimer::ConnectionTimeout(op)) => {
                self.attempt(op, out);
                Ok(Vec::new())
            }
            Some(OwnTimer::Backoff(handle)) => {
                self.start_step(handle, Step::Finding, out);
                Ok(Vec::new())
            }
            None => Err(timer),
        }
    }

    /// What `timer` is for, when it is the framework's own (else the recipe's).
    pub(crate) fn own_timer(&self, timer: TimerId) -> Option<OwnTimer> {
        if let Connection::Suspended { lost_timer, .. } = self.connection
            && lost_timer == timer
        {
            return Some(OwnTimer::Lost);
        }
        let waiting = self
            .pending
            .iter()
            .find_map(|(&op, pending)| match pending.attempt {
                Attempt::Sleeping(t) if t == timer => Some(OwnTimer::RetrySleep(op)),
                Attempt::Blocked(t) if t == timer => Some(OwnTimer::ConnectionTimeout(op)),
                _ => None,
            });
        let backing_off = || {
            (self.protected.iter())
                .find(|(_, protected)| protected.step == Step::Backoff(timer))
                .map(|(&handle, _)| OwnTimer::Backoff(handle))
        };
        waiting.or_else(backing_off)
    }

    fn next_op_id(&mut self) -> OpId {
        self.next_op += 1;
        OpId(self.next_op)
    }

    fn connected(&self) -> bool {
        matches!(self.connection, Connection::Connected { .. })
    }

    /// Starts a call of `request`: its first attempt at once when connected, else once
    /// connected or after the connection timeout, whichever comes first.
    fn send<N>(&mut self, request: Request, purpose: Purpose, out: &mut Vec<Effect<N>>) -> OpId {
        let op = self.add_pending(request, purpose);
        if self.connected() {
            self.attempt(op, out);
        } else {
            let timer = self.next_timer();
            let after = Duration::from_millis(self.config.connection_timeout_ms.into());
            out.push(Effect::SetTimer { timer, after });
            self.pending.get_mut(&op).expect("just added").attempt = Attempt::Blocked(timer);
        }
        op
    }

    /// Makes the first attempt of `request` within a call already started (a protected
    /// create's create after its search, or the stat read of what it found), which does not
    /// wait for a connection again.
    fn send_within_call<N>(
        &mut self,
        request: Request,
        purpose: Purpose,
        out: &mut Vec<Effect<N>>,
    ) -> OpId {
        let op = self.add_pending(request, purpose);
        self.attempt(op, out);
        op
    }

    fn add_pending(&mut self, request: Request, purpose: Purpose) -> OpId {
        let op = self.next_op_id();
        let pending = Pending {
            request,
            purpose,
            attempt: Attempt::Queued,
            retries: 0,
        };
        self.pending.insert(op, pending);
        op
    }

    /// Makes an attempt at `op`: sends it when connected, or queues it until connected.
    fn attempt<N>(&mut self, op: OpId, out: &mut Vec<Effect<N>>) {
        let connected = self.connected();
        let pending = self.pending.get_mut(&op).expect("a pending request");
        pending.attempt = if connected {
            out.push(Effect::Op {
                op,
                request: pending.request.clone(),
            });
            Attempt::Sent
        } else {
            Attempt::Queued
        };
    }

    /// Starts the retry policy's sleep before retry number `retries` of `op` (or of the
    /// protected create `op`), drawn from the client's nonce.
    fn sleep<N>(&mut self, op: OpId, retries: u32, out: &mut Vec<Effect<N>>) -> TimerId {
        let draw = retry::draw(self.nonce, [op.0, retries]);
        let after = self.config.retry.sleep(retries, draw);
        let timer = self.next_timer();
        out.push(Effect::SetTimer { timer, after });
        timer
    }

    /// Starts the sleep before one more retry of `op` after `retries`, and returns its timer
    /// and the count after it: a bounded policy counts, `forever` has no need to (which keeps
    /// the model's states finite). Past the policy's limit, what must go on regardless (a
    /// guaranteed delete, a background search) starts over, after a first sleep, from 0.
    fn back_off<N>(&mut self, op: OpId, retries: u32, out: &mut Vec<Effect<N>>) -> (TimerId, u32) {
        if !self.config.retry.allows(retries) {
            return (self.sleep(op, 0, out), 0);
        }
        let timer = self.sleep(op, retries, out);
        match self.config.retry {
            RetryPolicy::Forever { .. } => (timer, retries),
            _ => (timer, retries + 1),
        }
    }

    fn on_reply<N>(
        &mut self,
        op: OpId,
        result: OpResult,
        out: &mut Vec<Effect<N>>,
    ) -> Vec<Delivery> {
        // Curator's `RetryLoop.shouldRetry`: these three are retried.
        if let Err(
            error @ (ZkError::ConnectionLoss | ZkError::SessionExpired | ZkError::SessionMoved),
        ) = result
        {
            return self.failed_attempt(op, error, out);
        }
        let Some(pending) = self.pending.remove(&op) else {
            return Vec::new();
        };
        match pending.purpose {
            Purpose::Recipe => vec![Delivery::Reply { op, result }],
            Purpose::Detached => Vec::new(),
            Purpose::Protected(handle) => self.protected_step(handle, result, out),
        }
    }

    /// A sent request got no answer (`error`), Curator's `RetryLoop.takeException`: while the
    /// policy allows, sleep and try again. Then a recipe's request fails to the recipe with
    /// `error`, and a guaranteed delete starts over with a fresh count. A protected create's
    /// step: see [`Framework::protected_failed`].
    fn failed_attempt<N>(
        &mut self,
        op: OpId,
        error: ZkError,
        out: &mut Vec<Effect<N>>,
    ) -> Vec<Delivery> {
        let Some(pending) = self.pending.get(&op) else {
            return Vec::new();
        };
        let (purpose, retries) = (pending.purpose, pending.retries);
        if let Purpose::Protected(handle) = purpose {
            self.pending.remove(&op);
            return self.protected_failed(handle, error, out);
        }
        if self.config.retry.allows(retries) || purpose == Purpose::Detached {
            let (timer, retries) = self.back_off(op, retries, out);
            let pending = self.pending.get_mut(&op).expect("looked up above");
            pending.attempt = Attempt::Sleeping(timer);
            pending.retries = retries;
            return Vec::new();
        }
        self.pending.remove(&op);
        vec![Delivery::Reply {
            op,
            result: Err(error),
        }]
    }

    /// A step of the protected create `handle` got no answer: while the policy allows, sleep
    /// and then look for the node. Out of retries, the create fails to the recipe with
    /// `error` and goes on in the background only to find its node and delete it (Curator's
    /// `FindAndDeleteProtectedNodeInBackground`, which retries until it has looked).
    fn protected_failed<N>(
        &mut self,
        handle: OpId,
        error: ZkError,
        out: &mut Vec<Effect<N>>,
    ) -> Vec<Delivery> {
        let Some(protected) = self.protected.get(&handle) else {
            return Vec::new();
        };
        let (retries, abandoned) = (protected.retries, protected.abandoned);
        let allowed = self.config.retry.allows(retries);
        let (timer, retries) = self.back_off(handle, retries, out);
        let protected = self.protected.get_mut(&handle).expect("looked up above");
        protected.step = Step::Backoff(timer);
        protected.retries = retries;
        if allowed || abandoned {
            return Vec::new();
        }
        protected.abandoned = true;
        vec![Delivery::Reply {
            op: handle,
            result: Err(error),
        }]
    }

    fn protected_step<N>(
        &mut self,
        handle: OpId,
        result: OpResult,
        out: &mut Vec<Effect<N>>,
    ) -> Vec<Delivery> {
        let Some(protected) = self.protected.get(&handle) else {
            return Vec::new();
        };
        let session = self.session();
        if protected.abandoned {
            self.abandoned_step(handle, result, out);
            return Vec::new();
        }
        let next = match (&protected.step, result) {
            (Step::Creating, Err(ZkError::NoNode)) => {
                for request in Request::make_containers(&protected.parent) {
                    self.submit_detached(request, out);
                }
                Step::CreatingAfterParents
            }
            (Step::Creating | Step::CreatingAfterParents, result) => {
                self.protected.remove(&handle);
                return vec![Delivery::Reply { op: handle, result }];
            }
            (Step::Finding, Ok(OpOk::Children { names, .. })) => {
                let prefix = protected.protection.prefix();
                match names.iter().filter(|n| n.starts_with(&prefix)).min() {
                    Some(found) => {
                        let path = protected
                            .parent
                            .child(found)
                            .expect("a listed child name is valid");
                        Step::Checking(path)
                    }
                    None => Step::Creating,
                }
            }
            (Step::Checking(path), Ok(OpOk::Exists { stat: Some(stat) })) => {
                let persistent = !protected.mode.is_ephemeral();
                if persistent || (session.is_some() && stat.ephemeral_owner == session) {
                    let path = path.clone();
                    self.protected.remove(&handle);
                    let result = Ok(OpOk::Created { path, stat });
                    return vec![Delivery::Reply { op: handle, result }];
                }
                let stale = path.clone();
                self.submit_detached(
                    Request::Delete {
                        path: stale,
                        version: None,
                    },
                    out,
                );
                Step::Creating
            }
            // The parent is gone, or the node found vanished: create it (again).
            _ => Step::Creating,
        };
        self.start_step(handle, next, out);
        Vec::new()
    }

    /// A step of a create that has failed to the recipe: a listing that shows its node has
    /// it deleted (guaranteed); any answer ends it.
    fn abandoned_step<N>(&mut self, handle: OpId, result: OpResult, out: &mut Vec<Effect<N>>) {
        let Some(protected) = self.protected.remove(&handle) else {
            return;
        };
        if let Ok(OpOk::Children { names, .. }) = result {
            let prefix = protected.protection.prefix();
            for found in names.iter().filter(|n| n.starts_with(&prefix)) {
                let path = protected
                    .parent
                    .child(found)
                    .expect("a listed child name is valid");
                self.submit_detached(
                    Request::Delete {
                        path,
                        version: None,
                    },
                    out,
                );
            }
        }
    }

    fn start_step<N>(&mut self, handle: OpId, step: Step, out: &mut Vec<Effect<N>>) {
        let protected = self
            .protected
            .get_mut(&handle)
            .expect("live protected create");
        let request = match &step {
            Step::Creating | Step::CreatingAfterParents => protected.create_request(),
            Step::Finding => Request::GetChildren {
                path: protected.parent.clone(),
                watch: false,
            },
            Step::Checking(path) => Request::Exists {
                path: path.clone(),
                watch: false,
            },
            Step::Backoff(_) => unreachable!("never started: nothing to send"),
        };
        // Curator looks for the node with `findProtectedNodeInForeground`, a call of its own
        // within the create's retry loop: it waits for a connection again. The other steps
        // are attempts within the create's call.
        let finding = step == Step::Finding;
        protected.step = step;
        let purpose = Purpose::Protected(handle);
        if finding {
            self.send(request, purpose, out);
        } else {
            self.send_within_call(request, purpose, out);
        }
    }

    fn on_state<N>(&mut self, state: RawState, out: &mut Vec<Effect<N>>) -> Vec<Delivery> {
        match (state, &self.connection) {
            (RawState::Connected { session, timeout }, Connection::Connecting { after_loss }) => {
                let changed = *after_loss;
                self.connection = Connection::Connected { session, timeout };
                self.resume(out);
                if changed {
                    self.session_event(
                        SessionEvent::Reconnected {
                            session_changed: true,
                        },
                        out,
                    )
                } else {
                    Vec::new()
                }
            }
            (
                RawState::Connected { session, timeout },
                Connection::Suspended {
                    session: old,
                    lost_timer,
                },
            ) => {
                let session_changed = session != *old;
                out.push(Effect::CancelTimer(*lost_timer));
                self.connection = Connection::Connected { session, timeout };
                self.resume(out);
                self.session_event(SessionEvent::Reconnected { session_changed }, out)
            }
            (RawState::Disconnected, Connection::Connected { session, timeout }) => {
                let session = *session;
                let after = *timeout * self.config.lost_after_percent / 100;
                let lost_timer = self.next_timer();
                out.push(Effect::SetTimer {
                    timer: lost_timer,
                    after,
                });
                self.connection = Connection::Suspended {
                    session,
                    lost_timer,
                };
                self.session_event(SessionEvent::Suspended, out)
            }
            (
                RawState::Disconnected,
                Connection::Suspended { .. } | Connection::Connecting { .. },
            ) => self.connection_attempt_failed(out),
            (RawState::Expired, Connection::Connected { .. } | Connection::Suspended { .. }) => {
                self.declare_lost(true, out)
            }
            _ => Vec::new(),
        }
    }

    fn declare_lost<N>(
        &mut self,
        server_confirmed: bool,
        out: &mut Vec<Effect<N>>,
    ) -> Vec<Delivery> {
        if let Connection::Suspended { lost_timer, .. } = self.connection {
            out.push(Effect::CancelTimer(lost_timer));
        }
        let mut deliveries = self.session_event(SessionEvent::Lost { server_confirmed }, out);
        // A plain request belongs to the session that is gone (a watch it would set, above
        // all): it fails, after the recipe has heard of the loss, and is not sent again.
        let expired = self.pending_where(|pending| pending.purpose == Purpose::Recipe);
        for op in expired {
            if let Some(Pending {
                attempt: Attempt::Sleeping(timer) | Attempt::Blocked(timer),
                ..
            }) = self.pending.remove(&op)
            {
                out.push(Effect::CancelTimer(timer));
            }
            deliveries.push(Delivery::Reply {
                op,
                result: Err(ZkError::SessionExpired),
            });
        }
        // What was sent on the old session, or queued for it, fails there (Curator's
        // `SESSIONEXPIRED`, which its retry loop retries on the new one). A call still waiting
        // for a connection goes on waiting.
        let sent = self.pending_where(|p| matches!(p.attempt, Attempt::Sent | Attempt::Queued));
        for op in sent {
            deliveries.extend(self.failed_attempt(op, ZkError::SessionExpired, out));
        }
        out.push(Effect::CloseSession);
        out.push(Effect::OpenSession);
        self.connection = Connection::Connecting { after_loss: true };
        deliveries
    }

    fn session_event<N>(&self, event: SessionEvent, out: &mut Vec<Effect<N>>) -> Vec<Delivery> {
        out.push(Effect::Session(event));
        vec![Delivery::Session(event)]
    }

    /// Connected: send what was queued or waited for the connection.
    fn resume<N>(&mut self, out: &mut Vec<Effect<N>>) {
        for (op, pending) in self.pending.iter_mut() {
            match pending.attempt {
                Attempt::Blocked(timer) => out.push(Effect::CancelTimer(timer)),
                Attempt::Queued => {}
                Attempt::Sent | Attempt::Sleeping(_) => continue,
            }
            pending.attempt = Attempt::Sent;
            out.push(Effect::Op {
                op: *op,
                request: pending.request.clone(),
            });
        }
    }

    /// The pending requests `keep` accepts, in op order.
    fn pending_where(&self, keep: impl Fn(&Pending) -> bool) -> Vec<OpId> {
        (self.pending.iter())
            .filter(|(_, pending)| keep(pending))
            .map(|(op, _)| *op)
            .collect()
    }

    /// A connection attempt failed (the raw client said `Disconnected` again): ZooKeeper's
    /// client fails what it had queued with `ConnectionLoss` (`ClientCnxn.cleanup`), and the
    /// retry policy counts it.
    fn connection_attempt_failed<N>(&mut self, out: &mut Vec<Effect<N>>) -> Vec<Delivery> {
        let queued = self.pending_where(|pending| pending.attempt == Attempt::Queued);
        (queued.into_iter())
            .flat_map(|op| self.failed_attempt(op, ZkError::ConnectionLoss, out))
            .collect()
    }
}

impl Protected {
    fn create_request(&self) -> Request {
        Request::Create {
            path: self
                .parent
                .child(&self.name)
                .expect("protected names are validated when the recipe is built"),
            data: self.data.clone(),
            mode: self.mode,
        }
    }
}

impl Relabel for Framework {
    fn relabel(&self, map: &ClientMap) -> Self {
        let Framework {
            config,
            client,
            nonce,
            connection,
            next_op,
            next_timer,
            next_protection,
            pending,
            protected,
        } = self;
        Framework {
            config: *config,
            client: client.relabel(map),
            nonce: *nonce,
            connection: connection.relabel(map),
            next_op: map.op_counter(*next_op),
            next_timer: map.timer_counter(*next_timer),
            next_protection: *next_protection,
            pending: pending.relabel(map),
            protected: protected.relabel(map),
        }
    }
}
