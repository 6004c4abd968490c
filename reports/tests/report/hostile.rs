//! A trace whose every free-text field carries markup that would change the page if it ran.

use recipe_table::property::Violation;
use reports::ReportOptions;
use trace::Trace;

use crate::fixtures::gc_pause_on;

/// Sets the page title if it runs.
pub const SCRIPT: &str = "<script>document.title='PWNED'</script>";
/// Marks the body if it runs.
pub const IMG: &str = "<img src=x onerror=\"document.body.dataset.pwned=1\">";

/// The split brain with both strings in the scenario name, build, recipe, settings (keys and
/// values), the checker's message, the trace file name, and the lock path — which puts them
/// in every node path of every event, tooltip and table row (a path component cannot hold
/// `/`, so the script string goes into the data and the children names instead).
pub fn trace() -> (Trace, Vec<Violation>, ReportOptions) {
    let lock = format!("/locks/{IMG}");
    let (mut trace, mut violations) = gc_pause_on(&lock, SCRIPT, true);
    trace.meta.build = IMG.to_owned();
    // A user's recipe can have any name.
    trace.meta.recipe =
        serde_json::from_value(serde_json::json!({ "name": SCRIPT, "family": "lock" })).unwrap();
    trace.meta.settings = serde_json::json!({ SCRIPT: IMG, "note": SCRIPT });
    for event in &mut trace.events {
        match &mut event.kind {
            trace::EventKind::OpApplied {
                result: Ok(coordination::zk::OpOk::Children { names, .. }),
                ..
            }
            | trace::EventKind::Reply {
                result: Ok(coordination::zk::OpOk::Children { names, .. }),
                ..
            } => names.extend([SCRIPT.to_owned(), IMG.to_owned()]),
            trace::EventKind::OpSent {
                request: coordination::zk::Request::Create { data, .. },
                ..
            } => *data = SCRIPT.as_bytes().to_vec(),
            _ => {}
        }
    }
    for violation in &mut violations {
        violation.message.push_str(SCRIPT);
        violation.message.push_str(IMG);
    }
    let options = ReportOptions {
        trace_file: Some(format!("{SCRIPT}{IMG}.json")),
        rerun: Some(format!("SPLITBRAIN_SEED=1 cargo test -- {SCRIPT}")),
        focus: None,
    };
    (trace, violations, options)
}
