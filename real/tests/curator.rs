//! Apache Curator's own `InterProcessMutex` and `LeaderLatch` (Java processes) and
//! splitbrain's `Mutex` and `LeaderLatch` (Rust clients) contending on one path of a real
//! ZooKeeper: one merged trace, judged by the same verdicts, grants in queue order across
//! languages, one waiter woken per release as the server counts it.

mod support;

use real::curator::Curator;
use support::beside::{EACH, passes_mixed, scenario};

/// Curator's contenders beside the clients.
fn curator() -> Curator {
    Curator::compile(EACH).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
#[ignore = "needs zookeeper and curator: scripts/test installs Debian's zookeeper and \
            libcurator-{recipes,framework,client}-java"]
fn rust_and_curator_mutexes_exclude_each_other_in_queue_order_waking_one_per_release() {
    passes_mixed(&scenario("herd-free-mutex", 50), &curator());
}

#[test]
#[ignore = "needs zookeeper and curator: scripts/test installs Debian's zookeeper and \
            libcurator-{recipes,framework,client}-java"]
fn rust_and_curator_leader_latches_elect_one_leader_at_a_time_in_queue_order() {
    passes_mixed(&scenario("leader-latch-fault-free", 20), &curator());
}
