//! `splitbrain real --library zookeeper-client`: the Rust crate's own `Client::lock`, run by
//! this binary with no build of its own, beside the scenario's clients (its nodes are named
//! and ordered as splitbrain's mutex's are) or in their place; what the crate cannot run is
//! refused before any server starts, naming what it serves.

mod support;

use serde_json::{Value, json};
use support::{json_of, scratch, splitbrain, stderr};

/// Runs `splitbrain real <scenario> --start-local --library zookeeper-client <placement>`
/// with `--json` and a fresh `--out`: its exit code and its summary (or its stderr's line).
fn real(scenario: &str, placement: &[&str]) -> (Option<i32>, Result<Value, String>) {
    let out = scratch(&format!("zookeeper-client-{scenario}"));
    let mut args = vec![
        "real",
        scenario,
        "--start-local",
        "--library",
        "zookeeper-client",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(placement);
    let output = splitbrain(&args);
    let code = output.status.code();
    match code {
        Some(2) => (code, Err(stderr(&output).trim_end().to_owned())),
        _ => (code, Ok(json_of(&output))),
    }
}

#[test]
fn zookeeper_client_is_refused_what_its_crate_does_not_serve_before_the_run() {
    let (code, refused) = real("semaphore-fault-free", &["--contenders", "2"]);
    assert_eq!(
        (code, refused),
        (
            Some(2),
            Err(
                "splitbrain: recipe: zookeeper-client contenders run Client::lock, so the \
                 recipe must be `mutex`, found `semaphore`"
                    .into()
            )
        )
    );
    let (code, refused) = real("leader-latch-fault-free", &["--in-place"]);
    assert_eq!(code, Some(2));
    assert!(refused.unwrap_err().contains("found `leader-latch`"));
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn zookeeper_client_contenders_beside_a_mutex_scenario_are_in_its_trace_and_verdict() {
    // The first time this binary runs the crate's contenders, with no build of their own:
    // two beside the scenario's four clients, on its lock path.
    let _serial = real::testing::one_server_at_a_time();
    let (code, out) = real("herd-free-mutex", &["--contenders", "2"]);
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(out["violations"], json!([]));
    let trace = std::fs::read_to_string(out["trace"].as_str().unwrap()).unwrap();
    let trace: Value = serde_json::from_str(&trace).unwrap();
    assert_eq!(trace["meta"]["clients"], 6);
    assert_eq!(trace["meta"]["settings"]["zookeeper-client_contenders"], 2);
    let grants = (trace["events"].as_array().unwrap().iter())
        .filter(|e| e["kind"] == "notice" && e["notice"]["notice"] == "acquired")
        .filter_map(|e| e["client"].as_u64())
        .collect::<Vec<_>>();
    assert_eq!(grants.len(), 12, "6 clients, 2 holds each: {grants:?}");
    assert!(grants.contains(&4) && grants.contains(&5), "{grants:?}");
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_lock_whose_create_reply_is_lost_fails_with_the_crates_own_error_and_gives_up() {
    // The findings page's command (book/src/findings/client-lock-lost-release.md, "The
    // acquire too"): client 1's create is applied but its replies are held for 7 s (T = 10 s).
    // The crate gives up on the silent connection after 2/5 T and fails the lock with
    // `Error::Custom`, which is not `ConnectionLoss`, so the lock's recovery by its node's
    // prefix does not run: the acquire fails (a `library` error), client 1 is never granted,
    // and no node is left behind.
    let _serial = real::testing::one_server_at_a_time();
    let (code, out) = real(
        "mutex-create-reply-lost-keeps-its-place",
        &["--in-place", "--seed", "0"],
    );
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(code, Some(1), "{out}");
    let violations = out["violations"].as_array().unwrap();
    assert!(
        violations.iter().all(|v| v["property"] == "progress"),
        "{out}"
    );
    let trace = std::fs::read_to_string(out["trace"].as_str().unwrap()).unwrap();
    let trace: Value = serde_json::from_str(&trace).unwrap();
    let events = trace["events"].as_array().unwrap();
    let notices_of_1: Vec<&Value> = (events.iter())
        .filter(|e| e["kind"] == "notice" && e["client"] == 1)
        .map(|e| &e["notice"])
        .collect();
    assert_eq!(
        notices_of_1,
        [&json!({"notice": "failed", "owner": 0, "reason": {"reason": "library"}})],
        "{out}"
    );
    let tree = events.iter().rev().find(|e| e["kind"] == "tree_snapshot");
    let nodes = tree.expect("the final tree")["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 1, "only the lock's directory: {nodes:?}");
}
