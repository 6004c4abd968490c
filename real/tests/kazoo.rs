//! Kazoo's own `Lock` (Python processes, `real/python/kazoo_contender.py`) as the clients of a
//! mutex scenario on a real ZooKeeper, driven over the contender protocol: one trace, judged
//! by the same verdicts.

mod support;

use real::kazoo::Kazoo;
use support::contenders::fault_free_in_place;

#[test]
#[ignore = "needs zookeeper and kazoo: scripts/test installs Debian's zookeeper, and Kazoo into \
            a virtual environment it names in SPLITBRAIN_PYTHON"]
fn kazoo_locks_in_place_of_the_clients_exclude_each_other_in_queue_order() {
    fault_free_in_place(&Kazoo::prepare(3).unwrap_or_else(|e| panic!("{e}")));
}
