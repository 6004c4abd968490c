//! Replaying a path of actions: the states it visits, its trace in the simulator's format,
//! and action-index paths (`0/3/1`, stateright's replay key) turned into actions.

use std::fmt;

use coordination::ids::ClientSlot;
use scenarios::fault::ScheduledFault;
use trace::{Event, EventKind, Meta, Source, Trace};

use crate::model::{Action, LockModel, Recorder, Silent};
use crate::predicates::quiescent;
use crate::state::State;
use recipe_table::recipes::Testable;

/// A path that does not replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplayError {
    /// The path text is not `init/index/index/...` with numbers.
    Syntax {
        /// The offending component.
        component: String,
    },
    /// The path names an initial state other than 0 (the model has one).
    InitialState {
        /// The index given.
        index: usize,
    },
    /// At `step`, the path's action index or action is not enabled.
    NotEnabled {
        /// The 1-based step.
        step: usize,
        /// What was asked for.
        what: String,
        /// How many actions were enabled there.
        enabled: usize,
    },
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Syntax { component } => write!(
                f,
                "--path: expected action indices separated by '/', like 0/3/1; {component:?} is not a number"
            ),
            ReplayError::InitialState { index } => write!(
                f,
                "--path: the first index picks the initial state and must be 0 (the model has one), got {index}"
            ),
            ReplayError::NotEnabled {
                step,
                what,
                enabled,
            } => write!(
                f,
                "--path: step {step} asks for {what}, but only {enabled} actions are enabled there"
            ),
        }
    }
}

impl std::error::Error for ReplayError {}

/// Parses an action-index path (`0/3/1`: the initial state, then the index of each action
/// among those enabled) into actions.
pub fn actions_from_indices<R: Testable>(
    model: &LockModel<R>,
    path: &str,
) -> Result<Vec<Action>, ReplayError> {
    let mut indices = path.trim().split('/').map(|component| {
        component.parse::<usize>().map_err(|_| ReplayError::Syntax {
            component: component.to_owned(),
        })
    });
    let init = indices.next().unwrap_or(Ok(0))?;
    if init != 0 {
        return Err(ReplayError::InitialState { index: init });
    }
    let mut state = model.initial(&mut Silent);
    let mut actions = Vec::new();
    let mut enabled = Vec::new();
    for (step, index) in indices.enumerate() {
        let index = index?;
        enabled.clear();
        model.enabled(&state, &mut enabled);
        let not_enabled = || ReplayError::NotEnabled {
            step: step + 1,
            what: format!("action index {index}"),
            enabled: enabled.len(),
        };
        let action = *enabled.get(index).ok_or_else(not_enabled)?;
        state = model
            .step(&state, action, &mut Silent)
            .ok_or_else(not_enabled)?;
        actions.push(action);
    }
    Ok(actions)
}

/// The action-index path of `actions` (the inverse of [`actions_from_indices`]).
pub fn indices_of<R: Testable>(
    model: &LockModel<R>,
    actions: &[Action],
) -> Result<String, ReplayError> {
    let visited = states(model, actions)?;
    let mut path = String::from("0");
    let mut enabled = Vec::new();
    for (state, action) in visited.iter().zip(actions) {
        enabled.clear();
        model.enabled(state, &mut enabled);
        let index = enabled
            .iter()
            .position(|a| a == action)
            .expect("a replayed action is enabled");
        path.push_str(&format!("/{index}"));
    }
    Ok(path)
}

/// The states `actions` visit, the initial state first.
pub fn states<R: Testable>(
    model: &LockModel<R>,
    actions: &[Action],
) -> Result<Vec<State<R>>, ReplayError> {
    let mut visited = vec![model.initial(&mut Silent)];
    for (step, &action) in actions.iter().enumerate() {
        let last = visited.last().expect("starts with the initial state");
        visited.push(take(model, last, action, step, &mut Silent)?);
    }
    Ok(visited)
}

/// Takes the `step`-th (0-based) action of a path.
fn take<R: Testable>(
    model: &LockModel<R>,
    state: &State<R>,
    action: Action,
    step: usize,
    rec: &mut impl Recorder,
) -> Result<State<R>, ReplayError> {
    model
        .step(state, action, rec)
        .ok_or_else(|| ReplayError::NotEnabled {
            step: step + 1,
            what: format!("{action:?}"),
            enabled: {
                let mut enabled = Vec::new();
                model.enabled(state, &mut enabled);
                enabled.len()
            },
        })
}

/// Keeps every event, stamped with the step index (0 for the initial state).
struct Stamped {
    t: u64,
    events: Vec<Event>,
}

impl Recorder for Stamped {
    fn record(&mut self, client: Option<ClientSlot>, kind: impl FnOnce() -> EventKind) {
        self.events.push(Event {
            t: self.t,
            client,
            kind: kind(),
        });
    }
}

/// The trace of `actions` in the simulator's format (`source: model`, `t` = step index;
/// faults are scheduled at their step index too). `scenario` names the run.
pub fn trace<R: Testable>(
    model: &LockModel<R>,
    actions: &[Action],
    scenario: &str,
) -> Result<Trace, ReplayError> {
    let path = indices_of(model, actions)?;
    let mut rec = Stamped {
        t: 0,
        events: Vec::new(),
    };
    let mut state = model.initial(&mut rec);
    for (step, &action) in actions.iter().enumerate() {
        rec.t = step as u64 + 1;
        state = take(model, &state, action, step, &mut rec)?;
    }
    if quiescent(model, &state) {
        // The run ends here: nothing but a fault can happen any more. The tree as it is
        // left says so, as a simulated run's last snapshot does (`progress` reads it).
        rec.record(None, || EventKind::tree_snapshot(&state.server.tree));
    }
    let events = rec.events;
    let config = model.config();
    let fault_schedule = events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::FaultStart { fault } => Some(ScheduledFault::at(event.t, fault.clone())),
            _ => None,
        })
        .collect();
    let mut settings = serde_json::json!({
        "budgets": config.budgets,
        "fenced": config.fenced,
        "path": path,
    });
    // The workload settings that change what the model explores, when on.
    for (name, on) in [
        ("revocable", config.settings.revocable),
        ("timeouts", config.timeouts),
    ] {
        if on {
            settings[name] = true.into();
        }
    }
    let meta = Meta {
        scenario: scenario.to_owned(),
        seed: 0,
        source: Source::Model,
        build: format!("splitbrain-model {}", env!("CARGO_PKG_VERSION")),
        recipe: recipe_table::recipe_ref::RecipeRef::of(model.def()),
        clients: config.clients,
        settings,
        fault_schedule,
        scenario_spec: None,
        model_spec: Some(*config),
        shrunk_from: None,
    };
    Ok(Trace { meta, events })
}
