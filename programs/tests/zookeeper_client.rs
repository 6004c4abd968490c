//! Unmodified `zookeeper-client` inside the simulation: three programs take its
//! Curator-compatible `Client::lock` in turn against the simulated server, over the
//! simulator's wire, and the same seed replays the run byte for byte.

use std::time::{Duration, Instant};

use programs::simulated::{Outcome, Place, run};
use scenarios::fault::{Fault, Node, ScheduledFault};
use zookeeper_client as zk;

mod support;

use support::setup;

/// How long each program holds the lock.
const HOLD: Duration = Duration::from_millis(250);

/// One hold of the lock: its node, and when it was granted and given back (simulated time
/// since the program started).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hold {
    node: String,
    granted: Duration,
    released: Duration,
}

/// A session with a 4 s timeout to the simulated server.
async fn connect(place: Place) -> Result<zk::Client, zk::Error> {
    zk::Client::connector()
        .with_session_timeout(Duration::from_secs(4))
        .connect(&place.server.to_string())
        .await
}

/// Takes the client's lock, with Curator's node names under `/locks`.
async fn lock(client: &zk::Client) -> Result<zk::LockClient<'_>, zk::Error> {
    let options = zk::LockOptions::new(zk::Acls::anyone_all())
        .with_ancestor_options(zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all()))?;
    let prefix = zk::LockPrefix::new_curator("/locks", "lock-")?;
    client.lock(prefix, b"", options).await
}

/// Connects, takes the lock, holds it, lets it go (dropping the lock deletes its node in the
/// background) and closes the session.
async fn take_the_lock(place: Place) -> Result<Hold, zk::Error> {
    let start = Instant::now();
    let client = connect(place).await?;
    let lock = lock(&client).await?;
    let granted = start.elapsed();
    let node = lock.lock_path().to_owned();
    madsim::time::sleep(HOLD).await;
    let released = start.elapsed();
    drop(lock);
    // The background delete goes out before the session's close.
    madsim::time::sleep(Duration::from_millis(50)).await;
    drop(client);
    // And the close before the program ends the run.
    madsim::time::sleep(Duration::from_millis(50)).await;
    Ok(Hold {
        node,
        granted,
        released,
    })
}

/// The sequence number ZooKeeper appended to a lock node's name.
fn sequence(node: &str) -> &str {
    node.rsplit('-').next().unwrap_or(node)
}

fn three_takers(seed: u64) -> Outcome<Result<Hold, zk::Error>> {
    run(setup(seed, 3), take_the_lock)
}

#[test]
fn three_unmodified_clients_take_its_lock_in_turn_on_the_simulated_server() {
    let outcome = three_takers(1);
    let mut holds: Vec<Hold> = outcome
        .results
        .into_iter()
        .map(|result| {
            result
                .returned()
                .expect("each program takes and gives back the lock")
        })
        .collect();
    holds.sort_by_key(|hold| hold.granted);
    for pair in holds.windows(2) {
        assert!(
            pair[0].released <= pair[1].granted,
            "two holders at once: {pair:?}"
        );
        assert!(
            sequence(&pair[0].node) < sequence(&pair[1].node),
            "granted in sequence order: {pair:?}"
        );
    }
    for hold in &holds {
        assert!(hold.node.starts_with("/locks/_c_"), "{hold:?}");
        assert!(hold.node.contains("-lock-"), "{hold:?}");
    }
    let sessions: Vec<String> = outcome
        .events
        .iter()
        .filter_map(|event| match &event.kind {
            trace::EventKind::ServerSession { change, .. } => Some(format!("{change:?}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        sessions,
        [
            "Created", "Created", "Created", "Closed", "Closed", "Closed"
        ],
        "a session per program, each closed when its client is dropped"
    );
}

/// A run's result and server trace, as lines to compare.
fn lines(seed: u64) -> Vec<String> {
    let outcome = three_takers(seed);
    let holds: Vec<_> = outcome
        .results
        .into_iter()
        .map(|result| result.returned().unwrap())
        .collect();
    vec![
        format!("{holds:?}"),
        serde_json::to_string(&outcome.events).unwrap(),
    ]
}

#[test]
fn the_same_seed_replays_the_run_byte_for_byte_and_another_seed_differs() {
    let first = lines(7);
    let other = lines(8);
    let again = lines(7);
    assert_eq!(first, again, "seed 7 twice");
    assert_ne!(first[1], other[1], "seeds 7 and 8");
}

#[test]
fn the_same_seed_replays_the_run_byte_for_byte_in_another_process() {
    const TEST: &str = "the_same_seed_replays_the_run_byte_for_byte_in_another_process";
    support::same_in_child(TEST, 7, 8, lines);
}

/// What one program believed: when it held the lock, and the session states its client told
/// it, with their times.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Belief {
    granted: Duration,
    released: Duration,
    states: Vec<(Duration, zk::SessionState)>,
}

/// Takes the lock and holds it for `hold` as the lock's documentation shows (nothing but the
/// lock in hand), while a task notes every session state the client reports. Client 1
/// starts a second late, so client 0 is the first holder.
async fn hold_without_watching(place: Place) -> Result<Belief, zk::Error> {
    let start = Instant::now();
    let hold = if place.slot == 0 {
        Duration::from_secs(12)
    } else {
        madsim::time::sleep(Duration::from_secs(1)).await;
        Duration::from_secs(1)
    };
    let client = connect(place).await?;
    let states = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut watcher = client.state_watcher();
    let noted = states.clone();
    let noting = madsim::task::spawn(async move {
        loop {
            let state = watcher.changed().await;
            noted.lock().unwrap().push((start.elapsed(), state));
            if state.is_terminated() {
                return;
            }
        }
    });
    let lock = lock(&client).await?;
    let granted = start.elapsed();
    madsim::time::sleep(hold).await;
    let released = start.elapsed();
    drop(lock);
    noting.abort();
    let states = states.lock().unwrap().clone();
    Ok(Belief {
        granted,
        released,
        states,
    })
}

/// Client 0 is cut off from the server from 2 s to 10 s, past its 4 s session timeout.
fn isolated_holder(seed: u64) -> Outcome<Result<Belief, zk::Error>> {
    let mut setup = setup(seed, 2);
    setup.faults = vec![ScheduledFault::at(
        2_000,
        Fault::Isolate {
            node: Node::Client(0),
            for_ms: Some(8_000),
        },
    )];
    run(setup, hold_without_watching)
}

#[test]
fn an_isolated_holder_keeps_its_lock_in_hand_after_the_server_grants_it_to_another() {
    let outcome = isolated_holder(3);
    let beliefs: Vec<Belief> = outcome
        .results
        .into_iter()
        .map(|result| result.returned().unwrap())
        .collect();
    let (first, second) = (&beliefs[0], &beliefs[1]);
    // The server expired client 0's session (and its lock node) and granted client 1, while
    // client 0 still held its LockClient: two holders by belief.
    assert!(
        second.granted < first.released,
        "two holders at once: {beliefs:?}"
    );
    let told = |wanted: zk::SessionState| {
        first
            .states
            .iter()
            .find(|(_, state)| *state == wanted)
            .map(|(at, _)| *at)
    };
    let disconnected = told(zk::SessionState::Disconnected).expect("told of the disconnect");
    assert!(
        disconnected < second.granted,
        "a program watching the session could have stopped in time: {beliefs:?}"
    );
    // The client expires its session on its own after 7/5 of the negotiated timeout without
    // the server (zookeeper-client 0.11, src/session/mod.rs:416), during the cut, but after
    // the server has expired it and granted client 1: a program that stops at Expired alone
    // still overlaps.
    let expired = told(zk::SessionState::Expired).expect("told of the expiry");
    assert!(
        second.granted < expired && expired < Duration::from_secs(10),
        "told of the expiry by its own clock, too late: {beliefs:?}"
    );
    let faults = outcome
        .events
        .iter()
        .filter(|event| matches!(event.kind, trace::EventKind::FaultStart { .. }))
        .count();
    assert_eq!(faults, 1);
}

#[test]
fn the_same_seed_replays_a_faulted_run_byte_for_byte() {
    let lines = |seed| {
        let outcome = isolated_holder(seed);
        (
            format!("{:?}", outcome.results),
            serde_json::to_string(&outcome.events).unwrap(),
        )
    };
    assert_eq!(lines(3), lines(3));
}
