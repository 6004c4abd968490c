//! Every scenario of the embedded catalog runs on the simulator, and its trace says what was run.

use scenarios::catalog::Catalog;
use scenarios::trace::EventKind;
use sim::Sim;

#[test]
fn every_catalog_scenario_runs_and_its_trace_carries_the_scenario() {
    let catalog = Catalog::builtin().expect("the embedded catalog parses");
    for scenario in catalog.scenarios() {
        for seed in 0..3 {
            let faults = scenario.fault_schedule(seed);
            let trace = Sim::from_scenario(scenario, seed, faults.clone())
                .run()
                .unwrap_or_else(|e| panic!("{}: {e}", scenario.name));
            assert_eq!(trace.meta.seed, seed);
            assert_eq!(trace.meta.fault_schedule, faults);
            assert_eq!(trace.meta.scenario_spec.as_deref(), Some(scenario));
            let last = trace.events.last().map(|e| &e.kind);
            assert!(
                matches!(last, Some(EventKind::TreeSnapshot { .. })),
                "{}: the run ends with a tree snapshot",
                scenario.name
            );
        }
    }
}
