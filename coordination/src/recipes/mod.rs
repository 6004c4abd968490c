//! The recipes, their one vocabulary of calls and notices, and the parts they are made of.
//!
//! The built-ins are built of public parts, which a recipe of yours can use as they do:
//! [`kit`] (nodes, queues, holds, acquisitions, answers), [`queue`] (the queue disciplines
//! of the mutexes) and [`revocation`] (Curator's revocation, as the mutex composes it). A
//! lock implements [`Lock`] and gets [`Recipe`](crate::recipe::Recipe) with it.

pub mod kit;
mod leader_latch;
mod leader_selector;
mod lock;
mod multi_lock;
mod mutex;
mod naive;
pub mod queue;
mod read_write_lock;
pub mod revocation;
mod semaphore;
mod semaphore_mutex;
mod vocab;

pub use leader_latch::{LATCH_NAME, LeaderLatch};
pub use leader_selector::LeaderSelector;
pub use lock::{Cx, Event, Lock};
pub use multi_lock::{MultiLock, MultiLockError, TimeoutScope};
pub use mutex::Mutex;
pub use naive::NaiveHerdMutex;
pub use read_write_lock::{READ_NAME, ReadWriteLock, WRITE_NAME};
pub use revocation::REVOKE_MESSAGE;
pub use semaphore::{LEASE_NAME, Semaphore};
pub use semaphore_mutex::SemaphoreMutex;
pub use vocab::{Call, FailReason, Mode, Notice};

/// The lock-node name both lock recipes sort by (Curator's `lock-`).
pub const LOCK_NAME: &str = "lock-";

#[cfg(test)]
mod tests;
