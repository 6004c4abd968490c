//! A program as a user writes one on `zookeeper-client`: take `Client::lock` a number of times
//! with a timed acquire, and start a new session after any error. The benchmark runs it, and
//! a test replays it under random faults.

use std::time::Duration;

use futures::{FutureExt, select_biased};
use madsim::rand::Rng;
use programs::simulated::Place;
use scenarios::scenario::{Scenario, Span};
use zookeeper_client as zk;

/// A duration drawn from `span` (ms) with the run's seeded source.
fn draw(span: Span) -> Duration {
    Duration::from_millis(madsim::rand::thread_rng().gen_range(span.min..=span.max))
}

/// What one program does: `acquisitions` holds of the lock, each acquire given up after
/// `timeout` (a `select!` with a sleep, as the lock's documentation suggests), a new session
/// after any error. Returns how many holds it had.
pub async fn lock_user(place: Place, scenario: &Scenario) -> u32 {
    let workload = &scenario.workload;
    let timeout = Duration::from_millis(workload.acquire_timeout_ms.unwrap_or(5_000));
    let mut held = 0;
    let mut client = None;
    while held < workload.acquisitions {
        let Some(session) = &client else {
            let connected = zk::Client::connector()
                .with_session_timeout(Duration::from_millis(scenario.server.session_timeout_ms))
                .connect(&place.server.to_string())
                .await;
            match connected {
                Ok(session) => client = Some(session),
                Err(_) => madsim::time::sleep(Duration::from_millis(100)).await,
            }
            continue;
        };
        let failed = {
            let options = zk::LockOptions::new(zk::Acls::anyone_all())
                .with_ancestor_options(zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all()))
                .expect("persistent ancestors");
            let prefix = zk::LockPrefix::new_curator("/locks", "lock-").expect("a valid prefix");
            select_biased! {
                lock = session.lock(prefix, b"", options).fuse() => match lock {
                    Ok(lock) => {
                        madsim::time::sleep(draw(workload.hold_ms)).await;
                        drop(lock);
                        held += 1;
                        false
                    }
                    Err(_) => true,
                },
                () = madsim::time::sleep(timeout).fuse() => false,
            }
        };
        if failed {
            client = None;
        }
        madsim::time::sleep(draw(workload.think_ms)).await;
    }
    held
}
