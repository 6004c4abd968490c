//! The recipes the model checks, each with its kebab-case name and the verdicts it is
//! expected to get.

use lock::recipes::{Mutex, NaiveHerdMutex, SemaphoreMutex};
use lock::relabel::Relabel;
use lock::zk::Path;
use scenarios::property::Expectation;
use scenarios::usage::{Built, Family};

use crate::budget::Config;
use crate::properties::Checked;

/// A recipe the model can drive: the workload makes the calls of its [`Family`]'s
/// [`Usage`](scenarios::usage::Usage) and reads the notices.
pub trait Subject: Built + Relabel + Send + Sync + 'static {
    /// The recipe's name, shared with scenario files (`mutex`, `naive-herd-mutex`).
    const NAME: &'static str = Self::KIND.name();

    /// How workloads use the recipe, which also says which properties are checked.
    const FAMILY: Family = Self::KIND.family();

    /// The directories below `path` the recipe keeps its nodes in. The model's initial tree
    /// has them (as containers), as it has the lock path: creating them is the same for every
    /// recipe, and letting each client find them missing multiplies the states (16 times for
    /// `semaphore-mutex` with 3 clients). The simulator and the unit tests start without them.
    fn directories(_path: &Path) -> Vec<Path> {
        Vec::new()
    }

    /// The verdict `property` is expected to get under `config`.
    fn expectation(property: Checked, config: &Config) -> Expectation;
}

/// What every exclusive lock (and election) shares: beliefs overlap (and an unfenced resource
/// loses an update) once a paused holder's session can expire; orphans never stay; someone
/// acquires (leads).
fn exclusive_lock(property: Checked, config: &Config) -> Expectation {
    let budgets = &config.budgets;
    let overlap = config.clients >= 2 && budgets.expiries >= 1 && budgets.cycles >= 1;
    match property {
        Checked::MutualExclusionBelief | Checked::LeaderUniqueBelief => violated_if(overlap),
        Checked::MutualExclusionFenced | Checked::LeaderUniqueFenced => {
            violated_if(overlap && !config.fenced)
        }
        Checked::SomeoneAcquires => violated_if(config.clients == 0 || budgets.cycles == 0),
        _ => Expectation::Holds,
    }
}

impl Subject for Mutex {
    fn expectation(property: Checked, config: &Config) -> Expectation {
        exclusive_lock(property, config)
    }
}

impl Subject for NaiveHerdMutex {
    /// As any exclusive lock, but a release wakes every waiter: a herd from 3 clients on
    /// (one holds, two wait).
    fn expectation(property: Checked, config: &Config) -> Expectation {
        match property {
            Checked::HerdFree if config.clients >= 3 && config.budgets.cycles >= 1 => {
                Expectation::Violated
            }
            _ => exclusive_lock(property, config),
        }
    }
}

impl Subject for SemaphoreMutex {
    fn directories(path: &Path) -> Vec<Path> {
        let recipe = SemaphoreMutex::new(path.clone());
        vec![recipe.internal_lock().clone(), recipe.leases().clone()]
    }

    /// As any exclusive lock: only the internal lock's holder watches the leases, so a
    /// release wakes at most one waiter.
    fn expectation(property: Checked, config: &Config) -> Expectation {
        exclusive_lock(property, config)
    }
}

impl Subject for lock::recipes::Semaphore {
    fn directories(path: &Path) -> Vec<Path> {
        let recipe = lock::recipes::Semaphore::new(path.clone(), 1);
        vec![recipe.internal_lock().clone(), recipe.leases().clone()]
    }

    /// More clients believe they hold a lease than there are leases once a paused holder's
    /// session can expire (its lease is freed while it still believes) and someone waits for
    /// that lease; only the internal lock's holder watches the leases, so a return wakes at
    /// most one waiter; with no lease at all nobody acquires.
    fn expectation(property: Checked, config: &Config) -> Expectation {
        let budgets = &config.budgets;
        let max = config.settings.max_leases;
        let acquires = config.clients >= 1 && budgets.cycles >= 1 && max >= 1;
        match property {
            Checked::LeaseBound => {
                violated_if(acquires && budgets.expiries >= 1 && u32::from(config.clients) > max)
            }
            Checked::SomeoneAcquires => violated_if(!acquires),
            _ => Expectation::Holds,
        }
    }
}

impl Subject for lock::recipes::MultiLock {
    fn directories(path: &Path) -> Vec<Path> {
        lock::recipes::MultiLock::pair(path)
            .paths()
            .cloned()
            .collect()
    }

    /// As any exclusive lock: every holder holds the first lock throughout, so the multi-lock
    /// overlaps exactly when its first lock does; waiters queue on the first lock, each
    /// watching its predecessor, so a release wakes at most one.
    fn expectation(property: Checked, config: &Config) -> Expectation {
        exclusive_lock(property, config)
    }
}

impl Subject for lock::recipes::LeaderLatch {
    /// As an exclusive lock: a paused leader whose session expires still believes it leads
    /// when the next participant does; each participant watches only the node ahead.
    fn expectation(property: Checked, config: &Config) -> Expectation {
        exclusive_lock(property, config)
    }
}

impl Subject for lock::recipes::LeaderSelector {
    /// Without auto-requeue: the workload requeues after each leadership.
    /// As an exclusive lock (it is one, its internal mutex): a paused leader whose session
    /// expires still believes it leads when the next participant does (it cancels only once
    /// it hears Suspended or Lost); each waiter watches only the node ahead.
    fn expectation(property: Checked, config: &Config) -> Expectation {
        exclusive_lock(property, config)
    }
}

/// `Violated` when `violated`, else `Holds`.
fn violated_if(violated: bool) -> Expectation {
    if violated {
        Expectation::Violated
    } else {
        Expectation::Holds
    }
}

impl Subject for lock::recipes::ReadWriteLock {
    /// A writer and another holder believe at once once a paused holder's session can expire
    /// (a writer's successor reads, or a reader's successor writes). Only writers use the
    /// resource, so an unfenced one loses an update only with two writers. A writer's release
    /// wakes every reader queued right behind it, and they all then read: no herd by DESIGN's
    /// rule (woken ≤ max(1, those that then acquire)). A herd needs readers woken by a
    /// queued writer's expiry while another writer is still ahead of them: two writers, two
    /// readers and an expiry (4 clients): `check read-write-lock --clients 4 --writers 2`
    /// finds it in 29 steps (its full space is larger than 7.6 M states), as the simulator
    /// does (`read-write-lock-session-expiry`).
    fn expectation(property: Checked, config: &Config) -> Expectation {
        let budgets = &config.budgets;
        let writers = config.settings.writers.min(config.clients);
        let readers = config.clients - writers;
        let overlap =
            writers >= 1 && config.clients >= 2 && budgets.expiries >= 1 && budgets.cycles >= 1;
        match property {
            Checked::RwExclusion => violated_if(overlap),
            Checked::MutualExclusionFenced => {
                violated_if(overlap && writers >= 2 && !config.fenced)
            }
            // With timeouts, one of two readers woken together by a writer's deletion may
            // give up before it acts: a wasted wake-up, a herd by the shared rule ("a timeout
            // is no fault", `scenarios::check::counts_as_acquired`); checked with 3 clients.
            // A queued writer's timeout wakes readers as its expiry does (4 clients, reasoned).
            Checked::HerdFree => violated_if(
                readers >= 2
                    && budgets.cycles >= 1
                    && ((writers >= 2 && budgets.expiries >= 1)
                        || (writers >= 1 && config.timeouts)),
            ),
            _ => exclusive_lock(property, config),
        }
    }
}
