//! A client cut off from one server of an ensemble (`cut_from_server`): its connection to that
//! server falls silent, its read timeout ends it, and it moves to another server of its list
//! and resumes its session there, while the other clients and the servers' peers are not cut.

use std::time::Duration;

use coordination::ids::ClientSlot;
use coordination::session::{RawEvent, RawState};
use coordination::zk::SessionId;
use scenarios::catalog::Catalog;
use scenarios::fault::{Fault, ServerSelector};
use scenarios::scenario::ServerSettings;
use sim::Sim;
use trace::EventKind;

use crate::ensemble::{SETTINGS, World, event, event_within, simulate};

/// Sessions of 2 s: the read timeout (2/3 of it), the client's sleep before its next attempt
/// (up to 1 s) and the revalidation on its next server fit in it.
const LONGER_SESSIONS: ServerSettings = ServerSettings {
    session_timeout_ms: 2_000,
    ..SETTINGS
};

/// The fault id the test's cut is installed under.
const CUT: usize = 7;

#[test]
fn a_client_cut_from_its_server_moves_to_another_with_its_session() {
    simulate(21, || async {
        let world = World::start_with(LONGER_SESSIONS).await;
        let (a, session) = world.session_on(0, &[0, 1, 2]).await;
        let (b, _) = world.session_on(1, &[0, 1, 2]).await;
        let own = world.ensemble.resolve(ServerSelector::ServerOf(0));
        let own = own.expect("client 0 is connected");
        world.network.links().cut_client_from(CUT, 0, own);
        // Its read timeout (2/3 of 2 s) ends the silent connection.
        assert_eq!(
            event_within(&a, Duration::from_millis(1_500)).await,
            Some(RawEvent::State {
                state: RawState::Disconnected
            }),
            "the cut connection times out (uncut, it stays up)"
        );
        match event(&a).await {
            RawEvent::State {
                state:
                    RawState::Connected {
                        session: resumed, ..
                    },
            } => assert_eq!(resumed, session, "the same session"),
            other => panic!("connected again, got {other:?}"),
        }
        let now = world.ensemble.resolve(ServerSelector::ServerOf(0));
        assert!(now.is_some_and(|s| s != own), "moved from {own} to {now:?}");
        // The other client, on whichever server, was not cut.
        assert_eq!(event_within(&b, Duration::from_millis(100)).await, None);
    });
}

/// `mutex-holder-cut-from-its-server`, seeds 0..5: the fault is recorded with the server it
/// named, client 0 loses its connection to it, and resumes its first session elsewhere when
/// it gets there in time.
#[test]
fn the_cut_is_resolved_to_the_clients_server_recorded_and_survived() {
    let catalog = Catalog::builtin().expect("the embedded catalog parses");
    let scenario = catalog.get("mutex-holder-cut-from-its-server").unwrap();
    let mut resumed = 0;
    for seed in 0..5 {
        let faults = scenario.fault_schedule(seed);
        let trace = Sim::from_scenario(scenario, seed, faults).run().unwrap();
        let started = (trace.events.iter()).find_map(|e| match &e.kind {
            EventKind::FaultStart {
                fault: Fault::CutFromServer { resolved, .. },
            } => Some((e.t, *resolved)),
            _ => None,
        });
        let (at, resolved) = started.expect("the cut started");
        assert!(resolved.is_some_and(|s| s < 3), "seed {seed}: {resolved:?}");
        let sessions: Vec<(u64, SessionId)> = (trace.events.iter())
            .filter(|e| e.client == Some(ClientSlot(0)))
            .filter_map(|e| match e.kind {
                EventKind::RawSession {
                    state: RawState::Connected { session, .. },
                } => Some((e.t, session)),
                _ => None,
            })
            .collect();
        let first = sessions[0].1;
        let lost = (trace.events.iter()).any(|e| {
            e.t > at
                && e.client == Some(ClientSlot(0))
                && matches!(
                    e.kind,
                    EventKind::RawSession {
                        state: RawState::Disconnected
                    }
                )
        });
        assert!(lost, "seed {seed}: the cut connection was lost");
        if sessions.iter().any(|&(t, s)| t > at && s == first) {
            resumed += 1;
        }
    }
    // The others came to their next server after the leader had expired the session (the
    // client sleeps up to a second before each attempt): 151 of seeds 0..200 resume.
    assert_eq!(resumed, 3, "three of seeds 0..5 resume their session");
}
