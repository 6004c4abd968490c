//! The programs' run loop itself: results by slot, and the horizon.

use std::time::Duration;

use programs::simulated::run;

mod support;

use support::setup;

#[test]
fn a_program_still_running_at_the_horizon_has_no_result_and_the_others_theirs() {
    let mut setup = setup(1, 3);
    setup.horizon = Duration::from_secs(5);
    let outcome = run(setup, |place| async move {
        if place.slot == 1 {
            std::future::pending::<()>().await;
        }
        madsim::time::sleep(Duration::from_secs(u64::from(place.slot))).await;
        place.slot
    });
    assert_eq!(outcome.results, [Some(0), None, Some(2)]);
}
