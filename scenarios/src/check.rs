//! Trace checkers, one module per property (DESIGN "What is checked"). They read nothing but
//! a [`Trace`] and a [`Context`], so they serve simulator, model and real runs alike; each
//! returns the [`Violation`]s it found, naming the property, the instants, the clients and the
//! events involved, with one readable sentence.

mod herd_free;
mod mutual_exclusion_belief;
mod mutual_exclusion_fenced;
mod no_orphans;
mod progress;
pub mod timeline;

#[cfg(test)]
mod fixtures;

use lock::zk::Path;

use crate::property::{Property, Violation};
use crate::scenario::Scenario;
use crate::trace::{Source, Trace};

/// What a checker needs besides the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Context {
    /// The lock path: lock nodes are its children.
    pub lock_path: Path,
    /// The horizon in trace time (`t` units).
    pub horizon: u64,
    /// How long after the faults have healed, in trace time, a waiter must have been served.
    pub progress_grace: u64,
}

impl Context {
    /// The context of a run of `scenario` recorded by `source` (simulated and real traces
    /// count nanoseconds; model traces count steps, so time bounds do not apply).
    pub fn for_scenario(scenario: &Scenario, source: Source) -> Context {
        let per_ms = match source {
            Source::Sim | Source::Real => 1_000_000,
            Source::Model => 0,
        };
        Context {
            lock_path: scenario.lock_path.clone(),
            horizon: scenario.horizon_ms.saturating_mul(per_ms),
            progress_grace: scenario.progress_grace_ms().saturating_mul(per_ms),
        }
    }
}

/// The properties that have a checker.
pub const CHECKED: [Property; 5] = [
    Property::MutualExclusionBelief,
    Property::MutualExclusionFenced,
    Property::HerdFree,
    Property::Progress,
    Property::NoOrphans,
];

/// Checks `property` on `trace`; `None` when no checker exists for it (yet).
pub fn check(trace: &Trace, property: Property, cx: &Context) -> Option<Vec<Violation>> {
    let violations = match property {
        Property::MutualExclusionBelief => mutual_exclusion_belief::check(trace),
        Property::MutualExclusionFenced => mutual_exclusion_fenced::check(trace),
        Property::HerdFree => herd_free::check(trace),
        Property::Progress => progress::check(trace, cx),
        Property::NoOrphans => no_orphans::check(trace, cx),
        Property::LeaderUniqueBelief
        | Property::LeaderUniqueFenced
        | Property::RwExclusion
        | Property::LeaseBound => return None,
    };
    Some(violations)
}

/// Checks every property in `properties` that has a checker, violations in property order.
pub fn check_all(trace: &Trace, properties: &[Property], cx: &Context) -> Vec<Violation> {
    properties
        .iter()
        .filter_map(|property| check(trace, *property, cx))
        .flatten()
        .collect()
}

/// `c0, c2` for messages.
fn list<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `12.345 ms` for messages (trace time in ns).
fn ms(t: u64) -> String {
    format!("{}.{:03} ms", t / 1_000_000, (t / 1_000) % 1_000)
}
