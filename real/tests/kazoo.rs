//! Kazoo's own `Lock` (Python processes, `real/python/kazoo_contender.py`) as the clients of a
//! mutex scenario on a real ZooKeeper, driven over the contender protocol: one trace, judged
//! by the same verdicts.

mod support;

use coordination::recipes::Notice;
use real::CuratorPlacement;
use real::curator::fifo::out_of_order_grants;
use real::kazoo::Kazoo;
use real::local::Settings;
use real::target::Target;
use scenarios::catalog::Catalog;
use scenarios::scenario::Span;
use support::launcher;
use trace::EventKind;

#[test]
#[ignore = "needs zookeeper and kazoo: scripts/test installs Debian's zookeeper, and Kazoo into \
            a virtual environment it names in SPLITBRAIN_PYTHON"]
fn kazoo_locks_in_place_of_the_clients_exclude_each_other_in_queue_order() {
    let _serial = real::testing::one_server_at_a_time();
    let mut scenario = Catalog::builtin()
        .unwrap()
        .get("herd-free-mutex")
        .unwrap()
        .clone();
    assert!(scenario.faults.is_empty());
    scenario.clients = 3;
    scenario.workload.acquisitions = 20;
    scenario.workload.hold_ms = Span { min: 1, max: 4 };
    scenario.workload.think_ms = Span { min: 0, max: 3 };
    scenario.horizon_ms = 50_000;
    let kazoo = Kazoo::prepare(scenario.clients).unwrap_or_else(|e| panic!("{e}"));
    let settings = Settings::of(&scenario.server);
    let target = Target::start_local(1, settings).unwrap_or_else(|e| panic!("{e}"));
    let trace = real::run_with_contenders(
        &scenario,
        0,
        &target,
        &launcher(),
        &kazoo,
        CuratorPlacement::InPlace,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    target.stop();

    let granted = (trace.events.iter())
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::Notice {
                    notice: Notice::Acquired { .. }
                }
            )
        })
        .count();
    assert_eq!(granted, 60, "every acquisition granted");
    let violations = properties::verdict::violations(&trace).unwrap();
    assert!(violations.is_empty(), "{violations:?}");
    let writes = (trace.events.iter())
        .filter(|e| matches!(e.kind, EventKind::ResourceWrite { accepted: true, .. }))
        .count();
    assert_eq!(writes, 60, "every write accepted");
    let out_of_order = out_of_order_grants(&trace.events);
    assert!(out_of_order.is_empty(), "{out_of_order:?}");
    assert_eq!(trace.meta.settings["kazoo_contenders"], 3);
    assert_eq!(trace.meta.settings["kazoo_in_place"], true);
}
