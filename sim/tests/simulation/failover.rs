//! Leader election in the simulated ensemble (`sim/src/server/election.rs`): the best server
//! leads after the leader crashes, the new leader re-arms the sessions it inherits, what no
//! quorum logged is discarded, and a restarted server rejoins the leader.

use std::collections::BTreeSet;
use std::time::Duration;

use coordination::ids::OpId;
use coordination::session::{Coordination, RawEvent, RawState};
use coordination::zk::{OpOk, Request, SessionId, ZkError};
use madsim::runtime::Handle;
use madsim::time::{Instant, sleep};
use recipe_table::property::Property;
use scenarios::fault::ServerSelector;
use trace::EventKind;

use crate::ensemble::{
    FOLLOWER, LEADER, SETTINGS, SYNC_LIMIT, World, call, create, created, event, event_within,
    finds, path, simulate,
};
use crate::query::{catalog_scenario, run_scenario, violations};

/// The other follower.
const OTHER: u16 = 1;

/// A seed whose shuffle of the host list `[LEADER, FOLLOWER]` puts the leader first.
const SHUFFLED_LEADER_FIRST: u64 = 3;

impl World {
    /// Whether server `server`'s applied tree holds `at`.
    fn holds(&self, server: u16, at: &str) -> bool {
        self.servers[usize::from(server)]
            .tree()
            .get(&path(at))
            .is_some()
    }

    /// Crashes server `server`.
    fn crash(&self, server: u16) {
        assert!(self.ensemble.crash(server, &Handle::current()));
    }

    /// The server that leads, once one does.
    async fn elected(&self) -> u16 {
        loop {
            if let Some(leader) = self.ensemble.resolve(ServerSelector::Leader) {
                return leader;
            }
            sleep(Duration::from_millis(SETTINGS.tick_ms)).await;
        }
    }
}

#[test]
fn a_crashed_leader_is_replaced_by_the_server_with_the_longest_log() {
    simulate(11, || async {
        let world = World::start().await;
        let (a, _) = world.session(0, FOLLOWER).await;
        world.cut(OTHER);
        assert!(
            created(&call(&a, 1, create("/x")).await),
            "the leader and server 0 make a quorum"
        );
        assert!(!world.holds(OTHER, "/x"));
        world.crash(LEADER);
        sleep(Duration::from_millis(500)).await;
        world.heal();
        sleep(SYNC_LIMIT * 2).await;
        assert_eq!(
            world.ensemble.resolve(ServerSelector::Leader),
            Some(FOLLOWER),
            "server 0 logged more than server 1, whose id is higher"
        );
        assert_eq!(world.servers[usize::from(FOLLOWER)].leading(), Some(2));
        assert_eq!(world.servers[usize::from(OTHER)].leader(), Some(FOLLOWER));
        assert!(
            world.holds(OTHER, "/x"),
            "server 1 took the new leader's log"
        );
    });
}

#[test]
fn the_new_leader_re_arms_the_sessions_it_inherits() {
    simulate(12, || async {
        let world = World::start().await;
        // Its host list is the leader alone: nothing touches the session once it crashes.
        let (_a, session) = world.session(0, LEADER).await;
        sleep(Duration::from_millis(300)).await;
        world.crash(LEADER);
        let crashed = Instant::now();
        let leader = usize::from(world.elected().await);
        let elected = Instant::now();
        let timeout = Duration::from_millis(SETTINGS.session_timeout_ms);
        assert!(
            elected - crashed > timeout,
            "elected after the session's old deadline"
        );
        sleep(timeout / 2).await;
        assert!(
            world.servers[leader].sessions().contains(&session),
            "the session lives a full timeout from the election"
        );
        sleep(timeout).await;
        assert!(
            !world.servers[leader].sessions().contains(&session),
            "nobody touched it: expired"
        );
    });
}

#[test]
fn what_no_quorum_logged_is_discarded_by_the_next_leader() {
    simulate(13, || async {
        let world = World::start().await;
        let (a, _) = world.session(0, LEADER).await;
        world.cut(LEADER);
        a.submit(OpId(1), create("/y")).await;
        assert_eq!(
            event(&a).await,
            RawEvent::Reply {
                op: OpId(1),
                result: Err(ZkError::ConnectionLoss)
            },
            "no quorum logs the create: no answer until the leader stops serving"
        );
        let leader = world.elected().await;
        assert_ne!(leader, LEADER, "the majority elects");
        world.heal();
        sleep(SYNC_LIMIT).await;
        assert_eq!(world.servers[usize::from(LEADER)].leader(), Some(leader));
        let (b, _) = world.session(1, leader).await;
        assert!(created(&call(&b, 1, create("/z")).await));
        sleep(Duration::from_millis(100)).await;
        for server in 0..SETTINGS.ensemble {
            assert!(!world.holds(server, "/y"), "server {server}");
            assert!(world.holds(server, "/z"), "server {server}");
        }
    });
}

/// ZooKeeper's refusal of a client that has seen a later zxid than the server it connects to
/// (`processConnectRequest`): the client's create is applied by the leader and a follower
/// while the other follower is cut off from its peers; the leader crashes, and the client's
/// next server is the cut follower, still serving (for syncLimit) but without the create.
/// Re-attached there, the client would read that its own node does not exist; refused, it
/// connects only once the healed follower has caught up in a new quorum, and reads its node.
#[test]
fn a_server_behind_what_the_client_has_seen_refuses_it() {
    simulate(SHUFFLED_LEADER_FIRST, || async {
        let world = World::start().await;
        let (a, _) = world.session_on(0, &[LEADER, FOLLOWER]).await;
        assert!(
            world.servers[usize::from(LEADER)].serves_client(0),
            "the seed's shuffle puts the leader first"
        );
        world.cut(FOLLOWER);
        assert!(created(&call(&a, 1, create("/x")).await));
        world.crash(LEADER);
        let crashed = Instant::now();
        assert!(
            !world.holds(FOLLOWER, "/x"),
            "the cut follower has not applied it"
        );
        while crashed.elapsed() < SYNC_LIMIT {
            let Some(heard) = event_within(&a, SYNC_LIMIT - crashed.elapsed()).await else {
                break;
            };
            assert!(
                !matches!(
                    heard,
                    RawEvent::State {
                        state: RawState::Connected { .. }
                    }
                ),
                "connected to a server behind its last zxid at {:?}",
                crashed.elapsed()
            );
        }
        world.heal();
        loop {
            if let RawEvent::State {
                state: RawState::Connected { .. },
            } = event(&a).await
            {
                break;
            }
        }
        assert!(finds(&a, 2, "/x").await, "the client reads its own node");
    });
}

/// A leader whose machine is back within syncLimit is LOOKING, not leading: its votes must
/// not pass for the word of the leader its old followers still follow, or they follow it for
/// ever while it waits for their votes, and the ensemble never elects (found by a random
/// server-fault hunt: every client waited from the crash to the horizon).
#[test]
fn a_leader_back_within_sync_limit_is_not_followed_for_ever() {
    simulate(15, || async {
        let world = World::start().await;
        sleep(Duration::from_millis(300)).await;
        world.crash(LEADER);
        sleep(SYNC_LIMIT / 4).await;
        world.ensemble.recover(LEADER, &Handle::current());
        // Its node restarts, LOOKING.
        sleep(Duration::from_millis(SETTINGS.tick_ms)).await;
        assert_eq!(world.servers[usize::from(LEADER)].leader(), None);
        let elected = madsim::time::timeout(SYNC_LIMIT * 3, world.elected()).await;
        assert!(elected.is_ok(), "a leader again within 3 x syncLimit");
        let (b, _) = world.session(1, elected.unwrap()).await;
        assert!(created(&call(&b, 1, create("/after")).await));
    });
}

#[test]
fn a_restarted_follower_rejoins_the_leader_and_catches_up() {
    simulate(14, || async {
        let world = World::start().await;
        let (b, _) = world.session(1, LEADER).await;
        world.crash(FOLLOWER);
        assert!(
            created(&call(&b, 1, create("/w")).await),
            "the leader and server 1 make a quorum"
        );
        sleep(Duration::from_secs(1)).await;
        world.ensemble.recover(FOLLOWER, &Handle::current());
        sleep(Duration::from_secs(1)).await;
        assert_eq!(world.servers[usize::from(FOLLOWER)].leader(), Some(LEADER));
        assert_eq!(
            world.servers[usize::from(LEADER)].leading(),
            Some(1),
            "no election"
        );
        let (a, _) = world.session(0, FOLLOWER).await;
        assert!(finds(&a, 1, "/w").await, "it serves the write it missed");
    });
}

/// Two overlapping pauses of one server (a random generator draws them) stop it until the
/// later ends: the first's end resumed it while the second still ran.
#[test]
fn a_server_paused_twice_runs_again_only_when_both_pauses_end() {
    simulate(16, || async {
        let world = World::start().await;
        let handle = Handle::current();
        world.ensemble.pause(LEADER, 0, &handle);
        world.ensemble.pause(LEADER, 1, &handle);
        sleep(Duration::from_millis(SETTINGS.tick_ms)).await;
        world.ensemble.resume(LEADER, 0, &handle);
        sleep(SYNC_LIMIT * 2).await;
        let leader = world.elected().await;
        assert_ne!(leader, LEADER, "the followers elected one of their own");
        assert_eq!(
            world.servers[usize::from(LEADER)].leading(),
            Some(1),
            "still paused by the second fault: it has run nothing since"
        );
        world.ensemble.resume(LEADER, 1, &handle);
        sleep(SYNC_LIMIT * 2).await;
        assert_eq!(
            world.servers[usize::from(LEADER)].leader(),
            Some(leader),
            "running again, it follows the new leader"
        );
    });
}

#[test]
fn a_paused_leader_is_replaced_and_follows_the_new_leader_on_resume() {
    simulate(15, || async {
        let world = World::start().await;
        world.ensemble.pause(LEADER, 0, &Handle::current());
        let paused = Instant::now();
        // The paused leader still leads epoch 1 until a follower leads epoch 2.
        let leader = loop {
            let leader = world.elected().await;
            if leader != LEADER {
                break leader;
            }
            assert!(Instant::now() - paused < SYNC_LIMIT * 2, "no election");
            sleep(Duration::from_millis(SETTINGS.tick_ms)).await;
        };
        assert!(
            Instant::now() - paused > SYNC_LIMIT,
            "the followers noticed the silence after syncLimit ticks"
        );
        assert_eq!(
            world.servers[usize::from(LEADER)].leading(),
            Some(1),
            "paused, it runs nothing: it still believes it leads epoch 1"
        );
        // It serves once the other follower has taken its log.
        sleep(Duration::from_millis(500)).await;
        let (a, _) = world.session(0, leader).await;
        assert!(
            created(&call(&a, 1, create("/p")).await),
            "the new leader commits with the other follower"
        );
        world.ensemble.resume(LEADER, 0, &Handle::current());
        sleep(Duration::from_millis(SETTINGS.tick_ms)).await;
        assert_eq!(
            world.servers[usize::from(LEADER)].leading(),
            None,
            "its followers' votes waiting in its mailbox say they left it: it steps down at \
             its next check, within a tick, not syncLimit after its resume"
        );
        sleep(SYNC_LIMIT).await;
        assert_eq!(
            world.servers[usize::from(LEADER)].leader(),
            Some(leader),
            "on resume it hears the new epoch and follows"
        );
        assert!(world.holds(LEADER, "/p"), "it took the new leader's log");
    });
}

/// The catalog's `semaphore-mutex-leader-crash`, seed 57 (book/src/findings/semaphore-deadlock.md,
/// "A leader's crash is enough"): the ensemble's leader crashes and no client is touched, yet
/// the run ends with two lease nodes for the one lease, each on a live session. One was taken
/// by a client that holds no internal-lock node: on its new session it took its old session's
/// lock node for its own, and that node went when the old session expired, letting the next
/// client through. Both owners wait for ever, and exclusion holds.
#[test]
fn a_leader_crash_alone_leaves_two_lease_takers_waiting_for_ever() {
    let scenario = catalog_scenario("semaphore-mutex-leader-crash");
    let trace = run_scenario(&scenario, 12);
    assert!(violations(&scenario, &trace, Property::Progress) > 0);
    for safety in [
        Property::MutualExclusionBelief,
        Property::LiveSessionExclusion,
        Property::MutualExclusionFenced,
    ] {
        assert_eq!(violations(&scenario, &trace, safety), 0, "{safety}");
    }
    let nodes = (trace.events.iter().rev())
        .find_map(|e| match &e.kind {
            EventKind::TreeSnapshot { nodes } => Some(nodes),
            _ => None,
        })
        .expect("the final tree");
    let under = |dir: &str| {
        let prefix = format!("{}/{dir}/", scenario.lock_path.as_str());
        (nodes.iter())
            .filter(move |n| n.path.as_str().starts_with(&prefix))
            .map(|n| n.ephemeral_owner.expect("an ephemeral node"))
    };
    let lease_owners: Vec<SessionId> = under("leases").collect();
    assert_eq!(lease_owners.len(), 2, "{nodes:?}");
    let lock_owners: BTreeSet<SessionId> = under("locks").collect();
    assert!(
        lease_owners.iter().any(|s| !lock_owners.contains(s)),
        "a lease taken without the internal lock: {nodes:?}"
    );
}

/// The catalog's `random-server-faults-mutex`, seed 62 (book/src/findings/protected-create-twice.md):
/// server pauses alone. A create forwarded to the paused leader waits there; its client loses
/// the connection, and its reconnections wait on a leader that cannot revalidate the session,
/// so it declares the session LOST and opens a new one. The leader runs again and applies the
/// create, on the old session; the client's protected-create recovery on its new session
/// finds that node by its protection prefix, sees another session own it, deletes it and
/// creates again, and the queue moves on. (Before the simulated server revalidated a moved
/// session through the leader, the client resumed its session on a follower at once, created
/// again on it, and both nodes stayed on the one live session: a stall ZooKeeper cannot
/// produce this way.)
#[test]
fn a_create_a_paused_leader_applies_after_its_session_was_given_up_is_found_and_deleted() {
    let scenario = catalog_scenario("random-server-faults-mutex");
    let trace = (sim::Sim::from_scenario(&scenario, 62, scenario.fault_schedule(62)).run())
        .expect("valid settings");
    for property in [Property::Progress, Property::MutualExclusionFenced] {
        assert_eq!(violations(&scenario, &trace, property), 0, "{property}");
    }
    assert!(
        (trace.events.iter()).all(|e| match &e.kind {
            EventKind::FaultStart { fault } => fault.kind() == "pause_server",
            _ => true,
        }),
        "server pauses alone"
    );
    let applied = || {
        (trace.events.iter()).filter_map(|e| match &e.kind {
            EventKind::OpApplied {
                session,
                request,
                result: Ok(_),
                ..
            } => Some((*session, request)),
            _ => None,
        })
    };
    let created: Vec<(SessionId, String)> = (trace.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::OpApplied {
                session,
                result: Ok(OpOk::Created { path, .. }),
                ..
            } => Some((*session, path.as_str().to_owned())),
            _ => None,
        })
        .collect();
    let found_and_deleted = created.iter().any(|(owner, node)| {
        applied().any(|(session, request)| {
            session != *owner
                && matches!(request, Request::Delete { path, .. } if path.as_str() == node)
        })
    });
    assert!(
        found_and_deleted,
        "a node deleted by a session other than the one that created it: {created:?}"
    );
}

/// The catalog's `random-server-faults-mutex`, seed 118: a follower paused past syncLimit
/// while the leader went on proposing, one of whose links to it was torn down meanwhile (its
/// held proposals lost). The leader's next proposal came on a new link, and the follower
/// appended it after a gap, applying later entries with outcomes other than the leader's
/// (the debug build's check of every applied outcome against the leader's failed). A gap
/// now breaks its connection to the leader: it goes LOOKING and takes the leader's log.
#[test]
fn a_follower_that_missed_proposals_takes_the_leaders_log_again() {
    let scenario = catalog_scenario("random-server-faults-mutex");
    let faults = scenario.fault_schedule(118);
    assert!(
        (faults.iter()).any(|f| f.fault.kind() == "pause_server"),
        "{faults:?}"
    );
    let trace = (sim::Sim::from_scenario(&scenario, 118, faults).run()).expect("valid settings");
    assert_eq!(
        violations(&scenario, &trace, Property::MutualExclusionFenced),
        0
    );
}

/// A leader back from a crash looks for a leader from its first instant: before its restarted
/// node has run, it no longer reads as leading the epoch it led, so a fault that starts as the
/// crash ends does not resolve `"leader"` to it. The followers, which have not yet noticed its
/// silence, still follow it: no server leads.
#[test]
fn a_leader_back_from_a_crash_is_not_named_leader_before_its_node_runs() {
    simulate(17, || async {
        let world = World::start().await;
        let handle = Handle::current();
        assert_eq!(world.ensemble.resolve(ServerSelector::Leader), Some(LEADER));
        world.ensemble.crash(LEADER, &handle);
        sleep(Duration::from_millis(SETTINGS.tick_ms)).await;
        world.ensemble.recover(LEADER, &handle);
        assert_eq!(world.servers[usize::from(LEADER)].leading(), None);
        assert_eq!(world.ensemble.resolve(ServerSelector::Leader), None);
    });
}
