//! Trace checkers, one module per property (the book's "Properties" page). They read nothing but
//! a [`Trace`] and a [`Context`], so they serve simulator, model and real runs alike; each
//! returns the [`Violation`]s it found, naming the property, the instants, the clients and the
//! events involved, with one readable sentence.

mod belief;
mod client_sessions;
mod deadline;
mod healed;
mod herd_free;
mod lease_bound;
mod mutual_exclusion_fenced;
mod no_orphans;
mod no_time_travel;
mod owners;
mod progress;
mod received;
mod revocation;
pub mod timeline;
mod tokens;

use coordination::zk::Path;

use crate::monitor::ErrorPolicy;
use recipe_table::property::{Property, Violation};
use scenarios::scenario::Scenario;
use trace::{Source, Trace};

/// What a checker needs besides the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Context {
    /// The lock path: lock nodes are its children.
    pub lock_path: Path,
    /// The horizon in trace time (`t` units).
    pub horizon: u64,
    /// How long after the faults have healed, in trace time, a waiter must have been served.
    pub progress_grace: u64,
    /// How many leases a semaphore allows at once (`lease_bound`).
    pub max_leases: u32,
    /// What the recipe's holders must give up at which connection-state change (the belief
    /// properties read `Suspended` notices by it, `live_session_exclusion` checks it).
    pub error_policy: ErrorPolicy,
}

impl Context {
    /// The context of a run of `scenario` recorded by `source`. Simulated and real traces
    /// count nanoseconds; model traces count steps, where no time bound applies, so their
    /// grace is unbounded and `progress` never fires on them (the model checks liveness itself).
    pub fn for_scenario(scenario: &Scenario, source: Source) -> Context {
        let (horizon, progress_grace) = match source {
            Source::Sim | Source::Real => (
                scenario.horizon_ms.saturating_mul(1_000_000),
                scenario.progress_grace_ms().saturating_mul(1_000_000),
            ),
            Source::Model => (0, u64::MAX),
        };
        Context {
            lock_path: scenario.lock_path.clone(),
            horizon,
            progress_grace,
            max_leases: scenario.recipe_settings.max_leases,
            error_policy: scenario.framework.error_policy,
        }
    }
}

/// Checks `property` on `trace` (every property has a checker).
pub fn check(trace: &Trace, property: Property, cx: &Context) -> Vec<Violation> {
    match property {
        Property::MutualExclusionBelief
        | Property::LeaderUniqueBelief
        | Property::RwExclusion
        | Property::LiveSessionExclusion => belief::check(trace, property, cx.error_policy),
        Property::MutualExclusionFenced | Property::LeaderUniqueFenced => {
            mutual_exclusion_fenced::check(trace, property)
        }
        Property::HerdFree => herd_free::check(trace),
        Property::Progress => progress::check(trace, cx),
        Property::Answered => progress::check_answered(trace, cx),
        Property::NoOrphans => no_orphans::check(trace, cx),
        Property::LeaseBound => lease_bound::check(trace, cx.max_leases, cx.error_policy),
        Property::AnsweredByDeadline => deadline::check(trace),
        Property::RevocationAnswered => revocation::check(trace, cx),
        Property::NoTimeTravel => no_time_travel::check(trace),
    }
}

/// Checks every property in `properties` that has a checker, violations in property order.
/// The belief properties share one fold of their monitor, `progress` and `answered` one of
/// the waits.
pub fn check_all(trace: &Trace, properties: &[Property], cx: &Context) -> Vec<Violation> {
    let waits = progress::Folded::new();
    let beliefs: Vec<Property> = (properties.iter().copied())
        .filter(|property| belief::judges(*property))
        .collect();
    // Each belief property's violations, in the order of `beliefs`, once the first is met.
    let mut believed = None;
    let mut violations = Vec::new();
    for &property in properties {
        violations.extend(match property {
            Property::Progress | Property::Answered => {
                progress::unserved(trace, cx, property, &waits)
            }
            _ if belief::judges(property) => (believed.get_or_insert_with(|| {
                belief::check_each(trace, &beliefs, cx.error_policy).into_iter()
            }))
            .next()
            .unwrap_or_default(),
            _ => check(trace, property, cx),
        });
    }
    violations
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

/// An instant of `trace` for messages: `12.345 ms`, or `step 7` in a model trace.
fn when(trace: &Trace, t: u64) -> String {
    match trace.meta.source {
        Source::Model => format!("step {t}"),
        Source::Sim | Source::Real => ms(t),
    }
}

/// The context of a one-lease run on `/lock` judged at `horizon_ms`, with `grace_ms` of
/// grace for what is still pending at the end (the checkers' unit tests).
#[cfg(test)]
pub(crate) fn ending(horizon_ms: u64, grace_ms: u64) -> Context {
    Context {
        lock_path: trace::build::path("/lock"),
        horizon: horizon_ms * 1_000_000,
        progress_grace: grace_ms * 1_000_000,
        max_leases: 1,
        error_policy: ErrorPolicy::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scenarios::catalog::Catalog;
    use trace::build::Build;

    #[test]
    fn contexts_count_nanoseconds_for_runs_and_steps_for_models() {
        let catalog = Catalog::builtin().unwrap();
        let scenario = catalog.get("herd-free-mutex").unwrap();
        let sim = Context::for_scenario(scenario, Source::Sim);
        assert_eq!(sim.horizon, scenario.horizon_ms * 1_000_000);
        assert_eq!(sim.progress_grace, scenario.progress_grace_ms() * 1_000_000);
        let model = Context::for_scenario(scenario, Source::Model);
        // A model path that ends with a waiter is not a progress violation.
        let trace = Build::new().acquire(0).acquired(0, 5).acquire(1).trace();
        assert_eq!(check(&trace, Property::Progress, &model), vec![]);
        let count = |cx: &Context| check(&trace, Property::Progress, cx).len();
        assert_eq!(count(&sim), 1, "still waiting 20 s later");
        let early = Context {
            horizon: 1_000_000_000,
            ..sim.clone()
        };
        assert_eq!(count(&early), 0, "within the grace at a 1 s horizon");
    }

    #[test]
    fn checking_all_at_once_finds_what_each_check_finds() {
        let catalog = Catalog::builtin().unwrap();
        let cx = Context::for_scenario(catalog.get("herd-free-mutex").unwrap(), Source::Sim);
        // c0 and c1 overlap, c2 waits to the end and c1 gave up once.
        let trace = Build::new()
            .acquired(0, 5)
            .acquire(1)
            .failed(1)
            .acquire(1)
            .acquired(1, 6)
            .acquire(2)
            .release(0)
            .trace();
        let properties = [
            Property::MutualExclusionBelief,
            Property::Progress,
            Property::LiveSessionExclusion,
            Property::Answered,
            Property::NoOrphans,
        ];
        let each: Vec<Violation> = (properties.iter())
            .flat_map(|property| check(&trace, *property, &cx))
            .collect();
        assert!(each.len() >= 3, "{each:?}");
        assert_eq!(check_all(&trace, &properties, &cx), each);
    }
}
