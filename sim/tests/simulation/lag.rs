//! A follower that hears its peers late (`lag_server`, `Links::lag_from_peers`): it applies
//! each write its lag after the leader, so its clients read older state and wait that much
//! longer for their own writes; and the leader, hearing of the follower's sessions that much
//! later, expires a session whose client is connected and answered all along. A lag past
//! syncLimit gets the follower dropped by the leader (`SyncLimitCheck`), and its clients move.

use std::time::Duration;

use coordination::session::{RawEvent, RawState};
use madsim::time::{Instant, sleep};
use scenarios::scenario::ServerSettings;

use crate::ensemble::{
    FOLLOWER, LEADER, SETTINGS, SYNC_LIMIT, World, call, create, created, event, event_within,
    finds, simulate,
};

/// Below syncLimit (2 s), above a round trip and a tick.
const LAG: Duration = Duration::from_millis(800);

/// `/x` created through the leader, then read on the follower 100 ms later and again after
/// `lag` more, while the follower lags by `lag` (none: the control): what each read found.
async fn reads_after_a_create(lag: Option<Duration>) -> (bool, bool) {
    let world = World::start().await;
    let (a, _) = world.session(0, FOLLOWER).await;
    let (b, _) = world.session(1, LEADER).await;
    if let Some(lag) = lag {
        world.lag(FOLLOWER, lag);
    }
    assert!(created(&call(&b, 1, create("/x")).await));
    sleep(Duration::from_millis(100)).await;
    let soon = finds(&a, 1, "/x").await;
    sleep(LAG).await;
    let later = finds(&a, 2, "/x").await;
    (soon, later)
}

#[test]
fn a_lagging_follower_answers_reads_from_state_its_lag_old() {
    simulate(11, || async {
        assert_eq!(
            reads_after_a_create(Some(LAG)).await,
            (false, true),
            "stale 100 ms after the create, caught up after the lag"
        );
    });
    simulate(11, || async {
        assert_eq!(
            reads_after_a_create(None).await,
            (true, true),
            "without the lag the follower applied the create within a round trip"
        );
    });
}

#[test]
fn each_read_records_the_server_that_answered_it_and_how_far_that_server_had_applied() {
    simulate(13, || async {
        let world = World::start().await;
        let (a, on_follower) = world.session(0, FOLLOWER).await;
        let (b, on_leader) = world.session(1, LEADER).await;
        world.lag(FOLLOWER, LAG);
        assert!(created(&call(&b, 1, create("/x")).await));
        assert!(finds(&b, 2, "/x").await);
        assert!(!finds(&a, 1, "/x").await);
        let (leader_reads, follower_reads) =
            (world.reads_of(on_leader), world.reads_of(on_follower));
        let ([on_leader], [on_follower]) = (&leader_reads[..], &follower_reads[..]) else {
            panic!("one read each: {leader_reads:?}, {follower_reads:?}");
        };
        assert_eq!((on_leader.server, on_follower.server), (LEADER, FOLLOWER));
        assert!(
            on_follower.zxid < on_leader.zxid,
            "the lagging follower read before the create the leader had applied: \
             {on_follower:?}, {on_leader:?}"
        );
    });
}

#[test]
fn a_lagging_followers_client_waits_the_lag_for_its_own_write() {
    simulate(12, || async {
        let world = World::start().await;
        let (a, _) = world.session(0, FOLLOWER).await;
        world.lag(FOLLOWER, LAG);
        let asked = Instant::now();
        assert!(created(&call(&a, 1, create("/x")).await));
        let waited = asked.elapsed();
        // Forwarded at once, committed by the leader and the other follower, answered when
        // the commit reaches the lagging follower.
        assert!(
            LAG <= waited && waited <= LAG + Duration::from_millis(100),
            "answered {waited:?} after it was asked"
        );
        // What the leader sent during the lag still arrives in order, behind it: once that
        // has drained, the follower is as quick as the others.
        world.end_lag();
        sleep(LAG).await;
        let asked = Instant::now();
        assert!(created(&call(&a, 2, create("/y")).await));
        assert!(
            asked.elapsed() < Duration::from_millis(50),
            "no lag once it ends"
        );
    });
}

#[test]
fn the_leader_expires_a_session_a_lagging_follower_keeps_serving() {
    simulate(13, || async {
        let world = World::start().await;
        let (a, session) = world.session(0, FOLLOWER).await;
        // Longer than the 1 s session: the leader's pings, which the follower answers with
        // its clients' session touches, reach it that late, so the leader hears no touch
        // for 1.5 s once the lag starts.
        let lag = Duration::from_millis(1_500);
        assert!(lag < SYNC_LIMIT);
        world.lag(FOLLOWER, lag);
        let quiet = event_within(&a, Duration::from_millis(1_300)).await;
        assert_eq!(quiet, None, "the client's connection stays healthy");
        let leader = &world.servers[usize::from(LEADER)];
        assert!(
            !leader.sessions().contains(&session),
            "the leader expired the session it heard nothing of for its timeout"
        );
        assert!(
            world.servers[usize::from(FOLLOWER)]
                .sessions()
                .contains(&session),
            "the lagging follower has not applied the expiry"
        );
        // The expiry reaches the follower its lag after the leader decided it, and the
        // follower closes the connection.
        let expiring = Instant::now();
        let disconnected = RawEvent::State {
            state: RawState::Disconnected,
        };
        assert_eq!(event(&a).await, disconnected);
        assert!(expiring.elapsed() < lag, "closed within the lag");
        // While the lag lasts, the leader's answer to the follower's revalidation of the
        // session comes later than the client's connect timeout (1 s, one host); once it
        // ends, the client is told its session expired.
        world.end_lag();
        let told = loop {
            match event(&a).await {
                event if event == disconnected => {}
                RawEvent::State { state } => break state,
                other => panic!("a state, got {other:?}"),
            }
        };
        assert_eq!(told, RawState::Expired);
    });
}

/// syncLimit 5 ticks (500 ms) and sessions of 2 s: a lag between the two outlasts the
/// leader's patience with a proposal but not the session.
const SHORT_SYNC_LIMIT: ServerSettings = ServerSettings {
    sync_limit: 5,
    session_timeout_ms: 2_000,
    ..SETTINGS
};

/// How many times `server` goes from following a leader to LOOKING within `within`, looked at
/// every 50 ms.
async fn drops_of(world: &World, server: u16, within: Duration) -> usize {
    let server = &world.servers[usize::from(server)];
    let step = Duration::from_millis(50);
    let (mut drops, mut was) = (0, server.leader());
    for _ in 0..within.as_millis() / step.as_millis() {
        sleep(step).await;
        let now = server.leader();
        if was.is_some() && now.is_none() {
            drops += 1;
        }
        was = now;
    }
    drops
}

#[test]
fn a_follower_lagging_past_sync_limit_is_dropped_each_time_it_rejoins() {
    simulate(16, || async {
        let world = World::start_with(SHORT_SYNC_LIMIT).await;
        world.lag(FOLLOWER, Duration::from_millis(800));
        // At the lag's start the follower hears nothing for 800 ms, past syncLimit (500 ms),
        // and gives up on the leader by its own read timeout. It finds the leader and takes
        // its log, each a lag late, acknowledges at once, and answers the leader's pings,
        // which it gets only from then on, a lag late: the leader, hearing nothing from it
        // for syncLimit since the acknowledgement, drops it (`LearnerHandler`'s read
        // timeout), and the follower reads the close a lag later; and so on while the lag
        // lasts. Without the leader's check it would follow on after its first drop, a lag
        // behind.
        let drops = drops_of(&world, FOLLOWER, Duration::from_secs(5)).await;
        assert!(drops >= 2, "dropped {drops} time(s)");
        // Once the lag ends, it rejoins for good.
        world.end_lag();
        sleep(Duration::from_secs(3)).await;
        assert_eq!(drops_of(&world, FOLLOWER, Duration::from_secs(3)).await, 0);
        assert_eq!(world.servers[usize::from(FOLLOWER)].leader(), Some(LEADER));
    });
}
