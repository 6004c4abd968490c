//! How programs are run and judged beyond `Client::lock`: a program that returns an error or
//! panics ends its own client's run, recorded in the trace, and the run goes on; a program
//! whose waiters all watch the lock's directory is found to herd (what its client reads off
//! its connection is in the trace); a fault armed for a request starts as the program's
//! client sends it; a program cannot take a name of splitbrain's table.

use client_lock::Prefix;
use client_lock::scenarios::timed_acquire;
use splitbrain::coordination::ids::ClientSlot;
use splitbrain::coordination::zk::Request;
use splitbrain::programs::{Contender, program, zookeeper_client as zk};
use splitbrain::recipe_table::family::Family;
use splitbrain::recipe_table::property::Property;
use splitbrain::run::run_then;
use splitbrain::scenarios::fault::ScheduledFault;
use splitbrain::scenarios::scenario::Scenario;
use splitbrain::sim::RecipeCode;
use splitbrain::trace::EventKind;

async fn fails_its_own_way(contender: Contender) -> Result<(), String> {
    contender.acquiring();
    match contender.slot() {
        0 => Err("the program gave up".to_owned()),
        1 => panic!("the program broke"),
        _ => Ok(()),
    }
}

/// The timed-acquire scenario's three clients and workload, without its faults or timeout, for
/// the program `code`.
fn fault_free(code: &RecipeCode) -> Scenario {
    let mut scenario = timed_acquire(Prefix::Curator);
    scenario.recipe = code.recipe().clone();
    scenario.faults.clear();
    scenario.workload.acquire_timeout_ms = None;
    scenario
}

#[test]
fn an_error_or_a_panic_ends_that_clients_run_in_the_trace() {
    let code = RecipeCode::from(program("failing-program", Family::Lock, fails_its_own_way));
    let mut scenario = fault_free(&code);
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

/// The textbook lock without its herd fix: every waiter lists the directory with a watch,
/// so every change wakes every waiter.
async fn herding_lock(contender: Contender) -> Result<(), zk::Error> {
    let client = zk::Client::connector()
        .with_session_timeout(contender.session_timeout())
        .connect(&contender.server())
        .await?;
    let dir = contender.lock_path();
    let acls = zk::Acls::anyone_all();
    let parent = zk::CreateMode::Persistent.with_acls(acls);
    for ancestor in ["/locks", dir] {
        match client.create(ancestor, b"", &parent).await {
            Ok(_) | Err(zk::Error::NodeExists) => {}
            Err(error) => return Err(error),
        }
    }
    for _ in 0..contender.acquisitions() {
        contender.acquiring();
        let mode = zk::CreateMode::EphemeralSequential.with_acls(acls);
        let (stat, sequence) = client.create(&format!("{dir}/lock-"), b"", &mode).await?;
        let mine = format!("lock-{sequence}");
        loop {
            let (mut children, _, watcher) = client.get_and_watch_children(dir).await?;
            children.sort();
            if children.first() == Some(&mine) {
                break;
            }
            watcher.changed().await;
        }
        contender.acquired(stat.czxid as u64);
        contender.use_resource(stat.czxid as u64).await;
        contender.releasing();
        client.delete(&format!("{dir}/{mine}"), None).await?;
        contender.released();
        contender.think().await;
    }
    Ok(())
}

#[test]
fn a_program_whose_waiters_watch_the_directory_herds() {
    let code = RecipeCode::from(program("herding-lock", Family::Lock, herding_lock));
    let scenario = fault_free(&code);
    let herds = run_then(&code, &scenario, 0, Vec::new(), |outcome| {
        (outcome.violations.into_iter())
            .filter(|violation| violation.property == Property::HerdFree)
            .count()
    });
    assert!(herds.unwrap() > 0, "three waiters on one directory herd");
}

#[test]
#[should_panic(expected = "not a recipe of splitbrain's table, found `mutex`")]
fn a_program_cannot_take_the_name_of_a_recipe_of_the_table() {
    drop(program("mutex", Family::Lock, fails_its_own_way));
}

/// A cut armed for client 0's first delete (its release) starts at the instant the client
/// library sends it, just before it: the cut holds the delete itself.
#[test]
fn a_fault_armed_for_a_request_starts_as_the_programs_client_sends_it() {
    let code = RecipeCode::from(Prefix::Curator.program());
    let mut scenario = fault_free(&code);
    let cut: ScheduledFault = serde_json::from_value(serde_json::json!({
        "at_ms": 0,
        "fault": {"kind": "partition", "a": {"client": 0}, "b": "server", "for_ms": 300},
        "on_request": {"op": "delete", "path_contains": "lock-"}
    }))
    .unwrap();
    scenario.faults = vec![cut];
    let events = run_then(&code, &scenario, 0, scenario.fault_schedule(0), |outcome| {
        outcome.trace.events
    })
    .unwrap();
    let start = (events.iter())
        .position(|e| matches!(e.kind, EventKind::FaultStart { .. }))
        .expect("the cut starts");
    let next = &events[start + 1];
    assert!(
        next.client == Some(ClientSlot(0))
            && next.t == events[start].t
            && matches!(
                &next.kind,
                EventKind::OpSent {
                    request: Request::Delete { .. },
                    ..
                }
            ),
        "the cut starts just before client 0's delete, found {next:?} after it"
    );
}
