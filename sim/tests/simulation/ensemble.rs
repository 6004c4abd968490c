//! The simulated ensemble (`sim/src/server/member.rs`): three servers, the leader (server 2)
//! and two followers, with raw sessions pinned to one server each, and a follower cut off
//! from its peers; then the catalog's follower-cut scenarios. The world and helpers here
//! serve the elections' tests too (`failover.rs`).

use std::time::Duration;

use coordination::ids::OpId;
use coordination::recipe::SessionEvent;
use coordination::recipes::Notice;
use coordination::session::{Connector, Coordination, RawEvent, RawState};
use coordination::zk::{CreateMode, OpOk, Path, Request, SessionId};
use madsim::time::{Instant, sleep, timeout};
use properties::check::{Context, check};
use recipe_table::property::Property;
use scenarios::catalog::Catalog;
use scenarios::fault::Node;
use scenarios::scenario::ServerSettings;
use sim::client::{SimConnector, SimSession};
use sim::links::SlowLinks;
use sim::net::Network;
use sim::recorder::{Recorder, SimClock};
use sim::server::ServerHandle;
use sim::servers::Servers;
use sim::time::SimTime;
use sim::wire::{SERVER_PORT, member_addr};
use sim::{Sim, in_fresh_runtime};
use trace::{EventKind, ReadFrom, Source, Trace};

use crate::query::notice;

/// Tick 100 ms, syncLimit 20 ticks (2 s), sessions of 1 s: a cut follower's clients outlive
/// their sessions at the leader.
pub(crate) const SETTINGS: ServerSettings = ServerSettings {
    ensemble: 3,
    sync_limit: 20,
    ..ServerSettings::standalone(100, 1_000, 60_000)
};

/// syncLimit × tick.
pub(crate) const SYNC_LIMIT: Duration = Duration::from_millis(2_000);

pub(crate) const LEADER: u16 = 2;
pub(crate) const FOLLOWER: u16 = 0;

/// The fault id the tests' cut is installed under.
const CUT: usize = 0;
/// The fault id the tests' lag is installed under.
const LAG: usize = 1;

/// Three servers started on the run's network.
pub(crate) struct World {
    pub(crate) network: Network,
    /// The ensemble, to crash a server or resolve a selector.
    pub(crate) ensemble: Servers,
    /// Server `n` is `servers[n]`.
    pub(crate) servers: Vec<ServerHandle>,
    /// The session timeout its sessions ask for.
    session_timeout: Duration,
    /// What the servers recorded.
    recorder: Recorder,
}

impl World {
    /// The ensemble of [`SETTINGS`].
    pub(crate) async fn start() -> World {
        World::start_with(SETTINGS).await
    }

    /// An ensemble of `settings`.
    pub(crate) async fn start_with(settings: ServerSettings) -> World {
        let time = SimTime::current();
        let recorder = Recorder::new(SimClock::start(time.clone()));
        let network = Network::new(time);
        let ensemble = Servers::start(settings, &recorder, &network).await;
        let Servers::Ensemble { members } = &ensemble else {
            unreachable!("three servers make an ensemble");
        };
        let servers = members.iter().map(|(server, _)| server.clone()).collect();
        World {
            network,
            ensemble,
            servers,
            session_timeout: Duration::from_millis(settings.session_timeout_ms),
            recorder,
        }
    }

    /// The zxids of the changes that fired a watch of `session` on a server so far (`None`:
    /// fired by a reconnect's SetWatches).
    pub(crate) fn watches_fired_for(&self, session: SessionId) -> Vec<Option<u64>> {
        (self.recorder.events().into_iter())
            .filter_map(|e| match e.kind {
                EventKind::WatchFired {
                    session: fired,
                    zxid,
                    ..
                } if fired == session => Some(zxid.map(|z| z.0)),
                _ => None,
            })
            .collect()
    }

    /// Where each read of `session` was answered so far, in order.
    pub(crate) fn reads_of(&self, session: SessionId) -> Vec<ReadFrom> {
        (self.recorder.events().into_iter())
            .filter_map(|e| match e.kind {
                EventKind::OpApplied {
                    session: reader,
                    read_from,
                    ..
                } if reader == session => read_from,
                _ => None,
            })
            .collect()
    }

    /// A session of client `client` whose host list is server `server` alone, connected.
    pub(crate) async fn session(&self, client: u16, server: u16) -> (SimSession, SessionId) {
        self.session_on(client, &[server]).await
    }

    /// A session of client `client` whose host list is `servers` (shuffled from the seed when
    /// more than one), connected.
    pub(crate) async fn session_on(&self, client: u16, servers: &[u16]) -> (SimSession, SessionId) {
        let connector = SimConnector::new(
            Node::Client(client),
            self.session_timeout,
            self.network.clone(),
        )
        .servers(
            servers
                .iter()
                .map(|&s| member_addr(s, SERVER_PORT))
                .collect(),
        );
        let session = connector.connect().await;
        match event(&session).await {
            RawEvent::State {
                state: RawState::Connected { session: id, .. },
            } => (session, id),
            other => panic!("connected first, got {other:?}"),
        }
    }

    pub(crate) fn cut(&self, server: u16) {
        self.network.links().cut_from_peers(CUT, server);
    }

    pub(crate) fn heal(&self) {
        assert!(self.network.links().remove(CUT));
    }

    /// What its peers send `server` reaches it `lag` late from now on.
    pub(crate) fn lag(&self, server: u16, lag: Duration) {
        self.network.links().lag_from_peers(LAG, server, lag);
    }

    /// Ends the lag.
    pub(crate) fn end_lag(&self) {
        assert!(self.network.links().remove(LAG));
    }

    /// Splits the servers into `groups` from now on (ended by [`World::heal`]).
    pub(crate) fn split(&self, groups: &[&[u16]]) {
        let groups = groups.iter().map(|group| group.to_vec()).collect();
        self.network.links().split_peers(CUT, groups);
    }

    /// Slows the links between servers as `slow` says from now on.
    pub(crate) fn slow(&self, slow: SlowLinks) {
        self.network.links().slow_peer_links(LAG, slow);
    }
}

/// Runs `test` in a fresh runtime seeded with `seed`, on a thread of its own.
pub(crate) fn simulate<F: Future<Output = ()> + 'static>(
    seed: u64,
    test: impl FnOnce() -> F + Send,
) {
    in_fresh_runtime(seed, |runtime| runtime.block_on(test()));
}

pub(crate) async fn event(session: &SimSession) -> RawEvent {
    (timeout(Duration::from_secs(60), session.next_event()).await)
        .expect("an event in time")
        .expect("the session lives")
}

/// The next event within `within`, if any.
pub(crate) async fn event_within(session: &SimSession, within: Duration) -> Option<RawEvent> {
    timeout(within, session.next_event()).await.ok().flatten()
}

pub(crate) fn path(text: &str) -> Path {
    Path::new(text).expect("a valid path")
}

/// A persistent create of `at`, with no data.
pub(crate) fn create(at: &str) -> Request {
    Request::Create {
        path: path(at),
        data: Vec::new(),
        mode: CreateMode::Persistent,
    }
}

pub(crate) async fn call(session: &SimSession, op: u32, request: Request) -> RawEvent {
    session.submit(OpId(op), request).await;
    event(session).await
}

/// Whether `event` is a create's success.
pub(crate) fn created(event: &RawEvent) -> bool {
    matches!(
        event,
        RawEvent::Reply {
            result: Ok(OpOk::Created { .. }),
            ..
        }
    )
}

/// Whether `session` finds `at` with an `exists` (op `op`); any other answer than an
/// `exists` reply fails the test.
pub(crate) async fn finds(session: &SimSession, op: u32, at: &str) -> bool {
    let exists = Request::Exists {
        path: path(at),
        watch: false,
    };
    match call(session, op, exists).await {
        RawEvent::Reply {
            result: Ok(OpOk::Exists { stat }),
            ..
        } => stat.is_some(),
        other => panic!("an exists reply, got {other:?}"),
    }
}

#[test]
fn a_cut_follower_answers_its_clients_pings_itself() {
    simulate(1, || async {
        let world = World::start().await;
        let (a, _) = world.session(0, FOLLOWER).await;
        world.cut(FOLLOWER);
        // The read timeout is 2/3 of a second: a client whose pings went unanswered would
        // have dropped its connection three times over.
        let quiet = event_within(&a, SYNC_LIMIT - Duration::from_millis(100)).await;
        assert_eq!(quiet, None, "the client's connection stays healthy");
    });
}

#[test]
fn the_leader_expires_a_session_it_no_longer_hears_of() {
    simulate(2, || async {
        let world = World::start().await;
        let (_a, session) = world.session(0, FOLLOWER).await;
        // Uncut, the follower's touches keep the session alive at the leader.
        sleep(Duration::from_secs(3)).await;
        assert!(
            world.servers[usize::from(LEADER)]
                .sessions()
                .contains(&session)
        );
        world.cut(FOLLOWER);
        sleep(Duration::from_millis(1_500)).await;
        assert!(
            !world.servers[usize::from(LEADER)]
                .sessions()
                .contains(&session),
            "the leader expired the session it heard nothing of for its timeout"
        );
        assert!(
            world.servers[usize::from(FOLLOWER)]
                .sessions()
                .contains(&session),
            "the cut follower has not heard of the expiry"
        );
        assert!(
            world.servers[1].sessions().is_empty(),
            "the other follower applied it"
        );
    });
}

#[test]
fn a_follower_that_does_not_hear_the_leader_drops_its_clients_after_sync_limit_ticks() {
    simulate(3, || async {
        let world = World::start().await;
        let (a, _) = world.session(0, FOLLOWER).await;
        sleep(Duration::from_millis(300)).await;
        world.cut(FOLLOWER);
        let cut = Instant::now();
        assert_eq!(
            event(&a).await,
            RawEvent::State {
                state: RawState::Disconnected
            }
        );
        let after = cut.elapsed();
        // The follower times out syncLimit after it last heard the leader, to the instant
        // (not at its next ping), and the leader pinged it up to tick/2 before the cut.
        assert!(
            SYNC_LIMIT - Duration::from_millis(50) <= after
                && after <= SYNC_LIMIT + Duration::from_millis(10),
            "dropped {after:?} after the cut"
        );
        // It refuses connections until it hears the leader again...
        assert_eq!(
            event(&a).await,
            RawEvent::State {
                state: RawState::Disconnected
            },
            "the next attempt is refused"
        );
        // ... and then serves again, and tells the client its session expired meanwhile.
        world.heal();
        let mut told = None;
        while told.is_none() {
            if let RawEvent::State { state } = event(&a).await
                && state != RawState::Disconnected
            {
                told = Some(state);
            }
        }
        assert_eq!(told, Some(RawState::Expired));
    });
}

#[test]
fn a_client_on_a_cut_follower_reads_stale_state() {
    simulate(4, || async {
        let world = World::start().await;
        let (a, _) = world.session(0, FOLLOWER).await;
        let (b, _) = world.session(1, LEADER).await;
        world.cut(FOLLOWER);
        assert!(created(&call(&b, 1, create("/x")).await));
        assert!(
            !finds(&a, 1, "/x").await,
            "the cut follower answers from the state before the create"
        );
        world.heal();
        sleep(Duration::from_millis(200)).await;
        assert!(
            finds(&a, 2, "/x").await,
            "caught up once it hears the leader"
        );
    });
}

#[test]
fn a_server_that_stops_serving_drops_the_watches_of_the_clients_it_drops() {
    simulate(5, || async {
        // Sessions of 2 s above syncLimit (0.5 s): the dropped client's session lives on.
        let world = World::start_with(ServerSettings {
            ensemble: 3,
            sync_limit: 5,
            ..ServerSettings::standalone(100, 2_000, 60_000)
        })
        .await;
        let (a, session) = world.session(0, FOLLOWER).await;
        let (b, _) = world.session(1, LEADER).await;
        let watch = Request::Exists {
            path: path("/x"),
            watch: true,
        };
        assert!(matches!(call(&a, 1, watch).await, RawEvent::Reply { .. }));
        world.cut(FOLLOWER);
        let dropped = RawEvent::State {
            state: RawState::Disconnected,
        };
        assert_eq!(
            event(&a).await,
            dropped,
            "the follower gave up on the leader"
        );
        assert!(created(&call(&b, 1, create("/x")).await));
        world.heal();
        // The follower rejoins and applies the create: no watch of the dropped connection is
        // left to fire. The client, back on its session, re-registers its watch, and that
        // fires it (a reconnect's SetWatches: no zxid).
        let mut heard = None;
        while heard.is_none() {
            match event(&a).await {
                RawEvent::Watch { event } => heard = Some(event.kind),
                RawEvent::State { state } => assert!(
                    matches!(state, RawState::Disconnected | RawState::Connected { .. }),
                    "{state:?}"
                ),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(heard, Some(coordination::zk::EventKind::NodeCreated));
        assert_eq!(world.watches_fired_for(session), vec![None]);
    });
}

/// The follower-cut scenario's seeds 0..5.
fn runs(name: &str) -> Vec<(u64, Trace)> {
    let catalog = Catalog::builtin().expect("the embedded catalog parses");
    let scenario = catalog.get(name).expect("in the catalog");
    (0..5)
        .map(|seed| {
            let faults = scenario.fault_schedule(seed);
            let trace = Sim::from_scenario(scenario, seed, faults).run().unwrap();
            (seed, trace)
        })
        .collect()
}

fn violates(trace: &Trace, property: Property) -> bool {
    let catalog = Catalog::builtin().unwrap();
    let scenario = catalog.get(&trace.meta.scenario).unwrap();
    !check(
        trace,
        property,
        &Context::for_scenario(scenario, Source::Sim),
    )
    .is_empty()
}

/// In some of `name`'s seeds 0..5, client 1 gains (`gains`: acquires, or leads) while
/// client 0, whose server is cut off from its peers, still believes it holds (`belief`),
/// with no client fault: client 0 is not SUSPENDED before, and is told later that its
/// session expired. The fence (`fenced`) holds in every seed.
fn assert_cut_follower_split_brain(
    name: &str,
    (belief, fenced): (Property, Property),
    gains: fn(&Notice) -> bool,
) {
    let runs = runs(name);
    let split: Vec<&(u64, Trace)> = (runs.iter())
        .filter(|(_, trace)| violates(trace, belief))
        .collect();
    assert!(!split.is_empty(), "{name}: a split brain within 5 seeds");
    for (seed, trace) in &runs {
        assert!(
            !violates(trace, fenced),
            "{name} seed {seed}: the fence holds"
        );
    }
    for (seed, trace) in split {
        let on = |e: &trace::Event, c: u16| e.client.map(|s| s.0) == Some(c);
        let gained_by_1 = (trace.events.iter())
            .position(|e| notice(e, 1).as_ref().is_some_and(gains))
            .expect("the other client gains");
        let suspended_before = trace.events[..gained_by_1].iter().any(|e| {
            on(e, 0)
                && matches!(
                    e.kind,
                    EventKind::Session {
                        event: SessionEvent::Suspended
                    }
                )
        });
        assert!(
            !suspended_before,
            "{name} seed {seed}: the holder's connection was healthy"
        );
        let expired = trace.events.iter().any(|e| {
            on(e, 0)
                && matches!(
                    e.kind,
                    EventKind::RawSession {
                        state: RawState::Expired
                    }
                )
        });
        assert!(
            expired,
            "{name} seed {seed}: the holder is told its session expired"
        );
    }
}

#[test]
fn a_holder_s_cut_follower_lets_a_waiter_acquire_without_a_client_fault() {
    assert_cut_follower_split_brain(
        "mutex-follower-cut-split-brain",
        (
            Property::MutualExclusionBelief,
            Property::MutualExclusionFenced,
        ),
        |n| matches!(n, Notice::Acquired { .. }),
    );
}

#[test]
fn a_leader_s_cut_follower_lets_another_latch_participant_lead() {
    assert_cut_follower_split_brain(
        "leader-latch-follower-cut-split-brain",
        (Property::LeaderUniqueBelief, Property::LeaderUniqueFenced),
        |n| matches!(n, Notice::IsLeader { .. }),
    );
}

#[test]
fn a_leader_s_cut_follower_lets_another_selector_participant_lead() {
    assert_cut_follower_split_brain(
        "leader-selector-follower-cut-split-brain",
        (Property::LeaderUniqueBelief, Property::LeaderUniqueFenced),
        |n| matches!(n, Notice::IsLeader { .. }),
    );
}

#[test]
fn with_the_session_timeout_above_sync_limit_ticks_the_holder_moves_in_time() {
    for (seed, trace) in runs("mutex-follower-cut-sync-limit-first") {
        assert!(
            !violates(&trace, Property::MutualExclusionBelief),
            "seed {seed}"
        );
    }
}
