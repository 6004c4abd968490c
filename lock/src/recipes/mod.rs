//! Lock recipes and what they share: calls, notices and the bookkeeping of a hold.

mod mutex;
mod naive;
mod semaphore_mutex;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use mutex::Mutex;
pub use naive::NaiveHerdMutex;
pub use semaphore_mutex::{LEASE_NAME, SemaphoreMutex};

use crate::fencing::Token;
use crate::ids::Owner;
use crate::recipe::{Ctx, SessionEvent};
use crate::zk::{CreateMode, Path, Request, ZkError};

/// A user call on an exclusive lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum LockCall {
    /// Acquire for `owner`, giving up after `timeout` if one is given. Again while `owner`
    /// holds: `Mutex` and `NaiveHerdMutex` are reentrant per owner (one more hold at once);
    /// `SemaphoreMutex` is not (the acquire waits for the owner's own release).
    Acquire {
        /// Who acquires.
        owner: Owner,
        /// How long to wait at most.
        timeout: Option<Duration>,
    },
    /// Release one hold of `owner`.
    Release {
        /// Who releases.
        owner: Owner,
    },
}

impl LockCall {
    /// The owner the call is for.
    pub fn owner(&self) -> Owner {
        match *self {
            LockCall::Acquire { owner, .. } | LockCall::Release { owner } => owner,
        }
    }
}

/// Why an acquire or a release failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "reason", content = "error", rename_all = "snake_case")]
pub enum FailReason {
    /// The owner is already waiting for this lock.
    AlreadyAcquiring,
    /// Release by an owner that does not hold the lock.
    NotHeld,
    /// The session was lost while waiting; the waiter's node is deleted.
    SessionLost,
    /// The waiter's own node disappeared (its session expired on the server).
    NodeVanished,
    /// The server refused a request.
    Zk(ZkError),
}

/// What an exclusive lock tells its user. `Suspended`, `Reconnected` and `Lost` go to the
/// owners that hold the lock at that moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "notice", rename_all = "snake_case")]
pub enum LockNotice {
    /// `owner` holds the lock; `token` fences its accesses.
    Acquired {
        /// Who holds.
        owner: Owner,
        /// The fencing token (the lock node's czxid).
        token: Token,
    },
    /// One hold of `owner` was released; with `remaining == 0` the lock is free of it.
    Released {
        /// Who released.
        owner: Owner,
        /// Reentrant holds left.
        remaining: u32,
    },
    /// The acquire gave up after its timeout; the waiter's node is deleted.
    TimedOut {
        /// Who waited.
        owner: Owner,
    },
    /// An acquire or release failed.
    Failed {
        /// Whose call failed.
        owner: Owner,
        /// Why.
        reason: FailReason,
    },
    /// The connection dropped: the lock is no longer safely held.
    Suspended {
        /// The holder.
        owner: Owner,
    },
    /// Reconnected with the same session: the lock is held again, with the same token.
    Reconnected {
        /// The holder.
        owner: Owner,
    },
    /// The session is gone: the lock is not held any more (the node is deleted).
    Lost {
        /// The former holder.
        owner: Owner,
    },
}

/// The lock-node name both lock recipes sort by (Curator's `lock-`).
pub const LOCK_NAME: &str = "lock-";

/// One owner's hold of a lock.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Hold {
    node: Path,
    token: Token,
    count: u32,
    suspended: bool,
}

/// Applies a connection-state change to `owner`'s hold, telling the owner. Returns false
/// when the hold is over (the session is lost; its node gets a guaranteed delete).
fn update_hold(
    owner: Owner,
    hold: &mut Hold,
    event: SessionEvent,
    cx: &mut Ctx<'_, LockNotice>,
) -> bool {
    match event {
        SessionEvent::Suspended => {
            hold.suspended = true;
            cx.notify(LockNotice::Suspended { owner });
        }
        SessionEvent::Reconnected { .. } if hold.suspended => {
            hold.suspended = false;
            cx.notify(LockNotice::Reconnected { owner });
        }
        SessionEvent::Reconnected { .. } => {}
        SessionEvent::Lost { .. } => {
            cx.delete_guaranteed(hold.node.clone());
            cx.notify(LockNotice::Lost { owner });
            return false;
        }
    }
    true
}

/// Creates the lock path and its ancestors as containers (a reaped container leaves the next
/// create with NoNode); replies are dropped, NodeExists being the usual one.
fn create_parents(path: &Path, cx: &mut Ctx<'_, LockNotice>) {
    for dir in path.ancestors().into_iter().chain([path.clone()]) {
        cx.submit_detached(Request::Create {
            path: dir,
            data: Vec::new(),
            mode: CreateMode::Container,
        });
    }
}

/// Releases one hold of `owner`, deleting the node (guaranteed) on the last one. Returns true
/// while holds remain.
fn release_hold(owner: Owner, hold: &mut Hold, cx: &mut Ctx<'_, LockNotice>) -> bool {
    hold.count -= 1;
    if hold.count == 0 {
        cx.delete_guaranteed(hold.node.clone());
    }
    cx.notify(LockNotice::Released {
        owner,
        remaining: hold.count,
    });
    hold.count > 0
}

impl crate::relabel::Relabel for Hold {
    fn relabel(&self, map: &crate::relabel::ClientMap) -> Self {
        Hold {
            node: crate::relabel::Relabel::relabel(&self.node, map),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests;
