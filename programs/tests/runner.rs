//! The programs' run loop itself: results by slot, and the horizon.

use std::time::Duration;

use programs::simulated::{Ended, run};

mod support;

use support::setup;

#[test]
fn a_program_that_panics_or_runs_past_the_horizon_ends_only_its_own_client() {
    let mut setup = setup(1, 3);
    setup.horizon = Duration::from_secs(5);
    let outcome = run(setup, |place| async move {
        madsim::time::sleep(Duration::from_secs(u64::from(place.slot))).await;
        match place.slot {
            1 => std::future::pending().await,
            2 => panic!("client 2 gives up"),
            slot => slot,
        }
    });
    assert_eq!(
        outcome.results,
        [
            Ended::Returned(0),
            Ended::Running,
            Ended::Panicked("client 2 gives up".into())
        ]
    );
}
