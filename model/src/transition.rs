//! Carrying out one action: the workload's timers and effects, the client's handling of inputs and its
//! effects, the server's application of requests and the faults. Every trace event is
//! reported to the [`Recorder`] as it happens.

use std::sync::Arc;

use coordination::client::ClientInput;
use coordination::driver::Observed;
use coordination::fencing::Token;
use coordination::ids::{ClientSlot, Owner, TimerId};
use coordination::recipe::Effect;
use coordination::recipes::{Call, Notice};
use coordination::world::Handle;
use coordination::zk::tree::Fired;
use coordination::zk::{SessionId, Zxid};
use properties::monitor::{Access, Observation, Wait, changes};
use runtime::workload::{Phase, WorkEffect, WorkInput, WorkTimer};
use scenarios::fault::{Fault, Node, ServerSelector};
use trace::{EventKind, ServerSession, client_event};

use crate::model::{LockModel, Recorder, SESSION_TIMEOUT};
use crate::state::{Peer, SharedServer, State, session_id};
use recipe_table::recipes::Testable;

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

    /// `slot`'s handle, if its connection is up on a server that hears the leader (not on a
    /// cut-off follower).
    fn up_handle(&mut self, slot: ClientSlot) -> Option<&mut Handle> {
        self.handle_mut(slot).filter(|handle| handle.served())
    }

    /// Fires `slot`'s pending workload timer.
    pub(crate) fn work(&mut self, slot: ClientSlot) -> Option<()> {
        let timer = self.state.peer(slot).workload.pending_timer()?;
        self.feed_work(slot, WorkInput::Timer(timer));
        Some(())
    }

    /// Runs `slot`'s workload on `input` and carries out its effects in order.
    fn feed_work(&mut self, slot: ClientSlot, input: WorkInput) {
        let mut effects = Vec::new();
        self.state
            .peer_mut(slot)
            .workload
            .handle(input, &mut effects);
        for effect in effects {
            self.work_effect(slot, effect);
        }
    }

    fn work_effect(&mut self, slot: ClientSlot, effect: WorkEffect) {
        match effect {
            WorkEffect::Call(call) => {
                self.call(slot, call);
            }
            WorkEffect::Read { owner, token } => {
                let value = self.read(slot, owner, token);
                self.feed_work(slot, WorkInput::ReadDone(value));
            }
            WorkEffect::Write {
                owner,
                token,
                value,
            } => self.write(slot, owner, token, value),
            // A think with no cycle left only ends the workload, and all the end does is
            // close a session that holds nothing any more: it fires at once, which spares
            // every final state a twin that still thinks.
            WorkEffect::SetTimer(WorkTimer::Think)
                if self.state.peer(slot).workload.cycles_left() == 0 =>
            {
                self.feed_work(slot, WorkInput::Timer(WorkTimer::Think));
            }
            // Any other pending timer is the workload's own (`Workload::pending_timer`), which
            // `Action::Work` fires. Once `Done`, the client closes its session when its
            // requests are applied ([`Transition::close_finished`]).
            WorkEffect::SetTimer(_) | WorkEffect::CancelTimer(_) | WorkEffect::Done => {}
        }
    }

    /// Closes the session of each client whose workload is done once the server has applied
    /// every request it sent, as the simulator's and the real executor's drivers close it
    /// when the workload lets the client go (the server applies what came before the close):
    /// the client stops — what is still queued for it goes with the handle, no timer of its
    /// fires any more — and the server ends the session. So `no_orphans` judges a tree whose
    /// sessions have all closed, as in the simulator's traces. Called after every step; only a
    /// step of or on the client itself can bring it there.
    pub(crate) fn close_finished(&mut self) {
        for index in 0..self.state.peers.len() {
            let slot = ClientSlot(index as u16);
            let peer = self.state.peer(slot);
            let sent = (peer.handle.as_ref()).is_some_and(|handle| !handle.requests.is_empty());
            if peer.workload.phase() != Phase::Done || sent {
                continue;
            }
            let peer = self.state.peer_mut(slot);
            peer.timers.clear();
            if let Some(handle) = peer.handle.take() {
                self.end_session(handle.session, ServerSession::Closed);
            }
        }
    }

    /// Reads the resource with `token`: the value, unless refused.
    fn read(&mut self, slot: ClientSlot, owner: Owner, token: Token) -> Option<u64> {
        let resource = &mut self.state.resource;
        let read = resource.counter.read(token);
        if let Ok(value) = read {
            resource.accepted(slot, owner, token, Access::Read(value));
        }
        self.rec.record(Some(slot), || EventKind::ResourceRead {
            owner,
            token,
            accepted: read.is_ok(),
            value: read.ok(),
        });
        read.ok()
    }

    /// Writes `value` with `token`.
    fn write(&mut self, slot: ClientSlot, owner: Owner, token: Token, value: u64) {
        let resource = &mut self.state.resource;
        let accepted = resource.counter.write(token, value).is_ok();
        if accepted {
            resource.accepted(slot, owner, token, Access::Write(value));
        }
        self.rec.record(Some(slot), || EventKind::ResourceWrite {
            owner,
            token,
            value,
            accepted,
        });
    }

    fn call(&mut self, slot: ClientSlot, call: Call) {
        self.observed(slot, Observed::Call(&call));
        self.feed(slot, ClientInput::Call(call));
    }

    pub(crate) fn deliver(&mut self, slot: ClientSlot) -> Option<()> {
        let event = self.handle_mut(slot)?.events.pop_front()?;
        self.observed(slot, Observed::Event(&event));
        self.feed(slot, ClientInput::Event(event));
        Some(())
    }

    pub(crate) fn fire(&mut self, slot: ClientSlot, timer: TimerId) -> Option<()> {
        if !self.state.peer_mut(slot).timers.remove(&timer) {
            return None;
        }
        let timeout = self.state.peer(slot).client.is_recipe_timer(timer);
        self.feed(slot, ClientInput::Timer(timer));
        if timeout {
            self.deadline_passed(slot);
        }
        Some(())
    }

    /// A timeout timer of `slot`'s recipe fired and the client handled it: the deadline of
    /// an acquire of `slot` that still waits with a timeout has passed (the model's workload
    /// has one owner per client, so the timer is that owner's).
    fn deadline_passed(&mut self, slot: ClientSlot) {
        let waits = self.state.waits.summary(slot);
        let timed = waits.iter().filter(|(_, _, wait)| *wait == Wait::Timed);
        for &(owner, _, _) in timed {
            self.rec
                .record(Some(slot), || EventKind::DeadlinePassed { owner });
            self.state.observe(Observation::DeadlinePassed(slot, owner));
        }
    }

    /// Runs the client on `input` and carries out its effects in order.
    /// The workload hears the notices once the client's other effects are carried out: a
    /// call it makes in answer (a nested acquire, a release cut short by a revocation
    /// request) reaches the client after them, as it would through the driver.
    fn feed(&mut self, slot: ClientSlot, input: ClientInput<Call>) {
        let mut effects = Vec::new();
        self.state.peer_mut(slot).client.handle(input, &mut effects);
        let mut notices = Vec::new();
        for effect in effects {
            self.effect(slot, effect, &mut notices);
        }
        for notice in notices {
            self.notice(slot, notice);
        }
    }

    fn effect(&mut self, slot: ClientSlot, effect: Effect<Notice>, notices: &mut Vec<Notice>) {
        match effect {
            Effect::Op { op, request } => {
                let sent = Observed::OpSent {
                    op,
                    request: &request,
                };
                self.observed(slot, sent);
                if let Some(handle) = self.handle_mut(slot) {
                    handle.send(op, request);
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
            Effect::Session(event) => self.observed(slot, Observed::Session(event)),
            Effect::Notify(notice) => {
                self.observed(slot, Observed::Notice(&notice));
                notices.push(notice);
            }
        }
    }

    /// Records what client `slot` observed, as the simulator's and the real executor's
    /// driver observers do ([`client_event`]).
    fn observed(&mut self, slot: ClientSlot, observed: Observed<'_, R>) {
        if let Some(seen) = Observation::of_observed(slot, &observed) {
            self.state.observe(seen);
        }
        self.rec.record(Some(slot), || {
            client_event(observed).expect("the model records no session handle events")
        });
    }

    /// The workload hears `notice` (the monitors have seen it as it was emitted).
    fn notice(&mut self, slot: ClientSlot, notice: Notice) {
        self.feed_work(slot, WorkInput::Notice(notice));
    }

    /// The server opens the client's session of its current incarnation; `Connected` is the
    /// first event on the new handle.
    pub(crate) fn open_session(&mut self, slot: ClientSlot) {
        let session = session_id(slot, self.state.peer(slot).incarnation);
        self.state.server_mut().open(session);
        self.rec.record(None, || EventKind::ServerSession {
            session,
            change: ServerSession::Created,
        });
        self.state.peer_mut(slot).handle = Some(Handle::open(session, SESSION_TIMEOUT));
    }

    /// Applies the client's next request; with `lost`, its reply is replaced by
    /// `ConnectionLoss`.
    pub(crate) fn apply(&mut self, slot: ClientSlot, lost: bool) -> Option<()> {
        let State { server, peers, .. } = &mut *self.state;
        let handle = Peer::make_mut(&mut peers[usize::from(slot.0)])
            .handle
            .as_mut()?;
        let session = handle.session;
        let mut applied = SharedServer::make_mut(server).apply_next(handle)?;
        self.rec.record(None, || EventKind::OpApplied {
            session,
            op: applied.op,
            request: applied.request.clone(),
            result: applied.result.clone(),
            zxid: applied.zxid,
            read_from: None,
        });
        self.route(std::mem::take(&mut applied.fired), applied.zxid, false);
        self.handle_mut(slot)?.answer(&applied, lost);
        Some(())
    }

    /// Sends fired watches to the sessions' streams, and shows the herd monitor who each
    /// change woke: the whole of a request's change, or, with `per_node` (an expiry deleting
    /// its ephemerals), each node's.
    fn route(&mut self, fired: Vec<Fired>, zxid: Option<Zxid>, per_node: bool) {
        let mut watches = Vec::new();
        for Fired { session, event } in fired {
            self.rec.record(None, || EventKind::WatchFired {
                session,
                event: event.clone(),
                zxid,
            });
            watches.push((event.path.clone(), (session, event.kind, ())));
            let Some(slot) = self.state.attached(session) else {
                continue;
            };
            if let Some(handle) = self.handle_mut(slot) {
                handle.watch(event);
            }
        }
        for change in changes(watches, per_node) {
            self.state.herds.wake(change, &self.state.waits);
        }
    }

    /// Ends `session` on the server (`change`: expired or closed): watches dropped, ephemerals
    /// deleted in one zxid.
    fn end_session(&mut self, session: SessionId, change: ServerSession) -> Option<()> {
        let fired = self.state.server_mut().end(session)?;
        let zxid = Some(self.state.server.tree.zxid());
        self.state.observe(Observation::SessionEnded(session));
        self.rec
            .record(None, || EventKind::ServerSession { session, change });
        self.route(fired, zxid, true);
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
        handle.lose_session();
        self.state.used.expiries += 1;
        self.state.observe(Observation::Expire(slot));
        self.rec.record(None, || EventKind::FaultStart {
            fault: Fault::ExpireSession { client: slot.0 },
        });
        self.end_session(session, ServerSession::Expired)
    }

    /// `slot`'s server, a follower, is cut off from the leader, and the leader expires the
    /// session: the server ends it as [`Transition::expire`] does (its ephemerals deleted, the
    /// other sessions' watches fired), but the client's connection stays up and nothing is
    /// queued for it. Its follower answers its reads from the tree as it is before the expiry
    /// ([`Handle::cut`]) and holds its writes until it gives up
    /// ([`Transition::follower_gives_up`]).
    pub(crate) fn cut_follower(&mut self, slot: ClientSlot) -> Option<()> {
        let budgets = self.model.config().budgets;
        self.budget_left(self.state.used.follower_cuts, budgets.follower_cuts)?;
        self.up_handle(slot)?;
        let follower = Arc::new(self.state.server.tree.clone());
        let handle = self.up_handle(slot)?;
        let session = handle.session;
        handle.cut_off(follower);
        self.state.used.follower_cuts += 1;
        self.rec.record(None, || EventKind::FaultStart {
            fault: follower_cut(slot),
        });
        self.end_session(session, ServerSession::Expired)
    }

    /// `slot`'s cut-off follower gives up on the leader and drops the client, which hears
    /// what [`Transition::expire`] queues: `ConnectionLoss` for the writes it held (and the
    /// reads behind them), `Disconnected`, and `Expired` from the next server it reaches.
    pub(crate) fn follower_gives_up(&mut self, slot: ClientSlot) -> Option<()> {
        let handle = self
            .handle_mut(slot)
            .filter(|handle| handle.cut.is_some())?;
        handle.lose_session();
        self.rec.record(None, || EventKind::FaultEnd {
            fault: follower_cut(slot),
        });
        Some(())
    }

    pub(crate) fn crash(&mut self, slot: ClientSlot) -> Option<()> {
        let budgets = self.model.config().budgets;
        self.budget_left(self.state.used.crashes, budgets.crashes)?;
        self.state.used.crashes += 1;
        self.state.observe(Observation::Crash(slot));
        self.rec.record(None, || EventKind::FaultStart {
            fault: Fault::Crash { client: slot.0 },
        });
        let old = self.state.peer(slot);
        let mut fresh = self
            .model
            .fresh_peer(slot, old.restarts + 1, old.incarnation + 1);
        fresh.workload = old.workload.restarted();
        *self.state.peer_mut(slot) = fresh;
        self.open_session(slot);
        Some(())
    }

    pub(crate) fn lose_connection(&mut self, slot: ClientSlot, applied: bool) -> Option<()> {
        let budgets = self.model.config().budgets;
        self.budget_left(self.state.used.connection_losses, budgets.connection_losses)?;
        let handle = self.up_handle(slot)?;
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
        handle.reconnect(SESSION_TIMEOUT);
        self.rec.record(None, || EventKind::FaultEnd { fault });
        Some(())
    }

    /// A connection attempt of `slot`'s, not yet (re)connected, fails: its stream says
    /// `Disconnected` once more before it says `Connected`.
    pub(crate) fn fail_attempt(&mut self, slot: ClientSlot) -> Option<()> {
        let budgets = self.model.config().budgets;
        self.budget_left(self.state.used.failed_attempts, budgets.failed_attempts)?;
        self.handle_mut(slot)?.fail_attempt().then_some(())?;
        self.state.used.failed_attempts += 1;
        Some(())
    }

    /// The server's sweep deletes the empty containers (each in its own zxid, as the
    /// simulated server's sweep does; the watches it fires are stamped with the last).
    pub(crate) fn reap_containers(&mut self) -> Option<()> {
        let budgets = self.model.config().budgets;
        self.budget_left(self.state.used.reaps, budgets.reaps)?;
        self.state.server.tree.reapable().next()?;
        let fired = self.state.server_mut().tree.reap_containers();
        self.state.used.reaps += 1;
        let zxid = Some(self.state.server.tree.zxid());
        self.route(fired, zxid, true);
        Some(())
    }

    pub(crate) fn expire_orphan(&mut self, session: SessionId) -> Option<()> {
        if self.state.attached(session).is_some() {
            return None;
        }
        self.end_session(session, ServerSession::Expired)
    }
}

/// The fault a trace records for a cut of `slot`'s follower off from the leader: the server
/// of `slot` isolated from its peers (the model's one server stands for every server; which
/// one it was is not resolved).
fn follower_cut(slot: ClientSlot) -> Fault {
    Fault::IsolateFromPeers {
        server: ServerSelector::ServerOf(slot.0),
        resolved: None,
        for_ms: None,
    }
}
