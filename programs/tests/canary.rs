//! The canary: every source of randomness and of order that `zookeeper-client` 0.11 draws on
//! must follow the run's seed: the same seed gives the same draws twice on one thread (as
//! runs inside a sweep do) and in two processes, and another seed gives others. It fails if
//! a source escapes: fastrand unseeded, a hash map keyed by the operating system (ahash 0.7
//! unpatched), a uuid from a random source madsim does not see, or `select!` starting at an
//! address-dependent branch (async-select unpatched).

use std::future::ready;
use std::io;
use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;

use madsim::runtime::{Handle, Runtime};

/// Refuses every connection: the canary opens none.
struct NoNetwork;

impl simio::Dial for NoNetwork {
    fn dial(&self, addr: SocketAddr) -> simio::Connecting {
        Box::pin(async move {
            Err(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                addr.to_string(),
            ))
        })
    }
}

/// Which of five branches, all ready, `select!` takes.
async fn select_five() -> u8 {
    asyncs::select! {
        n = ready(0) => n,
        n = ready(1) => n,
        n = ready(2) => n,
        n = ready(3) => n,
        n = ready(4) => n,
    }
}

/// The probes of one run with `seed`, on a client node, one line each.
fn probe(seed: u64) -> Vec<String> {
    let runtime = Runtime::with_seed_and_config(seed, madsim::Config::default());
    runtime.block_on(async {
        let node = Handle::current().create_node().name("client-0").build();
        let program = programs::on_client_node(Arc::new(NoNetwork), async {
            let fastrand = format!("fastrand {:?}", [(); 4].map(|_| fastrand::u32(..)));
            let map: hashbrown::HashMap<u32, ()> = (0..32).map(|i| (i, ())).collect();
            let order = format!("hashbrown {:?}", map.keys().collect::<Vec<_>>());
            let uuid = format!("uuid {}", uuid::Uuid::new_v4());
            let mut branches = Vec::new();
            for _ in 0..8 {
                // Futures at another stack depth each time, as the unpatched select! keys on.
                branches.push(Box::pin(select_five()).await);
            }
            let select = format!("select {branches:?}");
            let spawned = asyncs::spawn(async { fastrand::u32(..) });
            let spawned = format!("spawned task's fastrand {}", spawned.await.unwrap());
            vec![fastrand, order, uuid, select, spawned]
        });
        node.spawn(program).await.expect("the probe panicked")
    })
}

#[test]
fn the_same_seed_gives_the_same_draws_on_one_thread_and_another_seed_others() {
    let first = probe(1);
    let other = probe(2);
    let again = probe(1);
    assert_eq!(first, again, "seed 1 after seed 2 on one thread");
    for (line, other) in first.iter().zip(&other) {
        if !line.starts_with("select") {
            assert_ne!(line, other, "seeds 1 and 2 draw alike");
        }
    }
    assert_eq!(first[3], "select [0, 0, 0, 0, 0, 0, 0, 0]");
}

/// Set in a child process: the seed whose probes it prints.
const CHILD_SEED: &str = "SPLITBRAIN_CANARY_SEED";

#[test]
fn the_same_seed_gives_the_same_draws_in_another_process() {
    let Ok(seed) = std::env::var(CHILD_SEED) else {
        let child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "the_same_seed_gives_the_same_draws_in_another_process",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_SEED, "1")
            .output()
            .expect("the test binary runs again");
        let stdout = String::from_utf8_lossy(&child.stdout);
        assert!(child.status.success(), "the child failed: {stdout}");
        let printed: Vec<String> = stdout
            .lines()
            // libtest may print the test's name on the same line, before the first probe.
            .filter_map(|line| line.split_once("probe: ").map(|(_, probe)| probe))
            .map(str::to_owned)
            .collect();
        assert_eq!(printed, probe(1), "seed 1 in this process and in a child");
        return;
    };
    for line in probe(seed.parse().expect("a seed")) {
        println!("probe: {line}");
    }
}
