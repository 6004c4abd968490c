//! What the tests of libraries' contenders in place of a scenario's clients share: running a
//! catalog scenario so, judging it by the scenario's expectations, finding events in its
//! trace, and what a holder's pause, session expiry and crash must do to any library's lock.

use coordination::ids::ClientSlot;
use coordination::recipes::Notice;
use coordination::session::RawState;
use coordination::zk::SessionId;
use real::CuratorPlacement;
use real::contender::Library;
use real::curator::fifo::out_of_order_grants;
use real::local::Settings;
use real::target::Target;
use recipe_table::property::{Expectation, Property};
use scenarios::catalog::Catalog;
use scenarios::fault::Fault;
use scenarios::scenario::{Scenario, Span};
use trace::{Event, EventKind, ServerSession, Trace};

use super::launcher;

/// The catalog's scenario `name`.
pub fn scenario(name: &str) -> Scenario {
    Catalog::builtin().unwrap().get(name).unwrap().clone()
}

/// Runs `scenario` (seed 0) with `library`'s contenders in place of its clients on a fresh
/// standalone server with the scenario's tick, and checks every expectation the scenario
/// states ([`meets_expectations`]).
pub fn in_place(scenario: &Scenario, library: &dyn Library) -> Trace {
    let trace = run_in_place(scenario, library);
    meets_expectations(scenario, &trace);
    trace
}

/// Runs `scenario` (seed 0) with `library`'s contenders in place of its clients on a fresh
/// standalone server with the scenario's tick.
pub fn run_in_place(scenario: &Scenario, library: &dyn Library) -> Trace {
    let _serial = real::testing::one_server_at_a_time();
    let settings = Settings::of(&scenario.server);
    let target = Target::start_local(1, settings).unwrap_or_else(|e| panic!("{e}"));
    let trace = real::run_with_contenders(
        scenario,
        0,
        &target,
        &launcher(),
        library,
        CuratorPlacement::InPlace,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    target.stop();
    trace
}

/// `herd-free-mutex` (no fault) with 3 clients of 20 short holds each, run with `library`'s
/// contenders in place of its clients, and what such a run guarantees: every acquisition
/// granted and released, no violation, every write accepted, grants in queue order, and the
/// trace's settings naming the contenders.
pub fn fault_free_in_place(library: &dyn Library) -> Trace {
    let mut scenario = scenario("herd-free-mutex");
    assert!(scenario.faults.is_empty());
    scenario.clients = 3;
    scenario.workload.acquisitions = 20;
    scenario.workload.hold_ms = Span { min: 1, max: 4 };
    scenario.workload.think_ms = Span { min: 0, max: 3 };
    scenario.horizon_ms = 50_000;
    let trace = run_in_place(&scenario, library);
    for client in 0..3 {
        let of = |wanted: fn(&Notice) -> bool| {
            (trace.events.iter())
                .filter(|e| e.client == Some(ClientSlot(client)))
                .filter(|e| matches!(&e.kind, EventKind::Notice { notice } if wanted(notice)))
                .count()
        };
        let acquired = of(|n| matches!(n, Notice::Acquired { .. }));
        let released = of(|n| matches!(n, Notice::Released { .. }));
        assert_eq!((acquired, released), (20, 20), "client {client}");
    }
    let violations = properties::verdict::violations(&trace).unwrap();
    assert!(violations.is_empty(), "{violations:?}");
    let writes = (trace.events.iter())
        .filter(|e| matches!(e.kind, EventKind::ResourceWrite { accepted: true, .. }))
        .count();
    assert_eq!(writes, 60, "every write accepted");
    let out_of_order = out_of_order_grants(&trace.events);
    assert!(out_of_order.is_empty(), "{out_of_order:?}");
    let name = library.name().to_lowercase();
    assert_eq!(trace.meta.settings[format!("{name}_contenders")], 3);
    assert_eq!(trace.meta.settings[format!("{name}_in_place")], true);
    trace
}

/// Checks every expectation `scenario` states on `trace`: the same verdicts the simulator's
/// clients earn.
pub fn meets_expectations(scenario: &Scenario, trace: &Trace) {
    let violations = properties::verdict::violations(trace).unwrap();
    for property in scenario.recipe.properties() {
        let violated = violations.iter().any(|v| v.property == *property);
        let events = lines(trace);
        match scenario.expectation(*property) {
            Expectation::Holds => assert!(!violated, "{property}: {violations:?}\n{events}"),
            Expectation::Violated => assert!(violated, "{property} is not violated:\n{events}"),
            Expectation::Unchecked => {}
        }
    }
}

/// The events of `trace`, one a line (ms, client, what): for failure messages.
pub fn lines(trace: &Trace) -> String {
    let line = |e: &Event| format!("{:>9.1} {:?} {:?}", e.t as f64 / 1e6, e.client, e.kind);
    trace.events.iter().map(line).collect::<Vec<_>>().join("\n")
}

/// The index of the first event of `trace` that `wanted` picks.
pub fn first(trace: &Trace, what: &str, wanted: impl Fn(&Event) -> bool) -> usize {
    (trace.events.iter().position(wanted)).unwrap_or_else(|| panic!("no {what} in the trace"))
}

/// Where `trace` records the start and the end of `fault`: their indexes, the start first.
pub fn fault_span(trace: &Trace, fault: &Fault) -> (usize, usize) {
    let start = first(
        trace,
        "fault start",
        |e| matches!(&e.kind, EventKind::FaultStart { fault: f } if f == fault),
    );
    let end = first(
        trace,
        "fault end",
        |e| matches!(&e.kind, EventKind::FaultEnd { fault: f } if f == fault),
    );
    assert!(start < end, "{fault:?} ends after it starts");
    (start, end)
}

/// The sessions the contender on `slot` connected on, as the trace records its `ready` and
/// `session` reports: where, and which.
pub fn sessions_of(trace: &Trace, slot: u16) -> Vec<(usize, SessionId)> {
    (trace.events.iter().enumerate())
        .filter_map(|(i, e)| match e.kind {
            EventKind::RawSession {
                state: RawState::Connected { session, .. },
            } if e.client == Some(ClientSlot(slot)) => Some((i, session)),
            _ => None,
        })
        .collect()
}

/// The session the contender on `slot` connected with first.
pub fn session_of(trace: &Trace, slot: u16) -> SessionId {
    let sessions = sessions_of(trace, slot);
    let first = sessions.first().map(|(_, session)| *session);
    first.unwrap_or_else(|| panic!("contender {slot}'s session is recorded"))
}

/// The index of the first notice on `slot` that `wanted` picks, from `from` on.
pub fn notice(trace: &Trace, slot: u16, from: usize, wanted: fn(&Notice) -> bool) -> Option<usize> {
    (trace.events.iter().enumerate().skip(from)).find_map(|(i, e)| match &e.kind {
        EventKind::Notice { notice } if e.client == Some(ClientSlot(slot)) && wanted(notice) => {
            Some(i)
        }
        _ => None,
    })
}

/// The index of the server's expiry of client 0's first session in `trace`, which must come
/// between `start` and `end` (a pause's).
pub fn expired_during(trace: &Trace, (start, end): (usize, usize)) -> usize {
    let session = session_of(trace, 0);
    let expired = first(trace, "expiry of client 0's session", |e| {
        e.kind
            == EventKind::ServerSession {
                session,
                change: ServerSession::Expired,
            }
    });
    assert!(start < expired && expired < end, "expired during the pause");
    expired
}

/// What a GC pause of the holder does to `library`'s lock in place of the clients of the
/// catalog's `name` (`gc-pause-fenced` or `gc-pause-split-brain`: two clients, client 0 holds
/// from about 0 ms for 2 s and is stopped from 300 to 2800 ms, session timeout 1 s), beyond
/// the scenario's own expectations ([`in_place`]): the pause is recorded on client 0; the
/// stopped contender does nothing meanwhile (no report stamped, no command sent: its hold
/// timer, due at about 2000 ms, takes effect when it runs again); the server expires its
/// session during the pause, and client 1 acquires then, while client 0 still believes it
/// holds (belief exclusion violated, by the server's doing, not a race); and client 0's
/// first access after the pause is its stale write, made with its old token.
pub fn holder_paused_past_its_session(name: &str, library: &dyn Library) -> Trace {
    let scenario = scenario(name);
    let trace = run_in_place(&scenario, library);
    let pause = Fault::Pause {
        client: 0,
        for_ms: 2500,
    };
    let (start, end) = fault_span(&trace, &pause);
    // The scenario's premise: client 0 holds when it is stopped (its first acquire takes
    // tens of ms unloaded, within the 300 ms before the pause).
    let acquired = notice(&trace, 0, 0, |n| matches!(n, Notice::Acquired { .. }));
    let holds = acquired.is_some_and(|acquired| acquired < start);
    assert!(holds, "client 0 holds at the pause:\n{}", lines(&trace));
    meets_expectations(&scenario, &trace);
    let during = &trace.events[start + 1..end];
    assert!(
        !during.iter().any(|e| e.client == Some(ClientSlot(0))),
        "the stopped contender does nothing: {during:?}"
    );
    let expired = expired_during(&trace, (start, end));
    let granted = notice(&trace, 1, 0, |n| matches!(n, Notice::Acquired { .. }));
    let granted = granted.expect("client 1 acquires");
    assert!(
        expired < granted && granted < end,
        "client 1 acquires during the pause"
    );
    let violations = properties::verdict::violations(&trace).unwrap();
    let overlap = (violations.iter())
        .find(|v| v.property == Property::MutualExclusionBelief)
        .expect("a belief overlap");
    assert!(trace.events[start].t < overlap.at && overlap.at < trace.events[end].t);
    let stale = trace.events[end..].iter().find(|e| {
        e.client == Some(ClientSlot(0))
            && matches!(
                e.kind,
                EventKind::ResourceRead { .. } | EventKind::ResourceWrite { .. }
            )
    });
    let stale = stale.expect("client 0 accesses the resource after the pause");
    assert!(
        matches!(stale.kind, EventKind::ResourceWrite { token, .. } if token < granted_token(&trace, granted)),
        "its first access is the stale write: {stale:?}"
    );
    let ms = |i: usize| trace.events[i].t as f64 / 1e6;
    let released = notice(&trace, 0, end, |n| matches!(n, Notice::Released { .. }));
    eprintln!(
        "{name}: pause {:.0}..{:.0} ms, client 0's session expired at {:.0} ms, client 1 \
         granted at {:.0} ms, client 0's stale write at {:.0} ms, its release answered at \
         {:.0} ms",
        ms(start),
        ms(end),
        ms(expired),
        ms(granted),
        stale.t as f64 / 1e6,
        released.map_or(0.0, ms)
    );
    trace
}

/// The token of the grant at `index`.
pub fn granted_token(trace: &Trace, index: usize) -> coordination::fencing::Token {
    match trace.events[index].kind {
        EventKind::Notice {
            notice: Notice::Acquired { token, .. },
        } => token,
        ref other => panic!("not a grant: {other:?}"),
    }
}

/// Whether the stale write of client 0 (its first write) was accepted.
pub fn stale_write_accepted(trace: &Trace) -> bool {
    let write = trace.events.iter().find_map(|e| match e.kind {
        EventKind::ResourceWrite { accepted, .. } if e.client == Some(ClientSlot(0)) => {
            Some(accepted)
        }
        _ => None,
    });
    write.expect("client 0 writes")
}

/// Client 0 of `gc-pause-fenced` holding for 5 s (one acquisition each, client 1 starting a
/// second after it), its session expired by the executor at 2 s instead of its process
/// paused: it holds by then however slow its first acquire on a loaded machine, and long
/// enough afterwards that its library hears the expiry while it holds, however long it takes
/// to reconnect (the ZooKeeper Java client sleeps up to a second first).
pub fn holder_expired() -> Scenario {
    let mut scenario = scenario("gc-pause-fenced");
    scenario.workload.stagger_ms = 1000;
    scenario.faults[0].at_ms = 2000;
    scenario.faults[0].fault = Fault::ExpireSession { client: 0 };
    scenario.workload.acquisitions = 1;
    scenario.workload.hold_ms = Span {
        min: 5000,
        max: 5000,
    };
    // Whether client 1 is granted before or after the holder hears `suspended` is a race
    // (the server deletes the node at the close; Curator's client hears of the closed
    // connection when continued): belief exclusion is left unchecked.
    scenario.properties.remove(&Property::MutualExclusionBelief);
    scenario
}

/// What `library` tells a holder whose session the executor expires ([`holder_expired`]):
/// the expiry is recorded; the holder hears `suspended`, then `lost`, while it holds (after
/// the expiry, before its release); its write with its old token is rejected; when its
/// library `reconnects` by itself, it connects on a new session, which the contender reports
/// (a library that does not has no acquire left to open one for, and stays on its first).
pub fn holder_hears_its_expiry(library: &dyn Library, reconnects: bool) {
    let scenario = holder_expired();
    let trace = in_place(&scenario, library);
    let (start, _) = fault_span(&trace, &Fault::ExpireSession { client: 0 });
    let heard = |what: &str, wanted: fn(&Notice) -> bool| {
        let found = notice(&trace, 0, start, wanted);
        found.unwrap_or_else(|| panic!("no {what} after the expiry:\n{}", lines(&trace)))
    };
    let acquired = notice(&trace, 0, 0, |n| matches!(n, Notice::Acquired { .. }));
    let holds = acquired.is_some_and(|acquired| acquired < start);
    assert!(holds, "client 0 holds at the expiry:\n{}", lines(&trace));
    let suspended = heard("suspended", |n| matches!(n, Notice::Suspended { .. }));
    let lost = heard("lost", |n| matches!(n, Notice::Lost { .. }));
    let released = heard("released", |n| matches!(n, Notice::Released { .. }));
    assert!(suspended < lost && lost < released, "{}", lines(&trace));
    assert!(!stale_write_accepted(&trace));
    // Its library connects on a new session, which it reports: the checkers know it.
    let sessions = sessions_of(&trace, 0);
    if !reconnects {
        assert_eq!(sessions.len(), 1, "{sessions:?}\n{}", lines(&trace));
        return;
    }
    let [(_, first_session), (again, second_session)] = sessions[..] else {
        panic!("two sessions of client 0: {sessions:?}\n{}", lines(&trace));
    };
    assert!(start < again && first_session != second_session);
}

/// Client 0 of `gc-pause-fenced` crashed (SIGKILL) at 1.5 s of its 2 s hold instead of
/// paused (client 1 starting a second after it, so that client 0 holds by then however slow
/// a loaded machine): every property holds (a crash ends the client's holds in the
/// checkers' eyes, and its next process starts afresh), unlike a pause.
pub fn holder_crashed() -> Scenario {
    let mut scenario = scenario("gc-pause-fenced");
    scenario.workload.stagger_ms = 1000;
    scenario.faults[0].at_ms = 1500;
    scenario.faults[0].fault = Fault::Crash { client: 0 };
    scenario
        .properties
        .insert(Property::MutualExclusionBelief, Expectation::Holds);
    scenario
}

/// What a crash of the holder does to `library`'s lock in place of the clients
/// ([`holder_crashed`]): its process is killed after its last reports are in and a new one
/// takes its place with a new session; the dead holder's node stays until the server expires
/// its session, and only then is client 1 granted; the new process carries on with the one
/// cycle the dead one had not begun, so every acquisition is granted (the crashed one
/// counted: it was granted before the crash).
pub fn holder_crash_restarts(library: &dyn Library) {
    let scenario = holder_crashed();
    let trace = run_in_place(&scenario, library);
    let (start, end) = fault_span(&trace, &Fault::Crash { client: 0 });
    let acquired = notice(&trace, 0, 0, |n| matches!(n, Notice::Acquired { .. }));
    let holds = acquired.is_some_and(|acquired| acquired < start);
    assert!(holds, "client 0 holds at the crash:\n{}", lines(&trace));
    meets_expectations(&scenario, &trace);
    let during = &trace.events[start + 1..end];
    assert!(
        !during.iter().any(|e| e.client == Some(ClientSlot(0))),
        "{during:?}"
    );
    let sessions = sessions_of(&trace, 0);
    let [(_, first_session), (again, second_session)] = sessions[..] else {
        panic!("two sessions of client 0: {sessions:?}\n{}", lines(&trace));
    };
    assert!(end < again && first_session != second_session);
    let expired = first(&trace, "expiry of the dead holder's session", |e| {
        e.kind
            == EventKind::ServerSession {
                session: first_session,
                change: ServerSession::Expired,
            }
    });
    let granted = notice(&trace, 1, 0, |n| matches!(n, Notice::Acquired { .. }));
    assert!(
        start < expired && Some(expired) < granted,
        "{}",
        lines(&trace)
    );
    let grants = |slot| {
        (trace.events.iter())
            .filter(|e| e.client == Some(ClientSlot(slot)))
            .filter(|e| {
                matches!(
                    e.kind,
                    EventKind::Notice {
                        notice: Notice::Acquired { .. }
                    }
                )
            })
            .count()
    };
    assert_eq!((grants(0), grants(1)), (2, 2), "{}", lines(&trace));
    let ms = |i: usize| trace.events[i].t as f64 / 1e6;
    eprintln!(
        "{}: crash at {:.0} ms, restarted at {:.0} ms, ready on a new session at {:.0} ms; the \
         dead holder's session expired at {:.0} ms, client 1 granted at {:.0} ms",
        trace.meta.scenario,
        ms(start),
        ms(end),
        ms(again),
        ms(expired),
        granted.map_or(0.0, ms)
    );
}

/// What must hold when a paused holder's session expires, whatever it believes: no two live
/// sessions hold at once, the `fence` turns its stale write away, and every call is answered.
pub fn fenced_off(fence: Property) -> [Property; 3] {
    [Property::LiveSessionExclusion, fence, Property::Answered]
}
