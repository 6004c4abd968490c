//! `MultiLock`: Curator's InterProcessMultiLock, several locks taken as one.
//!
//! **What Curator does.** `InterProcessMultiLock(client, paths)` makes one InterProcessMutex
//! per path. `acquire(time, unit)` acquires them in list order, giving *each* the full
//! `time`; when one returns false it stops, releases the ones it holds in reverse order and
//! returns false; when one throws, it notes the exception, goes on through the rest of the
//! list, then releases what it holds in reverse order and rethrows. `release()` releases every
//! lock in reverse order, carrying on past failures. It is reentrant because each mutex is,
//! and `isAcquiredInThisProcess` is true only while every lock is held.
//!
//! **What we do.** One [`Mutex`] per path, composed as `SemaphoreMutex` composes its internal
//! lock (their notices are ours to act on, never the user's). An `Acquire` takes the locks in
//! order, each only once the one before is held, and says `Acquired` once all are held. All
//! or nothing: when a lock's acquire fails (`Failed` from that mutex, or `Lost` of the held
//! ones), or times out, the locks taken so far and the one being waited for are given up in
//! reverse order (their nodes get guaranteed deletes) and the owner hears `Failed` or
//! `TimedOut` once. `Release` releases in reverse order.
//!
//! The acquire's timeout is Curator's by default, [`TimeoutScope::EachLock`]: each lock's
//! acquire gets the whole timeout, so an acquire of n locks can wait up to n times it.
//! [`TimeoutScope::Whole`] is the safer setting: one timer bounds the whole acquire, as a
//! caller who says "within 3 s" means it. Other differences, and why:
//! - **A failure stops at once**: Curator's going on after an exception only takes locks to
//!   give them back.
//! - **Reentrancy is counted here**, per owner, not in each mutex: the mutexes hold once per
//!   owner, and the last `Release` releases them all. What the owner sees is the same.
//! - **Connection notices once per owner**: `Suspended`, `Reconnected` and `Lost` of a holder
//!   come from the first lock only (every lock shares the one session, so they all say the
//!   same). An owner still acquiring hears none, as a `Mutex` waiter hears none, and goes on
//!   acquiring across LOST as Curator's does (under `OnLost::Release`, where the held locks
//!   end at LOST, losing the session fails its acquire with `SessionLost` once it holds one).
//! - **The paths must be distinct, and at least one**: [`MultiLock::new`] says so instead of
//!   building a lock that waits for itself (Curator's would) or one with no token.
//!
//! **The token is the first lock's** (its node's czxid). Every hold of this multi-lock is a
//! hold of its first lock, taken first and kept until the end, so holds of the multi-lock
//! follow each other exactly as holds of the first lock do, whose tokens increase along that
//! succession (a later holder's node was created after the earlier holder's, see `Mutex`):
//! the resource rejects a holder whose session has gone the moment a successor has written.
//! The token is also comparable with those of a plain `Mutex` on the first path guarding the
//! same resource.
//!
//! Two multi-locks (or a multi-lock and a mutex) that take shared paths in different orders
//! can deadlock, as Curator's can: give every client the same order.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::kit::{cancel_timeout, failed, timed_out};
use super::{Call, Cx, Event, FailReason, Lock, Mode, Mutex, Notice};
use crate::fencing::Token;
use crate::framework::OnLost;
use crate::ids::{Owner, TimerId};
use crate::recipe::{Ctx, Input};
use crate::relabel::Relabel;
use crate::zk::Path;

/// The InterProcessMultiLock recipe over a list of lock paths.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct MultiLock {
    /// One mutex per path, in acquisition order.
    locks: Vec<Mutex>,
    /// The owners acquiring or holding.
    owners: BTreeMap<Owner, Stage>,
    /// What an acquire's timeout bounds.
    #[relabel(skip)]
    scope: TimeoutScope,
}

/// What the timeout of a multi-lock's acquire bounds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum TimeoutScope {
    /// Each lock's acquire, one after the other, as Curator's `InterProcessMultiLock.acquire`
    /// passes its time to every mutex: an acquire of n locks can wait n times the timeout.
    #[default]
    EachLock,
    /// The whole acquire: one timer from the call on.
    Whole,
}

impl TimeoutScope {
    /// The names scenario files and `check --timeout-scope` give the scopes.
    pub const NAMES: [&'static str; 2] = ["each-lock", "whole"];
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
enum Stage {
    /// Holding the locks before `index`, acquiring lock `index`, within `bound`.
    Acquiring { index: usize, bound: Bound },
    /// Holding every lock, `count` times (reentrant).
    Holding { count: u32 },
}

/// What bounds an acquire in time, by the multi-lock's [`TimeoutScope`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
enum Bound {
    /// No timeout.
    Unbounded,
    /// [`TimeoutScope::Whole`]: this timer bounds it all.
    Whole(TimerId),
    /// [`TimeoutScope::EachLock`]: each lock is asked with this as its own timeout.
    EachLock(Duration),
}

impl Bound {
    /// The multi-lock's own timer, if it set one.
    fn timer(self) -> Option<TimerId> {
        match self {
            Bound::Whole(timer) => Some(timer),
            Bound::Unbounded | Bound::EachLock(_) => None,
        }
    }

    /// The timeout each lock's acquire gets.
    fn each_lock(self) -> Option<Duration> {
        match self {
            Bound::EachLock(timeout) => Some(timeout),
            Bound::Unbounded | Bound::Whole(_) => None,
        }
    }
}

/// Why [`MultiLock::new`] refused its paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MultiLockError {
    /// The list of paths is empty.
    NoPaths,
    /// This path is listed twice (its second mutex would wait for the first forever).
    Repeated(Path),
}

impl fmt::Display for MultiLockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MultiLockError::NoPaths => f.write_str("a multi-lock needs at least one lock path"),
            MultiLockError::Repeated(path) => write!(
                f,
                "lock path {path} is listed twice; a multi-lock's paths must be distinct"
            ),
        }
    }
}

impl std::error::Error for MultiLockError {}

impl MultiLock {
    /// A multi-lock over `paths`, acquired in this order: one or more distinct lock paths.
    pub fn new(paths: Vec<Path>) -> Result<MultiLock, MultiLockError> {
        if paths.is_empty() {
            return Err(MultiLockError::NoPaths);
        }
        let mut seen = BTreeSet::new();
        if let Some(repeated) = paths.iter().find(|path| !seen.insert(*path)) {
            return Err(MultiLockError::Repeated(repeated.clone()));
        }
        Ok(MultiLock {
            locks: paths.into_iter().map(Mutex::new).collect(),
            owners: BTreeMap::new(),
            scope: TimeoutScope::default(),
        })
    }

    /// The same multi-lock with its acquires' timeouts bounding `scope`.
    pub fn with_timeout_scope(self, scope: TimeoutScope) -> MultiLock {
        MultiLock { scope, ..self }
    }

    /// Two locks below `path`, `<path>/1` then `<path>/2`: how the simulator and the model
    /// run a multi-lock on a scenario's one lock path (every node stays below it, where the
    /// checkers look for orphans).
    pub fn pair(path: &Path) -> MultiLock {
        let child = |name| path.child(name).expect("a valid constant name");
        MultiLock::new(vec![child("1"), child("2")]).expect("two distinct paths")
    }

    /// The lock paths, in acquisition order.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.locks.iter().map(Mutex::path)
    }

    /// The token of `owner`'s hold (the first lock's), while it holds every lock.
    pub fn holding(&self, owner: Owner) -> Option<Token> {
        match self.owners.get(&owner)? {
            Stage::Holding { .. } => self.locks[0].holding(owner),
            Stage::Acquiring { .. } => None,
        }
    }

    /// Tells `owner`, who holds every lock, that it holds the multi-lock.
    fn grant(&self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        let token = self.locks[0]
            .holding(owner)
            .expect("a holder holds the first lock");
        cx.notify(Notice::Acquired {
            owner,
            token,
            mode: Mode::Exclusive,
        });
    }

    /// Hands `input` to lock `index`, then acts on what it says.
    fn with_lock(&mut self, index: usize, input: Input<Call>, cx: &mut Ctx<'_, Notice>) {
        for notice in cx.run_inner(&mut self.locks[index], input) {
            self.on_lock_notice(index, notice, cx);
        }
    }

    /// Hands `input` to every lock, in order.
    fn with_every_lock(&mut self, input: Input<Call>, cx: &mut Ctx<'_, Notice>) {
        for index in 0..self.locks.len() {
            self.with_lock(index, input.clone(), cx);
        }
    }

    fn on_lock_notice(&mut self, index: usize, notice: Notice, cx: &mut Ctx<'_, Notice>) {
        let owner = notice.owner();
        let Some(stage) = self.owners.get_mut(&owner) else {
            return;
        };
        match (stage, notice) {
            (
                Stage::Acquiring {
                    index: waiting,
                    bound,
                },
                Notice::Acquired { .. },
            ) if *waiting == index && index + 1 < self.locks.len() => {
                *waiting = index + 1;
                let each = bound.each_lock();
                self.with_lock(index + 1, Input::Call(Call::acquire(owner, each)), cx);
            }
            (
                Stage::Acquiring {
                    index: waiting,
                    bound,
                },
                Notice::Acquired { .. },
            ) if *waiting == index => {
                cancel_timeout(bound.timer(), cx);
                self.owners.insert(owner, Stage::Holding { count: 1 });
                self.grant(owner, cx);
            }
            (Stage::Acquiring { .. }, Notice::Failed { reason, .. }) => {
                self.give_up(owner, Notice::Failed { owner, reason }, cx)
            }
            // Under `TimeoutScope::EachLock` the lock being acquired timed out (it has given
            // its node up): Curator's acquire returns false, after releasing the ones it holds.
            (Stage::Acquiring { .. }, Notice::TimedOut { .. }) => {
                self.give_up(owner, Notice::TimedOut { owner }, cx)
            }
            // Curator's multi-lock is its mutexes' acquires one after the other: the lock loop
            // of the one it waits for goes on across LOST, and those it holds keep their holds.
            // Under `OnLost::Release` the held ones end at LOST, and so does the acquire.
            (Stage::Acquiring { .. }, Notice::Lost { .. }) if cx.on_lost() == OnLost::Release => {
                let reason = FailReason::SessionLost;
                self.give_up(owner, Notice::Failed { owner, reason }, cx)
            }
            // The locks end their holds at LOST only under `OnLost::Release`; Curator's
            // keep them (and their nodes) until the owner releases.
            (Stage::Holding { .. }, Notice::Lost { .. }) if index == 0 => {
                if cx.on_lost() == OnLost::Release {
                    self.owners.remove(&owner);
                }
                cx.notify(notice);
            }
            (Stage::Holding { .. }, Notice::Suspended { .. } | Notice::Reconnected { .. })
                if index == 0 =>
            {
                cx.notify(notice);
            }
            // The other locks say the same as the first; `Released` answers our own release
            // (we tell the owner ourselves); the mutexes say nothing else to an owner here.
            _ => {}
        }
    }

    fn on_timer(&mut self, timer: TimerId, cx: &mut Ctx<'_, Notice>) {
        let timeout = |stage: &Stage| match stage {
            Stage::Acquiring { bound, .. } => bound.timer(),
            Stage::Holding { .. } => None,
        };
        match timed_out(&self.owners, timer, timeout) {
            Some(owner) => self.give_up(owner, Notice::TimedOut { owner }, cx),
            None => self.with_every_lock(Input::Timer(timer), cx),
        }
    }

    /// Ends `owner`'s acquisition: the lock being acquired and the ones held are given up in
    /// reverse order (their nodes get guaranteed deletes), then the owner hears `notice`.
    fn give_up(&mut self, owner: Owner, notice: Notice, cx: &mut Ctx<'_, Notice>) {
        let Some(Stage::Acquiring { index, bound }) = self.owners.remove(&owner) else {
            return;
        };
        cancel_timeout(bound.timer(), cx);
        for lock in self.locks[..=index].iter_mut().rev() {
            lock.abandon(owner, cx);
        }
        cx.notify(notice);
    }
}

impl Lock for MultiLock {
    fn acquire(&mut self, owner: Owner, timeout: Option<Duration>, _: Mode, cx: &mut Cx<'_>) {
        match self.owners.get_mut(&owner) {
            Some(Stage::Holding { count }) => {
                *count += 1;
                self.grant(owner, cx);
            }
            Some(Stage::Acquiring { .. }) => failed(owner, FailReason::AlreadyAcquiring, cx),
            None => {
                let bound = match (timeout, self.scope) {
                    (None, _) => Bound::Unbounded,
                    (Some(after), TimeoutScope::Whole) => Bound::Whole(cx.set_timer(after)),
                    (Some(after), TimeoutScope::EachLock) => Bound::EachLock(after),
                };
                self.owners
                    .insert(owner, Stage::Acquiring { index: 0, bound });
                let each = bound.each_lock();
                self.with_lock(0, Input::Call(Call::acquire(owner, each)), cx);
            }
        }
    }

    fn release(&mut self, owner: Owner, _: Mode, cx: &mut Cx<'_>) {
        let Some(Stage::Holding { count }) = self.owners.get_mut(&owner) else {
            return failed(owner, FailReason::NotHeld, cx);
        };
        *count -= 1;
        let remaining = *count;
        if remaining == 0 {
            self.owners.remove(&owner);
            for index in (0..self.locks.len()).rev() {
                self.with_lock(index, Input::Call(Call::release(owner)), cx);
            }
        }
        cx.notify(Notice::Released {
            owner,
            remaining,
            mode: Mode::Exclusive,
        });
    }

    /// Replies, watches, session changes and their own timeouts (`TimeoutScope::EachLock`) are
    /// the mutexes' business: each takes the ones about its own requests, paths and timers.
    fn react(&mut self, event: Event, cx: &mut Cx<'_>) {
        match event {
            Input::Timer(timer) => self.on_timer(timer, cx),
            event => self.with_every_lock(event.widen(), cx),
        }
    }
}

#[cfg(test)]
mod tests;
