//! The verdicts of any trace, from the run spec it records: one function for simulator,
//! model and real traces alike, so that `hunt`, `replay`, `check` and `report` can never
//! disagree about what a trace shows.
//!
//! A trace records what produced it in its meta: `scenario_spec` (a simulated or real run of a
//! scenario) or `model_spec` (a model checker's path: clients, budgets, settings). The recipe's
//! family says which properties apply; the spec gives the checkers their [`Context`].

use std::fmt;

use crate::check::{self, Context};
use crate::monitor::ErrorPolicy;
use recipe_table::model_spec::{ModelSpec, model_lock_path};
use recipe_table::property::Violation;
use recipe_table::recipe_ref::RecipeRef;
use scenarios::scenario::Scenario;
use trace::{EventKind, Source, Trace};

/// Why a trace's verdicts cannot be computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerdictError {
    /// The trace records neither a scenario nor a model configuration.
    NoSpec,
}

impl fmt::Display for VerdictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerdictError::NoSpec => f.write_str(
                "meta: expected the run spec (meta.scenario_spec or meta.model_spec), found neither",
            ),
        }
    }
}

impl std::error::Error for VerdictError {}

/// Every violation in `trace` of the properties of its recipe, judged from the run spec the
/// trace records, in property order.
pub fn violations(trace: &Trace) -> Result<Vec<Violation>, VerdictError> {
    if let Some(scenario) = &trace.meta.scenario_spec {
        return Ok(violations_of_scenario(trace, scenario));
    }
    let spec = trace.meta.model_spec.as_ref().ok_or(VerdictError::NoSpec)?;
    Ok(violations_of_model(trace, &trace.meta.recipe, spec))
}

/// The error policy of the run spec `trace` records, by which the checkers read its holds:
/// the scenario's or the model's, the default for a trace that records neither.
pub fn error_policy(trace: &Trace) -> ErrorPolicy {
    let scenario = (trace.meta.scenario_spec.as_ref()).map(|s| s.framework.error_policy);
    let model = (trace.meta.model_spec.as_ref()).map(|spec| spec.framework.error_policy);
    scenario.or(model).unwrap_or_default()
}

/// The violations of `trace`, a run of `scenario` (recorded by the simulator or a real
/// ZooKeeper, or an older trace whose scenario is looked up by name).
pub fn violations_of_scenario(trace: &Trace, scenario: &Scenario) -> Vec<Violation> {
    let cx = Context::for_scenario(scenario, trace.meta.source);
    check::check_all(trace, scenario.recipe.properties(), &cx)
}

/// The violations of `trace`, a path of the model of `recipe` under `spec`. A path is judged
/// in steps, not time: a waiter still waiting at its end is a `progress` violation only when
/// the path ends where nothing but a fault can happen any more (the model then records the
/// tree as it is left, as a simulated run does at its end).
pub fn violations_of_model(trace: &Trace, recipe: &RecipeRef, spec: &ModelSpec) -> Vec<Violation> {
    let last = trace.events.last();
    let ended = last.is_some_and(|e| matches!(e.kind, EventKind::TreeSnapshot { .. }));
    let (horizon, progress_grace) = match last {
        Some(last) if ended => (last.t, 0),
        _ => (0, u64::MAX),
    };
    let cx = Context {
        lock_path: model_lock_path(),
        horizon,
        progress_grace,
        max_leases: spec.settings.max_leases,
        error_policy: spec.framework.error_policy,
    };
    debug_assert_eq!(trace.meta.source, Source::Model);
    check::check_all(trace, recipe.properties(), &cx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use recipe_table::property::Property;
    use recipe_table::recipes::RecipeKind;
    use trace::SnapshotNode;
    use trace::build::Build;

    /// A model path on which c1 waits at the end, with the run's end recorded or not.
    fn waiting_path(ended: bool) -> Trace {
        let mut build = Build::new().acquire(0).acquired(0, 5).acquire(1);
        if ended {
            let nodes: Vec<SnapshotNode> = Vec::new();
            build = build.push(None, EventKind::TreeSnapshot { nodes });
        }
        let mut trace = build.trace();
        trace.meta.source = Source::Model;
        for (step, event) in trace.events.iter_mut().enumerate() {
            event.t = step as u64;
        }
        trace
    }

    #[test]
    fn a_model_path_that_ends_with_a_waiter_is_no_progress_only_where_the_run_ended() {
        let spec = ModelSpec::new(2);
        let judged = |trace: &Trace| {
            violations_of_model(trace, &RecipeKind::Mutex.into(), &spec)
                .into_iter()
                .filter(|v| v.property == Property::Progress)
                .count()
        };
        assert_eq!(judged(&waiting_path(false)), 0, "a path cut short");
        let ended = waiting_path(true);
        assert_eq!(judged(&ended), 1, "nothing more could happen");
        let message = &violations_of_model(&ended, &RecipeKind::Mutex.into(), &spec)[0].message;
        assert!(
            message.contains("when nothing but a fault could happen"),
            "{message}"
        );
    }
}
