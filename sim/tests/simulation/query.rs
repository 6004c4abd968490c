//! Small readers over a trace's events, shared by the tests.

use lock::coordination::RawState;
use lock::fencing::Token;
use lock::ids::ClientSlot;
use lock::recipes::Notice;
use lock::zk::{SessionId, Zxid};
use scenarios::catalog::Catalog;
use scenarios::check::{Context, check, check_all};
use scenarios::fault::{Fault, ScheduledFault};
use scenarios::property::Property;
use scenarios::scenario::{Scenario, ServerSettings, Span, Workload};
use scenarios::trace::{Event, EventKind, ServerSession, Source, Trace};
use sim::Sim;

/// The session timeout every test runs with, in ms (10 ticks of 200 ms).
pub const T_MS: u64 = 2_000;

/// The tests' workload: `acquisitions` holds of `hold_ms` each, 100 ms of think time,
/// clients staggered by 100 ms so that client 0 acquires first.
pub fn workload(acquisitions: u32, hold_ms: u64) -> Workload {
    Workload {
        acquisitions,
        hold_ms: Span::fixed(hold_ms),
        think_ms: Span::fixed(100),
        acquire_timeout_ms: None,
        fenced: true,
        stagger_ms: 100,
    }
}

/// A run with the tests' server settings (tick 200 ms, T = 2 s), `clients` clients and
/// `workload`.
pub fn sim(name: &str, clients: u16, workload: Workload) -> Sim {
    let server = ServerSettings {
        tick_ms: 200,
        session_timeout_ms: T_MS,
        container_sweep_ms: 1_000,
    };
    Sim::new(name)
        .server(server)
        .clients(clients)
        .workload(workload)
        .horizon_ms(60_000)
}

/// Runs `sim` with `seed` and `faults`.
pub fn run(sim: Sim, seed: u64, faults: Vec<ScheduledFault>) -> Trace {
    sim.seed(seed).faults(faults).run().expect("valid settings")
}

/// Index and event of the first event from `from` on that `matches`.
pub fn find(
    trace: &Trace,
    from: usize,
    matches: impl Fn(&Event) -> bool,
) -> Option<(usize, &Event)> {
    trace
        .events
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, e)| matches(e))
}

/// Index of the first event from `from` on that `matches`, panicking with `what`.
pub fn index(trace: &Trace, from: usize, what: &str, matches: impl Fn(&Event) -> bool) -> usize {
    find(trace, from, matches)
        .unwrap_or_else(|| panic!("no {what} in the trace"))
        .0
}

/// True when `event` happened on client `client`.
pub fn on(event: &Event, client: u16) -> bool {
    event.client == Some(ClientSlot(client))
}

/// The notice of `event` if it is client `client`'s.
pub fn notice(event: &Event, client: u16) -> Option<Notice> {
    match &event.kind {
        EventKind::Notice { notice } if on(event, client) => Some(*notice),
        _ => None,
    }
}

/// The raw session state of `event` if it is client `client`'s.
pub fn raw(event: &Event, client: u16) -> Option<RawState> {
    match &event.kind {
        EventKind::RawSession { state } if on(event, client) => Some(*state),
        _ => None,
    }
}

/// The sessions client `client` was connected with, in order of first appearance.
pub fn sessions_of(trace: &Trace, client: u16) -> Vec<SessionId> {
    let mut sessions = Vec::new();
    for event in &trace.events {
        if let Some(RawState::Connected { session, .. }) = raw(event, client)
            && !sessions.contains(&session)
        {
            sessions.push(session);
        }
    }
    sessions
}

/// True when `event` is the server changing `session` by `change`.
pub fn server_session(event: &Event, session: SessionId, change: ServerSession) -> bool {
    matches!(
        &event.kind,
        EventKind::ServerSession { session: s, change: c } if *s == session && *c == change
    )
}

/// Count of server-side session changes of kind `change`.
pub fn count_server(trace: &Trace, change: ServerSession) -> usize {
    (trace.events.iter())
        .filter(|e| matches!(&e.kind, EventKind::ServerSession { change: c, .. } if *c == change))
        .count()
}

/// The zxids of every change the server applied, in trace order.
pub fn applied_zxids(trace: &Trace) -> Vec<Zxid> {
    (trace.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::OpApplied { zxid, .. } => *zxid,
            _ => None,
        })
        .collect()
}

/// The catalog scenario `name` with `clients` clients, each holding `hold_ms` per cycle,
/// staggered by 100 ms (client 0 first), under `faults` instead of the catalog's.
pub fn catalog_variant(
    name: &str,
    clients: u16,
    hold_ms: u64,
    faults: Vec<ScheduledFault>,
) -> Scenario {
    let catalog = Catalog::builtin().expect("the embedded catalog parses");
    let mut scenario = catalog
        .get(name)
        .unwrap_or_else(|| panic!("no catalog scenario {name}"))
        .clone();
    scenario.clients = clients;
    scenario.workload.hold_ms = Span::fixed(hold_ms);
    scenario.workload.stagger_ms = 100;
    scenario.faults = faults;
    scenario
}

/// Runs `scenario` (with its own faults) with `seed`.
pub fn run_scenario(scenario: &Scenario, seed: u64) -> Trace {
    Sim::from_scenario(scenario, seed, scenario.faults.clone())
        .run()
        .expect("valid settings")
}

/// The violations of `property` in `trace`, a run of `scenario`.
pub fn violations(scenario: &Scenario, trace: &Trace, property: Property) -> usize {
    let cx = Context::for_scenario(scenario, Source::Sim);
    check(trace, property, &cx).len()
}

/// Every property of `scenario`'s recipe holds in `trace`.
pub fn assert_all_hold(scenario: &Scenario, trace: &Trace) {
    let cx = Context::for_scenario(scenario, Source::Sim);
    let found = check_all(trace, scenario.recipe.properties(), &cx);
    assert!(found.is_empty(), "{found:#?}");
}

/// `fault` at `at_ms`.
pub fn at(at_ms: u64, fault: Fault) -> ScheduledFault {
    ScheduledFault { at_ms, fault }
}

/// The IsLeader notices, in trace order: (client, token).
pub fn leaderships(trace: &Trace) -> Vec<(u16, Token)> {
    (trace.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Notice {
                notice: Notice::IsLeader { token, .. },
            } => Some((e.client?.0, *token)),
            _ => None,
        })
        .collect()
}
