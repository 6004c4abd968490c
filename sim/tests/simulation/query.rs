//! Small readers over a trace's events, shared by the tests.

use coordination::fencing::Token;
use coordination::ids::ClientSlot;
use coordination::recipes::{Mode, Notice};
use coordination::session::RawState;
use coordination::zk::{SessionId, Zxid};
use properties::check::timeline::{Interval, Role, Timeline};
use properties::check::{Context, check, check_all};
use recipe_table::property::Property;
use scenarios::catalog::Catalog;
use scenarios::fault::{Fault, Node, ScheduledFault};
use scenarios::scenario::{Scenario, ServerSettings, Span, Workload};
use sim::Sim;
use trace::{Event, EventKind, ServerSession, Source, Trace};

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
        reentrant: 1,
    }
}

/// A run with the tests' server settings (tick 200 ms, T = 2 s), `clients` clients and
/// `workload`.
pub fn sim(name: &str, clients: u16, workload: Workload) -> Sim {
    let server = ServerSettings::standalone(200, T_MS, 1_000);
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

/// The server-side session changes of kind `change`, in trace order.
pub fn server_changes(trace: &Trace, change: ServerSession) -> impl Iterator<Item = &Event> {
    (trace.events.iter()).filter(
        move |e| matches!(&e.kind, EventKind::ServerSession { change: c, .. } if *c == change),
    )
}

/// Count of server-side session changes of kind `change`.
pub fn count_server(trace: &Trace, change: ServerSession) -> usize {
    server_changes(trace, change).count()
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

/// The catalog scenario `name`, as it is.
pub fn catalog_scenario(name: &str) -> Scenario {
    let catalog = Catalog::builtin().expect("the embedded catalog parses");
    catalog
        .get(name)
        .unwrap_or_else(|| panic!("no catalog scenario {name}"))
        .clone()
}

/// The catalog scenario `name` with `clients` clients, each acquiring `acquisitions` times
/// and holding `hold_ms` per cycle, staggered by 100 ms (client 0 first), under `faults`
/// instead of the catalog's.
pub fn catalog_variant(
    name: &str,
    clients: u16,
    acquisitions: u32,
    hold_ms: u64,
    faults: Vec<ScheduledFault>,
) -> Scenario {
    let mut scenario = catalog_scenario(name);
    scenario.clients = clients;
    scenario.workload.acquisitions = acquisitions;
    scenario.workload.hold_ms = Span::fixed(hold_ms);
    scenario.workload.stagger_ms = 100;
    scenario.faults = faults;
    scenario
}

/// Server settings under which a client cut off past its read timeout re-attaches its
/// session: T = 9 s (tick 500 ms), so a read timeout of 6 s, and ZooKeeper's client sleeps
/// 1–2 s before it tries again, well within the 9 s. (At the catalog's T = 1 s a client that
/// noticed a cut has always lost its session by the time it tries again.)
pub const LONG_SESSIONS: ServerSettings = ServerSettings::standalone(500, 9_000, 500);

/// A cut (ms) that outlasts [`LONG_SESSIONS`]' read timeout: the client notices it.
pub const PAST_READ_TIMEOUT_MS: u64 = 6_500;

/// `scenario` with [`LONG_SESSIONS`] and a horizon of at least 60 s to match.
pub fn long_sessions(mut scenario: Scenario) -> Scenario {
    scenario.server = LONG_SESSIONS;
    scenario.horizon_ms = scenario.horizon_ms.max(60_000);
    scenario
}

/// Runs `scenario` (with its own faults) with `seed`.
pub fn run_scenario(scenario: &Scenario, seed: u64) -> Trace {
    Sim::from_scenario(scenario, seed, scenario.faults.clone())
        .run()
        .expect("valid settings")
}

/// Runs `scenario` (with its own faults) with `seed` and checks that every property of its
/// recipe holds in the trace.
pub fn run_checked(scenario: &Scenario, seed: u64) -> Trace {
    let trace = run_scenario(scenario, seed);
    assert_all_hold(scenario, &trace);
    trace
}

/// The checkers' context for a simulated run of `scenario`.
pub fn sim_context(scenario: &Scenario) -> Context {
    Context::for_scenario(scenario, Source::Sim)
}

/// The violations of `property` in `trace`, a run of `scenario`.
pub fn violations(scenario: &Scenario, trace: &Trace, property: Property) -> usize {
    check(trace, property, &sim_context(scenario)).len()
}

/// Every property of `scenario`'s recipe holds in `trace`.
pub fn assert_all_hold(scenario: &Scenario, trace: &Trace) {
    let found = check_all(trace, scenario.recipe.properties(), &sim_context(scenario));
    assert!(found.is_empty(), "{found:#?}");
}

/// `fault` at `at_ms`.
pub fn at(at_ms: u64, fault: Fault) -> ScheduledFault {
    ScheduledFault::at(at_ms, fault)
}

/// Client `client` and the server cut off from each other, both ways, for `for_ms`.
pub fn cut_off(client: u16, for_ms: u64) -> Fault {
    Fault::Partition {
        a: Node::Client(client),
        b: Node::Server,
        oneway: false,
        for_ms: Some(for_ms),
    }
}

/// The notices that `token_of` finds a token in, in trace order: (client, token).
fn tokens(trace: &Trace, token_of: fn(&Notice) -> Option<Token>) -> Vec<(u16, Token)> {
    (trace.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Notice { notice } => Some((e.client?.0, token_of(notice)?)),
            _ => None,
        })
        .collect()
}

/// The IsLeader notices, in trace order: (client, token).
pub fn leaderships(trace: &Trace) -> Vec<(u16, Token)> {
    tokens(trace, |notice| match notice {
        Notice::IsLeader { token, .. } => Some(*token),
        _ => None,
    })
}

/// The Acquired notices, in trace order: (client, token).
pub fn grants(trace: &Trace) -> Vec<(u16, Token)> {
    tokens(trace, |notice| match notice {
        Notice::Acquired { token, .. } => Some(*token),
        _ => None,
    })
}

/// The clients of `notices` (as [`leaderships`] or [`grants`] list them), in order.
pub fn clients_of(notices: &[(u16, Token)]) -> Vec<u16> {
    notices.iter().map(|(client, _)| *client).collect()
}

/// True for an `Acquired` notice, of any mode.
pub fn is_acquired(notice: &Notice) -> bool {
    matches!(notice, Notice::Acquired { .. })
}

/// A matcher of client `client`'s notices that `wanted` accepts, for [`find`] and [`index`].
pub fn notice_of(client: u16, wanted: impl Fn(&Notice) -> bool) -> impl Fn(&Event) -> bool {
    move |event| notice(event, client).is_some_and(|n| wanted(&n))
}

/// Index of client `client`'s first notice that `wanted` accepts, panicking with `what`.
pub fn first_notice(
    trace: &Trace,
    client: u16,
    what: &str,
    wanted: impl Fn(&Notice) -> bool,
) -> usize {
    index(trace, 0, what, notice_of(client, wanted))
}

/// How many of client `client`'s notices `wanted` accepts.
pub fn count_notices(trace: &Trace, client: u16, wanted: impl Fn(&Notice) -> bool) -> usize {
    let matches = notice_of(client, wanted);
    trace.events.iter().filter(|e| matches(e)).count()
}

/// How many `Acquired` notices client `client` got.
pub fn grants_of(trace: &Trace, client: u16) -> usize {
    count_notices(trace, client, is_acquired)
}

/// How many `Acquired` notices each of `scenario`'s clients got in `trace`, by client.
fn grants_per_client(scenario: &Scenario, trace: &Trace) -> Vec<usize> {
    (0..scenario.clients)
        .map(|client| grants_of(trace, client))
        .collect()
}

/// Every client of `scenario` was granted every acquisition of its workload in `trace`, the
/// run with `seed`.
pub fn assert_everyone_served(scenario: &Scenario, trace: &Trace, seed: u64) {
    let all = vec![scenario.workload.acquisitions as usize; scenario.clients.into()];
    assert_eq!(grants_per_client(scenario, trace), all, "seed {seed}");
}

/// Every client of `scenario` was granted at least once in `trace`, the run with `seed`.
pub fn assert_everyone_granted(scenario: &Scenario, trace: &Trace, seed: u64) {
    let grants = grants_per_client(scenario, trace);
    assert!(grants.iter().all(|&n| n >= 1), "seed {seed}: {grants:?}");
}

/// When (ns) client `client` first heard a notice `wanted` accepts.
pub fn heard(trace: &Trace, client: u16, wanted: impl Fn(&Notice) -> bool) -> Option<u64> {
    find(trace, 0, notice_of(client, wanted)).map(|(_, e)| e.t)
}

/// True when `event` is client `client` calling release.
pub fn is_release_call(event: &Event, client: u16) -> bool {
    on(event, client) && matches!(&event.kind, EventKind::Call { call } if call.name() == "release")
}

/// True when `event` is a write the fenced resource rejected.
pub fn is_rejected_write(event: &Event) -> bool {
    matches!(
        event.kind,
        EventKind::ResourceWrite {
            accepted: false,
            ..
        }
    )
}

/// Index of the server's expiry of client `client`'s first session, panicking with `what`.
pub fn first_session_expiry(trace: &Trace, client: u16, what: &str) -> usize {
    let first = *sessions_of(trace, client)
        .first()
        .unwrap_or_else(|| panic!("client {client} never connected"));
    index(trace, 0, what, |e| {
        server_session(e, first, ServerSession::Expired)
    })
}

/// The believed holds of `mode` in `trace`.
pub fn holds(trace: &Trace, mode: Mode) -> Vec<Interval> {
    Timeline::of(trace)
        .holds
        .into_iter()
        .filter(|h| h.role == Role::Lock(mode))
        .collect()
}

/// The most holds of `mode` believed at one instant.
pub fn most_at_once(trace: &Trace, mode: Mode) -> usize {
    let len = trace.events.len();
    let holds = holds(trace, mode);
    (holds.iter())
        .map(|grant| {
            (holds.iter())
                .filter(|h| h.start <= grant.start && grant.start < h.end_or(len))
                .map(|h| h.count as usize)
                .sum()
        })
        .max()
        .unwrap_or(0)
}
