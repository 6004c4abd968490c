//! `ReadWriteLock`: Curator's InterProcessReadWriteLock.
//!
//! **What Curator does.** Two InterProcessMutexes on one lock path: the write lock's nodes
//! are named `__WRIT__`, the read lock's `__READ__`, both protected and ephemeral-sequential,
//! and both sorted together by their sequence number (not by name). A writer holds when its
//! node is first of all and otherwise watches its predecessor, of either kind. A reader holds
//! when no write node is ahead of its own (readers share), and otherwise watches the *first*
//! write node ahead. So a reader queued behind a writer waits for it: writers do not starve.
//! Both locks are reentrant per thread. A thread that holds the write lock gets the read lock
//! without waiting (downgrade: since CURATOR-621, Curator 5.5, its read node is a plain
//! ephemeral named with the write node's sequence number, so that it sorts beside the write
//! node rather than behind writers queued meanwhile, who would otherwise take the write lock
//! while the downgraded reader still reads). A thread that holds only the read lock and asks
//! for the write lock waits for its own read node forever (no upgrade).
//!
//! **What we do.** The same, on one queue served by two [`Mutex`]es on the lock path, one per
//! side, composed as [`SemaphoreMutex`](super::SemaphoreMutex) composes its internal lock:
//! the sides differ only in their node name and in whom a waiter waits for (see
//! `recipes/queue.rs`). One instance serves both sides: `Acquire`/`Release` with mode `Read`
//! or `Write`; other modes and calls fail with `Unsupported`. Where we differ, and why:
//!
//! - **A reader watches the nearest write node ahead**, not the first. With W1, W2, R3 and R4
//!   queued, Curator's R3 and R4 watch W1, so W1's release wakes W2, R3 and R4 while only W2
//!   can then acquire: a herd by the rule "woken waiters ≤ max(1, the number that can then
//!   acquire)". Watching W2, they wake when W2 goes, and then both read. A reader cannot hold
//!   before its nearest write node ahead has gone, so it waits no longer for watching it. The
//!   price: a writer that gives up while waiting (timeout, lost session) wakes the readers
//!   right behind it, who list again and watch the next write node ahead; with Curator's
//!   choice those readers sleep through that, but wake at every release of a first writer,
//!   which is far more common.
//! - **A downgrade needs no node.** The read hold of an owner that holds the write lock is
//!   granted at once and rides on the owner's write node (its token is that node's czxid):
//!   the node stays until the owner's last write hold *and* last read hold are released.
//!   This is safe for the same reason as Curator's fix, without a create, a listing or a
//!   window between them; the cost is that readers queued between the write node and the
//!   next writer wait until the downgraded read hold is released too (Curator lets them in
//!   at the write release). Real Curator clients on the same path see a write node and wait.
//! - **No upgrade, and no silent deadlock.** A write acquire by an owner that holds the read
//!   lock and not the write lock fails at once with [`FailReason::UpgradeWouldDeadlock`]
//!   and creates nothing; Curator's would block until its timeout, or forever. The rule
//!   holds for a downgraded read hold too, after its write holds are released (our write node
//!   would let it through, but a rule that does not depend on how the read hold was taken is
//!   easier to rely on).
//! - **One acquire at a time per owner**, across both sides: an acquire while another of the
//!   owner's acquires waits fails with `AlreadyAcquiring` (a Curator thread blocks in its
//!   acquire). A second owner on one instance queues with its own nodes.
//!
//! As `Mutex` otherwise: timeouts delete the waiter's node; a waiter whose node vanished (its
//! session expired on the server) fails with `NodeVanished`, one whose session was lost with
//! `SessionLost`; `Suspended`, `Reconnected` and `Lost` go once to each owner that holds
//! (one notice even while it holds the write lock and a downgraded read hold). Tokens are the
//! czxid of the owner's node; only writers are fenced.

use std::collections::BTreeMap;
use std::time::Duration;

use super::kit::failed;
use super::queue::Queue;
use super::{Call, Cx, Event, FailReason, Lock, Mode, Mutex, Notice};
use crate::fencing::Token;
use crate::ids::Owner;
use crate::recipe::{Ctx, Input};
use crate::relabel::Relabel;
use crate::zk::Path;

/// The read nodes' name (Curator's `__READ__`).
pub const READ_NAME: &str = "__READ__";
/// The write nodes' name (Curator's `__WRIT__`, as long as the read name).
pub const WRITE_NAME: &str = "__WRIT__";

/// The InterProcessReadWriteLock recipe for one lock path: both sides.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct ReadWriteLock {
    /// The read side: `__READ__` nodes.
    read: Mutex,
    /// The write side: `__WRIT__` nodes; a write hold's count includes its downgrades.
    write: Mutex,
    /// Read holds of owners that held the write lock when they took them (downgrades), by
    /// owner: they ride on the owner's write node.
    #[relabel(skip)]
    downgrades: BTreeMap<Owner, u32>,
}

impl ReadWriteLock {
    /// A read-write lock on the lock path `path`.
    pub fn new(path: Path) -> ReadWriteLock {
        ReadWriteLock::with_readers(path, Queue::Read)
    }

    /// A read-write lock whose readers watch the *first* write node ahead, as Curator's do:
    /// safe, but a known herd (see the module doc). Kept to prove the herd checker.
    pub fn watching_first_writer(path: Path) -> ReadWriteLock {
        ReadWriteLock::with_readers(path, Queue::ReadWatchingFirstWriter)
    }

    fn with_readers(path: Path, readers: Queue) -> ReadWriteLock {
        ReadWriteLock {
            read: Mutex::with_queue(path.clone(), readers),
            write: Mutex::with_queue(path, Queue::Write),
            downgrades: BTreeMap::new(),
        }
    }

    /// The lock path.
    pub fn path(&self) -> &Path {
        self.write.path()
    }

    /// The token of `owner`'s `mode` hold (`Read` or `Write`).
    pub fn holding(&self, owner: Owner, mode: Mode) -> Option<Token> {
        match mode {
            Mode::Write if self.writes(owner) > 0 => self.write.holding(owner),
            Mode::Read if self.downgraded(owner) > 0 => self.write.holding(owner),
            Mode::Read => self.read.holding(owner),
            _ => None,
        }
    }

    fn downgraded(&self, owner: Owner) -> u32 {
        self.downgrades.get(&owner).copied().unwrap_or(0)
    }

    /// `owner`'s write holds (its write-side holds less its downgrades).
    fn writes(&self, owner: Owner) -> u32 {
        self.write.holds(owner) - self.downgraded(owner)
    }

    /// `owner`'s read holds, on its own read node or downgraded.
    fn reads(&self, owner: Owner) -> u32 {
        self.read.holds(owner) + self.downgraded(owner)
    }

    /// Hands `input` to the `side` (`Read` or `Write`) lock and tells the user what it says,
    /// as notices about a `mode` hold.
    fn on_side(&mut self, side: Mode, mode: Mode, input: Input<Call>, cx: &mut Ctx<'_, Notice>) {
        let lock = match side {
            Mode::Write => &mut self.write,
            _ => &mut self.read,
        };
        for notice in cx.run_inner(lock, input) {
            let notice = match notice {
                Notice::Acquired { owner, token, .. } => Notice::Acquired { owner, token, mode },
                Notice::Released { owner, .. } => Notice::Released {
                    owner,
                    remaining: match mode {
                        Mode::Write => self.writes(owner),
                        _ => self.reads(owner),
                    },
                    mode,
                },
                Notice::Lost { owner } => {
                    self.downgrades.remove(&owner);
                    notice
                }
                notice => notice,
            };
            cx.notify(notice);
        }
    }
}

impl Lock for ReadWriteLock {
    fn serves(&self, mode: Mode) -> bool {
        matches!(mode, Mode::Read | Mode::Write)
    }

    fn acquire(&mut self, owner: Owner, timeout: Option<Duration>, mode: Mode, cx: &mut Cx<'_>) {
        let refusal = if mode == Mode::Write && self.reads(owner) > 0 && self.writes(owner) == 0 {
            Some(FailReason::UpgradeWouldDeadlock)
        } else if self.read.acquiring(owner) || self.write.acquiring(owner) {
            Some(FailReason::AlreadyAcquiring)
        } else {
            None
        };
        if let Some(reason) = refusal {
            return cx.notify(Notice::Failed { owner, reason });
        }
        let call = Input::Call(Call::Acquire {
            owner,
            timeout,
            mode: Mode::Exclusive,
        });
        // A write holder's read hold: one more hold of its write node, granted at once.
        let side = if mode == Mode::Read && self.write.holds(owner) > 0 {
            *self.downgrades.entry(owner).or_default() += 1;
            Mode::Write
        } else {
            mode
        };
        self.on_side(side, mode, call, cx);
    }

    fn release(&mut self, owner: Owner, mode: Mode, cx: &mut Cx<'_>) {
        let side = match mode {
            Mode::Write if self.writes(owner) == 0 => {
                return failed(owner, FailReason::NotHeld, cx);
            }
            Mode::Read if self.downgraded(owner) > 0 => {
                let left = self.downgraded(owner) - 1;
                if left == 0 {
                    self.downgrades.remove(&owner);
                } else {
                    self.downgrades.insert(owner, left);
                }
                Mode::Write
            }
            _ => mode,
        };
        let call = Input::Call(Call::Release {
            owner,
            mode: Mode::Exclusive,
        });
        self.on_side(side, mode, call, cx);
    }

    /// Replies, watches, session changes and timers: each side acts on its own.
    fn react(&mut self, event: Event, cx: &mut Cx<'_>) {
        let input = event.widen();
        self.on_side(Mode::Read, Mode::Read, input.clone(), cx);
        self.on_side(Mode::Write, Mode::Write, input, cx);
    }
}

#[cfg(test)]
mod tests;
