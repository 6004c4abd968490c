//! The canary: every source of randomness and of order that `zookeeper-client` 0.11 draws on
//! must follow the run's seed: the same seed gives the same draws twice in one process (as
//! runs inside a sweep do), as a process's first run and as a later one, and another seed
//! gives others. It fails if a source escapes: fastrand unseeded, a hash map keyed by the
//! operating system (ahash 0.7 unpatched), a once-per-process key drawn inside the first run
//! (ahash 0.8), a uuid from a random source madsim does not see, or `select!` starting at an
//! address-dependent branch (async-select unpatched).

use std::future::ready;

mod support;

use support::setup;

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
    let mut outcome = programs::simulated::run(setup(seed, 1), |_place| async {
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
        // A map of ahash 0.8 (as hashlink makes for the client's watches), then a draw from
        // the run's source: a key drawn in the run would shift it.
        let _keys_drawn = ahash::RandomState::new();
        let after = format!("draw after ahash 0.8 {}", madsim::rand::random::<u64>());
        vec![fastrand, order, uuid, select, spawned, after]
    });
    outcome.results.remove(0).returned()
}

#[test]
fn the_same_seed_gives_the_same_draws_in_one_process_and_another_seed_others() {
    let first = probe(1);
    let other = probe(2);
    let again = probe(1);
    assert_eq!(first, again, "seed 1 after seed 2 in one process");
    for (line, other) in first.iter().zip(&other) {
        if !line.starts_with("select") {
            assert_ne!(line, other, "seeds 1 and 2 draw alike");
        }
    }
    assert_eq!(first[3], "select [0, 0, 0, 0, 0, 0, 0, 0]");
}

#[test]
fn the_same_seed_gives_the_same_draws_in_another_process() {
    const TEST: &str = "the_same_seed_gives_the_same_draws_in_another_process";
    support::same_in_child(TEST, 1, 2, probe);
}
