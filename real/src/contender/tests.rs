//! The protocol in both directions, without a server: contenders of a few lines of Python
//! that grant every acquire at once, driven through a mutex scenario's workload.

use std::path::PathBuf;

use coordination::recipes::{Call, Notice};
use coordination::session::RawState;
use runtime::resource::Recorded;
use scenarios::catalog::Catalog;
use scenarios::scenario::Span;
use trace::EventKind;

use super::*;
use crate::local::temp_dir;

/// A lock that grants every acquire at once, its token the monotonic clock; `answer` is the
/// Python expression of the report that answers an acquire.
fn fake(answer: &str) -> String {
    format!(
        r#"import json, sys, time
def say(kind, **fields):
    print(json.dumps(dict(type=kind, t=time.monotonic_ns(), **fields)), flush=True)
for line in sys.stdin:
    command = json.loads(line)
    kind = command["type"]
    if kind == "hello":
        say("ready", session_id=7, password="00ff")
    elif kind == "acquire":
        {answer}
    elif kind == "release":
        say("released")
    elif kind in ("read", "write"):
        say(kind, **{{k: v for k, v in command.items() if k != "type"}})
"#
    )
}

/// Runs one contender of Python program `source` through 3 cycles of `herd-free-mutex`:
/// the trace's events, or the run's failure.
fn run(source: &str) -> Result<Vec<trace::Event>, String> {
    run_with("python3", source)
}

/// As [`run`], with `python` as the interpreter.
fn run_with(python: &str, source: &str) -> Result<Vec<trace::Event>, String> {
    let logs = temp_dir("splitbrain-contender-test").unwrap();
    let program = Program {
        name: "fake".into(),
        program: PathBuf::from(python),
        args: vec!["-c".into(), source.into()],
        logs: logs.clone(),
    };
    let mut scenario = Catalog::builtin()
        .unwrap()
        .get("herd-free-mutex")
        .unwrap()
        .clone();
    scenario.workload.acquisitions = 3;
    scenario.workload.hold_ms = Span { min: 1, max: 2 };
    scenario.workload.think_ms = Span { min: 0, max: 1 };
    let clock = RealClock::start();
    let recorder = Recorder::new(clock);
    let resource = Arc::new(Recorded::new(true, recorder.clone()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ran = runtime.block_on(async {
        let run = ContenderRun {
            scenario: &scenario,
            connect_strings: vec!["127.0.0.1:1".into()],
            seed: 0,
            first_slot: 0,
            recorder: recorder.clone(),
            clock,
            resource,
            servers: "127.0.0.1:1".into(),
        };
        let mut contenders = Contenders::start(&program, run).await?;
        contenders.ended().await
    });
    let _ = std::fs::remove_dir_all(logs);
    ran.map(|()| recorder.take_events_in_order())
}

#[test]
#[ignore = "needs python3: scripts/test installs it"]
fn a_contender_is_told_each_call_and_its_reports_are_the_trace() {
    let acquired = r#"say("acquired", token=time.monotonic_ns())"#;
    let events = run(&fake(acquired)).unwrap_or_else(|e| panic!("{e}"));
    let kinds: Vec<&str> = (events.iter())
        .map(|e| match &e.kind {
            EventKind::Call {
                call: Call::Acquire { .. },
            } => "acquire",
            EventKind::Call {
                call: Call::Release { .. },
            } => "release",
            EventKind::Notice {
                notice: Notice::Acquired { .. },
            } => "acquired",
            EventKind::Notice {
                notice: Notice::Released { .. },
            } => "released",
            EventKind::ResourceRead { accepted: true, .. } => "read",
            EventKind::ResourceWrite { accepted: true, .. } => "write",
            EventKind::RawSession {
                state: RawState::Connected { .. },
            } => "connected",
            other => panic!("{other:?}"),
        })
        .collect();
    let cycle = [
        "acquire", "acquired", "read", "write", "release", "released",
    ];
    let ready = ["connected"].into_iter();
    let expected: Vec<&str> = ready.chain(cycle.repeat(3)).collect();
    assert_eq!(kinds, expected, "{events:?}");
    let written: Vec<u64> = (events.iter())
        .filter_map(|e| match e.kind {
            EventKind::ResourceWrite { value, .. } => Some(value),
            _ => None,
        })
        .collect();
    assert_eq!(written, [1, 2, 3], "each write is the value read plus one");
}

#[test]
#[ignore = "needs python3: scripts/test installs it"]
fn a_malformed_report_ends_the_run_naming_the_contender_and_the_line() {
    let why = run(&fake(r#"print("7 acquired 12", flush=True)"#)).unwrap_err();
    assert!(
        why.starts_with(
            "fake contender 0: line 2 of its output, \"7 acquired 12\": expected a report"
        ),
        "{why}"
    );
    assert!(why.ends_with("(its session: 0x7)"), "{why}");
    let tired = r#"say("failed", error="tired", message="zzz")"#;
    let why = run(&fake(tired)).unwrap_err();
    assert!(why.contains("no name for: `tired` (zzz)"), "{why}");
}

#[test]
#[ignore = "needs python3: scripts/test installs it"]
fn a_failure_is_recorded_with_the_library_s_own_words() {
    let refused = r#"say("failed", error="connection_loss", message="no response in 400ms")"#;
    let events = run(&fake(refused)).unwrap_or_else(|e| panic!("{e}"));
    let failed = (events.iter())
        .position(|e| {
            matches!(
                e.kind,
                EventKind::Notice {
                    notice: Notice::Failed { .. }
                }
            )
        })
        .expect("a failed notice");
    let said = EventKind::LibraryError {
        message: "no response in 400ms".into(),
    };
    assert_eq!(events[failed + 1].kind, said, "{events:#?}");
    assert_eq!(events[failed + 1].client, events[failed].client);
}

#[test]
#[ignore = "needs python3: scripts/test installs it"]
fn a_contender_that_dies_or_cannot_start_is_one_clear_error() {
    let why = run("import sys; sys.exit(3)").unwrap_err();
    assert!(
        why.starts_with("fake contender 0: it exited (exit status: 3)"),
        "{why}"
    );
    let why = run(&fake("sys.exit(0)")).unwrap_err();
    assert!(
        why.starts_with("fake contender 0: it exited before its workload was done"),
        "{why}"
    );
    let why = run_with("/nonexistent/python3", "").unwrap_err();
    assert!(
        why.starts_with("fake contender 0: cannot start /nonexistent/python3: "),
        "{why}"
    );
}
