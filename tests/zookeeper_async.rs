//! `splitbrain real --library zookeeper-async`: the Rust crate's own `shared_lock` and
//! `LeaderLatch` in place of a scenario's clients, run by this binary with no build of their
//! own; what the crate cannot run is refused before any server starts, naming what it serves.

mod support;

use support::{json_of, scratch, splitbrain, stderr, ten_run_page_sweep};

use serde_json::{Value, json};

/// Runs `splitbrain real <scenario> --start-local --library zookeeper-async <placement>`
/// expecting one line on stderr and exit code 2.
fn refused(scenario: &str, placement: &[&str]) -> String {
    let mut args = vec![
        "real",
        scenario,
        "--start-local",
        "--library",
        "zookeeper-async",
    ];
    args.extend_from_slice(placement);
    let output = splitbrain(&args);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let text = stderr(&output);
    assert_eq!(text.lines().count(), 1, "{text}");
    text.trim_end().to_owned()
}

#[test]
fn zookeeper_async_is_refused_what_its_crate_does_not_serve_before_the_run() {
    assert_eq!(
        refused("semaphore-fault-free", &["--in-place"]),
        "splitbrain: recipe: zookeeper-async contenders run shared_lock::lock or LeaderLatch, \
         so the recipe must be `mutex` or `leader-latch`, found `semaphore`"
    );
    assert!(
        refused("herd-free-mutex", &["--contenders", "2"]).starts_with(
            "splitbrain: --contenders: zookeeper-async's shared_lock orders a lock path's \
             children by their name's text after its last `_`"
        )
    );
    assert_eq!(
        refused("mutex-acquire-timeout", &["--in-place"]),
        "splitbrain: workload: zookeeper-async's shared_lock::lock takes no timeout, so \
         acquire_timeout_ms must be absent"
    );
    assert_eq!(
        refused("leader-latch-await", &["--in-place"]),
        "splitbrain: recipe_settings: zookeeper-async's LeaderLatch has no await, so awaits \
         must be false"
    );
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn zookeeper_async_shared_lock_panics_when_its_node_is_third_in_line() {
    // Four contenders of herd-free-mutex, each queueing many times: shared_lock's binary
    // search by UUID in a list sorted by sequence (recipes/shared_lock.rs:140) misses its own
    // node, about half the time for the second of three, and the contender's report of the
    // panic ends the run (book/src/findings/zookeeper-async.md). The first time this binary
    // runs the crate's contenders, with no build of their own.
    let _serial = real::testing::one_server_at_a_time();
    let output = splitbrain(&[
        "real",
        "herd-free-mutex",
        "--start-local",
        "--library",
        "zookeeper-async",
        "--in-place",
    ]);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("a failure splitbrain has no name for: `panicked`")
            && text.contains("zookeeper-async-5.0.0/src/recipes/shared_lock.rs:140:"),
        "{text}"
    );
}

/// The findings page's sweep of `scenario` (book/src/findings/zookeeper-async.md, "How to
/// see it"): `splitbrain real <scenario> --start-local --library zookeeper-async --in-place
/// --seeds 0..10 --jobs 2`, with `--json` and a fresh `--out`. Each property's violating runs,
/// once every run was made and judged.
fn page_sweep(scenario: &str) -> Vec<(String, u64)> {
    let swept = ten_run_page_sweep(
        &format!("zookeeper-async-page-{scenario}"),
        scenario,
        &["--library", "zookeeper-async", "--in-place"],
    );
    let properties = swept["properties"].as_array().unwrap();
    (properties.iter())
        .map(|p: &Value| {
            let name = p["name"].as_str().unwrap().to_owned();
            (name, p["seeds_violating"].as_u64().unwrap())
        })
        .collect()
}

/// How many of the sweep's runs violated `property`.
fn violating(sweep: &[(String, u64)], property: &str) -> u64 {
    let found = sweep.iter().find(|(name, _)| name == property);
    found.unwrap_or_else(|| panic!("{property} in {sweep:?}")).1
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_paused_shared_lock_holder_reconnects_into_a_loop_in_every_run() {
    // Under 1.5 s sessions a reconnect becomes a loop (io.rs:371), so the paused holder's
    // next acquire fails and progress breaks in every run; the server's decisions and the
    // fence hold.
    let _serial = real::testing::one_server_at_a_time();
    let sweep = page_sweep("gc-pause-fenced");
    assert_eq!(
        violating(&sweep, "mutual_exclusion_belief"),
        10,
        "{sweep:?}"
    );
    assert_eq!(violating(&sweep, "progress"), 10, "{sweep:?}");
    assert_eq!(violating(&sweep, "live_session_exclusion"), 0, "{sweep:?}");
    assert_eq!(violating(&sweep, "mutual_exclusion_fenced"), 0, "{sweep:?}");
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn an_expired_leader_latch_is_never_told_and_stalls_the_election() {
    // The latch hears nothing of its session's expiry, and the reconnect loop stalls the
    // election in most runs (7 and 10 of 10 measured); the server's decisions and the fence
    // hold in every run.
    let _serial = real::testing::one_server_at_a_time();
    let sweep = page_sweep("leader-latch-session-expiry");
    assert!(violating(&sweep, "progress") > 0, "{sweep:?}");
    assert_eq!(violating(&sweep, "live_session_exclusion"), 0, "{sweep:?}");
    assert_eq!(violating(&sweep, "leader_unique_fenced"), 0, "{sweep:?}");
}

/// One run of `splitbrain real <scenario> --start-local <servers> --library zookeeper-async
/// --in-place` (a command of book/src/findings/zookeeper-async.md), with `--json` and a fresh
/// `--out`, which must leave an expectation unmet: its summary, its trace's events, and a
/// line per violation for failure messages.
fn unmet_run(scenario: &str, servers: &[&str]) -> (Value, Vec<Value>) {
    let out = scratch(&format!("zookeeper-async-{scenario}"));
    let mut args = vec!["real", scenario, "--start-local"];
    args.extend_from_slice(servers);
    args.extend([
        "--library",
        "zookeeper-async",
        "--in-place",
        "--json",
        "--out",
    ]);
    args.push(out.to_str().unwrap());
    let output = splitbrain(&args);
    let summary = json_of(&output);
    assert_eq!(
        output.status.code(),
        Some(1),
        "an expectation unmet: {summary}"
    );
    let path = summary["trace"]
        .as_str()
        .expect("the summary names its trace");
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let events = trace["events"].as_array().unwrap().clone();
    (summary, events)
}

/// Whether the run's summary lists `property` among its violations.
fn violated(summary: &Value, property: &str) -> bool {
    let violations = summary["violations"].as_array().unwrap();
    violations.iter().any(|v| v["property"] == property)
}

/// The waiter breaks `progress` while the server's decisions and the fence hold.
fn stalls_with_the_server_s_decisions_kept(summary: &Value) {
    assert!(violated(summary, "progress"), "{summary}");
    assert!(!violated(summary, "live_session_exclusion"), "{summary}");
    assert!(!violated(summary, "mutual_exclusion_fenced"), "{summary}");
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_shared_lock_waiter_s_watch_is_lost_at_a_reconnect_and_it_never_acquires() {
    // The server restarts within the session timeout: both clients keep their sessions, and
    // the crate, which has no SetWatches, never sets the waiter's watch again. At the horizon
    // the waiter's node is the only one, on its live session, the server holds no watch, and
    // the waiter was never granted the lock.
    let _serial = real::testing::one_server_at_a_time();
    let (summary, events) = unmet_run("mutex-waiter-across-server-restart", &[]);
    stalls_with_the_server_s_decisions_kept(&summary);
    assert!(violated(&summary, "answered"), "{summary}");
    let last = |kind: &str| {
        let found = events.iter().rev().find(|e| e["kind"] == kind);
        found
            .unwrap_or_else(|| panic!("a {kind}: {summary}"))
            .clone()
    };
    assert_eq!(last("watch_snapshot")["watches"], json!([]), "{summary}");
    let sessions_of_the_waiter = (events.iter())
        .filter(|e| e["client"] == 1 && e["kind"] == "raw_session")
        .filter_map(|e| e["state"]["session"].as_u64())
        .collect::<Vec<_>>();
    let tree = last("tree_snapshot");
    let owners = (tree["nodes"].as_array().unwrap().iter())
        .filter_map(|node| node["ephemeral_owner"].as_u64())
        .collect::<Vec<_>>();
    assert_eq!(owners.len(), 1, "one lock node left: {tree}");
    assert!(
        sessions_of_the_waiter.contains(&owners[0]),
        "the waiter's, on its session: {tree} {sessions_of_the_waiter:?}"
    );
    let granted = (events.iter())
        .any(|e| e["client"] == 1 && e["kind"] == "notice" && e["notice"]["notice"] == "acquired");
    assert!(!granted, "the waiter never acquires: {summary}");
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_shared_lock_waiter_cut_from_its_server_never_acquires() {
    // Cut off from its server of three for longer than T: the crate notices the silent server
    // only about T after it fell silent (io.rs:371), so the session expires; had it moved in
    // time, its watch would be lost as above. Either way the waiter never acquires.
    let _serial = real::testing::one_server_at_a_time();
    let ensemble = ["--ensemble", "3"];
    let (summary, _) = unmet_run("mutex-waiter-moves-to-another-server", &ensemble);
    stalls_with_the_server_s_decisions_kept(&summary);
}
