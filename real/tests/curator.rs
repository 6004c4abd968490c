//! Apache Curator's own `InterProcessMutex` and `LeaderLatch` (Java processes) and
//! splitbrain's `Mutex` and `LeaderLatch` (Rust clients) contending on one path of a real
//! ZooKeeper: one merged trace, judged by the same verdicts, grants in queue order across
//! languages, one waiter woken per release as the server counts it.

mod support;

use std::net::SocketAddr;
use std::time::Instant;

use coordination::recipes::Notice;
use real::curator::Curator;
use real::curator::fifo::out_of_order_grants;
use real::local::Settings;
use real::target::Target;
use real::wakeups::DeletedWatches;
use scenarios::catalog::Catalog;
use scenarios::scenario::{Scenario, Span};
use support::launcher;
use trace::{EventKind, Trace};

const RUST_CLIENTS: u16 = 3;
const CURATOR_CONTENDERS: u16 = 3;

/// The fault-free catalog scenario `name` with 3 Rust clients, `acquisitions` each, and
/// short holds.
fn scenario(name: &str, acquisitions: u32) -> Scenario {
    let mut scenario = Catalog::builtin().unwrap().get(name).unwrap().clone();
    assert!(scenario.faults.is_empty(), "{name} has faults");
    scenario.clients = RUST_CLIENTS;
    scenario.workload.acquisitions = acquisitions;
    scenario.workload.hold_ms = Span { min: 1, max: 4 };
    scenario.workload.think_ms = Span { min: 0, max: 3 };
    scenario.horizon_ms = 50_000;
    scenario
}

/// Runs `scenario` beside 3 Curator contenders on a fresh standalone server and checks what
/// a fault-free mixed run guarantees: every acquisition (or leadership) of both languages
/// granted, no violation of the scenario's properties, every write of both accepted by the
/// one resource, grants in queue order, at most one watch fired per deletion.
fn passes_mixed(scenario: &Scenario) {
    let _serial = real::testing::one_server_at_a_time();
    let curator = Curator::compile(CURATOR_CONTENDERS).unwrap_or_else(|e| panic!("{e}"));
    let settings = Settings::of(&scenario.server);
    let target = Target::start_local(1, settings).unwrap_or_else(|e| panic!("{e}"));
    let server: SocketAddr = target.connect_string().parse().unwrap();
    let before = DeletedWatches::read(server).unwrap();
    let started = Instant::now();
    let trace = real::run_with_curator(
        scenario,
        0,
        &target,
        &launcher(),
        &curator,
        real::CuratorPlacement::Beside,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let took = started.elapsed();
    let woken = DeletedWatches::read(server).unwrap().since(before);
    target.stop();

    let granted = granted(&trace);
    let is_rust = |client: &u16| *client < RUST_CLIENTS;
    let rust = granted.iter().filter(|c| is_rust(c)).count();
    let java = granted.len() - rust;
    let each = 3 * scenario.workload.acquisitions as usize;
    assert_eq!((rust, java), (each, each), "every acquisition granted");
    let violations = properties::verdict::violations(&trace).unwrap();
    assert!(violations.is_empty(), "{violations:?}");
    let writes = (trace.events.iter())
        .filter(|e| matches!(e.kind, EventKind::ResourceWrite { accepted: true, .. }))
        .count();
    assert_eq!(
        writes,
        rust + java,
        "the resource is shared, every write accepted"
    );
    let out_of_order = out_of_order_grants(&trace.events);
    assert!(out_of_order.is_empty(), "{out_of_order:?}");
    assert!(woken.most <= 1, "a deletion woke {} waiters", woken.most);
    // Grants where the lock passed from one language to the other.
    let crossings = (granted.windows(2))
        .filter(|pair| is_rust(&pair[0]) != is_rust(&pair[1]))
        .count();
    eprintln!(
        "{}: {} grants ({rust} Rust, {java} Curator, {crossings} hand-overs between them) in \
         {took:.2?}; server: {} NodeDeleted watch notifications from {} deletions, at most {} \
         per deletion",
        scenario.recipe,
        rust + java,
        woken.fired,
        woken.deletions,
        woken.most
    );
}

/// The clients of the trace's grants (of the lock, or of the leadership), in order.
fn granted(trace: &Trace) -> Vec<u16> {
    (trace.events.iter())
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::Notice {
                    notice: Notice::Acquired { .. } | Notice::IsLeader { .. }
                }
            )
        })
        .filter_map(|e| e.client.map(|c| c.0))
        .collect()
}

#[test]
#[ignore = "needs zookeeper and curator: scripts/test installs Debian's zookeeper and \
            libcurator-{recipes,framework,client}-java"]
fn rust_and_curator_mutexes_exclude_each_other_in_queue_order_waking_one_per_release() {
    passes_mixed(&scenario("herd-free-mutex", 50));
}

#[test]
#[ignore = "needs zookeeper and curator: scripts/test installs Debian's zookeeper and \
            libcurator-{recipes,framework,client}-java"]
fn rust_and_curator_leader_latches_elect_one_leader_at_a_time_in_queue_order() {
    passes_mixed(&scenario("leader-latch-fault-free", 20));
}
