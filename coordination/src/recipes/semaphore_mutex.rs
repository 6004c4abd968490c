//! `SemaphoreMutex`: Curator's InterProcessSemaphoreMutex, an InterProcessSemaphoreV2 with
//! one lease — here a [`Semaphore`] of one lease serving the `Exclusive` mode.
//!
//! An internal [`Mutex`](super::Mutex) at `<path>/locks` serialises lease taking. Its holder
//! creates a protected ephemeral-sequential lease node
//! `<path>/leases/_c_<protection-id>-lease-NNNNNNNNNN` and lists `<path>/leases` with a child
//! watch: with at most one lease there (its own) it holds the semaphore and releases the
//! internal lock; otherwise it waits for the child watch and lists again, keeping the internal
//! lock so that nobody else adds a lease meanwhile. Release deletes the lease node
//! (guaranteed). The fencing token is the lease node's czxid.
//!
//! **Not reentrant**, as Curator's: an acquire by an owner that holds already is one more
//! waiter, which waits until that owner releases (or times out, with a timeout); it never
//! gets a second hold at once. An acquire by an owner whose earlier acquire is still waiting
//! fails with `AlreadyAcquiring`. One timeout bounds both phases (internal lock and lease
//! wait); when it fires, the waiter's internal-lock node and lease node are deleted
//! (guaranteed). Leases of expired sessions go with the server's ephemeral deletion, which
//! fires the child watch of whoever waits. A waiter whose own lease node is missing from the
//! listing (its session expired on the server) fails with `NodeVanished`, as `Mutex`'s
//! waiters do, where Curator retries the whole acquire under its retry policy. The
//! [`Semaphore`] module documents the rest.

use super::{Call, Mode, Notice, Semaphore};
use crate::fencing::Token;
use crate::ids::Owner;
use crate::recipe::{Ctx, Input, Recipe};
use crate::relabel::Relabel;
use crate::zk::Path;

/// The InterProcessSemaphoreMutex recipe for one semaphore path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct SemaphoreMutex(Semaphore);

impl SemaphoreMutex {
    /// A semaphore mutex on `path` (internal lock at `<path>/locks`, leases at `<path>/leases`).
    pub fn new(path: Path) -> SemaphoreMutex {
        SemaphoreMutex(Semaphore::serving(path, 1, Mode::Exclusive))
    }

    /// The semaphore path.
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// The internal lock's path, `<path>/locks`.
    pub fn internal_lock(&self) -> &Path {
        self.0.internal_lock()
    }

    /// The directory of the lease nodes, `<path>/leases`.
    pub fn leases(&self) -> &Path {
        self.0.leases()
    }

    /// The token of `owner`'s lease.
    pub fn holding(&self, owner: Owner) -> Option<Token> {
        self.0.holding(owner)
    }
}

impl Recipe for SemaphoreMutex {
    type Call = Call;
    type Notice = Notice;

    fn handle(&mut self, input: Input<Call>, cx: &mut Ctx<'_, Notice>) {
        self.0.handle(input, cx);
    }
}

#[cfg(test)]
mod tests;
