//! The stateright [`Model`]: N clients (recipe + framework layer, exactly as the simulator and
//! the real client run them) over an abstract ZooKeeper server built on the shared data tree.
//!
//! `Model` is implemented directly rather than through stateright's `ActorModel`: the server
//! applies requests atomically from per-client FIFO queues, each session has one ordered
//! event stream, and one fault touches the tree, the session table and a client's queues at
//! once. Actors exchanging messages over a network would need all of that rebuilt on top,
//! and `ActorModel`'s symmetry support does not rewrite timers (see the notes).
//!
//! Actions, each atomic:
//! - [`Action::Work`]: the client's workload takes its next step (acquire call, resource
//!   read, resource write, release call);
//! - [`Action::Deliver`]: the client handles the next event of its session's stream;
//! - [`Action::Fire`]: one of the client's pending timers fires (durations are ignored, so
//!   any hold time and any timeout are covered);
//! - [`Action::Apply`]: the server applies the client's next request (`Tree::apply`); fired
//!   watches go to their sessions' streams, the reply to the requester's after them;
//! - faults within the budgets: [`Action::Expire`] (the server expires the session of a
//!   paused or cut-off client; the client learns it only at [`Action::Reconnect`]),
//!   [`Action::Crash`], [`Action::LoseConnection`] (the in-flight request applied or not);
//!   and [`Action::ExpireOrphan`]: the server expires a session no client uses any more.

use std::marker::PhantomData;
use std::time::Duration;

use lock::client::{Client, ClientInput};
use lock::coordination::{RawEvent, RawState};
use lock::framework::{Framework, FrameworkConfig};
use lock::ids::{ClientSlot, OpId, Owner, TimerId};
use lock::recipe::Effect;
use lock::recipes::{LockCall, LockNotice};
use lock::zk::tree::{Fired, Tree};
use lock::zk::{
    CreateMode, EventKind as ZkEvent, OpResult, Path, Request, SessionId, ZkError, Zxid,
};
use scenarios::fault::{Fault, Node};
use scenarios::trace::{EventKind, ServerSession};
use stateright::{Model, Property};

use crate::budget::Config;
use crate::properties;
use crate::state::{Handle, Link, Peer, Resource, State, Step, Used, Work, session_id};
use crate::subject::Subject;

/// The path every client locks.
pub const LOCK_PATH: &str = "/lock";

/// The one owner each client's workload acquires for.
pub const OWNER: Owner = Owner(1);

/// The session timeout the abstract server negotiates (only its existence matters).
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(10);

/// One step of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// The client's workload takes its next step.
    Work(ClientSlot),
    /// The client handles the next event of its session's stream.
    Deliver(ClientSlot),
    /// A pending timer of the client fires.
    Fire(ClientSlot, TimerId),
    /// The server applies the client's next request.
    Apply(ClientSlot),
    /// The server expires the session of the (paused or cut-off) client.
    Expire(ClientSlot),
    /// The client whose session expired reconnects and is told: replies `ConnectionLoss`
    /// to what it had in flight, then `Disconnected`, then `Expired`.
    Reconnect(ClientSlot),
    /// The client process dies and restarts with a new session; the old one lives on.
    Crash(ClientSlot),
    /// The client's connection drops and comes back on the same session. With `applied`,
    /// the server applied the first request in flight but the reply was lost.
    LoseConnection {
        /// Whose connection.
        client: ClientSlot,
        /// Whether the first request in flight was applied.
        applied: bool,
    },
    /// The server expires a session that no client uses any more (crashed or given up).
    ExpireOrphan(SessionId),
}

/// Receives the trace events of a step as they happen.
pub trait Recorder {
    /// Records an event on `client` (`None`: the server or the environment). `kind` is only
    /// evaluated by recorders that keep events.
    fn record(&mut self, client: Option<ClientSlot>, kind: impl FnOnce() -> EventKind);
}

/// A recorder that keeps nothing: what the checker runs with.
pub struct Silent;

impl Recorder for Silent {
    fn record(&mut self, _: Option<ClientSlot>, _: impl FnOnce() -> EventKind) {}
}

/// The model of recipe `R` under one [`Config`].
pub struct LockModel<R> {
    config: Config,
    lock_path: Path,
    recipe: PhantomData<fn() -> R>,
}

impl<R: Subject> LockModel<R> {
    /// The model of `config`.
    pub fn new(config: Config) -> LockModel<R> {
        LockModel {
            config,
            lock_path: Path::new(LOCK_PATH).expect("a valid constant path"),
            recipe: PhantomData,
        }
    }

    /// What is checked.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The lock path.
    pub fn lock_path(&self) -> &Path {
        &self.lock_path
    }

    /// The one initial state, with its trace events: the lock path exists, and every client
    /// is connected with its first session.
    pub fn initial(&self, rec: &mut impl Recorder) -> State<R> {
        let mut tree = Tree::new();
        let create = Request::Create {
            path: self.lock_path.clone(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        };
        tree.apply(SessionId(0), &create);
        let peers = (0..self.config.clients)
            .map(|slot| self.fresh_peer(ClientSlot(slot), 0, 0))
            .collect();
        let mut state = State {
            tree,
            live: Default::default(),
            peers,
            resource: Resource::new(self.config.fenced),
            used: Used::default(),
            herd: false,
        };
        let mut step = Transition {
            model: self,
            state: &mut state,
            rec,
        };
        for slot in 0..self.config.clients {
            let slot = ClientSlot(slot);
            step.open_session(slot);
            step.deliver(slot);
        }
        state
    }

    fn fresh_peer(&self, slot: ClientSlot, restarts: u8, incarnation: u8) -> Peer<R> {
        let framework = Framework::new(FrameworkConfig::default(), slot, u32::from(restarts));
        Peer {
            client: Client::new(framework, R::on(self.lock_path.clone())),
            restarts,
            incarnation,
            handle: None,
            timers: Default::default(),
            work: Work {
                cycles_left: self.config.budgets.cycles,
                step: Step::Idle,
                believes: false,
            },
        }
    }

    /// The actions enabled in `state`, in a fixed order.
    pub fn enabled(&self, state: &State<R>, out: &mut Vec<Action>) {
        let budgets = &self.config.budgets;
        for (index, peer) in state.peers.iter().enumerate() {
            let slot = ClientSlot(index as u16);
            if work_enabled(&peer.work) {
                out.push(Action::Work(slot));
            }
            let Some(handle) = &peer.handle else {
                out.extend(peer.timers.iter().map(|&timer| Action::Fire(slot, timer)));
                continue;
            };
            if !handle.events.is_empty() {
                out.push(Action::Deliver(slot));
            }
            out.extend(peer.timers.iter().map(|&timer| Action::Fire(slot, timer)));
            let up = handle.link == Link::Up;
            if up && !handle.requests.is_empty() {
                out.push(Action::Apply(slot));
            }
            if up && state.used.expiries < budgets.expiries {
                out.push(Action::Expire(slot));
            }
            if handle.link == Link::Severed {
                out.push(Action::Reconnect(slot));
            }
            if state.used.crashes < budgets.crashes {
                out.push(Action::Crash(slot));
            }
            if up && state.used.connection_losses < budgets.connection_losses {
                out.push(Action::LoseConnection {
                    client: slot,
                    applied: false,
                });
                if !handle.requests.is_empty() {
                    out.push(Action::LoseConnection {
                        client: slot,
                        applied: true,
                    });
                }
            }
        }
        for &session in &state.live {
            if state.attached(session).is_none() {
                out.push(Action::ExpireOrphan(session));
            }
        }
    }

    /// Takes `action` from `state`, recording what happens; `None` if it is not enabled.
    pub fn step(
        &self,
        state: &State<R>,
        action: Action,
        rec: &mut impl Recorder,
    ) -> Option<State<R>> {
        let mut next = state.clone();
        let mut step = Transition {
            model: self,
            state: &mut next,
            rec,
        };
        let done = match action {
            Action::Work(slot) => step.work(slot),
            Action::Deliver(slot) => step.deliver(slot),
            Action::Fire(slot, timer) => step.fire(slot, timer),
            Action::Apply(slot) => step.apply(slot, false),
            Action::Expire(slot) => step.expire(slot),
            Action::Reconnect(slot) => step.reconnect(slot),
            Action::Crash(slot) => step.crash(slot),
            Action::LoseConnection { client, applied } => step.lose_connection(client, applied),
            Action::ExpireOrphan(session) => step.expire_orphan(session),
        };
        done.map(|()| next)
    }
}

fn work_enabled(work: &Work) -> bool {
    match work.step {
        Step::Idle => work.cycles_left > 0,
        Step::Acquiring => false,
        Step::Read(_) | Step::Write(..) | Step::Release => true,
    }
}

/// One action being carried out on a copy of the state.
struct Transition<'a, R, Rec> {
    model: &'a LockModel<R>,
    state: &'a mut State<R>,
    rec: &'a mut Rec,
}

impl<R: Subject, Rec: Recorder> Transition<'_, R, Rec> {
    fn budget_left(&self, used: u8, budget: u8) -> Option<()> {
        (used < budget).then_some(())
    }

    fn handle_mut(&mut self, slot: ClientSlot) -> Option<&mut Handle> {
        self.state.peer_mut(slot).handle.as_mut()
    }

    fn up_handle(&mut self, slot: ClientSlot) -> Option<&mut Handle> {
        self.handle_mut(slot)
            .filter(|handle| handle.link == Link::Up)
    }

    fn work(&mut self, slot: ClientSlot) -> Option<()> {
        let work = self.state.peer(slot).work;
        match work.step {
            Step::Idle if work.cycles_left > 0 => {
                let peer = self.state.peer_mut(slot);
                peer.work.cycles_left -= 1;
                peer.work.step = Step::Acquiring;
                self.call(
                    slot,
                    LockCall::Acquire {
                        owner: OWNER,
                        timeout: None,
                    },
                );
            }
            Step::Read(token) => {
                let read = self.state.resource.counter.read(token);
                if read.is_ok() {
                    self.state.resource.accepted(token);
                }
                self.state.peer_mut(slot).work.step = match read {
                    Ok(value) => Step::Write(token, value),
                    Err(_) => Step::Release,
                };
                self.rec.record(Some(slot), || EventKind::ResourceRead {
                    owner: OWNER,
                    token,
                    accepted: read.is_ok(),
                    value: read.ok(),
                });
            }
            Step::Write(token, value) => {
                let value = value + 1;
                let resource = &mut self.state.resource;
                let accepted = resource.counter.write(token, value).is_ok();
                if accepted {
                    resource.accepted(token);
                    resource.accepted_writes += 1;
                }
                self.state.peer_mut(slot).work.step = Step::Release;
                self.rec.record(Some(slot), || EventKind::ResourceWrite {
                    owner: OWNER,
                    token,
                    value,
                    accepted,
                });
            }
            Step::Release => {
                let work = &mut self.state.peer_mut(slot).work;
                work.step = Step::Idle;
                work.believes = false;
                self.call(slot, LockCall::Release { owner: OWNER });
            }
            Step::Idle | Step::Acquiring => return None,
        }
        Some(())
    }

    fn call(&mut self, slot: ClientSlot, call: LockCall) {
        self.rec.record(Some(slot), || EventKind::Call { call });
        self.feed(slot, ClientInput::Call(call));
    }

    fn deliver(&mut self, slot: ClientSlot) -> Option<()> {
        let event = self.handle_mut(slot)?.events.pop_front()?;
        self.rec.record(Some(slot), || match &event {
            RawEvent::Reply { op, result } => EventKind::Reply {
                op: *op,
                result: result.clone(),
            },
            RawEvent::Watch { event } => EventKind::WatchDelivered {
                event: event.clone(),
            },
            RawEvent::State { state } => EventKind::RawSession { state: *state },
        });
        self.feed(slot, ClientInput::Event(event));
        Some(())
    }

    fn fire(&mut self, slot: ClientSlot, timer: TimerId) -> Option<()> {
        if !self.state.peer_mut(slot).timers.remove(&timer) {
            return None;
        }
        self.feed(slot, ClientInput::Timer(timer));
        Some(())
    }

    /// Runs the client on `input` and carries out its effects in order.
    fn feed(&mut self, slot: ClientSlot, input: ClientInput<LockCall>) {
        let mut effects = Vec::new();
        self.state.peer_mut(slot).client.handle(input, &mut effects);
        for effect in effects {
            self.effect(slot, effect);
        }
    }

    fn effect(&mut self, slot: ClientSlot, effect: Effect<LockNotice>) {
        match effect {
            Effect::Op { op, request } => {
                self.rec.record(Some(slot), || EventKind::OpSent {
                    op,
                    request: request.clone(),
                });
                if let Some(handle) = self.handle_mut(slot) {
                    handle.requests.push_back((op, request));
                }
            }
            Effect::SetTimer { timer, .. } => {
                self.state.peer_mut(slot).timers.insert(timer);
            }
            Effect::CancelTimer(timer) => {
                self.state.peer_mut(slot).timers.remove(&timer);
            }
            // The handle goes with everything queued on it; the server keeps the session
            // until it expires (it cannot be reached, or has ended it already).
            Effect::CloseSession => self.state.peer_mut(slot).handle = None,
            Effect::OpenSession => {
                self.state.peer_mut(slot).incarnation += 1;
                self.open_session(slot);
            }
            Effect::Session(event) => self.rec.record(Some(slot), || EventKind::Session { event }),
            Effect::Notify(notice) => {
                self.rec.record(Some(slot), || EventKind::Notice { notice });
                self.notice(slot, notice);
            }
        }
    }

    /// The workload hears `notice`.
    fn notice(&mut self, slot: ClientSlot, notice: LockNotice) {
        let work = &mut self.state.peer_mut(slot).work;
        match notice {
            LockNotice::Acquired { token, .. } if work.step == Step::Acquiring => {
                work.step = Step::Read(token);
                work.believes = true;
            }
            LockNotice::Failed { .. } | LockNotice::TimedOut { .. }
                if work.step == Step::Acquiring =>
            {
                work.step = Step::Idle;
            }
            LockNotice::Suspended { .. } | LockNotice::Lost { .. } => work.believes = false,
            LockNotice::Reconnected { .. } => work.believes = true,
            _ => {}
        }
    }

    /// The server opens the client's session of its current incarnation; `Connected` is the
    /// first event on the new handle.
    fn open_session(&mut self, slot: ClientSlot) {
        let session = session_id(slot, self.state.peer(slot).incarnation);
        self.state.live.insert(session);
        self.rec.record(None, || EventKind::ServerSession {
            session,
            change: ServerSession::Created,
        });
        let connected = RawEvent::State {
            state: RawState::Connected {
                session,
                timeout: SESSION_TIMEOUT,
            },
        };
        self.state.peer_mut(slot).handle = Some(Handle {
            session,
            link: Link::Up,
            requests: Default::default(),
            events: [connected].into(),
        });
    }

    /// Applies the client's next request; with `lost`, its reply is replaced by
    /// `ConnectionLoss`.
    fn apply(&mut self, slot: ClientSlot, lost: bool) -> Option<()> {
        let handle = self.up_handle(slot)?;
        let session = handle.session;
        let (op, request) = handle.requests.pop_front()?;
        let applied = self.state.tree.apply(session, &request);
        self.rec.record(None, || EventKind::OpApplied {
            session,
            op,
            request: request.clone(),
            result: applied.result.clone(),
            zxid: applied.zxid,
        });
        self.route(applied.fired, applied.zxid);
        let result = if lost {
            Err(ZkError::ConnectionLoss)
        } else {
            applied.result
        };
        self.reply(slot, op, result);
        Some(())
    }

    fn reply(&mut self, slot: ClientSlot, op: OpId, result: OpResult) {
        if let Some(handle) = self.handle_mut(slot) {
            handle.events.push_back(RawEvent::Reply { op, result });
        }
    }

    /// Sends fired watches to the sessions' streams and notes a herd: one change waking more
    /// than one waiting client.
    fn route(&mut self, fired: Vec<Fired>, zxid: Option<Zxid>) {
        let mut woken = 0;
        for Fired { session, event } in fired {
            self.rec.record(None, || EventKind::WatchFired {
                session,
                event: event.clone(),
                zxid,
            });
            let Some(slot) = self.state.attached(session) else {
                continue;
            };
            let peer = self.state.peer_mut(slot);
            if event.kind == ZkEvent::NodeDeleted && peer.work.step == Step::Acquiring {
                woken += 1;
            }
            if let Some(handle) = peer.handle.as_mut().filter(|h| h.link == Link::Up) {
                handle.events.push_back(RawEvent::Watch { event });
            }
        }
        if woken > 1 {
            self.state.herd = true;
        }
    }

    /// Ends `session` on the server: watches dropped, ephemerals deleted in one zxid.
    fn end_session(&mut self, session: SessionId) -> Option<()> {
        if !self.state.live.remove(&session) {
            return None;
        }
        let fired = self.state.tree.end_session(session);
        let zxid = Some(self.state.tree.zxid());
        self.rec.record(None, || EventKind::ServerSession {
            session,
            change: ServerSession::Expired,
        });
        self.route(fired, zxid);
        Some(())
    }

    fn expire(&mut self, slot: ClientSlot) -> Option<()> {
        let budgets = self.model.config.budgets;
        self.budget_left(self.state.used.expiries, budgets.expiries)?;
        let session = self.up_handle(slot)?.session;
        self.state.used.expiries += 1;
        self.rec.record(None, || EventKind::FaultStart {
            fault: Fault::ExpireSession { client: slot.0 },
        });
        self.up_handle(slot)?.link = Link::Severed;
        self.end_session(session)
    }

    fn reconnect(&mut self, slot: ClientSlot) -> Option<()> {
        let handle = self.handle_mut(slot).filter(|h| h.link == Link::Severed)?;
        handle.link = Link::Dead;
        let lost = handle.requests.drain(..).map(|(op, _)| RawEvent::Reply {
            op,
            result: Err(ZkError::ConnectionLoss),
        });
        let told =
            [RawState::Disconnected, RawState::Expired].map(|state| RawEvent::State { state });
        let events: Vec<RawEvent> = lost.chain(told).collect();
        handle.events.extend(events);
        self.rec.record(None, || EventKind::FaultEnd {
            fault: Fault::ExpireSession { client: slot.0 },
        });
        Some(())
    }

    fn crash(&mut self, slot: ClientSlot) -> Option<()> {
        let budgets = self.model.config.budgets;
        self.budget_left(self.state.used.crashes, budgets.crashes)?;
        self.state.used.crashes += 1;
        self.rec.record(None, || EventKind::FaultStart {
            fault: Fault::Crash { client: slot.0 },
        });
        let old = self.state.peer(slot);
        let mut fresh = self
            .model
            .fresh_peer(slot, old.restarts + 1, old.incarnation + 1);
        fresh.work.cycles_left = old.work.cycles_left;
        *self.state.peer_mut(slot) = fresh;
        self.open_session(slot);
        Some(())
    }

    fn lose_connection(&mut self, slot: ClientSlot, applied: bool) -> Option<()> {
        let budgets = self.model.config.budgets;
        self.budget_left(self.state.used.connection_losses, budgets.connection_losses)?;
        let handle = self.up_handle(slot)?;
        let session = handle.session;
        if applied && handle.requests.is_empty() {
            return None;
        }
        self.state.used.connection_losses += 1;
        let fault = Fault::Isolate {
            node: Node::Client(slot.0),
            for_ms: None,
        };
        self.rec.record(None, || EventKind::FaultStart {
            fault: fault.clone(),
        });
        if applied {
            self.apply(slot, true)?;
        }
        let handle = self.up_handle(slot)?;
        let lost: Vec<RawEvent> = handle
            .requests
            .drain(..)
            .map(|(op, _)| RawEvent::Reply {
                op,
                result: Err(ZkError::ConnectionLoss),
            })
            .collect();
        handle.events.extend(lost);
        handle.events.extend([
            RawEvent::State {
                state: RawState::Disconnected,
            },
            RawEvent::State {
                state: RawState::Connected {
                    session,
                    timeout: SESSION_TIMEOUT,
                },
            },
        ]);
        self.rec.record(None, || EventKind::FaultEnd { fault });
        Some(())
    }

    fn expire_orphan(&mut self, session: SessionId) -> Option<()> {
        if self.state.attached(session).is_some() {
            return None;
        }
        self.end_session(session)
    }
}

impl<R: Subject> Model for LockModel<R> {
    type State = State<R>;
    type Action = Action;

    fn init_states(&self) -> Vec<State<R>> {
        vec![self.initial(&mut Silent)]
    }

    fn actions(&self, state: &State<R>, actions: &mut Vec<Action>) {
        self.enabled(state, actions);
    }

    fn next_state(&self, state: &State<R>, action: Action) -> Option<State<R>> {
        self.step(state, action, &mut Silent)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        properties::all()
    }

    fn format_action(&self, action: &Action) -> String {
        format!("{action:?}")
    }
}
