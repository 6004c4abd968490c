//! Faults on the links between the servers of an ensemble beyond one server's cut and lag:
//! a split into groups (`split_servers`, `Links::split_peers`), its random halves drawn from
//! the seed, and slow, lossy links (`slow_server_links`, `Links::slow_peer_links`) whose
//! messages arrive late but in order.

use std::collections::BTreeSet;
use std::time::Duration;

use coordination::session::{Coordination, RawEvent, RawState};
use madsim::time::{Instant, sleep, sleep_until};
use scenarios::fault::{Fault, ServerSelector};
use scenarios::scenario::ServerSettings;
use sim::links::SlowLinks;
use trace::{EventKind, ServerSession};

use crate::ensemble::{
    FOLLOWER, LEADER, SETTINGS, SYNC_LIMIT, World, call, create, created, event, event_within,
    simulate,
};
use crate::query::{catalog_scenario, run_checked, server_changes};

/// The ensemble's tick.
const TICK: Duration = Duration::from_millis(SETTINGS.tick_ms);

/// The follower that is not [`FOLLOWER`].
const OTHER: u16 = 1;

/// Every link between servers slowed by `min_ms..=max_ms`, losing `loss_percent` %.
fn every_link(min_ms: u64, max_ms: u64, loss_percent: u8) -> SlowLinks {
    SlowLinks {
        server: None,
        slow: (min_ms, max_ms, loss_percent),
    }
}

#[test]
fn a_leader_split_into_a_minority_loses_its_quorum_while_the_majority_elects() {
    simulate(21, || async {
        let world = World::start().await;
        let (on_leader, _) = world.session(0, LEADER).await;
        world.split(&[&[LEADER], &[FOLLOWER, OTHER]]);
        let split = Instant::now();
        // The leader hears no quorum for syncLimit ticks, stops serving and drops its client.
        assert_eq!(
            event(&on_leader).await,
            RawEvent::State {
                state: RawState::Disconnected
            }
        );
        assert!(split.elapsed() >= SYNC_LIMIT - Duration::from_millis(100));
        // The majority elects one of its own, which serves the follower's client once the
        // follower has joined it, while the old leader still reaches no one.
        let leader = loop {
            match world.ensemble.resolve(ServerSelector::Leader) {
                Some(leader)
                    if leader != LEADER && world.servers[usize::from(FOLLOWER)].serves() =>
                {
                    break leader;
                }
                _ => sleep(Duration::from_millis(100)).await,
            }
        };
        assert!([FOLLOWER, OTHER].contains(&leader), "led by {leader}");
        // A new session on a follower of the majority writes through its new leader.
        let (on_majority, _) = world.session(2, FOLLOWER).await;
        let write = call(&on_majority, 1, create("/x")).await;
        assert!(created(&write), "{write:?}");
        assert!(
            split.elapsed() < SYNC_LIMIT * 3,
            "written {:?} after the split",
            split.elapsed()
        );
    });
}

/// ZooKeeper's follower times out on its leader's socket syncLimit × tick after it last heard
/// the leader, to the instant, while the leader checks its quorum on every other ping, once a
/// tick (`Leader.lead()`), against followers its own read timeouts dropped: an isolated leader
/// serves its clients for up to a tick after its followers dropped theirs.
#[test]
fn an_isolated_leader_serves_for_up_to_a_tick_after_its_followers_dropped_their_clients() {
    simulate(21, || async {
        let start = Instant::now();
        let world = World::start().await;
        let (on_leader, _) = world.session(0, LEADER).await;
        let (on_follower, _) = world.session(1, FOLLOWER).await;
        // Just after a ping (every tick/2 from the start): the follower heard its leader
        // moments before the split.
        sleep_until(start + Duration::from_millis(1_020)).await;
        world.split(&[&[LEADER], &[FOLLOWER, OTHER]]);
        let split = Instant::now();
        let disconnected = RawEvent::State {
            state: RawState::Disconnected,
        };
        assert_eq!(event(&on_follower).await, disconnected);
        let followers_dropped = split.elapsed();
        assert!(
            followers_dropped < SYNC_LIMIT,
            "the follower drops its clients syncLimit after it last heard the leader, not at \
             its next ping: {followers_dropped:?} after the split"
        );
        assert!(
            world.servers[usize::from(LEADER)].serves(),
            "the isolated leader still serves"
        );
        assert_eq!(event(&on_leader).await, disconnected);
        let window = split.elapsed() - followers_dropped;
        assert!(
            TICK / 4 < window && window <= TICK,
            "the leader drops its clients {window:?} after its followers"
        );
    });
}

#[test]
fn random_halves_are_drawn_from_the_seed_and_recorded_as_groups() {
    let scenario = catalog_scenario("mutex-random-halves");
    let splits = |seed: u64| -> Vec<Vec<Vec<u16>>> {
        let faults = scenario.fault_schedule(seed);
        let trace = sim::Sim::from_scenario(&scenario, seed, faults)
            .run()
            .expect("valid settings");
        (trace.events.into_iter())
            .filter_map(|event| match event.kind {
                EventKind::FaultStart {
                    fault: Fault::SplitServers { resolved, .. },
                } => Some(resolved.expect("recorded with its groups")),
                _ => None,
            })
            .collect()
    };
    let mut minorities = BTreeSet::new();
    for seed in 0..10 {
        let drawn = splits(seed);
        assert!(!drawn.is_empty(), "seed {seed} splits");
        for groups in &drawn {
            let [minority, majority] = &groups[..] else {
                panic!("two halves: {groups:?}")
            };
            assert_eq!((minority.len(), majority.len()), (1, 2), "{groups:?}");
            minorities.insert(minority.clone());
        }
        assert_eq!(
            splits(seed),
            drawn,
            "seed {seed} draws the same halves again"
        );
    }
    assert_eq!(minorities.len(), 3, "each server alone: {minorities:?}");
}

/// ZAB commits a proposal only its leader logged when that server leads the next epoch. With T
/// (6 s) below `sync_limit` x tick (10 s), the leader of an ensemble split into three expires
/// the sessions of its followers' clients, untouched since the split, before it notices that it
/// has lost its quorum; nobody commits those expiries during the split, but after the heal the
/// old leader has the longest log, is elected, and commits them at once, not T after the heal
/// as a session it re-armed would end. In this seed the waiter's old session ends so, and with
/// it the node its new session would have held through: exclusion holds.
#[test]
fn an_expiry_the_leader_proposed_before_it_lost_its_quorum_is_committed_when_it_leads_again() {
    let scenario = catalog_scenario("mutex-quorum-loss-old-session-realistic");
    let [split] = &scenario.faults[..] else {
        panic!("one split: {:?}", scenario.faults)
    };
    let Fault::SplitServers {
        for_ms: Some(for_ms),
        ..
    } = split.fault
    else {
        panic!("a split that heals: {split:?}")
    };
    let ms = |ms: u64| ms * 1_000_000;
    let (start, heal) = (ms(split.at_ms), ms(split.at_ms + for_ms));
    let trace = run_checked(&scenario, 0);
    let expiries: Vec<u64> = server_changes(&trace, ServerSession::Expired)
        .map(|e| e.t)
        .collect();
    assert!(
        !expiries.iter().any(|&t| (start..heal).contains(&t)),
        "nothing is committed without a quorum: {expiries:?}"
    );
    let timeout = scenario.server.session_timeout_ms;
    assert!(
        expiries
            .iter()
            .any(|&t| (heal..heal + ms(timeout) / 6).contains(&t)),
        "a session ends within T/6 of the heal: {expiries:?}"
    );
}

#[test]
fn slow_server_links_hold_a_write_for_the_links_it_crosses() {
    // A client of the leader: the proposal to a follower and its acknowledgement back.
    let answered = |slow: Option<SlowLinks>| {
        let waited = std::sync::Arc::new(std::sync::Mutex::new(Duration::ZERO));
        let told = waited.clone();
        simulate(22, move || async move {
            let world = World::start().await;
            let (a, _) = world.session(0, LEADER).await;
            if let Some(slow) = slow {
                world.slow(slow);
            }
            let asked = Instant::now();
            assert!(created(&call(&a, 1, create("/x")).await));
            *told.lock().unwrap() = asked.elapsed();
        });
        *waited.lock().unwrap()
    };
    let slowed = answered(Some(every_link(300, 300, 0)));
    assert!(
        Duration::from_millis(600) <= slowed && slowed < Duration::from_millis(700),
        "answered {slowed:?} after it was asked"
    );
    let control = answered(None);
    assert!(control < Duration::from_millis(50), "{control:?}");
}

#[test]
fn one_server_s_slow_links_hold_only_what_crosses_them() {
    simulate(23, || async {
        let world = World::start().await;
        let (on_leader, _) = world.session(0, LEADER).await;
        let (on_follower, _) = world.session(1, FOLLOWER).await;
        world.slow(SlowLinks {
            server: Some(FOLLOWER),
            ..every_link(400, 400, 0)
        });
        // The other follower's acknowledgement makes the quorum at once.
        let asked = Instant::now();
        assert!(created(&call(&on_leader, 1, create("/x")).await));
        assert!(
            asked.elapsed() < Duration::from_millis(50),
            "{:?}",
            asked.elapsed()
        );
        // The slow follower's client waits for its forward and its commit.
        let asked = Instant::now();
        assert!(created(&call(&on_follower, 2, create("/y")).await));
        let waited = asked.elapsed();
        assert!(
            Duration::from_millis(800) <= waited && waited < Duration::from_millis(900),
            "{waited:?}"
        );
    });
}

#[test]
fn lossy_server_links_deliver_late_and_in_order() {
    simulate(24, || async {
        // Sessions of 4 s (a read timeout of 2.7 s) and syncLimit × tick 5 s: longer than
        // three losses of one message in a row (1.4 s) and the delays of a round trip. (At a
        // loss of 30 %, some message of the hundreds a second carries is lost five times in
        // a row within seconds, and its link stalls 6.2 s: TCP's backoff.)
        let world = World::start_with(ServerSettings {
            ensemble: 3,
            sync_limit: 50,
            ..ServerSettings::standalone(100, 4_000, 60_000)
        })
        .await;
        let (a, _) = world.session(0, FOLLOWER).await;
        world.slow(every_link(0, 100, 10));
        // Writes sent back to back through the follower: each is forwarded, proposed and
        // committed over links that lose and delay; they are all applied, in order, and the
        // follower never finds a gap in the leader's proposals (which would send it LOOKING
        // and drop its client).
        let asked = Instant::now();
        for op in 1..=20 {
            a.submit(coordination::ids::OpId(op), create(&format!("/n{op}")))
                .await;
        }
        for op in 1..=20 {
            match event(&a).await {
                RawEvent::Reply { op: id, result, .. } => {
                    assert_eq!(id, coordination::ids::OpId(op), "answered in order");
                    assert!(
                        result.is_ok(),
                        "{result:?} op {op} after {:?}",
                        asked.elapsed()
                    );
                }
                other => panic!("a reply, got {other:?}"),
            }
        }
        assert!(
            asked.elapsed() >= Duration::from_millis(200),
            "a loss cost a retransmission timeout: {:?}",
            asked.elapsed()
        );
        assert_eq!(
            event_within(&a, SYNC_LIMIT * 2).await,
            None,
            "still connected"
        );
    });
}
