//! Every scenario of the embedded catalog runs on the simulator, and its trace says what was run.

use coordination::ids::ClientSlot;
use coordination::recipe::SessionEvent;
use properties::check::{Context, check};
use recipe_table::property::Property;
use scenarios::catalog::Catalog;
use sim::Sim;
use trace::{EventKind, Source};

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

/// Regression: a client crashed after finishing its workload restarts and reports "done"
/// again; the run must still wait for every other client (here c0, cut off and waiting),
/// not end early and leave it waiting. Seed 1426 of random-faults-mutex hit this.
#[test]
fn a_restarted_client_does_not_end_the_run_before_the_others() {
    let catalog = Catalog::builtin().expect("the embedded catalog parses");
    let scenario = catalog
        .get("random-faults-mutex")
        .expect("random-faults-mutex is in the catalog");
    let faults = scenario.fault_schedule(1426);
    assert!(
        faults
            .iter()
            .any(|f| matches!(f.fault, scenarios::fault::Fault::Crash { client: 2 })),
        "the schedule still crashes c2: {faults:?}"
    );
    let trace = Sim::from_scenario(scenario, 1426, faults).run().unwrap();
    let cx = Context::for_scenario(scenario, Source::Sim);
    let stuck = check(&trace, Property::Progress, &cx);
    assert!(stuck.is_empty(), "{stuck:?}");
    let lost = trace.events.iter().any(|e| {
        e.client == Some(ClientSlot(0))
            && matches!(
                &e.kind,
                EventKind::Session {
                    event: SessionEvent::Lost { .. }
                }
            )
    });
    assert!(lost, "the run went on until c0 gave up its cut-off session");
}
