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
