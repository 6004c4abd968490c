//! A session moving between servers of the simulated ensemble (`sim/src/server/member.rs`):
//! the server it moves to asks the leader to revalidate it before the client is connected,
//! and the leader then takes the session's writes only from that server, so a write its old
//! server still holds is refused (`SESSIONMOVED`) instead of landing behind the client's back.

use std::time::Duration;

use coordination::recipes::Notice;
use coordination::session::{RawEvent, RawState};
use coordination::zk::ZkError;
use madsim::runtime::Handle;
use madsim::time::{sleep, timeout};
use recipe_table::property::Property;
use scenarios::scenario::ServerSettings;
use sim::client::SimSession;

use crate::ensemble::{FOLLOWER, LEADER, World, call, create, event, path, simulate};
use crate::query::{catalog_scenario, notice, violations};

/// The other follower.
const OTHER: u16 = 1;

/// A seed whose shuffle of the host list `[FOLLOWER, OTHER]` puts `FOLLOWER` first.
const SHUFFLED_FOLLOWER_FIRST: u64 = 3;

/// Tick 400 ms, syncLimit 20 ticks (8 s), sessions of 6 s: a client notices a silent server
/// after its 4 s read timeout and has moved to another within 5.1 s (its random sleep is
/// at most 1 s), before the leader, which heard nothing of it meanwhile, expires its session
/// and before anyone gives up on a paused server.
const SETTINGS: ServerSettings = ServerSettings {
    ensemble: 3,
    sync_limit: 20,
    ..ServerSettings::standalone(400, 6_000, 60_000)
};

/// How long a server is paused: longer than a client's move, shorter than syncLimit and
/// than the session.
const PAUSE: Duration = Duration::from_millis(5_500);

/// Waits for `session`'s next `Connected`.
async fn connected(session: &SimSession) {
    loop {
        if let RawEvent::State {
            state: RawState::Connected { .. },
        } = event(session).await
        {
            return;
        }
    }
}

/// A world of [`SETTINGS`] whose client 0 is connected to `FOLLOWER`, with `OTHER` next on
/// its host list.
async fn on_the_follower() -> (World, SimSession) {
    let world = World::start_with(SETTINGS).await;
    let (a, _) = world.session_on(0, &[FOLLOWER, OTHER]).await;
    assert!(
        world.servers[usize::from(FOLLOWER)].serves_client(0),
        "the seed's shuffle puts the follower first"
    );
    (world, a)
}

#[test]
fn a_write_its_old_server_still_holds_is_refused_once_the_session_moved() {
    simulate(SHUFFLED_FOLLOWER_FIRST, || async {
        let (world, a) = on_the_follower().await;
        let handle = Handle::current();
        world.ensemble.pause(FOLLOWER, 0, &handle);
        // Held in the paused follower's mailbox; the client gives up on the connection and
        // moves to the other follower.
        assert!(matches!(
            call(&a, 1, create("/late")).await,
            RawEvent::Reply {
                result: Err(ZkError::ConnectionLoss),
                ..
            }
        ));
        connected(&a).await;
        assert!(world.servers[usize::from(OTHER)].serves_client(0));
        // The follower runs again and forwards the create it held.
        world.ensemble.resume(FOLLOWER, 0, &handle);
        sleep(PAUSE).await;
        for server in [FOLLOWER, OTHER, LEADER] {
            let tree = world.servers[usize::from(server)].tree();
            assert!(
                tree.get(&path("/late")).is_none(),
                "server {server} applied a create its old server forwarded after the move"
            );
        }
    });
}

#[test]
fn a_session_resumed_on_a_follower_waits_for_the_leader_to_revalidate_it() {
    simulate(SHUFFLED_FOLLOWER_FIRST, || async {
        let (world, a) = on_the_follower().await;
        let handle = Handle::current();
        world.ensemble.pause(LEADER, 0, &handle);
        assert!(world.ensemble.crash(FOLLOWER, &handle));
        assert!(
            timeout(PAUSE, connected(&a)).await.is_err(),
            "connected again while the leader, who must revalidate the session, was paused"
        );
        world.ensemble.resume(LEADER, 0, &handle);
        connected(&a).await;
        assert!(world.servers[usize::from(OTHER)].serves_client(0));
    });
}

/// The catalog's `random-server-faults-mutex`, seed 977: while the leader is paused, c0's
/// attempts to resume its session reach two servers, one of which it has given up on when
/// the leader runs again and revalidates both, that one last: the leader takes the session's
/// writes only from a server c0 is no longer on. The server c0 is on closes its connection at
/// the refusal, c0 reconnects, and its revalidation makes that server the owner again; c0's
/// writes go through. (Answered `SESSIONMOVED` instead, c0's every write failed so until its
/// acquire gave up: ZOOKEEPER-710, which ZooKeeper fixed by closing the connection.)
#[test]
fn a_client_whose_writes_are_refused_as_moved_reconnects_and_writes_again() {
    let scenario = catalog_scenario("random-server-faults-mutex");
    let trace = (sim::Sim::from_scenario(&scenario, 977, scenario.fault_schedule(977)).run())
        .expect("valid settings");
    let refusals = (trace.events.iter())
        .filter(|e| notice(e, 0).is_some_and(|n| matches!(n, Notice::Failed { .. })))
        .count();
    assert_eq!(refusals, 0, "c0's acquire failed");
    assert_eq!(violations(&scenario, &trace, Property::Progress), 0);
}
