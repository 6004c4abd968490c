//! What the real executor's run tests share.

use real::ClientLauncher;

/// Starts each client of a run as this package's `splitbrain-real-client` binary.
pub fn launcher() -> ClientLauncher {
    ClientLauncher::new(
        env!("CARGO_BIN_EXE_splitbrain-real-client"),
        std::iter::empty::<&str>(),
    )
}

/// What the tests of contenders beside the clients share (not every test binary that
/// includes this module uses it).
#[allow(dead_code)]
pub mod beside;

/// What the tests of contenders in place of the clients share (not every test binary that
/// includes this module uses it).
#[allow(dead_code)]
pub mod contenders;
