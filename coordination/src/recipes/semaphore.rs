//! `Semaphore`: Curator's InterProcessSemaphoreV2, a counting semaphore of `max_leases` leases.
//!
//! **What Curator does.** An internal InterProcessMutex at `<path>/locks` serialises lease
//! taking. Its holder creates a protected ephemeral-sequential node
//! `<path>/leases/_c_<protection-id>-lease-NNNNNNNNNN` (creating parents as needed), then lists
//! `<path>/leases` with a child watch: if its own node is missing it starts over (under the
//! retry policy), if there are at most `maxLeases` children it holds a lease, otherwise it
//! waits for the child watch and lists again — keeping the internal lock all along, so nobody
//! else adds a lease meanwhile. Either way it then releases the internal lock. One deadline
//! bounds both waits; when it passes (or the listing fails) the lease node is closed, so no
//! lease is orphaned (CURATOR-335). Closing a lease deletes its node (guaranteed). A session
//! that dies takes its ephemeral lease nodes with it, which fires the waiter's child watch.
//! The recipe is not reentrant: the same thread acquiring again takes one more lease.
//!
//! **What we do.** The same, as a sans-IO state machine composed over our [`Mutex`] (whose
//! effects are forwarded and whose notices are about the internal lock, never for the user),
//! with these differences:
//!
//! - One lease per `Acquire { mode: Lease }` call (Curator's `acquire(qty)` takes `qty` in
//!   one call): the shared vocabulary has no quantity. An owner may hold several leases (each
//!   acquire is one more); `Release { mode: Lease }` returns the owner's **oldest** lease,
//!   and `Released { remaining }` counts the owner's leases still held. An acquire by an
//!   owner whose earlier acquire is still waiting fails with `AlreadyAcquiring` (a Curator
//!   thread blocks in `acquire`, so it cannot ask twice at once).
//! - `max_leases` is fixed at construction (no `SharedCountReader`). With 0 every acquire
//!   waits until its timeout, as Curator's does.
//! - Holders hear the framework's connection states (`Suspended`, `Reconnected`, `Lost`,
//!   once per owner whatever its number of leases), as every recipe here does; Curator's
//!   semaphore leaves that to a connection-state listener. At `Lost` the leases are kept
//!   until released, as Curator keeps them.
//! - Across `Lost` the acquire goes on as Curator's does: a wait for the internal lock as the
//!   internal `Mutex`'s waiters do, a create in flight in the new session (protection mode
//!   sorts it out), and a lease wait lists again on the new session with the lease node it
//!   has (its watch went with the old session), holding through that node when it is listed
//!   among few enough. A lease node missing from a listing (its session expired on the
//!   server) is Curator's `RETRY_DUE_TO_MISSING_NODE`: the lease is returned, the internal
//!   lock released and the acquire starts over from the internal lock, while the retry
//!   policy allows (as Curator's and our `Mutex`'s lock loop); then the acquire fails with
//!   `Zk(NoNode)`.
//! - Under `on_lost = release` a lease wait past the internal lock fails at `Lost` with
//!   `SessionLost` (a failed listing with `Zk(error)`), a missing lease node with
//!   `NodeVanished`, and held leases end at `Lost` with a guaranteed delete of their nodes.
//!
//! Three consequences of Curator's lease loop that the checks find (see the book's findings). A lease
//! wait that holds through its old session's node overlaps the next holder once the server
//! expires that session, both clients' current sessions alive (as the mutex's lock loop
//! does). The listing that finds the lease node missing leaves its child watch behind, and a
//! later change of the leases wakes the client while it queues for the internal lock: a
//! wasted wake-up (`herd_free`). And the internal lock does not keep the lease takers to one
//! at a time across a session expiry: a client past it whose session expires re-creates its
//! lease node on its new session while the server, having deleted its internal-lock node,
//! lets the next client in; with more lease nodes than leases, all of them waiters', every
//! waiter waits for a change nobody makes — a deadlock without acquire timeouts (`check
//! semaphore --max-leases 1`: 25 steps).
//!
//! The fencing token of a lease is its node's czxid. Only the internal lock's holder watches
//! the leases, so a returned lease wakes at most one waiter. [`SemaphoreMutex`] is this
//! recipe with one lease, serving the `Exclusive` mode instead of `Lease`.
//!
//! [`SemaphoreMutex`]: super::SemaphoreMutex

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::kit::{
    Acquisition, OverMutex, Standing, answer_abandoned, cancel_timeout, create_sequential, failed,
    list, timed_out, update_holds,
};
use super::{Call, Cx, Event, FailReason, Lock, Mode, Mutex, Notice};
use crate::fencing::Token;
use crate::framework::OnLost;
use crate::ids::{OpId, Owner, TimerId};
use crate::recipe::{Ctx, Input, SessionEvent};
use crate::relabel::Relabel;
use crate::zk::{OpOk, OpResult, Path, WatchedEvent, ZkError};

/// The lease-node name (Curator's `lease-`).
pub const LEASE_NAME: &str = "lease-";

/// The InterProcessSemaphoreV2 recipe for one semaphore path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct Semaphore {
    path: Path,
    leases: Path,
    /// Leases out at once, at most.
    max_leases: u32,
    /// The mode the calls name and the notices carry (`Lease`; `Exclusive` for the mutex).
    mode: Mode,
    /// The internal lock at `<path>/locks`; its owners are the owners in `Locking` or later.
    lock: Mutex,
    /// Acquisitions under way, one per owner.
    pending: BTreeMap<Owner, Acquisition<Stage>>,
    /// Leases held, per owner.
    holds: BTreeMap<Owner, Leases>,
    /// Lease creates of owners that gave up: the node they produce gets deleted.
    abandoned: BTreeSet<OpId>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
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

/// One owner's leases, oldest first.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
struct Leases {
    held: Vec<Lease>,
    standing: Standing,
}

/// One lease: its node and the node's czxid.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
struct Lease {
    node: Path,
    token: Token,
}

impl Semaphore {
    /// A semaphore of `max_leases` leases on `path` (internal lock at `<path>/locks`, leases
    /// at `<path>/leases`).
    pub fn new(path: Path, max_leases: u32) -> Semaphore {
        Semaphore::serving(path, max_leases, Mode::Lease)
    }

    /// A semaphore whose calls and notices are in `mode`.
    pub(super) fn serving(path: Path, max_leases: u32, mode: Mode) -> Semaphore {
        let child = |name| path.child(name).expect("a valid constant name");
        Semaphore {
            lock: Mutex::new(child("locks")),
            leases: child("leases"),
            path,
            max_leases,
            mode,
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

    /// How many leases may be out at once.
    pub fn max_leases(&self) -> u32 {
        self.max_leases
    }

    /// The token of `owner`'s oldest lease (the one its next release returns).
    pub fn holding(&self, owner: Owner) -> Option<Token> {
        self.tokens(owner).next()
    }

    /// The tokens of `owner`'s leases, oldest first.
    pub fn tokens(&self, owner: Owner) -> impl Iterator<Item = Token> + '_ {
        self.holds
            .get(&owner)
            .into_iter()
            .flat_map(|leases| leases.held.iter().map(|lease| lease.token))
    }

    fn on_reply(&mut self, op: OpId, result: OpResult, cx: &mut Ctx<'_, Notice>) {
        if answer_abandoned(&mut self.abandoned, op, &result, cx) {
            return;
        }
        let Some((&owner, acquisition)) =
            self.pending.iter_mut().find(|(_, a)| a.stage.waits_for(op))
        else {
            return self.to_lock(Input::Reply { op, result }, cx);
        };
        match (&mut acquisition.stage, result) {
            (Stage::Creating(_), Ok(OpOk::Created { path, stat })) => {
                let op = list(&self.leases, true, cx);
                acquisition.stage = Stage::Listing {
                    node: path,
                    token: stat.czxid.into(),
                    op,
                };
            }
            // The leases path vanished again after the create made it: start over.
            (Stage::Creating(pending), Err(ZkError::NoNode)) => {
                *pending = create_sequential(&self.leases, LEASE_NAME, cx);
            }
            (Stage::Listing { node, token, .. }, Ok(OpOk::Children { names, .. })) => {
                if !names.iter().any(|name| name == node.name()) {
                    return self.lease_vanished(owner, cx);
                }
                let lease = Lease {
                    node: node.clone(),
                    token: *token,
                };
                if names.len() > self.max_leases as usize {
                    let Lease { node, token } = lease;
                    acquisition.stage = Stage::Watching { node, token };
                    return;
                }
                self.grant(owner, lease, cx);
            }
            (_, Err(error)) => self.fail(owner, FailReason::Zk(error), cx),
            (_, Ok(_)) => {}
        }
    }

    /// `owner`'s acquisition ends with `lease` held; the internal lock goes.
    fn grant(&mut self, owner: Owner, lease: Lease, cx: &mut Ctx<'_, Notice>) {
        let acquisition = self.pending.remove(&owner).expect("a pending acquisition");
        cancel_timeout(acquisition.timeout, cx);
        let token = lease.token;
        self.holds
            .entry(owner)
            .or_insert_with(|| Leases {
                held: Vec::new(),
                standing: Standing::Held,
            })
            .held
            .push(lease);
        self.lock.abandon(owner, cx);
        cx.notify(Notice::Acquired {
            owner,
            token,
            mode: self.mode,
        });
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Ctx<'_, Notice>) {
        if event.path == self.leases {
            for acquisition in self.pending.values_mut() {
                if let Stage::Watching { node, token } = &acquisition.stage {
                    let (node, token) = (node.clone(), *token);
                    let op = list(&self.leases, true, cx);
                    acquisition.stage = Stage::Listing { node, token, op };
                }
            }
        }
        self.to_lock(Input::Watch(event), cx);
    }

    fn on_timer(&mut self, timer: TimerId, cx: &mut Ctx<'_, Notice>) {
        if let Some(owner) = timed_out(&self.pending, timer, |a| a.timeout) {
            self.abandon(owner, cx);
            cx.notify(Notice::TimedOut { owner });
        }
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Ctx<'_, Notice>) {
        let lost = matches!(event, SessionEvent::Lost { .. });
        if lost && cx.on_lost() == OnLost::Release {
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
        } else {
            // Curator's lease loop ignores connection state, but waits on a watcher that
            // ZooKeeper's client hands every connection-state change too: a waiter in its
            // `wait()` lists again at SUSPENDED, RECONNECTED and LOST. At LOST a listing in
            // flight is retried on the new session as well, with the lease node it has (its
            // watch went with the old session). A create in flight carries on: protection mode
            // sorts it out.
            for acquisition in self.pending.values_mut() {
                let relists = lost || matches!(acquisition.stage, Stage::Watching { .. });
                if let Some((node, token)) = acquisition.stage.lease().filter(|_| relists) {
                    let op = list(&self.leases, true, cx);
                    acquisition.stage = Stage::Listing { node, token, op };
                }
            }
        }
        self.to_lock(Input::Session(event), cx);
        self.holds.retain(|&owner, leases| {
            let nodes = leases.held.iter().map(|lease| &lease.node);
            update_holds(owner, &mut leases.standing, nodes, event, cx)
        });
    }

    /// `owner`'s lease node is gone (its session expired on the server): Curator's
    /// `RETRY_DUE_TO_MISSING_NODE` returns the lease, releases the internal lock and takes the
    /// whole acquire again while the retry policy allows (`allowRetry(retryCount++)`, its
    /// sleep not taken), and then fails it with `NoNode`; under [`OnLost::Release`] the
    /// acquire fails with `NodeVanished`.
    fn lease_vanished(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        if cx.on_lost() == OnLost::Release {
            return self.fail(owner, FailReason::NodeVanished, cx);
        }
        let acquisition = self.pending.get_mut(&owner).expect("a pending acquisition");
        if !cx.retry_policy().allows(acquisition.start_overs) {
            return self.fail(owner, FailReason::Zk(ZkError::NoNode), cx);
        }
        acquisition.start_overs += 1;
        if let Some((node, _)) = acquisition.stage.lease() {
            cx.delete_guaranteed(node);
        }
        acquisition.stage = Stage::Locking;
        self.lock.abandon(owner, cx);
        self.to_lock(Input::Call(Call::acquire(owner, None)), cx);
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
        cancel_timeout(acquisition.timeout, cx);
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

impl OverMutex for Semaphore {
    fn mutex(&mut self) -> &mut Mutex {
        &mut self.lock
    }

    fn on_lock_notice(&mut self, notice: Notice, cx: &mut Ctx<'_, Notice>) {
        match notice {
            Notice::Acquired { owner, .. } => {
                if let Some(acquisition) = self.pending.get_mut(&owner) {
                    acquisition.stage =
                        Stage::Creating(create_sequential(&self.leases, LEASE_NAME, cx));
                }
            }
            Notice::Failed { owner, reason } => self.fail(owner, reason, cx),
            // Curator's internal lock keeps its hold across LOST, the lease loop goes on.
            Notice::Lost { owner } if cx.on_lost() == OnLost::Release => {
                self.fail(owner, FailReason::SessionLost, cx)
            }
            // No timeout is given to the internal lock; its connection notices are ours too.
            Notice::TimedOut { .. }
            | Notice::Lost { .. }
            | Notice::Released { .. }
            | Notice::Suspended { .. }
            | Notice::Reconnected { .. } => {}
            // The internal lock is a `Mutex`: it says nothing else.
            _ => {}
        }
    }
}

impl Stage {
    /// The lease node and its token, once created.
    fn lease(&self) -> Option<(Path, Token)> {
        match self {
            Stage::Listing { node, token, .. } | Stage::Watching { node, token } => {
                Some((node.clone(), *token))
            }
            Stage::Locking | Stage::Creating(_) => None,
        }
    }

    fn waits_for(&self, op: OpId) -> bool {
        match self {
            Stage::Creating(pending) | Stage::Listing { op: pending, .. } => *pending == op,
            Stage::Locking | Stage::Watching { .. } => false,
        }
    }
}

impl Lock for Semaphore {
    fn serves(&self, mode: Mode) -> bool {
        mode == self.mode
    }

    fn acquire(&mut self, owner: Owner, timeout: Option<Duration>, _: Mode, cx: &mut Cx<'_>) {
        if self.pending.contains_key(&owner) {
            return failed(owner, FailReason::AlreadyAcquiring, cx);
        }
        let timeout = timeout.map(|after| cx.set_timer(after));
        (self.pending).insert(owner, Acquisition::new(Stage::Locking, timeout));
        self.to_lock(Input::Call(Call::acquire(owner, None)), cx);
    }

    /// Returns `owner`'s oldest lease.
    fn release(&mut self, owner: Owner, _: Mode, cx: &mut Cx<'_>) {
        let Some(leases) = self.holds.get_mut(&owner) else {
            return failed(owner, FailReason::NotHeld, cx);
        };
        let oldest = leases.held.remove(0);
        cx.delete_guaranteed(oldest.node);
        let remaining = u32::try_from(leases.held.len()).expect("fewer leases than u32::MAX");
        if remaining == 0 {
            self.holds.remove(&owner);
        }
        cx.notify(Notice::Released {
            owner,
            remaining,
            mode: self.mode,
        });
    }

    fn react(&mut self, event: Event, cx: &mut Cx<'_>) {
        match event {
            Input::Reply { op, result } => self.on_reply(op, result, cx),
            Input::Watch(event) => self.on_watch(event, cx),
            Input::Session(event) => self.on_session(event, cx),
            Input::Timer(timer) => self.on_timer(timer, cx),
        }
    }
}

#[cfg(test)]
pub(super) mod tests;
