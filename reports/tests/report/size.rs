//! Long runs stay small enough to open and to mail around.

use reports::{ReportOptions, render};

use crate::fixtures::long_run;

#[test]
fn a_ten_thousand_event_report_stays_under_two_megabytes() {
    let (trace, violations) = long_run(10_000);
    assert!(
        trace.events.len() >= 10_000,
        "{} events",
        trace.events.len()
    );
    let html = render(&trace, &violations, &ReportOptions::default());
    assert!(html.len() < 2_000_000, "{} bytes", html.len());
    assert_eq!(html.matches("<tr data-c=").count(), trace.events.len());
}
