//! Unmodified `zookeeper-client` inside the simulation: three programs take its
//! Curator-compatible `Client::lock` in turn against the simulated server, over the
//! simulator's wire, and the same seed replays the run byte for byte.

use std::time::{Duration, Instant};

use programs::simulated::{Outcome, Place, run};
use scenarios::scenario::ServerSettings;
use zookeeper_client as zk;

mod support;

/// A server with 200 ms ticks (session timeouts of 400 ms to 4 s).
const SERVER: ServerSettings = ServerSettings {
    tick_ms: 200,
    session_timeout_ms: 4_000,
    container_sweep_ms: 60_000,
};

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

/// Connects, takes the lock with Curator's node names under `/locks`, holds it, lets it go
/// (dropping the lock deletes its node in the background) and closes the session.
async fn take_the_lock(place: Place) -> Result<Hold, zk::Error> {
    let start = Instant::now();
    let client = zk::Client::connector()
        .with_session_timeout(Duration::from_secs(4))
        .connect(&place.server.to_string())
        .await?;
    let options = zk::LockOptions::new(zk::Acls::anyone_all())
        .with_ancestor_options(zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all()))?;
    let lock = client
        .lock(
            zk::LockPrefix::new_curator("/locks", "lock-")?,
            b"",
            options,
        )
        .await?;
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
    run(seed, 3, SERVER, take_the_lock)
}

#[test]
fn three_unmodified_clients_take_its_lock_in_turn_on_the_simulated_server() {
    let outcome = three_takers(1);
    let mut holds: Vec<Hold> = outcome
        .results
        .into_iter()
        .map(|result| result.expect("each program takes and gives back the lock"))
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
    let holds: Vec<_> = outcome.results.into_iter().map(Result::unwrap).collect();
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
    if let Some(seed) = support::child_seed() {
        return support::report(&lines(seed));
    }
    let child = support::in_child(TEST, 7);
    lines(8);
    assert_eq!(
        child,
        lines(7),
        "seed 7 here (not this process's first run) and in a child"
    );
}
