//! What tests that run real servers share, in this crate's tests and in the `splitbrain`
//! crate's command-line tests: one lock, so that such tests in one test binary never run at
//! once, and the scenarios whose waiters give up at LOST.

use std::sync::{Mutex, MutexGuard};

use coordination::framework::OnLost;
use recipe_table::property::{Expectation, Property};
use scenarios::scenario::Scenario;

/// Holds the other real-server tests of this test binary (this process) off until the guard
/// drops: their expectations rest on real timing (a 2.5 s SIGSTOP against T = 1 s, a
/// restart's LOST, JVM contenders), which several ZooKeeper JVMs starting at once on a
/// 2-core machine can stretch past them. A test that failed while holding it leaves nothing
/// to repair, so a poisoned lock is taken as it is.
pub fn one_server_at_a_time() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `scenario` with its waiters giving up at LOST (`framework.on_lost = release`), what a
/// restart's run on a real server can guarantee. Under Curator's lock loop (the default) a
/// waiter that declared LOST while the server was down holds through its old session's node
/// until the restarted server expires that session, beside the next holder (the catalog's
/// `server-restart` expects it); giving up at LOST, mutual exclusion holds, believed and among
/// live sessions. `progress` is left unchecked: a waiter cut off past LOST fails its acquire,
/// and when that was its last cycle it is never served, which depends on how long the real
/// server takes to come back.
pub fn giving_up_at_lost(mut scenario: Scenario) -> Scenario {
    scenario.framework.on_lost = OnLost::Release;
    for (property, expectation) in [
        (Property::MutualExclusionBelief, Expectation::Holds),
        (Property::LiveSessionExclusion, Expectation::Holds),
        (Property::Progress, Expectation::Unchecked),
    ] {
        scenario.properties.insert(property, expectation);
    }
    scenario
}
