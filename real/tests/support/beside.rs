//! What the tests of libraries' contenders beside splitbrain's clients share: a fault-free
//! catalog scenario with 3 Rust clients and 3 contenders of the library on one lock path of a
//! real ZooKeeper, one merged trace, judged by the same verdicts.

use std::net::SocketAddr;
use std::time::Instant;

use coordination::recipes::Notice;
use real::contender::Library;
use real::curator::fifo::out_of_order_grants;
use real::local::Settings;
use real::target::Target;
use real::wakeups::DeletedWatches;
use scenarios::catalog::Catalog;
use scenarios::scenario::{Scenario, Span};
use trace::{EventKind, Trace};

use super::launcher;

/// How many Rust clients, and how many contenders beside them.
pub const EACH: u16 = 3;

/// The fault-free catalog scenario `name` with [`EACH`] Rust clients, `acquisitions` each,
/// and short holds.
pub fn scenario(name: &str, acquisitions: u32) -> Scenario {
    let mut scenario = Catalog::builtin().unwrap().get(name).unwrap().clone();
    assert!(scenario.faults.is_empty(), "{name} has faults");
    scenario.clients = EACH;
    scenario.workload.acquisitions = acquisitions;
    scenario.workload.hold_ms = Span { min: 1, max: 4 };
    scenario.workload.think_ms = Span { min: 0, max: 3 };
    scenario.horizon_ms = 50_000;
    scenario
}

/// Runs `scenario` beside `library`'s [`EACH`] contenders on a fresh standalone server and
/// checks what a fault-free mixed run guarantees: every acquisition (or leadership) of both
/// granted, no violation of the scenario's properties, every write of both accepted by the
/// one resource, grants in queue order, at most one watch fired per deletion.
pub fn passes_mixed(scenario: &Scenario, library: &dyn Library) {
    let _serial = real::testing::one_server_at_a_time();
    let settings = Settings::of(&scenario.server);
    let target = Target::start_local(1, settings).unwrap_or_else(|e| panic!("{e}"));
    let server: SocketAddr = target.connect_string().parse().unwrap();
    let before = DeletedWatches::read(server).unwrap();
    let started = Instant::now();
    let trace = real::run_with_contenders(
        scenario,
        0,
        &target,
        &launcher(),
        library,
        real::CuratorPlacement::Beside,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let took = started.elapsed();
    let woken = DeletedWatches::read(server).unwrap().since(before);
    target.stop();

    let granted = granted(&trace);
    let is_rust = |client: &u16| *client < EACH;
    let rust = granted.iter().filter(|c| is_rust(c)).count();
    let theirs = granted.len() - rust;
    let each = usize::from(EACH) * scenario.workload.acquisitions as usize;
    assert_eq!((rust, theirs), (each, each), "every acquisition granted");
    let violations = properties::verdict::violations(&trace).unwrap();
    assert!(violations.is_empty(), "{violations:?}");
    let writes = (trace.events.iter())
        .filter(|e| matches!(e.kind, EventKind::ResourceWrite { accepted: true, .. }))
        .count();
    assert_eq!(
        writes,
        rust + theirs,
        "the resource is shared, every write accepted"
    );
    let out_of_order = out_of_order_grants(&trace.events);
    assert!(out_of_order.is_empty(), "{out_of_order:?}");
    assert!(woken.most <= 1, "a deletion woke {} waiters", woken.most);
    // Grants where the lock passed from one library to the other.
    let crossings = (granted.windows(2))
        .filter(|pair| is_rust(&pair[0]) != is_rust(&pair[1]))
        .count();
    eprintln!(
        "{}: {} grants ({rust} Rust, {theirs} {}, {crossings} hand-overs between them) in \
         {took:.2?}; server: {} NodeDeleted watch notifications from {} deletions, at most {} \
         per deletion",
        scenario.recipe,
        rust + theirs,
        library.name(),
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
