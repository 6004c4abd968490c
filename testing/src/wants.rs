//! Which runs of a sweep still want their trace. A sweep's consumer writes the traces of the
//! first few violating seeds of each property, in seed order, and drops every other trace;
//! its workers, which run ahead of it, ask [`TraceWants`] whether a run's trace may be
//! written and, if not, keep only its violations ([`KeptRun`]) and free the trace on the run's
//! own thread (see [`crate::run::run_then`]).
//!
//! A property wants traces until the consumer has counted as many violating seeds of it as
//! it keeps, and never again after that. So a worker that finds a property settled is right
//! whatever happens next: the seeds the consumer has not counted yet all come after those
//! whose traces it kept. A worker that finds it still wanted keeps the whole run, which the
//! consumer may then drop. Either way the consumer writes the same traces as if every run
//! were kept whole.

use std::sync::atomic::{AtomicBool, Ordering};

use recipe_table::property::{Property, Violation};
use scenarios::scenario::Scenario;
use sim::RecipeCode;

use crate::run::{self, Outcome, RunError};

/// The properties of one scenario and whether each still wants the traces of its violating
/// runs; shared between threads.
#[derive(Debug)]
pub struct TraceWants {
    properties: Vec<(Property, AtomicBool)>,
}

impl TraceWants {
    /// Every one of `properties` wants traces.
    pub fn new(properties: &[Property]) -> TraceWants {
        TraceWants {
            properties: (properties.iter())
                .map(|&property| (property, AtomicBool::new(true)))
                .collect(),
        }
    }

    /// Whether a run with `violations` may still have its trace written: some property it
    /// violates still wants traces.
    pub fn wants(&self, violations: &[Violation]) -> bool {
        violations.iter().any(|violation| {
            (self.properties.iter()).any(|(property, wanted)| {
                *property == violation.property && wanted.load(Ordering::Relaxed)
            })
        })
    }

    /// `property` wants no more traces: the consumer has counted every violating seed of it
    /// whose trace it keeps.
    pub fn settle(&self, property: Property) {
        for (candidate, wanted) in &self.properties {
            if *candidate == property {
                wanted.store(false, Ordering::Relaxed);
            }
        }
    }
}

/// What a sweep keeps of a checked run.
#[derive(Clone, Debug)]
pub enum KeptRun {
    /// The whole run: its trace may be written.
    Whole(Box<Outcome>),
    /// Only its violations: no property it violates wants its trace.
    Violations(Vec<Violation>),
}

impl KeptRun {
    /// Runs seed `seed` of `scenario`, its recipe's code being `code`, with the seed's own
    /// fault schedule (as [`run::run`] does) and keeps what `wants` says, on the run's own
    /// thread.
    pub fn run(
        code: &RecipeCode,
        scenario: &Scenario,
        seed: u64,
        wants: &TraceWants,
    ) -> Result<KeptRun, RunError> {
        let faults = scenario.fault_schedule(seed);
        run::run_then(code, scenario, seed, faults, |outcome| {
            KeptRun::of(outcome, wants)
        })
    }

    /// What to keep of `outcome`, as `wants` says now.
    pub fn of(outcome: Outcome, wants: &TraceWants) -> KeptRun {
        if wants.wants(&outcome.violations) {
            KeptRun::Whole(Box::new(outcome))
        } else {
            KeptRun::Violations(outcome.violations)
        }
    }

    /// The run's violations.
    pub fn violations(&self) -> &[Violation] {
        match self {
            KeptRun::Whole(outcome) => &outcome.violations,
            KeptRun::Violations(violations) => violations,
        }
    }

    /// The whole run, if it was kept.
    pub fn outcome(self) -> Option<Outcome> {
        match self {
            KeptRun::Whole(outcome) => Some(*outcome),
            KeptRun::Violations(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn violation(property: Property) -> Violation {
        Violation {
            property,
            at: 0,
            until: None,
            clients: Vec::new(),
            events: Vec::new(),
            message: String::new(),
        }
    }

    #[test]
    fn a_run_is_wanted_while_a_property_it_violates_is_not_settled() {
        let wants = TraceWants::new(&[Property::Progress, Property::HerdFree]);
        let both = [violation(Property::Progress), violation(Property::HerdFree)];
        assert!(!wants.wants(&[]), "a run that violates nothing");
        assert!(wants.wants(&both));
        wants.settle(Property::Progress);
        assert!(!wants.wants(&both[..1]), "its one property is settled");
        assert!(wants.wants(&both), "herd_free still wants traces");
        wants.settle(Property::HerdFree);
        assert!(!wants.wants(&both));
        let unlisted = [violation(Property::LeaseBound)];
        assert!(
            !wants.wants(&unlisted),
            "a property the scenario does not check"
        );
    }

    #[test]
    fn judged_keeps_the_whole_run_only_while_it_is_wanted() {
        let catalog = scenarios::catalog::Catalog::builtin().expect("the catalog");
        let scenario = catalog.get("gc-pause-split-brain").expect("in the catalog");
        let belief = Property::MutualExclusionBelief;
        let wants = TraceWants::new(&[belief]);
        let code = run::table_code(scenario).expect("a recipe of the table");
        let judge = || KeptRun::run(&code, scenario, 0, &wants).expect("runs");
        let whole = judge();
        assert!(whole.violations().iter().any(|v| v.property == belief));
        let outcome = whole.clone().outcome().expect("wanted: kept whole");
        assert!(!outcome.trace.events.is_empty());
        wants.settle(belief);
        let judged = judge();
        assert_eq!(judged.violations(), whole.violations(), "the same run");
        assert!(
            judged.outcome().is_none(),
            "settled: only the violations kept"
        );
    }
}
