//! `splitbrain report` end to end on real simulator traces: the report of the GC-pause split
//! brain shows the pause, the expiry, the overlap and the lost update (unfenced) or the
//! rejected stale write (fenced); a deadlock's leads with the hang and says who waits for
//! whom; a bad trace gets a one-line error naming file and field; and the page renders in
//! headless Chromium.

#[path = "../reports/tests/support/headless.rs"]
mod headless;
mod support;

use std::path::{Path, PathBuf};

use support::{scratch, section, splitbrain};

/// Replays seed 1 of `scenario` into a trace, renders it with `report`, returns the page and
/// the trace's path. Each test has a directory of its own: tests that report the same scenario
/// run at once (a Chromium test beside the plain one), and a shared directory would be wiped
/// under the other.
fn report_of(scenario: &str) -> (String, PathBuf) {
    let test = std::thread::current()
        .name()
        .unwrap_or("main")
        .replace("::", "-");
    let dir = scratch(&format!("{test}-{scenario}"));
    let trace = dir.join("run.trace.json");
    let out = dir.join("run.html");
    let replay = splitbrain(&[
        "replay",
        scenario,
        "--seed",
        "1",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let report = splitbrain(&[
        "report",
        trace.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let printed = String::from_utf8_lossy(&report.stdout);
    assert!(
        printed.trim_end().ends_with(out.to_str().unwrap()),
        "prints the report's path: {printed}"
    );
    (std::fs::read_to_string(&out).unwrap(), trace)
}

fn assert_split_brain(html: &str, trace: &Path) {
    assert!(html.contains("class=\"verdict bad\""));
    assert!(html.contains("mutual_exclusion_belief"));
    for lane in ["c0", "c1", "server"] {
        assert!(
            html.contains(&format!("class=\"lane\" data-lane=\"{lane}\"")),
            "lane {lane}"
        );
    }
    assert!(html.contains(&format!("splitbrain replay --from {}", trace.display())));
    assert!(html.contains("class=\"overlap\""), "the overlap");
    assert!(
        html.contains("class=\"fault f-pause\" data-e="),
        "the pause"
    );
    assert!(
        html.contains("class=\"unnoticed\" data-e="),
        "the expiry the paused client missed"
    );
    assert!(html.contains("is paused (GC)"), "the story tells the pause");
    assert!(
        html.contains("expired on the server"),
        "the story tells the expiry"
    );
}

#[test]
fn the_unfenced_split_brain_report_shows_the_lost_update() {
    let (html, trace) = report_of("gc-pause-split-brain");
    assert_split_brain(&html, &trace);
    assert!(
        html.contains("class=\"acc lost\" data-e="),
        "the lost update"
    );
}

#[test]
fn the_fenced_split_brain_report_shows_the_rejected_stale_access() {
    let (html, trace) = report_of("gc-pause-fenced");
    assert_split_brain(&html, &trace);
    assert!(
        html.contains("class=\"acc rejected\" data-e="),
        "the rejected stale access"
    );
}

#[test]
fn a_bad_trace_is_one_line_naming_the_file_and_the_field() {
    let dir = scratch("bad");
    let trace = dir.join("bad.json");
    std::fs::write(&trace, r#"{"meta": {"scenario": 3}, "events": []}"#).unwrap();
    let output = splitbrain(&["report", trace.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains(&format!(
            "{}: /meta/scenario: expected a string",
            trace.display()
        )),
        "{error}"
    );
    assert_eq!(error.trim_end().lines().count(), 1, "{error}");
    assert!(!dir.join("bad.html").exists());
}

#[test]
fn an_election_report_tells_of_two_leaders_and_the_fence() {
    let (html, _) = report_of("leader-latch-gc-pause");
    assert!(html.contains("class=\"verdict bad\""));
    assert!(html.contains("leader_unique_belief"));
    assert!(html.contains("both believed they led"), "the headline");
    assert!(html.contains("became leader with token"), "the story");
    assert!(html.contains("believe they lead"), "the overlap line");
    assert!(html.contains(">leader "), "hold labels name leadership");
    assert!(
        html.contains("class=\"acc rejected\" data-e="),
        "the stale leader's write is rejected"
    );
}

#[test]
fn a_read_write_report_says_which_side_each_client_held() {
    let (html, _) = report_of("read-write-lock-gc-pause-reader");
    assert!(html.contains("rw_exclusion"));
    assert!(
        html.contains("holds the read lock with token"),
        "a reader's tip"
    );
    assert!(
        html.contains("holds the write lock with token"),
        "the writer's tip"
    );
    assert!(
        html.contains("acquired the lock (write)"),
        "the story names the side"
    );
}

#[test]
fn a_deadlock_report_leads_with_the_hang_and_says_who_waits_for_whom() {
    let (html, _) = report_of("semaphore-mutex-cut-at-lease-create");
    let banner = section(&html, "verdict");
    assert!(
        banner.contains("<span class=\"prop\">progress</span>")
            || banner.contains("<span class=\"prop\">answered</span>"),
        "the banner names the hang, not the herd: {banner}"
    );
    assert!(banner.contains("herd_free"), "the herd is among the others");
    let waits = section(&html, "waits");
    assert!(waits.contains("Who waits for whom"));
    for client in ["c0", "c1", "c2"] {
        assert!(
            waits.contains(&format!("<li>{client} waits (since ")),
            "{client}'s wait: {waits}"
        );
    }
    assert!(
        waits.contains(
            "for a change to the children of /locks/semaphore-mutex-cut-at-lease-create/leases"
        ),
        "the lease loop's wait: {waits}"
    );
    assert!(waits.contains(": a cycle</span>"), "the deadlock: {waits}");
    assert!(html.contains("<a href=\"#waits\">"), "the nav links to it");
}

/// Renders the report of `scenario` (seed 1) in headless Chromium: a screenshot, and the DOM
/// after the page's script ran.
fn rendered_in_chromium(scenario: &str) -> String {
    let (_, trace) = report_of(scenario);
    let page = trace.with_file_name("run.html").canonicalize().unwrap();
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join(format!("sim-{scenario}.png"));
    let profile = trace.with_file_name("chromium-profile");
    let chromium = |args: &[String]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        headless::run(&page, &profile, &args)
    };
    chromium(&[
        format!("--screenshot={}", shot.display()),
        "--window-size=1400,1000".to_owned(),
    ]);
    assert!(shot.exists());
    let dom = chromium(&["--dump-dom".to_owned()]);
    assert!(dom.contains("id=\"verdict\""));
    assert!(dom.contains("class=\"lane\" data-lane=\"c1\""));
    assert!(dom.contains("data-tip=\""), "the page's script ran");
    assert!(dom.contains("splitbrain replay --from"));
    dom
}

/// [`rendered_in_chromium`], for a report of an overlap.
fn renders_in_chromium(scenario: &str) -> String {
    let dom = rendered_in_chromium(scenario);
    assert!(dom.contains("class=\"overlap\""));
    dom
}

#[test]
#[ignore = "needs chromium; the README test command installs it"]
fn a_simulator_report_renders_in_chromium() {
    renders_in_chromium("gc-pause-split-brain");
}

#[test]
#[ignore = "needs chromium; the README test command installs it"]
fn an_election_report_renders_in_chromium() {
    let dom = renders_in_chromium("leader-latch-gc-pause");
    assert!(dom.contains("leader_unique_belief"));
}

#[test]
#[ignore = "needs chromium; the README test command installs it"]
fn a_deadlock_report_renders_in_chromium() {
    let dom = rendered_in_chromium("semaphore-mutex-cut-at-lease-create");
    assert!(dom.contains("<section id=\"waits\">"));
    assert!(dom.contains(": a cycle</span>"));
}

/// Renders `trace` with `splitbrain report` into `out` and returns the page.
fn rendered(trace: &Path, out: &Path) -> String {
    let report = splitbrain(&[
        "report",
        trace.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    std::fs::read_to_string(out).unwrap()
}

/// The report `splitbrain report` makes of a trace is the one the command that wrote the
/// trace made: same verdicts (one function judges every trace), byte for byte.
fn assert_same_report(written: &Path, trace: &Path) {
    let again = rendered(trace, &trace.with_extension("again.html"));
    let first = std::fs::read_to_string(written).unwrap();
    assert!(
        first == again,
        "{} differs from its re-render",
        written.display()
    );
}

#[test]
fn a_model_counterexample_reports_its_violation_as_check_did() {
    let dir = scratch("from-check");
    let check = splitbrain(&[
        "check",
        "mutex",
        "--clients",
        "2",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(check.status.success());
    let summary: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    let belief = &summary["properties"][0];
    assert_eq!(belief["name"], "mutual_exclusion_belief");
    assert_eq!(belief["verdict"], "violated");
    let trace = dir.join("mutex.c2.mutual_exclusion_belief.trace.json");
    let html = rendered(&trace, &dir.join("again.html"));
    assert!(
        html.contains("class=\"verdict bad\""),
        "the violation shows"
    );
    assert!(html.contains("mutual_exclusion_belief"));
    assert_same_report(
        &dir.join("mutex.c2.mutual_exclusion_belief.report.html"),
        &trace,
    );
}

#[test]
fn a_replayed_run_reports_as_replay_did() {
    let dir = scratch("from-replay");
    let (trace, report) = (dir.join("run.trace.json"), dir.join("run.html"));
    let replay = splitbrain(&[
        "replay",
        "gc-pause-split-brain",
        "--seed",
        "2",
        "--trace",
        trace.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(replay.status.success());
    assert!(
        std::fs::read_to_string(&report)
            .unwrap()
            .contains("class=\"verdict bad\"")
    );
    assert_same_report(&report, &trace);
}

#[test]
fn a_hunted_run_reports_as_hunt_did() {
    let dir = scratch("from-hunt");
    let hunt = splitbrain(&[
        "hunt",
        "--scenario",
        "herd-naive",
        "--seeds",
        "0..2",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(hunt.status.success());
    let stem = dir.join("herd-naive").join("seed-0");
    let trace = stem.with_extension("trace.json");
    let report = stem.with_extension("report.html");
    assert!(
        std::fs::read_to_string(&report)
            .unwrap()
            .contains("herd_free")
    );
    assert_same_report(&report, &trace);
}
