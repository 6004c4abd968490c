//! Each recipe library's own contenders, in place of a scenario's clients, on a real 3-server
//! ensemble whose leader is killed mid-run (`--ensemble 3 --kill-leader-at`): the kill is in
//! the trace, every contender asked and was granted, and the fence held. The verdicts of the
//! other properties are left to the findings matrix (`scenarios/real-matrix.json`): whether a
//! client declares LOST depends on how long the election takes against the 1 s session
//! timeout, which a real clock on a loaded machine does not fix.

mod support;

use serde_json::{Value, json};
use support::{json_of, scratch, splitbrain};

/// `splitbrain real <scenario> --start-local --ensemble 3 --kill-leader-at 300 <library>
/// --json`, with the run checked as the module says.
fn run_through_a_leader_kill(test: &str, scenario: &str, library: &[&str], fence: &str) {
    let _serial = real::testing::one_server_at_a_time();
    let dir = scratch(test);
    let mut args = vec!["real", scenario, "--json", "--out", dir.to_str().unwrap()];
    args.extend([
        "--start-local",
        "--ensemble",
        "3",
        "--kill-leader-at",
        "300",
    ]);
    args.extend_from_slice(library);
    let output = splitbrain(&args);
    let out = json_of(&output);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{out}");
    assert_eq!(out["target"], "ensemble-3", "{out}");
    let kill = json!({"at_ms": 300, "fault": {"kind": "restart_server", "down_ms": 2000}});
    assert_eq!(out["fault_schedule"], json!([kill]));
    let violations = out["violations"].as_array().unwrap();
    assert!(
        violations.iter().all(|v| v["property"] != fence),
        "{fence}: {out}"
    );
    let path = out["trace"].as_str().expect("the summary names its trace");
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let events = trace["events"].as_array().unwrap();
    let killed = |kind: &str| {
        (events.iter())
            .filter(|e| e["kind"] == kind && e["fault"]["kind"] == "restart_server")
            .count()
    };
    assert_eq!((killed("fault_start"), killed("fault_end")), (1, 1));
    let clients = trace["meta"]["clients"].as_u64().unwrap();
    let of = |kind: &str| {
        (events.iter())
            .filter(|e| e["kind"] == kind)
            .filter_map(|e| e["client"].as_u64())
            .collect::<std::collections::BTreeSet<_>>()
    };
    let every: std::collections::BTreeSet<u64> = (0..clients).collect();
    assert_eq!(of("call"), every, "each slot is a contender");
    assert_eq!(of("notice"), every, "each contender was answered");
}

#[test]
#[ignore = "needs zookeeper and curator: scripts/test installs Debian's zookeeper and \
            libcurator-{recipes,framework,client}-java"]
fn curators_own_mutex_runs_through_a_leader_kill_and_the_fence_holds() {
    run_through_a_leader_kill(
        "ensemble-curator",
        "herd-free-mutex",
        &["--curator-in-place"],
        "mutual_exclusion_fenced",
    );
}

#[test]
#[ignore = "needs zookeeper and kazoo: scripts/test installs Debian's zookeeper, and Kazoo into \
            target/venv"]
fn kazoos_own_election_runs_through_a_leader_kill_and_the_fence_holds() {
    run_through_a_leader_kill(
        "ensemble-kazoo",
        "leader-selector-fault-free",
        &["--library", "kazoo", "--in-place"],
        "leader_unique_fenced",
    );
}
