//! [`model_check`]: an exhaustive model check of a user's recipe, with its counterexamples
//! written as traces and reports.

use std::fmt::Write as _;
use std::path::PathBuf;

use model::{Checked, LockModel, ModelSpec, Options, Outcome};
use recipe_table::recipes::{RecipeDef, Testable};

use super::{default_out_dir, fail_unless_empty, rerun_command};
use crate::files::{evidence_paths, write_trace_and_report};

/// A path the model checker found for a property (a counterexample of one that must hold,
/// an example of one that must be reachable), and where its evidence is.
#[derive(Clone, Debug)]
pub struct Counterexample {
    /// The property.
    pub property: Checked,
    /// Steps on the path.
    pub steps: usize,
    /// The path's trace (JSON).
    pub trace: PathBuf,
    /// Its HTML report.
    pub report: PathBuf,
}

/// What a model check found.
#[derive(Clone, Debug)]
pub struct ModelChecked {
    /// The checker's outcome: states, verdicts, expectations.
    pub outcome: Outcome,
    /// The paths found, with their files, in property order.
    pub paths: Vec<Counterexample>,
    /// Paths whose files could not be written, and why.
    pub failures: Vec<String>,
}

/// Checks `def`'s recipe under `config` exhaustively (symmetry reduction, every core) and
/// writes each path found to `<target>/splitbrain/model/<recipe>.c<clients>.<property>.*`.
pub fn model_check<R: Testable>(def: &'static RecipeDef<R>, config: ModelSpec) -> ModelChecked {
    let options = Options {
        threads: crate::sweep::default_workers(),
        symmetry: true,
        timeout: None,
        paths: true,
        reduction: true,
    };
    let outcome = model::check(def, config, options);
    let model = LockModel::new(def, config);
    let out = default_out_dir().join("model");
    let mut checked = ModelChecked {
        outcome,
        paths: Vec::new(),
        failures: Vec::new(),
    };
    for verdict in &checked.outcome.verdicts {
        let Some(path) = &verdict.path else { continue };
        let stem = format!("{}.c{}.{}", def.name, config.clients, verdict.property);
        let (trace_file, report) = evidence_paths(&out, &stem);
        let written = model::replay::trace(&model, path, &stem)
            .map_err(|e| format!("{stem}: the path does not replay: {e}"))
            .and_then(|trace| {
                let violations =
                    properties::verdict::violations(&trace).map_err(|e| format!("{stem}: {e}"))?;
                let files = (trace_file.as_path(), report.as_path());
                write_trace_and_report(&trace, &violations, files, Some(rerun_command(None)))
            });
        match written {
            Ok(()) => checked.paths.push(Counterexample {
                property: verdict.property,
                steps: path.len(),
                trace: trace_file,
                report,
            }),
            Err(error) => checked.failures.push(error),
        }
    }
    checked
}

impl ModelChecked {
    /// The path found for `property` (a shared one, or `someone_acquires`), if any.
    pub fn path(&self, property: impl Into<Checked>) -> Option<&Counterexample> {
        let property = property.into();
        self.paths.iter().find(|p| p.property == property)
    }

    /// One paragraph per verdict that is not the one expected (and per path whose files could
    /// not be written), empty when all were met.
    pub fn unmet(&self) -> Vec<String> {
        let mut unmet = Vec::new();
        for verdict in &self.outcome.verdicts {
            let violated = u64::from(!verdict.holds);
            let Some(mut text) =
                (verdict.expectation).unmet(verdict.property, violated, 1, "exhaustive search")
            else {
                continue;
            };
            if let Some(path) = self.path(verdict.property) {
                let _ = write!(
                    text,
                    " ({} steps)\n  rerun:  {}\n  trace:  {}\n  report: {}",
                    path.steps,
                    rerun_command(None),
                    path.trace.display(),
                    path.report.display()
                );
            }
            unmet.push(text);
        }
        if !self.outcome.complete {
            unmet.push("the search did not finish".to_owned());
        }
        unmet.extend(self.failures.iter().cloned());
        unmet
    }

    /// Panics, with each unmet verdict's path, trace and report, unless every verdict was the
    /// one the recipe's row expects.
    #[track_caller]
    pub fn assert_met(&self) {
        let headline = format!(
            "model check of `{}` with {} clients ({} unique states): verdict(s) not met",
            self.outcome.recipe, self.outcome.config.clients, self.outcome.unique_states
        );
        fail_unless_empty(&headline, &self.unmet());
    }
}
