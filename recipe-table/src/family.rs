//! How a workload uses its recipe, the same in the simulator and the model: each cycle asks
//! for a hold with one call, uses it, and gives it back with another. Recipes fall into a few
//! families by how they are used; a recipe names its family, and its family says which calls a
//! cycle makes, whether the hold writes the fenced resource, and which properties apply.

use coordination::ids::{ClientSlot, Owner};
use coordination::recipes::{Call, Mode, TimeoutScope};
use serde::{Deserialize, Serialize};

use crate::property::Property;

/// The families of recipes, by how a workload uses them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// An exclusive lock: acquire, read and write the resource, release.
    Lock,
    /// A read-write lock: clients below `writers` take the write side and use the resource,
    /// the others read-lock and leave it alone (only writers are fenced).
    ReadWrite,
    /// A counting semaphore: acquire a lease, hold it, return it; up to `max_leases` holders
    /// at once, so none of them writes the single-writer resource.
    Semaphore,
    /// A leader latch: start, lead (using the resource), close; start again next cycle.
    Latch,
    /// A leader selector: queue (start, then requeue), lead (using the resource), relinquish.
    Selector,
}

/// Settings some recipes take; the others ignore them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecipeSettings {
    /// `semaphore`: how many leases may be out at once.
    pub max_leases: u32,
    /// `read-write-lock`: clients `0..writers` take the write side, the others read.
    pub writers: u16,
    /// `mutex`: revocation (Curator's `makeRevocable` and `Revoker.attemptRevoke`). Before
    /// each acquire a client makes its lock revocable and asks the current holder to release;
    /// a holder asked cuts its hold short (it still writes, then releases).
    pub revocable: bool,
    /// `leader-latch`: Curator's canonical use of a latch, `start(); if (await(t)) { await();
    /// work; if (hasLeadership()) write; } close()`. Each cycle calls `Await` after `Start`
    /// (with the workload's acquire timeout; a `false` answer closes the latch) and, once
    /// `Await` answers `true` after the recipe said `IsLeader`, `Await` again without a
    /// timeout, as a work loop does before each unit of work (a leader's is answered at
    /// once); its `true` begins the hold. When the hold ends it asks `HasLeadership` and writes
    /// only if the answer is `true`. A latch whose `Await` or `HasLeadership` answers wrongly
    /// or not at all leaves its client waiting for ever.
    pub awaits: bool,
    /// `multi-lock`: what an acquire's timeout bounds — `each-lock` (Curator's: every lock's
    /// acquire gets the whole timeout in turn) or `whole` (one timer for the whole acquire).
    #[serde(skip_serializing_if = "is_default_scope")]
    pub timeout_scope: TimeoutScope,
}

impl Default for RecipeSettings {
    fn default() -> RecipeSettings {
        RecipeSettings {
            max_leases: 2,
            writers: 1,
            revocable: false,
            awaits: false,
            timeout_scope: TimeoutScope::EachLock,
        }
    }
}

fn is_default_scope(scope: &TimeoutScope) -> bool {
    *scope == TimeoutScope::default()
}

impl RecipeSettings {
    /// True when `settings` are the defaults (scenario files leave them out).
    pub fn is_default(settings: &RecipeSettings) -> bool {
        *settings == RecipeSettings::default()
    }
}

/// One client's use of its recipe in one cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Usage {
    /// The call that asks for a hold; answered by a notice that is
    /// [`granted`](coordination::recipes::Notice::granted) or [`refused`](coordination::recipes::Notice::refused).
    pub begin: Call,
    /// The call that gives the hold back; answered by a notice that
    /// [`answers_end`](coordination::recipes::Notice::answers_end).
    pub end: Call,
    /// Whether the holder reads and writes the fenced resource.
    pub writes: bool,
    /// Whether the hold is taken at `Await`'s `true` and confirmed by `HasLeadership` before
    /// the write ([`RecipeSettings::awaits`]).
    pub awaits: bool,
}

impl Family {
    /// What `owner` on `slot` does in its `cycle`-th cycle (from 0); an acquire waits at most
    /// `timeout`.
    pub fn usage(
        self,
        owner: Owner,
        slot: ClientSlot,
        cycle: u32,
        timeout: Option<std::time::Duration>,
        settings: &RecipeSettings,
    ) -> Usage {
        let lock = |mode| Usage {
            begin: Call::Acquire {
                owner,
                timeout,
                mode,
            },
            end: Call::Release { owner, mode },
            writes: matches!(mode, Mode::Exclusive | Mode::Write),
            awaits: false,
        };
        match self {
            Family::Lock => lock(Mode::Exclusive),
            Family::ReadWrite if slot.0 < settings.writers => lock(Mode::Write),
            Family::ReadWrite => lock(Mode::Read),
            Family::Semaphore => lock(Mode::Lease),
            Family::Latch => Usage {
                begin: Call::Start { owner },
                end: Call::Close {
                    owner,
                    notify: false,
                },
                writes: true,
                awaits: settings.awaits,
            },
            Family::Selector => Usage {
                begin: if cycle == 0 {
                    Call::Start { owner }
                } else {
                    Call::Requeue { owner }
                },
                end: Call::Relinquish { owner },
                writes: true,
                awaits: false,
            },
        }
    }

    /// The properties a trace of a recipe of this family can be checked for.
    pub fn properties(self) -> &'static [Property] {
        match self {
            Family::Lock => &[
                Property::MutualExclusionBelief,
                Property::LiveSessionExclusion,
                Property::MutualExclusionFenced,
                Property::HerdFree,
                Property::Progress,
                Property::Answered,
                Property::AnsweredByDeadline,
                Property::RevocationAnswered,
                Property::NoOrphans,
                Property::NoTimeTravel,
            ],
            Family::ReadWrite => &[
                Property::RwExclusion,
                Property::LiveSessionExclusion,
                Property::MutualExclusionFenced,
                Property::HerdFree,
                Property::Progress,
                Property::Answered,
                Property::AnsweredByDeadline,
                Property::NoOrphans,
                Property::NoTimeTravel,
            ],
            Family::Semaphore => &[
                Property::LeaseBound,
                Property::HerdFree,
                Property::Progress,
                Property::Answered,
                Property::AnsweredByDeadline,
                Property::NoOrphans,
                Property::NoTimeTravel,
            ],
            Family::Latch | Family::Selector => &[
                Property::LeaderUniqueBelief,
                Property::LiveSessionExclusion,
                Property::LeaderUniqueFenced,
                Property::HerdFree,
                Property::Progress,
                Property::Answered,
                Property::NoOrphans,
                Property::NoTimeTravel,
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_write_clients_below_writers_write_and_only_they_use_the_resource() {
        let settings = RecipeSettings {
            writers: 2,
            ..RecipeSettings::default()
        };
        let usage = |slot| Family::ReadWrite.usage(Owner(0), ClientSlot(slot), 0, None, &settings);
        assert!(matches!(
            usage(1).begin,
            Call::Acquire {
                mode: Mode::Write,
                ..
            }
        ));
        assert!(usage(1).writes);
        assert!(matches!(
            usage(2).end,
            Call::Release {
                mode: Mode::Read,
                ..
            }
        ));
        assert!(!usage(2).writes);
    }

    #[test]
    fn a_selector_starts_once_then_requeues() {
        let settings = RecipeSettings::default();
        let usage = |cycle| Family::Selector.usage(Owner(0), ClientSlot(0), cycle, None, &settings);
        assert!(matches!(usage(0).begin, Call::Start { .. }));
        assert!(matches!(usage(1).begin, Call::Requeue { .. }));
        assert!(matches!(usage(1).end, Call::Relinquish { .. }));
    }
}
