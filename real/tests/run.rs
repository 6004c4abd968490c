//! `real::run`: catalog scenarios on a real ZooKeeper started by the harness, judged by the
//! same verdicts as simulated runs; refused faults and an unreachable server fail at once.

mod support;

use coordination::ids::ClientSlot;
use coordination::recipes::{Call, Notice};
use real::ClientLauncher;
use real::local::Settings;
use real::target::Target;
use recipe_table::property::{Expectation, Property};
use scenarios::catalog::Catalog;
use scenarios::fault::{Fault, Node, ScheduledFault, ServerSelector};
use scenarios::scenario::Scenario;
use support::launcher;
use trace::{Event, EventKind, ServerSession, Source, Trace};

fn scenario(name: &str) -> Scenario {
    Catalog::builtin().unwrap().get(name).unwrap().clone()
}

/// A standalone server with the scenario's tick.
fn standalone(scenario: &Scenario) -> Target {
    let settings = Settings::of(&scenario.server);
    Target::start_local(1, settings).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `name` on a fresh standalone server and checks every expectation of the scenario.
fn passes(name: &str) -> Trace {
    checked_run(name, true)
}

/// Runs `name` on a fresh standalone server and checks what it expects to hold, and, when
/// `violations_too`, that what it expects violated is violated in this one run.
fn checked_run(name: &str, violations_too: bool) -> Trace {
    checked(scenario(name), violations_too)
}

/// As [`checked_run`], for a scenario given whole.
fn checked(scenario: Scenario, violations_too: bool) -> Trace {
    let target = standalone(&scenario);
    let trace = real::run(&scenario, 0, &target, &launcher()).unwrap_or_else(|e| panic!("{e}"));
    target.stop();
    assert_eq!(trace.meta.source, Source::Real);
    let violations = properties::verdict::violations(&trace).unwrap();
    for property in scenario.recipe.properties() {
        let violated = violations.iter().any(|v| v.property == *property);
        match scenario.expectation(*property) {
            Expectation::Holds => assert!(!violated, "{property}: {violations:?}"),
            Expectation::Violated if violations_too => {
                assert!(violated, "{property} is not violated")
            }
            Expectation::Violated => {}
            Expectation::Unchecked => {}
        }
    }
    trace
}

fn count(trace: &Trace, kind: impl Fn(&EventKind) -> bool) -> usize {
    trace.events.iter().filter(|e| kind(&e.kind)).count()
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_fault_free_mutex_scenario_passes_on_a_real_server() {
    let _serial = real::testing::one_server_at_a_time();
    let trace = passes("herd-free-mutex");
    let writes = count(&trace, |k| {
        matches!(k, EventKind::ResourceWrite { accepted: true, .. })
    });
    assert_eq!(
        writes, 8,
        "4 clients × 2 acquisitions, every write accepted"
    );
    let last = trace.events.last().unwrap();
    assert!(matches!(last.kind, EventKind::TreeSnapshot { .. }));
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn session_expiries_by_a_second_connection_pass_on_a_real_server() {
    let _serial = real::testing::one_server_at_a_time();
    let trace = passes("session-expiry-waiter");
    let expiries = count(&trace, |k| matches!(k, EventKind::FaultEnd { .. }));
    assert_eq!(expiries, 3);
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn server_restarts_pass_on_a_real_server() {
    let _serial = real::testing::one_server_at_a_time();
    // Under Curator's lock loop (the default) a real restart lets a waiter hold through its
    // old session's node beside the next holder, both sessions alive (the catalog scenario
    // expects it); with the waiters giving up at LOST every safety expectation holds.
    checked(
        real::testing::giving_up_at_lost(scenario("server-restart")),
        true,
    );
}

#[test]
fn a_fault_with_no_real_counterpart_is_refused_before_the_run() {
    let target = Target::connect("127.0.0.1:1");
    let refused = |fault: Fault| {
        let mut faulty = scenario("herd-free-mutex");
        faulty.faults.push(ScheduledFault::at(100, fault));
        real::run(&faulty, 0, &target, &launcher()).unwrap_err()
    };
    let delayed = refused(Fault::Delay {
        from: Node::Server,
        to: Node::Client(0),
        min_ms: 5,
        max_ms: 200,
        for_ms: None,
    });
    assert_eq!(
        delayed.message,
        "faults[0]: delay has no real counterpart yet (the proxy holds bytes but does not \
         delay them per message as the simulator does)"
    );
    assert!(delayed.trace.is_none());
    let lossy = refused(Fault::Drop {
        from: Node::Client(0),
        to: Node::Server,
        percent: 50,
        for_ms: None,
    });
    assert_eq!(
        lossy.message,
        "faults[0]: drop has no real counterpart yet (TCP retransmits what a link loses: a \
         loss is only a delay)"
    );
    let lagging = refused(Fault::LagServer {
        server: ServerSelector::Leader,
        resolved: None,
        lag_ms: 500,
        for_ms: None,
    });
    assert_eq!(
        lagging.message,
        "faults[0]: lag_server has no real counterpart yet (needs an ensemble the harness \
         started, with proxies between its servers: use --start-local --ensemble N)"
    );
    let restart = real::run(&scenario("server-restart"), 0, &target, &launcher()).unwrap_err();
    assert_eq!(
        restart.message,
        "faults[0]: restart_server has no real counterpart yet (needs a server the harness \
         started: use --start-local)"
    );
}

#[test]
fn an_ensemble_scenario_runs_only_on_a_local_ensemble_of_its_size() {
    let scenario = scenario("mutex-follower-cut-split-brain");
    let schedule = scenario.fault_schedule(0);
    let refused = |local| real::faults::refusal(&scenario, 0, &schedule, local);
    assert_eq!(
        refused(Some(1)).as_deref(),
        Some(
            "server.ensemble: expected a local ensemble of 3 servers (--start-local --ensemble \
             3), found a standalone server"
        )
    );
    let connected = refused(None).unwrap();
    assert!(
        connected.ends_with("found servers the user runs (--connect)"),
        "{connected}"
    );
    let five = refused(Some(5)).unwrap();
    assert!(five.ends_with("found an ensemble of 5"), "{five}");
    assert_eq!(
        refused(Some(3)),
        None,
        "isolate_from_peers runs on a local ensemble"
    );
}

#[test]
fn a_random_draw_with_no_real_counterpart_is_refused_by_its_seed() {
    let scenario = scenario("random-faults-mutex");
    let target = Target::connect("127.0.0.1:1");
    let seed = (0..100)
        .find(|&seed| {
            let schedule = scenario.fault_schedule(seed);
            schedule
                .iter()
                .any(|f| matches!(f.fault, Fault::Delay { .. } | Fault::Drop { .. }))
        })
        .unwrap();
    let refused = real::run(&scenario, seed, &target, &launcher()).unwrap_err();
    assert!(
        refused
            .message
            .starts_with(&format!("random_faults: seed {seed} draws ")),
        "{}",
        refused.message
    );
}

/// The `call`s of `call` kind each client made, by client.
fn calls_by_client(trace: &Trace, clients: u16, call: fn(&Call) -> bool) -> Vec<usize> {
    (0..clients)
        .map(|client| {
            let of = |e: &&Event| e.client == Some(ClientSlot(client));
            let calls = trace.events.iter().filter(of);
            calls
                .filter(|e| matches!(&e.kind, EventKind::Call { call: c } if call(c)))
                .count()
        })
        .collect()
}

/// Where `trace` records the start and the end of `fault`: their indexes, the start first.
fn fault_span(trace: &Trace, fault: &Fault) -> (usize, usize) {
    let at = |end: bool| {
        let found = trace.events.iter().position(|e| match &e.kind {
            EventKind::FaultStart { fault: f } => !end && f == fault,
            EventKind::FaultEnd { fault: f } => end && f == fault,
            _ => false,
        });
        found.unwrap_or_else(|| panic!("{fault:?}'s start and end are recorded"))
    };
    let (start, end) = (at(false), at(true));
    assert!(start < end, "{fault:?} ends after it starts");
    (start, end)
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_crashed_lease_holder_is_restarted_and_carries_on_on_a_real_server() {
    let _serial = real::testing::one_server_at_a_time();
    // Client 0 (stagger 0) begins its first cycle at 0 ms and holds its lease for 1500 ms, so
    // the crash at 300 ms kills its process holding (or, on a very slow start, asking for)
    // that lease, whatever the scheduling: its session keeps the lease until the server
    // expires it, and the new process carries on with the one cycle not begun, as in the
    // simulator (seed 0: 6 acquires, 6 grants, 5 releases).
    let trace = passes("semaphore-crash");
    let crash = Fault::Crash { client: 0 };
    let (start, _) = fault_span(&trace, &crash);
    let acquire = |c: &Call| matches!(c, Call::Acquire { .. });
    let release = |c: &Call| matches!(c, Call::Release { .. });
    assert_eq!(
        calls_by_client(&trace, 3, acquire),
        [2, 2, 2],
        "every cycle begun once, none repeated after the crash"
    );
    assert_eq!(
        calls_by_client(&trace, 3, release),
        [1, 2, 2],
        "client 0's first lease is never given back: its session's expiry frees it"
    );
    let client_0 = |e: &Event| {
        e.client == Some(ClientSlot(0))
            && matches!(&e.kind, EventKind::Call { call } if acquire(call))
    };
    let mut asks = (trace.events.iter().enumerate()).filter(|(_, e)| client_0(e));
    let (first, second) = (asks.next().unwrap().0, asks.next().unwrap().0);
    assert!(
        first < start && start < second,
        "the dead process asked before the crash, the new one after"
    );
    let grants = count(&trace, |k| {
        matches!(
            k,
            EventKind::Notice {
                notice: Notice::Acquired { .. }
            }
        )
    });
    assert_eq!(grants, 6);
    // The dead process's session outlives it: the server expires it (its log says when).
    let expired = trace.events.iter().position(|e| {
        matches!(
            e.kind,
            EventKind::ServerSession {
                change: ServerSession::Expired,
                ..
            }
        )
    });
    assert!(
        expired.is_some_and(|at| at > start),
        "the dead session expires after the crash"
    );
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_crashed_mutex_client_carries_on_under_random_faults_on_a_real_server() {
    let _serial = real::testing::one_server_at_a_time();
    // Seed 0 draws client 0's crash at 884 ms, pauses of clients 0 and 1 and a server
    // restart. Only what must hold is required: the violation the scenario expects in some
    // seeds (a waiter holding through its old session's node) is a race one run need not show.
    let trace = checked_run("random-faults-mutex", false);
    let crash = scenario("random-faults-mutex").fault_schedule(0)[0].clone();
    assert_eq!(crash.fault, Fault::Crash { client: 0 });
    fault_span(&trace, &crash.fault);
    let acquire = |c: &Call| matches!(c, Call::Acquire { .. });
    assert_eq!(
        calls_by_client(&trace, 3, acquire),
        [3, 3, 3],
        "every cycle begun once, none repeated after the crash"
    );
}

#[test]
fn an_unreachable_server_fails_at_once_naming_the_address() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let scenario = scenario("herd-free-mutex");
    let failed = real::run(
        &scenario,
        0,
        &Target::connect(addr.to_string()),
        &launcher(),
    )
    .unwrap_err();
    assert!(
        failed.message.starts_with(&format!(
            "{addr}: no ZooKeeper server answered within 1000 ms"
        )),
        "{}",
        failed.message
    );
    assert!(failed.trace.is_none());
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_sigstop_longer_than_the_session_splits_the_brain_and_fencing_catches_it() {
    let _serial = real::testing::one_server_at_a_time();
    // Client 0 holds from about 0 ms and is stopped (SIGSTOP) from 300 to 2800 ms; its last
    // heartbeat is before 300 ms, so the server expires its session by 300 + 1000 ms + a tick
    // bucket, deletes its lock node, and client 1 (waiting since 100 ms) acquires well before
    // 2800 ms, while client 0, stopped, still believes it holds: the overlap is the server's
    // doing, not a race (the server's log places the expiry in the pause too). What client 0 does first when continued (its overdue hold timer or
    // the news of its expiry) is a race, so only "no stale access accepted" is asserted.
    let scenario = scenario("gc-pause-fenced");
    let target = standalone(&scenario);
    let trace = real::run(&scenario, 0, &target, &launcher()).unwrap_or_else(|e| panic!("{e}"));
    target.stop();
    let violations = properties::verdict::violations(&trace).unwrap();
    let overlap = violations
        .iter()
        .find(|v| v.property == Property::MutualExclusionBelief)
        .expect("a belief overlap");
    let pause = |end: bool| {
        let at = trace.events.iter().find(|e| match &e.kind {
            EventKind::FaultStart { fault } => !end && matches!(fault, Fault::Pause { .. }),
            EventKind::FaultEnd { fault } => end && matches!(fault, Fault::Pause { .. }),
            _ => false,
        });
        at.expect("the pause is recorded").t
    };
    assert!(
        pause(false) < overlap.at && overlap.at < pause(true),
        "client 1 acquires during the pause: {overlap:?}"
    );
    assert!(
        !violations
            .iter()
            .any(|v| v.property == Property::MutualExclusionFenced),
        "{violations:?}"
    );
    // The server's log says when it expired client 0's session: during the pause.
    let expired = trace.events.iter().find(|e| {
        matches!(
            e.kind,
            EventKind::ServerSession {
                change: ServerSession::Expired,
                ..
            }
        )
    });
    let expired = expired.expect("the server's expiry, read off its log").t;
    assert!(pause(false) < expired && expired < pause(true));
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_client_process_that_dies_ends_the_run_saying_how_with_the_partial_trace() {
    let _serial = real::testing::one_server_at_a_time();
    let scenario = scenario("herd-free-mutex");
    let target = standalone(&scenario);
    // A client process that reads its spec and dies with a word on stderr.
    let dying = ClientLauncher::new(
        "/bin/sh",
        ["-c", "head -n 1 >/dev/null; echo gone >&2; exit 7"],
    );
    let failed = real::run(&scenario, 0, &target, &dying).unwrap_err();
    target.stop();
    assert!(
        failed.message.starts_with("client ")
            && failed
                .message
                .ends_with("'s process died (exit status: 7): gone"),
        "{}",
        failed.message
    );
    assert!(failed.trace.is_some(), "the partial trace is kept");
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn partitions_through_the_proxy_cut_each_client_off_and_pass_on_a_real_server() {
    let _serial = real::testing::one_server_at_a_time();
    // Each cut (800, 800 and 600 ms) outlasts the client's read timeout (two thirds of the
    // 1 s session timeout at most): the client hears nothing and drops the connection
    // itself during its cut, whatever the scheduling. The scenario expects overlaps in some
    // seeds (Curator's lock loop: a waiter holding through its old session's node, 50 of 200
    // simulated seeds), which one real run need not show: only what must hold is required.
    let trace = checked_run("partition-heal", false);
    let mut cuts = Vec::new();
    for event in &trace.events {
        match &event.kind {
            EventKind::FaultStart { fault } => cuts.push((fault.clone(), event.t, None)),
            EventKind::FaultEnd { fault } => {
                let cut = cuts
                    .iter_mut()
                    .find(|(f, _, end)| f == fault && end.is_none());
                cut.expect("a start before the end").2 = Some(event.t);
            }
            _ => {}
        }
    }
    assert_eq!(cuts.len(), 3);
    for (client, (fault, start, end)) in cuts.iter().enumerate() {
        let end = end.unwrap_or_else(|| panic!("{fault:?} healed by itself"));
        let disconnected = trace.events.iter().any(|e| {
            e.client == Some(coordination::ids::ClientSlot(client as u16))
                && (start..=&end).contains(&&e.t)
                && matches!(
                    e.kind,
                    EventKind::RawSession {
                        state: coordination::session::RawState::Disconnected
                    }
                )
        });
        assert!(disconnected, "client {client} noticed its cut {fault:?}");
    }
}

/// The trace's first `FaultStart` (`end`: `FaultEnd`) of `fault`: its index.
fn at(trace: &Trace, fault: &Fault, end: bool) -> usize {
    let found = trace.events.iter().position(|e| match &e.kind {
        EventKind::FaultStart { fault: f } => !end && f == fault,
        EventKind::FaultEnd { fault: f } => end && f == fault,
        _ => false,
    });
    found.unwrap_or_else(|| {
        panic!(
            "{fault:?}'s {} is recorded",
            ["start", "end"][usize::from(end)]
        )
    })
}

#[test]
fn overlapping_restarts_of_the_server_are_refused_naming_both() {
    let mut scenario = scenario("server-downtime-old-session");
    // Its restart at 1000 ms keeps the server down for 3000 ms.
    let overlapping = ScheduledFault::at(2500, Fault::RestartServer { down_ms: 500 });
    scenario.faults.push(overlapping);
    let schedule = scenario.fault_schedule(0);
    assert_eq!(
        real::faults::refusal(&scenario, 0, &schedule, Some(1)).as_deref(),
        Some(
            "faults[1] (restart_server at 2500 ms) starts while faults[0] (restart_server at \
             1000 ms, down 3000 ms) keeps the server down: overlapping server restarts are \
             refused on a real server (a second SIGKILL of an ensemble's leader kills a second \
             server, not one longer downtime as in the simulator)"
        )
    );
    // Back to back (the second at the first's end) is no overlap.
    scenario.faults[1].at_ms = 4000;
    let schedule = scenario.fault_schedule(0);
    assert_eq!(
        real::faults::refusal(&scenario, 0, &schedule, Some(1)),
        None
    );
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn each_fault_starts_on_time_while_earlier_ones_last_on_a_real_server() {
    let _serial = real::testing::one_server_at_a_time();
    let mut overlapping = scenario("herd-free-mutex");
    overlapping.clients = 3;
    overlapping.workload.hold_ms = scenarios::scenario::Span::fixed(300);
    let faults = [
        (
            300,
            Fault::Pause {
                client: 0,
                for_ms: 2000,
            },
        ),
        (500, Fault::ExpireSession { client: 1 }),
        (
            600,
            Fault::Pause {
                client: 0,
                for_ms: 1000,
            },
        ),
        (700, Fault::RestartServer { down_ms: 500 }),
        (
            800,
            Fault::Pause {
                client: 2,
                for_ms: 1500,
            },
        ),
        (900, Fault::Crash { client: 2 }),
    ];
    overlapping.faults = (faults.iter().cloned())
        .map(|(at_ms, fault)| ScheduledFault::at(at_ms, fault))
        .collect();
    // Only fencing is sure under these faults (c0 is stopped past its session, c2 is killed
    // stopped, the server restarts): the test is about when the faults start and end.
    overlapping.properties.clear();
    (overlapping.properties).insert(Property::MutualExclusionFenced, Expectation::Holds);
    let trace = checked(overlapping, true);
    let [long_pause, expiry, short_pause, restart, paused_2, crash] = faults.map(|(_, f)| f);
    // The expiry (500 ms) and the restart (700 ms) start while c0's first pause lasts (to
    // 2300 ms): the injector carried out the old schedule one fault after another.
    assert!(at(&trace, &expiry, false) < at(&trace, &long_pause, true));
    assert!(at(&trace, &restart, false) < at(&trace, &long_pause, true));
    // c2 is crashed while the server restarts and while c2 is paused.
    let crashed = at(&trace, &crash, false);
    assert!(at(&trace, &restart, false) < crashed && crashed < at(&trace, &restart, true));
    assert!(at(&trace, &paused_2, false) < crashed && crashed < at(&trace, &paused_2, true));
    // Two pauses of c0 overlap: it is stopped until the last ends, so it records nothing
    // between the end of the shorter (1600 ms) and the end of the longer (2300 ms).
    let (from, to) = (
        at(&trace, &short_pause, true),
        at(&trace, &long_pause, true),
    );
    assert!(from < to);
    let c0 = Some(ClientSlot(0));
    let moved = trace.events[from..to].iter().find(|e| e.client == c0);
    assert!(moved.is_none(), "c0 ran while still paused: {moved:?}");
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_cut_armed_for_a_request_starts_when_the_proxy_sees_it_on_a_real_server() {
    let _serial = real::testing::one_server_at_a_time();
    // The catalog's cut of client 1 at its first lease create, for 1,135 ms (T = 1 s): longer
    // than the session timeout and a tick, so the server expires that session whatever the
    // scheduling. Whether the three clients then deadlock depends on where the others are
    // when client 1 comes back (3 of 3 runs here, see the scenario), so only what must hold
    // is required.
    let trace = checked_run("semaphore-mutex-cut-at-lease-create", false);
    let sent = trace.events.iter().position(|e| {
        e.client == Some(ClientSlot(1))
            && matches!(&e.kind, EventKind::OpSent {
                request: coordination::zk::Request::Create { path, .. }, ..
            } if path.as_str().contains("/leases/"))
    });
    let sent = sent.expect("client 1 sent a lease create");
    let started = (trace.events.iter())
        .position(|e| matches!(e.kind, EventKind::FaultStart { .. }))
        .expect("the cut started");
    assert!(
        started > sent,
        "the cut started at the create, not before it"
    );
    let late = trace.events[started].t - trace.events[sent].t;
    assert!(
        late < 1_000_000_000,
        "the proxy saw the create {late} ns after it was sent"
    );
    let EventKind::OpSent { op, .. } = trace.events[sent].kind else {
        unreachable!()
    };
    let reply = (trace.events.iter()).find_map(|e| match &e.kind {
        EventKind::Reply {
            op: replied,
            result,
        } if *replied == op && e.client == Some(ClientSlot(1)) => Some(result),
        _ => None,
    });
    let reply = reply.expect("the held create is answered");
    assert!(reply.is_err(), "the held create failed, found {reply:?}");
    let expired = (trace.events[started..].iter()).any(|e| {
        matches!(
            e.kind,
            EventKind::ServerSession {
                change: ServerSession::Expired,
                ..
            }
        )
    });
    assert!(
        expired,
        "the server expired client 1's session during the cut"
    );
}
