//! `LeaderSelector`: Curator's LeaderSelector, leadership by turns over an internal mutex.
//!
//! **What Curator does.** A selector holds an InterProcessMutex at the election path. `start`
//! queues it: a task on the selector's own thread acquires the mutex, calls the user's
//! `takeLeadership`, and when that returns (or throws, or is interrupted) releases the mutex
//! (a guaranteed delete of its node). Leadership is fair: participants lead in the order their
//! mutex nodes were created. `requeue` queues again and returns false when the selector is
//! queued or leading already; `autoRequeue` requeues whenever a task ends, whatever ended it
//! (a return, an interrupt, a connection loss, an expired session). `interruptLeadership`
//! cancels the task, interrupting `takeLeadership`. The listener
//! `LeaderSelectorListenerAdapter` throws `CancelLeadershipException` on SUSPENDED and LOST,
//! which makes the selector interrupt its own task: a leader stops at once, its node is
//! deleted, and with auto-requeue it queues again at the back. `close` shuts the task down
//! (interrupting a leader and deleting its node) and leaves the election for good.
//!
//! **What we do.** The same, as a sans-IO state machine over a composed [`Mutex`] (one
//! participant per owner; owners on one instance queue with their own nodes, like two
//! selectors on one Curator client). A thread's life becomes calls and notices:
//!
//! - `Start` queues the owner (an exclusive acquire on the mutex, without a timeout).
//! - `IsLeader { token }` is the call of `takeLeadership`; the token is the mutex node's
//!   czxid. Each later leader's node was created after the earlier leader's (a node leads only
//!   once every node ahead of it is gone), so tokens rise from leader to leader, also across a
//!   server restart (zxids never go back) and a reaped and recreated election path.
//! - `Relinquish` is `takeLeadership` returning; `Interrupt` is `interruptLeadership`; a
//!   connection `Suspended` or `Lost` is the adapter's cancel. Each ends the leadership the
//!   same way: the node gets a guaranteed delete and with `auto_requeue` the owner queues
//!   again at the back. The owner hears exactly one notice per `IsLeader` about its end:
//!   `Released { remaining: 0 }` answers `Relinquish` (the workloads end every hold with a
//!   release-like answer), and `NotLeader` says the leadership was cancelled (by `Interrupt`,
//!   `Suspended`, `Lost` or `Close`); a `Relinquish` after a cancel fails with `NotHeld`.
//! - `Requeue` queues a started owner that is neither queued nor leading, and does nothing
//!   (no notice: Curator's `false`) when it is.
//! - `Close` leaves: a leader hears `NotLeader` (its `takeLeadership` is interrupted), the
//!   node is deleted (guaranteed), nothing is requeued, and `Closed` answers. `notify` is
//!   ignored: a selector's leader always learns that its leadership ended.
//! - A queued attempt that fails (the session was lost while waiting, or its node vanished)
//!   queues again with `auto_requeue`; without it the owner hears `Failed` with the reason
//!   and is started but not queued, ready for `Requeue`.
//! - Calls in the wrong state fail: `Start` twice with `AlreadyStarted`; `Requeue`,
//!   `Relinquish`, `Interrupt` or `Close` before `Start` (or after `Close`) with `NotStarted`;
//!   `Relinquish` or `Interrupt` when not leading with `NotHeld`. Other calls are
//!   `Unsupported`.
//!
//! **Where we differ, and why.**
//!
//! - `Interrupt` while only queued fails with `NotHeld` and keeps the place in the queue.
//!   Curator documents `interruptLeadership` as cancelling "the current leadership if this
//!   instance has leadership", but its `Future.cancel` also cancels a queued attempt (with
//!   auto-requeue the selector queues again at the back, without it it leaves the queue
//!   unannounced). Leaving the queue is what `Close` is for.
//! - `Suspended` cancels leadership only. Curator's adapter also interrupts a selector that
//!   merely waits for the mutex, which costs it its place in the queue; a waiter holds nothing
//!   that a dropped connection makes unsafe, so ours keeps its node and waits on (the
//!   internal `Mutex` gives up a waiter's node at `Lost`).
//! - A failed attempt without auto-requeue is announced (`Failed`); Curator's exception is
//!   lost in the task's `Future`.
//! - After `Close` the owner is forgotten, so a later `Start` joins again as a new selector
//!   (Curator needs a new instance for that: a closed one cannot start).
//! - The node carries no participant id (Curator's `setId`): nobody lists participants.

use std::collections::BTreeMap;

use super::kit::{OverMutex, failed, refuse};
use super::{Call, FailReason, Mode, Mutex, Notice};
use crate::fencing::Token;
use crate::ids::Owner;
use crate::recipe::{Ctx, Input, Recipe};
use crate::relabel::Relabel;
use crate::zk::Path;

/// The LeaderSelector recipe for one election path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct LeaderSelector {
    /// Requeue whenever a leadership or an attempt ends (Curator's `autoRequeue()`).
    auto_requeue: bool,
    /// The internal mutex at the election path; its owners are the queued and leading ones.
    lock: Mutex,
    /// The started participants.
    #[relabel(skip)]
    participants: BTreeMap<Owner, Participant>,
}

/// Where a started participant stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Participant {
    /// Neither queued nor leading: its leadership or attempt ended without a requeue.
    Idle,
    /// Waiting for the mutex.
    Queued,
    /// Holding the mutex: `takeLeadership` runs.
    Leading(Token),
}

impl LeaderSelector {
    /// A selector on the election path `path` (the internal mutex's lock path), requeueing
    /// by itself when `auto_requeue`.
    pub fn new(path: Path, auto_requeue: bool) -> LeaderSelector {
        LeaderSelector {
            auto_requeue,
            lock: Mutex::new(path),
            participants: BTreeMap::new(),
        }
    }

    /// The election path.
    pub fn path(&self) -> &Path {
        self.lock.path()
    }

    /// The token of `owner`'s leadership, while it leads.
    pub fn leading(&self, owner: Owner) -> Option<Token> {
        match self.participants.get(&owner)? {
            Participant::Leading(token) => Some(*token),
            Participant::Idle | Participant::Queued => None,
        }
    }

    /// True while `owner` waits for leadership.
    pub fn queued(&self, owner: Owner) -> bool {
        self.participants.get(&owner) == Some(&Participant::Queued)
    }

    fn start(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        if self.participants.contains_key(&owner) {
            return failed(owner, FailReason::AlreadyStarted, cx);
        }
        self.queue(owner, cx);
    }

    fn requeue(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        match self.participants.get(&owner) {
            None => failed(owner, FailReason::NotStarted, cx),
            Some(Participant::Idle) => self.queue(owner, cx),
            Some(Participant::Queued | Participant::Leading(_)) => {}
        }
    }

    /// `Relinquish` and `Interrupt`: the leader's leadership ends, and `ended` tells it so.
    fn stop_leading(&mut self, owner: Owner, ended: Notice, cx: &mut Ctx<'_, Notice>) {
        match self.participants.get(&owner) {
            None => failed(owner, FailReason::NotStarted, cx),
            Some(Participant::Leading(_)) => self.end_leadership(owner, ended, cx),
            Some(Participant::Idle | Participant::Queued) => failed(owner, FailReason::NotHeld, cx),
        }
    }

    fn close(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        let Some(participant) = self.participants.remove(&owner) else {
            return failed(owner, FailReason::NotStarted, cx);
        };
        self.lock.abandon(owner, cx);
        if let Participant::Leading(_) = participant {
            cx.notify(Notice::NotLeader { owner });
        }
        cx.notify(Notice::Closed { owner });
    }

    /// Queues `owner` for the mutex.
    fn queue(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        self.participants.insert(owner, Participant::Queued);
        self.to_lock(Input::Call(Call::acquire(owner, None)), cx);
    }

    /// Ends `owner`'s leadership: its node goes (guaranteed), it hears `ended`, and it
    /// queues again with auto-requeue.
    fn end_leadership(&mut self, owner: Owner, ended: Notice, cx: &mut Ctx<'_, Notice>) {
        self.lock.abandon(owner, cx);
        cx.notify(ended);
        self.after_attempt(owner, cx);
    }

    /// An attempt (or the leadership it led to) is over: queue again with auto-requeue,
    /// else stay started but idle.
    fn after_attempt(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        if self.auto_requeue {
            self.queue(owner, cx);
        } else {
            self.participants.insert(owner, Participant::Idle);
        }
    }
}

impl OverMutex for LeaderSelector {
    fn mutex(&mut self) -> &mut Mutex {
        &mut self.lock
    }

    fn on_lock_notice(&mut self, notice: Notice, cx: &mut Ctx<'_, Notice>) {
        let owner = notice.owner();
        let Some(participant) = self.participants.get_mut(&owner) else {
            return;
        };
        match (notice, *participant) {
            (Notice::Acquired { token, .. }, Participant::Queued) => {
                *participant = Participant::Leading(token);
                cx.notify(Notice::IsLeader { owner, token });
            }
            // The adapter's cancel: a dropped connection or a lost session ends leadership.
            (Notice::Suspended { .. } | Notice::Lost { .. }, Participant::Leading(_)) => {
                self.end_leadership(owner, Notice::NotLeader { owner }, cx)
            }
            (Notice::Failed { reason, .. }, Participant::Queued) => {
                if !self.auto_requeue {
                    cx.notify(Notice::Failed { owner, reason });
                }
                self.after_attempt(owner, cx);
            }
            // Released, Reconnected and TimedOut never concern a participant: leaders give up
            // the mutex without a release call, a suspended hold is cancelled at once, and
            // attempts have no timeout.
            _ => {}
        }
    }
}

impl Recipe for LeaderSelector {
    type Call = Call;
    type Notice = Notice;

    fn handle(&mut self, input: Input<Call>, cx: &mut Ctx<'_, Notice>) {
        match input {
            Input::Call(Call::Start { owner }) => self.start(owner, cx),
            Input::Call(Call::Requeue { owner }) => self.requeue(owner, cx),
            Input::Call(Call::Relinquish { owner }) => {
                let released = Notice::Released {
                    owner,
                    remaining: 0,
                    mode: Mode::Exclusive,
                };
                self.stop_leading(owner, released, cx)
            }
            Input::Call(Call::Interrupt { owner }) => {
                self.stop_leading(owner, Notice::NotLeader { owner }, cx)
            }
            Input::Call(Call::Close { owner, .. }) => self.close(owner, cx),
            Input::Call(other) => refuse(other, cx),
            Input::Reply { op, result } => self.to_lock(Input::Reply { op, result }, cx),
            Input::Watch(event) => self.to_lock(Input::Watch(event), cx),
            Input::Session(event) => self.to_lock(Input::Session(event), cx),
            // The selector sets no timers, and gives the mutex no timeout.
            Input::Timer(_) => {}
        }
    }
}

#[cfg(test)]
mod tests;
