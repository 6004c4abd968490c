//! Carrying out one action: the workload's steps, the client's handling of inputs and its
//! effects, the server's application of requests and the faults. Every trace event is
//! reported to the [`Recorder`] as it happens.

use std::collections::BTreeSet;

use lock::client::ClientInput;
use lock::coordination::{RawEvent, RawState};
use lock::ids::{ClientSlot, OpId, TimerId};
use lock::recipe::Effect;
use lock::recipes::{Call, Notice};
use lock::zk::tree::Fired;
use lock::zk::{EventKind as ZkEvent, OpResult, SessionId, ZkError, Zxid};
use scenarios::check::counts_as_acquired;
use scenarios::fault::{Fault, Node};
use scenarios::trace::{EventKind, ServerSession};

use crate::model::{LockModel, OWNER, Recorder, SESSION_TIMEOUT};
use crate::state::{Handle, Link, State, Step, Wake, session_id};
use scenarios::recipes::Testable;

/// One action being carried out on a copy of the state.
pub(crate) struct Transition<'a, R: 'static, Rec> {
    pub(crate) model: &'a LockModel<R>,
    pub(crate) state: &'a mut State<R>,
    pub(crate) rec: &'a mut Rec,
}

impl<R: Testable, Rec: Recorder> Transition<'_, R, Rec> {
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

    pub(crate) fn work(&mut self, slot: ClientSlot) -> Option<()> {
        let work = self.state.peer(slot).work;
        match work.step {
            Step::Idle if work.cycles_left > 0 => {
                let begin = self.model.usage(slot, work.cycles_begun).begin;
                let work = &mut self.state.peer_mut(slot).work;
                work.cycles_left -= 1;
                work.cycles_begun += 1;
                work.step = Step::Acquiring;
                self.call(slot, begin);
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
                let end = self.model.usage(slot, 0).end;
                let work = &mut self.state.peer_mut(slot).work;
                work.step = Step::Ending;
                work.believes = false;
                self.call(slot, end);
            }
            Step::Idle | Step::Acquiring | Step::Ending => return None,
        }
        Some(())
    }

    fn call(&mut self, slot: ClientSlot, call: Call) {
        self.rec.record(Some(slot), || EventKind::Call { call });
        self.feed(slot, ClientInput::Call(call));
    }

    pub(crate) fn deliver(&mut self, slot: ClientSlot) -> Option<()> {
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

    pub(crate) fn fire(&mut self, slot: ClientSlot, timer: TimerId) -> Option<()> {
        if !self.state.peer_mut(slot).timers.remove(&timer) {
            return None;
        }
        self.feed(slot, ClientInput::Timer(timer));
        Some(())
    }

    /// Runs the client on `input` and carries out its effects in order.
    fn feed(&mut self, slot: ClientSlot, input: ClientInput<Call>) {
        let mut effects = Vec::new();
        self.state.peer_mut(slot).client.handle(input, &mut effects);
        for effect in effects {
            self.effect(slot, effect);
        }
    }

    fn effect(&mut self, slot: ClientSlot, effect: Effect<Notice>) {
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
    fn notice(&mut self, slot: ClientSlot, notice: Notice) {
        let writes = self.model.writes(slot);
        let work = &mut self.state.peer_mut(slot).work;
        let waited = work.step == Step::Acquiring;
        match (work.step, notice.granted()) {
            (Step::Acquiring, Some(token)) => {
                work.step = if writes {
                    Step::Read(token)
                } else {
                    Step::Release
                };
                work.believes = true;
            }
            (Step::Acquiring, None) if notice.refused() => work.step = Step::Idle,
            (Step::Ending, None) if notice.answers_end() => work.step = Step::Idle,
            // A leader that regained leadership while it is still in its cycle.
            (Step::Read(_) | Step::Write(..) | Step::Release, Some(_)) => work.believes = true,
            _ => match notice {
                Notice::Suspended { .. } | Notice::Lost { .. } | Notice::NotLeader { .. } => {
                    work.believes = false
                }
                Notice::Reconnected { .. } => work.believes = true,
                _ => {}
            },
        }
        if waited && work.step != Step::Acquiring {
            self.leave_wake(slot, counts_as_acquired(&notice));
            self.settle_wakes();
        }
    }

    /// The server opens the client's session of its current incarnation; `Connected` is the
    /// first event on the new handle.
    pub(crate) fn open_session(&mut self, slot: ClientSlot) {
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
    pub(crate) fn apply(&mut self, slot: ClientSlot, lost: bool) -> Option<()> {
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

    /// Sends fired watches to the sessions' streams and notes a wake of several waiting
    /// clients by one change (a herd, unless they then all acquire).
    fn route(&mut self, fired: Vec<Fired>, zxid: Option<Zxid>) {
        let mut woken = BTreeSet::new();
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
                woken.insert(slot);
            }
            if let Some(handle) = peer.handle.as_mut().filter(|h| h.link == Link::Up) {
                handle.events.push_back(RawEvent::Watch { event });
            }
        }
        for &slot in &woken {
            self.leave_wake(slot, false);
        }
        if woken.len() > 1 {
            let id = (0..=u8::MAX)
                .find(|id| !self.state.wakes.contains_key(id))
                .expect("fewer wakes than clients");
            let count = u8::try_from(woken.len()).unwrap_or(u8::MAX);
            let wake = Wake {
                woken: count,
                acquired: 0,
            };
            self.state.wakes.insert(id, wake);
            for slot in woken {
                self.state.peer_mut(slot).woken = Some(id);
            }
        }
        self.settle_wakes();
    }

    /// `slot` is done with its wake-up: it acquired (as `counts_as_acquired` says), or not.
    fn leave_wake(&mut self, slot: ClientSlot, acquired: bool) {
        let Some(id) = self.state.peer_mut(slot).woken.take() else {
            return;
        };
        if let Some(wake) = self.state.wakes.get_mut(&id).filter(|_| acquired) {
            wake.acquired += 1;
        }
    }

    /// Notes a herd once a wake has woken more than max(1, those that acquired or may still
    /// acquire), and forgets wakes whose clients are all done.
    fn settle_wakes(&mut self) {
        let peers = &self.state.peers;
        let pending = |id: u8| peers.iter().filter(|p| p.woken == Some(id)).count();
        let mut done = Vec::new();
        for (&id, wake) in &self.state.wakes {
            let pending = pending(id);
            if usize::from(wake.woken) > (usize::from(wake.acquired) + pending).max(1) {
                self.state.herd = true;
            }
            if pending == 0 {
                done.push(id);
            }
        }
        for id in done {
            self.state.wakes.remove(&id);
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

    /// The server expires the session of a paused or cut-off client. What the client will
    /// hear is queued at once — `ConnectionLoss` for the requests it had in flight, then
    /// `Disconnected` and `Expired` — but it hears it only when it next handles an event (the
    /// pause ends, the connection comes back); until then it acts on its stale belief, and
    /// nothing it sends on this handle is applied.
    pub(crate) fn expire(&mut self, slot: ClientSlot) -> Option<()> {
        let budgets = self.model.config().budgets;
        self.budget_left(self.state.used.expiries, budgets.expiries)?;
        let handle = self.up_handle(slot)?;
        let session = handle.session;
        handle.link = Link::Dead;
        handle.drop_connection();
        handle.events.push_back(RawEvent::State {
            state: RawState::Expired,
        });
        self.state.used.expiries += 1;
        self.rec.record(None, || EventKind::FaultStart {
            fault: Fault::ExpireSession { client: slot.0 },
        });
        self.end_session(session)
    }

    pub(crate) fn crash(&mut self, slot: ClientSlot) -> Option<()> {
        let budgets = self.model.config().budgets;
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
        self.settle_wakes();
        self.open_session(slot);
        Some(())
    }

    pub(crate) fn lose_connection(&mut self, slot: ClientSlot, applied: bool) -> Option<()> {
        let budgets = self.model.config().budgets;
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
        handle.drop_connection();
        handle.events.push_back(RawEvent::State {
            state: RawState::Connected {
                session,
                timeout: SESSION_TIMEOUT,
            },
        });
        self.rec.record(None, || EventKind::FaultEnd { fault });
        Some(())
    }

    pub(crate) fn expire_orphan(&mut self, session: SessionId) -> Option<()> {
        if self.state.attached(session).is_some() {
            return None;
        }
        self.end_session(session)
    }
}
