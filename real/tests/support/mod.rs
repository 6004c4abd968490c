//! What the real executor's run tests share.

use real::ClientLauncher;

/// Starts each client of a run as this package's `splitbrain-real-client` binary.
pub fn launcher() -> ClientLauncher {
    ClientLauncher::new(
        env!("CARGO_BIN_EXE_splitbrain-real-client"),
        std::iter::empty::<&str>(),
    )
}

/// Holds the other real-server runs of this test binary off until the guard drops: their
/// expectations rest on real timing (a 2.5 s SIGSTOP against T = 1 s, a restart's LOST, 3 JVM
/// contenders), which several ZooKeeper JVMs starting at once on a 2-core machine can stretch
/// past them.
pub fn one_server_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A test that failed while holding it leaves nothing to repair.
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
