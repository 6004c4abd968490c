//! The speed of unmodified client code in the simulation: seeds per second, on one core, of
//! five programs that each take `zookeeper-client`'s `Client::lock` twenty times under the
//! simulator benchmark's random faults (`sim/benches/random-faults-5x20.json`: its clients,
//! workload, server, horizon and fault schedule per seed).
//!
//! `cargo bench -p splitbrain-programs` writes `target/bench/client-lock.json`; set
//! `SPLITBRAIN_BENCH_SEEDS` to change the seed count (default 100).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::{FutureExt, select_biased};
use madsim::rand::Rng;
use programs::simulated::{Place, Setup, run};
use scenarios::scenario::{Scenario, Span};
use serde_json::json;
use zookeeper_client as zk;

const SCENARIO_FILE: &str = "random-faults-5x20.json";
const SCENARIO: &str = include_str!("../../sim/benches/random-faults-5x20.json");

/// A duration drawn from `span` (ms) with the run's seeded source.
fn draw(span: Span) -> Duration {
    Duration::from_millis(madsim::rand::thread_rng().gen_range(span.min..=span.max))
}

/// What one program does: `acquisitions` holds of the lock, each acquire given up after
/// `timeout` (a `select!` with a sleep, as the lock's documentation suggests), a new session
/// after any error. Returns how many holds it had.
async fn lock_user(place: Place, scenario: &Scenario) -> u32 {
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

fn main() {
    let scenario = Scenario::from_json(SCENARIO_FILE, SCENARIO).expect("the bench scenario parses");
    let seeds: u64 = std::env::var("SPLITBRAIN_BENCH_SEEDS")
        .ok()
        .map(|seeds| {
            seeds
                .parse()
                .expect("SPLITBRAIN_BENCH_SEEDS: a number of seeds")
        })
        .unwrap_or(100);
    let started = Instant::now();
    let (mut holds, mut unfinished) = (0u64, 0u64);
    for seed in 0..seeds {
        let setup = Setup {
            seed,
            clients: scenario.clients,
            server: scenario.server,
            faults: scenario.fault_schedule(seed),
            horizon: Duration::from_millis(scenario.horizon_ms),
        };
        let shared = scenario.clone();
        let outcome = run(setup, move |place| {
            let scenario = shared.clone();
            async move { lock_user(place, &scenario).await }
        });
        for result in outcome.results {
            match result {
                Some(held) => holds += u64::from(held),
                None => unfinished += 1,
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let figures = json!({
        "scenario": scenario.name,
        "program": "5 clients x zookeeper-client Client::lock, timed acquire, new session after an error",
        "seeds": seeds,
        "seconds": seconds,
        "seeds_per_second": seeds as f64 / seconds,
        "holds": holds,
        "programs_unfinished_at_horizon": unfinished,
    });
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench/client-lock.json");
    std::fs::create_dir_all(out.parent().expect("a directory")).expect("the bench directory");
    reports::write_atomic(&out, serde_json::to_string_pretty(&figures).unwrap())
        .expect("the results file");
    println!("{figures:#}");
    println!("written to {}", out.display());
}
