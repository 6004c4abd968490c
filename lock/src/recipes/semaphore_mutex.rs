//! `SemaphoreMutex`: Curator's InterProcessSemaphoreMutex, an InterProcessSemaphoreV2 with
//! one lease.
//!
//! An internal [`Mutex`] at `<path>/locks` serialises lease taking. Its holder creates a
//! protected ephemeral-sequential lease node `<path>/leases/_c_<protection-id>-lease-NNNNNNNNNN`
//! and lists `<path>/leases` with a child watch: with at most one lease there (its own) it
//! holds the semaphore and releases the internal lock; otherwise it waits for the child watch
//! and lists again, keeping the internal lock so that nobody else adds a lease meanwhile.
//! Release deletes the lease node (guaranteed). The fencing token is the lease node's czxid.
//!
//! **Not reentrant**, as Curator's: an acquire by an owner that holds already is one more
//! waiter, which waits until that owner releases (or times out, with a timeout); it never
//! gets a second hold at once. An acquire by an owner whose earlier acquire is still waiting
//! fails with `AlreadyAcquiring`. One timeout bounds both phases (internal lock and lease
//! wait); when it fires, the waiter's internal-lock node and lease node are deleted
//! (guaranteed). Leases of expired sessions go with the server's ephemeral deletion, which
//! fires the child watch of whoever waits. A waiter whose own lease node is missing from the
//! listing (its session expired on the server) fails with `NodeVanished`, as `Mutex`'s
//! waiters do, where Curator retries the whole acquire under its retry policy.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::{
    Call, FailReason, Hold, Mode, Mutex, Notice, create_parents, refuse, release_hold, update_hold,
};
use crate::fencing::Token;
use crate::ids::{OpId, Owner, TimerId};
use crate::recipe::{Ctx, Effect, Input, Recipe, SessionEvent};
use crate::zk::{CreateMode, OpOk, OpResult, Path, Request, WatchedEvent, ZkError};

/// The lease-node name (Curator's `lease-`).
pub const LEASE_NAME: &str = "lease-";

/// The InterProcessSemaphoreMutex recipe for one semaphore path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SemaphoreMutex {
    path: Path,
    leases: Path,
    /// The internal lock at `<path>/locks`; its owners are the owners in `Locking` or later.
    lock: Mutex,
    /// Acquisitions under way, one per owner.
    pending: BTreeMap<Owner, Acquisition>,
    /// Leases held, one per owner.
    holds: BTreeMap<Owner, Hold>,
    /// Lease creates of owners that gave up: the node they produce gets deleted.
    abandoned: BTreeSet<OpId>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Acquisition {
    stage: Stage,
    timeout: Option<TimerId>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Stage {
    /// Waiting for the internal lock.
    Locking,
    /// Holding the internal lock, creating the lease node.
    Creating(OpId),
    /// Listing the leases (and leaving a child watch).
    Listing { node: Path, token: Token, op: OpId },
    /// Too many leases: waiting for the child watch.
    Watching { node: Path, token: Token },
}

impl SemaphoreMutex {
    /// A semaphore mutex on `path` (internal lock at `<path>/locks`, leases at `<path>/leases`).
    pub fn new(path: Path) -> SemaphoreMutex {
        let child = |name| path.child(name).expect("a valid constant name");
        SemaphoreMutex {
            lock: Mutex::new(child("locks")),
            leases: child("leases"),
            path,
            pending: BTreeMap::new(),
            holds: BTreeMap::new(),
            abandoned: BTreeSet::new(),
        }
    }

    /// The semaphore path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The internal lock's path, `<path>/locks`.
    pub fn internal_lock(&self) -> &Path {
        self.lock.path()
    }

    /// The directory of the lease nodes, `<path>/leases`.
    pub fn leases(&self) -> &Path {
        &self.leases
    }

    /// The token of `owner`'s lease.
    pub fn holding(&self, owner: Owner) -> Option<Token> {
        self.holds.get(&owner).map(|hold| hold.token)
    }

    fn acquire(&mut self, owner: Owner, timeout: Option<Duration>, cx: &mut Ctx<'_, Notice>) {
        if self.pending.contains_key(&owner) {
            return cx.notify(Notice::Failed {
                owner,
                reason: FailReason::AlreadyAcquiring,
            });
        }
        let timeout = timeout.map(|after| cx.set_timer(after));
        self.pending.insert(
            owner,
            Acquisition {
                stage: Stage::Locking,
                timeout,
            },
        );
        let acquire = Call::Acquire {
            mode: Mode::Exclusive,
            owner,
            timeout: None,
        };
        self.with_lock(cx, |lock, cx| lock.handle(Input::Call(acquire), cx));
    }

    fn release(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        let Some(hold) = self.holds.get_mut(&owner) else {
            return cx.notify(Notice::Failed {
                owner,
                reason: FailReason::NotHeld,
            });
        };
        if !release_hold(owner, hold, cx) {
            self.holds.remove(&owner);
        }
    }

    /// Runs `f` on the internal lock, then acts on the notices it gave (they are about the
    /// internal lock, never for the user).
    fn with_lock(
        &mut self,
        cx: &mut Ctx<'_, Notice>,
        f: impl FnOnce(&mut Mutex, &mut Ctx<'_, Notice>),
    ) {
        let mut effects = Vec::new();
        f(
            &mut self.lock,
            &mut Ctx {
                framework: &mut *cx.framework,
                out: &mut effects,
            },
        );
        let mut notices = Vec::new();
        for effect in effects {
            match effect {
                Effect::Notify(notice) => notices.push(notice),
                effect => cx.out.push(effect),
            }
        }
        for notice in notices {
            self.on_lock_notice(notice, cx);
        }
    }

    fn on_lock_notice(&mut self, notice: Notice, cx: &mut Ctx<'_, Notice>) {
        match notice {
            Notice::Acquired { owner, .. } => {
                if let Some(acquisition) = self.pending.get_mut(&owner) {
                    acquisition.stage = Stage::Creating(cx.create_protected(
                        &self.leases,
                        LEASE_NAME,
                        Vec::new(),
                        CreateMode::EphemeralSequential,
                    ));
                }
            }
            Notice::Failed { owner, reason } => self.fail(owner, reason, cx),
            Notice::Lost { owner } => self.fail(owner, FailReason::SessionLost, cx),
            // No timeout is given to the internal lock; its connection notices are ours too.
            Notice::TimedOut { .. }
            | Notice::Released { .. }
            | Notice::Suspended { .. }
            | Notice::Reconnected { .. } => {}
            // The internal lock is a `Mutex`: it says nothing else.
            _ => {}
        }
    }

    fn on_reply(&mut self, op: OpId, result: OpResult, cx: &mut Ctx<'_, Notice>) {
        if self.abandoned.remove(&op) {
            if let Ok(OpOk::Created { path, .. }) = result {
                cx.delete_guaranteed(path);
            }
            return;
        }
        let Some((&owner, acquisition)) =
            self.pending.iter_mut().find(|(_, a)| a.stage.waits_for(op))
        else {
            return self.with_lock(cx, |lock, cx| lock.handle(Input::Reply { op, result }, cx));
        };
        match (&mut acquisition.stage, result) {
            (Stage::Creating(_), Ok(OpOk::Created { path, stat })) => {
                let op = list(&self.leases, cx);
                acquisition.stage = Stage::Listing {
                    node: path,
                    token: stat.czxid.into(),
                    op,
                };
            }
            (Stage::Creating(pending), Err(ZkError::NoNode)) => {
                create_parents(&self.leases, cx);
                *pending = cx.create_protected(
                    &self.leases,
                    LEASE_NAME,
                    Vec::new(),
                    CreateMode::EphemeralSequential,
                );
            }
            (Stage::Listing { node, token, .. }, Ok(OpOk::Children { names })) => {
                if !names.iter().any(|name| name == node.name()) {
                    return self.fail(owner, FailReason::NodeVanished, cx);
                }
                if names.len() > 1 {
                    let (node, token) = (node.clone(), *token);
                    acquisition.stage = Stage::Watching { node, token };
                    return;
                }
                let hold = Hold {
                    node: node.clone(),
                    token: *token,
                    count: 1,
                    suspended: false,
                };
                let token = hold.token;
                if let Some(timer) = acquisition.timeout {
                    cx.cancel_timer(timer);
                }
                self.pending.remove(&owner);
                self.holds.insert(owner, hold);
                self.lock.abandon(owner, cx);
                cx.notify(Notice::Acquired {
                    owner,
                    token,
                    mode: Mode::Exclusive,
                });
            }
            (_, Err(error)) => self.fail(owner, FailReason::Zk(error), cx),
            (_, Ok(_)) => {}
        }
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Ctx<'_, Notice>) {
        if event.path == self.leases {
            for acquisition in self.pending.values_mut() {
                if let Stage::Watching { node, token } = &acquisition.stage {
                    let (node, token) = (node.clone(), *token);
                    let op = list(&self.leases, cx);
                    acquisition.stage = Stage::Listing { node, token, op };
                }
            }
        }
        self.with_lock(cx, |lock, cx| lock.handle(Input::Watch(event), cx));
    }

    fn on_timer(&mut self, timer: TimerId, cx: &mut Ctx<'_, Notice>) {
        let Some(&owner) = self
            .pending
            .iter()
            .find(|(_, a)| a.timeout == Some(timer))
            .map(|(owner, _)| owner)
        else {
            return;
        };
        self.abandon(owner, cx);
        cx.notify(Notice::TimedOut { owner });
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Ctx<'_, Notice>) {
        if matches!(event, SessionEvent::Lost { .. }) {
            // Past the internal lock, the acquisition belonged to the session that is gone.
            let leasing: Vec<Owner> = self
                .pending
                .iter()
                .filter(|(_, a)| a.stage != Stage::Locking)
                .map(|(owner, _)| *owner)
                .collect();
            for owner in leasing {
                self.fail(owner, FailReason::SessionLost, cx);
            }
        }
        self.with_lock(cx, |lock, cx| lock.handle(Input::Session(event), cx));
        let owners: Vec<Owner> = self.holds.keys().copied().collect();
        for owner in owners {
            let hold = self.holds.get_mut(&owner).expect("listed above");
            if !update_hold(owner, hold, event, cx) {
                self.holds.remove(&owner);
            }
        }
    }

    /// Ends `owner`'s acquisition with a failure notice.
    fn fail(&mut self, owner: Owner, reason: FailReason, cx: &mut Ctx<'_, Notice>) {
        if self.pending.contains_key(&owner) {
            self.abandon(owner, cx);
            cx.notify(Notice::Failed { owner, reason });
        }
    }

    /// Drops `owner`'s acquisition, making sure its internal-lock node and lease node go.
    fn abandon(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        let Some(acquisition) = self.pending.remove(&owner) else {
            return;
        };
        if let Some(timer) = acquisition.timeout {
            cx.cancel_timer(timer);
        }
        match acquisition.stage {
            Stage::Locking => {}
            Stage::Creating(op) => {
                self.abandoned.insert(op);
            }
            Stage::Listing { node, .. } | Stage::Watching { node, .. } => {
                cx.delete_guaranteed(node)
            }
        }
        self.lock.abandon(owner, cx);
    }
}

impl Stage {
    fn waits_for(&self, op: OpId) -> bool {
        match self {
            Stage::Creating(pending) | Stage::Listing { op: pending, .. } => *pending == op,
            Stage::Locking | Stage::Watching { .. } => false,
        }
    }
}

impl Recipe for SemaphoreMutex {
    type Call = Call;
    type Notice = Notice;

    fn handle(&mut self, input: Input<Call>, cx: &mut Ctx<'_, Notice>) {
        match input {
            Input::Call(Call::Acquire {
                owner,
                timeout,
                mode: Mode::Exclusive,
            }) => self.acquire(owner, timeout, cx),
            Input::Call(Call::Release {
                owner,
                mode: Mode::Exclusive,
            }) => self.release(owner, cx),
            Input::Call(other) => refuse(other, cx),
            Input::Reply { op, result } => self.on_reply(op, result, cx),
            Input::Watch(event) => self.on_watch(event, cx),
            Input::Session(event) => self.on_session(event, cx),
            Input::Timer(timer) => self.on_timer(timer, cx),
        }
    }
}

/// Lists the leases, leaving a child watch.
fn list(leases: &Path, cx: &mut Ctx<'_, Notice>) -> OpId {
    cx.submit(Request::GetChildren {
        path: leases.clone(),
        watch: true,
    })
}

impl crate::relabel::Relabel for SemaphoreMutex {
    fn relabel(&self, map: &crate::relabel::ClientMap) -> Self {
        let SemaphoreMutex {
            path,
            leases,
            lock,
            pending,
            holds,
            abandoned,
        } = self;
        let pending = pending
            .iter()
            .map(|(owner, Acquisition { stage, timeout })| {
                let stage = match stage {
                    Stage::Locking | Stage::Creating(_) => stage.clone(),
                    Stage::Listing { node, token, op } => Stage::Listing {
                        node: node.relabel(map),
                        token: *token,
                        op: *op,
                    },
                    Stage::Watching { node, token } => Stage::Watching {
                        node: node.relabel(map),
                        token: *token,
                    },
                };
                let timeout = *timeout;
                (*owner, Acquisition { stage, timeout })
            })
            .collect();
        let holds = holds
            .iter()
            .map(|(owner, hold)| (*owner, hold.relabel(map)))
            .collect();
        SemaphoreMutex {
            path: path.relabel(map),
            leases: leases.relabel(map),
            lock: lock.relabel(map),
            pending,
            holds,
            abandoned: abandoned.clone(),
        }
    }
}

#[cfg(test)]
mod tests;
