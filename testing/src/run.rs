//! One run: a scenario, a seed and a concrete fault schedule on the simulator, its trace, and
//! the checkers' verdicts. The trace records the scenario as run, so [`rerun`] repeats it
//! exactly from the trace alone.

use recipe_table::property::{Property, Violation};
use scenarios::fault::ScheduledFault;
use scenarios::scenario::Scenario;
use scenarios::shrink::{shorter, shrink, simplify};
use sim::{RecipeCode, Sim};
use trace::{Source, Trace};

/// A checked run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The trace.
    pub trace: Trace,
    /// Every violation of every checked property, in property order.
    pub violations: Vec<Violation>,
}

impl Outcome {
    /// True when `property` was violated.
    pub fn violates(&self, property: Property) -> bool {
        self.violations.iter().any(|v| v.property == property)
    }
}

/// Why a run produced no trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The simulator refused the settings.
    Settings(String),
    /// The run panicked.
    Panicked(String),
    /// The framework layer broke Curator's rules: its connection states against the client's
    /// raw session, or a protected create against protected mode (a bug of splitbrain's, not
    /// of the recipe: see [`conformance::check_framework_states`] and
    /// [`conformance::check_protected_creates`]).
    Framework(String),
    /// The recipe's notices broke Curator's listener contract (an election told of a change
    /// of leadership that did not happen: see [`conformance::check_leader_notices`]).
    Contract(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Settings(message) => write!(f, "invalid settings: {message}"),
            RunError::Panicked(message) => write!(f, "panicked: {message}"),
            RunError::Framework(message) => write!(f, "broke the framework's rules: {message}"),
            RunError::Contract(message) => write!(f, "broke the listener contract: {message}"),
        }
    }
}

/// The properties checked on runs of `scenario`: those of its recipe.
pub fn checked_properties(scenario: &Scenario) -> Vec<Property> {
    scenario.recipe.properties().to_vec()
}

/// The code of `scenario`'s recipe, a row of splitbrain's table. A recipe of your own has its
/// code in your crate: give it as `RecipeCode::of(&DEF)` (the `splitbrain::testing` helpers
/// take your recipe's definition and do so).
pub fn table_code(scenario: &Scenario) -> Result<RecipeCode, RunError> {
    RecipeCode::of_table(&scenario.recipe).ok_or_else(|| {
        RunError::Settings(format!(
            "recipe: expected a recipe of splitbrain's table, found `{}`, a recipe of your own: \
             run it with its code (splitbrain::testing)",
            scenario.recipe
        ))
    })
}

/// Runs `scenario` (whose recipe is a row of the table) with `seed` under exactly `faults`
/// and checks the trace. A panic inside the run or the checkers comes back as
/// [`RunError::Panicked`].
pub fn run_with(
    scenario: &Scenario,
    seed: u64,
    faults: Vec<ScheduledFault>,
) -> Result<Outcome, RunError> {
    run_then(&table_code(scenario)?, scenario, seed, faults, |outcome| {
        outcome
    })
}

/// Runs `scenario` with `seed` under exactly `faults`, its recipe's code being `code`, checks
/// the trace, then calls `then` with the checked run, still on the run's own thread: a caller
/// that keeps less than the whole trace should take what it keeps here, so the rest is freed
/// by the thread that allocated it (see [`Sim::run_then`]).
pub fn run_then<R: Send>(
    code: &RecipeCode,
    scenario: &Scenario,
    seed: u64,
    faults: Vec<ScheduledFault>,
    then: impl FnOnce(Outcome) -> R + Send,
) -> Result<R, RunError> {
    let sim = Sim::from_scenario(scenario, seed, faults).recipe_code(code.clone());
    guarded(|| {
        let judged = sim.run_then(|trace| {
            conformance::check_framework_states(&trace)
                .and_then(|()| conformance::check_protected_creates(&trace))
                .map_err(RunError::Framework)?;
            conformance::check_leader_notices(&trace).map_err(RunError::Contract)?;
            Ok(then(checked(trace, scenario)))
        });
        judged.map_err(|e| RunError::Settings(e.to_string()))?
    })
}

/// Runs `job`, turning a panic into [`RunError::Panicked`] so that a sweep goes on.
pub fn guarded<T>(job: impl FnOnce() -> Result<T, RunError>) -> Result<T, RunError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(job))
        .unwrap_or_else(|panic| Err(RunError::Panicked(panic_message(panic.as_ref()))))
}

/// Runs seed `seed` of `scenario` (whose recipe is a row of the table) with the seed's own
/// fault schedule.
pub fn run(scenario: &Scenario, seed: u64) -> Result<Outcome, RunError> {
    run_with(scenario, seed, scenario.fault_schedule(seed))
}

/// Checks `trace`, a run of `scenario` (as every trace is judged:
/// [`properties::verdict`]).
pub fn checked(trace: Trace, scenario: &Scenario) -> Outcome {
    let violations = properties::verdict::violations_of_scenario(&trace, scenario);
    Outcome { trace, violations }
}

/// Why a trace cannot be rerun.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotRerunnable(pub String);

/// Reruns the run recorded in `trace`: its scenario as run, its seed and its exact fault
/// schedule; the new trace keeps the record of any shrinking.
pub fn rerun(trace: &Trace) -> Result<Result<Outcome, RunError>, NotRerunnable> {
    if trace.meta.source != Source::Sim {
        return Err(NotRerunnable(format!(
            "expected a simulator trace, found a {:?} trace",
            trace.meta.source
        )));
    }
    let scenario = trace.meta.scenario_spec.as_deref().ok_or_else(|| {
        NotRerunnable("expected meta.scenario_spec (the scenario as run), found none".into())
    })?;
    let recipe = &trace.meta.recipe;
    let Some(code) = RecipeCode::of_table(recipe) else {
        return Err(NotRerunnable(format!(
            "expected a recipe splitbrain can run, found `{recipe}`, a recipe of your own: rerun \
             it from the test that hunts it, with SPLITBRAIN_SEED={} (splitbrain::testing)",
            trace.meta.seed
        )));
    };
    let faults = trace.meta.fault_schedule.clone();
    Ok(
        run_then(&code, scenario, trace.meta.seed, faults, |outcome| outcome).map(|mut outcome| {
            outcome.trace.meta.shrunk_from = trace.meta.shrunk_from.clone();
            outcome
        }),
    )
}

/// A run whose schedule was shrunk for one property.
#[derive(Clone, Debug)]
pub struct ShrunkRun {
    /// The run under the shrunk schedule (its trace records the original schedule in
    /// `meta.shrunk_from`).
    pub outcome: Outcome,
    /// The original schedule's length.
    pub original_faults: usize,
    /// Runs the shrinking took.
    pub runs: usize,
}

/// Shrinks the fault schedule of `outcome` (a run of `scenario` that violates `property`),
/// the seed held fixed, to a 1-minimal schedule that still violates it, then shortens the
/// faults that remain while it still does.
pub fn shrink_run(scenario: &Scenario, outcome: &Outcome, property: Property) -> ShrunkRun {
    let seed = outcome.trace.meta.seed;
    let original = outcome.trace.meta.fault_schedule.clone();
    let violates = |faults: &[ScheduledFault]| {
        run_with(scenario, seed, faults.to_vec()).is_ok_and(|o| o.violates(property))
    };
    let fewer = shrink(&original, violates);
    let shorter = simplify(&fewer.schedule, shorter, violates);
    let mut result = match run_with(scenario, seed, shorter.schedule.clone()) {
        Ok(result) if result.violates(property) => result,
        _ => outcome.clone(),
    };
    if result.trace.meta.fault_schedule != original {
        result.trace.meta.shrunk_from = Some(original.clone());
    }
    ShrunkRun {
        outcome: result,
        original_faults: original.len(),
        runs: fewer.runs + shorter.runs,
    }
}

/// The text of a panic payload (the simulator's, which its other callers share).
pub use sim::panic_message;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_job_becomes_a_failed_run() {
        let failed: Result<(), RunError> = guarded(|| panic!("the server address is taken"));
        assert_eq!(
            failed,
            Err(RunError::Panicked("the server address is taken".into()))
        );
        let seed = 7;
        let failed: Result<(), RunError> = guarded(|| panic!("seed {seed}"));
        assert_eq!(failed, Err(RunError::Panicked("seed 7".into())));
        assert_eq!(guarded(|| Ok(3)), Ok(3));
    }
}
