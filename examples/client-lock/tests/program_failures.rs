//! A program that returns an error or panics ends its own client's run, recorded in the
//! trace; the run, and a hunt, go on.

use splitbrain::programs::{Contender, program};
use splitbrain::recipe_table::family::Family;
use splitbrain::run::run_then;
use splitbrain::scenarios::scenario::Scenario;
use splitbrain::trace::EventKind;

async fn fails_its_own_way(contender: Contender) -> Result<(), String> {
    contender.acquiring();
    match contender.slot() {
        0 => Err("the program gave up".to_owned()),
        1 => panic!("the program broke"),
        _ => Ok(()),
    }
}

#[test]
fn an_error_or_a_panic_ends_that_clients_run_in_the_trace() {
    let code = program("failing-program", Family::Lock, fails_its_own_way);
    let text = include_str!("../scenarios/gc-pause.json");
    let mut scenario = Scenario::from_json("scenarios/gc-pause.json", text).unwrap();
    scenario.recipe = code.recipe().clone();
    scenario.clients = 3;
    let failed = run_then(&code, &scenario, 7, Vec::new(), |outcome| {
        (outcome.trace.events.into_iter())
            .filter_map(|event| match event.kind {
                EventKind::ProgramFailed { error } => Some((event.client.unwrap().0, error)),
                _ => None,
            })
            .collect::<Vec<_>>()
    })
    .expect("the run ends normally");
    assert_eq!(
        failed,
        [
            (0, "the program gave up".to_owned()),
            (1, "panicked: the program broke".to_owned())
        ]
    );
}
