//! What tests that run real servers share, in this crate's tests and in the `splitbrain`
//! crate's command-line tests: one lock, so that such tests in one test binary never run at
//! once.

use std::sync::{Mutex, MutexGuard};

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
