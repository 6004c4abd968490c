//! The same programs on a real ZooKeeper: each client is a process of
//! `client-lock-real-client`, running the function the simulator runs, against a standalone
//! server or a 3-server ensemble started here; its trace is judged by the same checkers.
//! Real timing is not the simulator's, so each test asserts what holds in every run, and what
//! breaks when the run puts the program where the simulator does.

use client_lock::Prefix;
use client_lock::scenarios::{gc_pause, random_faults};
use splitbrain::coordination::ids::ClientSlot;
use splitbrain::coordination::recipes::Notice;
use splitbrain::properties::verdict::violations;
use splitbrain::real::local::Settings;
use splitbrain::real::target::Target;
use splitbrain::real::{ClientLauncher, run_program};
use splitbrain::recipe_table::family::Family;
use splitbrain::recipe_table::property::{Expectation, Property, Violation};
use splitbrain::recipe_table::recipe_ref::RecipeRef;
use splitbrain::scenarios::catalog::Catalog;
use splitbrain::scenarios::fault::Fault;
use splitbrain::scenarios::scenario::Scenario;
use splitbrain::trace::{EventKind, Source, Trace};

/// Starts each client as a process of this crate's `client-lock-real-client`.
fn launcher() -> ClientLauncher {
    ClientLauncher::new(
        env!("CARGO_BIN_EXE_client-lock-real-client"),
        std::iter::empty::<&str>(),
    )
}

/// Runs `scenario` (seed 0) on `servers` local servers started for it, with the programs as its
/// clients, and returns the trace and what the checkers found in it.
fn on_real_servers(scenario: &Scenario, servers: u32) -> (Trace, Vec<Violation>) {
    let _serial = splitbrain::real::testing::one_server_at_a_time();
    let settings = Settings::of(&scenario.server);
    let target = Target::start_local(servers, settings).unwrap_or_else(|e| panic!("{e}"));
    let trace = run_program(scenario, 0, &target, &launcher()).unwrap_or_else(|e| panic!("{e}"));
    target.stop();
    assert_eq!(trace.meta.source, Source::Real);
    let found = violations(&trace).unwrap_or_else(|e| panic!("{e}"));
    (trace, found)
}

/// Asserts that every property `scenario` expects to hold holds in `found`.
fn holds_what_it_expects(scenario: &Scenario, found: &[Violation]) {
    for property in scenario.recipe.properties() {
        if scenario.expectation(*property) == Expectation::Holds {
            let broken: Vec<_> = found.iter().filter(|v| v.property == *property).collect();
            assert!(
                broken.is_empty(),
                "{}: {property}: {broken:?}",
                scenario.name
            );
        }
    }
}

/// How many times client `slot` was told it holds (or leads), and how many of its writes the
/// fence accepted.
fn grants_and_writes(trace: &Trace, slot: u16) -> (usize, usize) {
    let mine = || {
        (trace.events.iter())
            .filter(move |e| e.client == Some(ClientSlot(slot)))
            .map(|e| &e.kind)
    };
    let grants = mine()
        .filter(|kind| {
            matches!(
                kind,
                EventKind::Notice {
                    notice: Notice::Acquired { .. } | Notice::IsLeader { .. }
                }
            )
        })
        .count();
    let writes = mine()
        .filter(|kind| matches!(kind, EventKind::ResourceWrite { accepted: true, .. }))
        .count();
    (grants, writes)
}

/// Whether client `slot` held (or led) when its pause began: told so, and neither released,
/// closed nor failed since.
fn held_at_its_pause(trace: &Trace, slot: u16) -> bool {
    let mut holds = false;
    for event in &trace.events {
        if let EventKind::FaultStart {
            fault: Fault::Pause { client, .. },
        } = event.kind
            && client == slot
        {
            return holds;
        }
        if event.client != Some(ClientSlot(slot)) {
            continue;
        }
        if let EventKind::Notice { notice } = &event.kind {
            match notice {
                Notice::Acquired { .. } | Notice::IsLeader { .. } => holds = true,
                Notice::Released { .. }
                | Notice::Closed { .. }
                | Notice::NotLeader { .. }
                | Notice::Failed { .. } => holds = false,
                _ => {}
            }
        }
    }
    false
}

/// The GC pause on a standalone server, with each program: what holds in the simulator holds
/// here, and when the pause caught client 0 holding (as it does in every simulated seed), the
/// program woke believing it still held after the other had acquired: the belief broken, the
/// fence rejecting its write.
#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_paused_holder_believes_it_holds_on_a_real_server_too() {
    for prefix in Prefix::ALL {
        let scenario = gc_pause(prefix);
        let (trace, found) = on_real_servers(&scenario, 1);
        holds_what_it_expects(&scenario, &found);
        let expected = scenario.workload.acquisitions as usize;
        for slot in 0..scenario.clients {
            let (grants, _) = grants_and_writes(&trace, slot);
            assert!(
                grants >= expected,
                "{prefix:?}: client {slot}: {grants} grants"
            );
        }
        if held_at_its_pause(&trace, 0) {
            let belief = match prefix {
                Prefix::Latch => Property::LeaderUniqueBelief,
                _ => Property::MutualExclusionBelief,
            };
            assert!(
                found.iter().any(|v| v.property == belief),
                "{prefix:?}: {belief} holds: {found:?}"
            );
        }
    }
}

/// The random faults of seed 0 (pauses, partitions through the proxies, expiries made with
/// the program's own session, crashes) on a 3-server ensemble, with Curator's prefix: every
/// client is served, and what the simulator finds to hold holds.
#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn random_faults_on_a_real_ensemble_break_only_belief() {
    let scenario = random_faults(Prefix::Curator);
    let (trace, found) = on_real_servers(&scenario, 3);
    holds_what_it_expects(&scenario, &found);
    assert!(!trace.meta.fault_schedule.is_empty(), "seed 0 draws faults");
    for slot in 0..scenario.clients {
        let (grants, writes) = grants_and_writes(&trace, slot);
        assert!(
            grants > 0 && writes > 0,
            "client {slot}: {grants} grants, {writes} writes"
        );
    }
}

/// The client processes' binary serving no program of the scenario's name: the run ends with
/// the process's one line naming what it serves.
#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_program_the_binary_does_not_serve_is_one_clear_error() {
    let _serial = splitbrain::real::testing::one_server_at_a_time();
    let mut scenario = gc_pause(Prefix::Curator);
    scenario.recipe = RecipeRef::own("not-served", Family::Lock, false).unwrap();
    let target = Target::start_local(1, Settings::default()).unwrap_or_else(|e| panic!("{e}"));
    let failed = run_program(&scenario, 0, &target, &launcher()).unwrap_err();
    target.stop();
    assert!(
        failed.message.contains(
            "recipe: expected one of the programs this binary serves (client-lock-curator, \
             client-lock-shared, client-lock-custom, client-latch), found `not-served`"
        ),
        "{failed}"
    );
}

/// A recipe of splitbrain's table is not a program: refused before any server is reached.
#[test]
fn a_recipe_of_the_table_is_refused_before_the_run() {
    let catalog = Catalog::builtin().unwrap_or_else(|e| panic!("{e}"));
    let scenario = catalog.get("herd-free-mutex").expect("in the catalog");
    let nowhere = Target::connect("127.0.0.1:1");
    let refused = run_program(scenario, 0, &nowhere, &launcher()).unwrap_err();
    assert!(
        refused
            .message
            .starts_with("recipe: expected the name of a program, found `mutex`"),
        "{refused}"
    );
    assert!(refused.trace.is_none());
}
