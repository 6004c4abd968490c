//! Real 3-server ensembles. Each recipe library's own contenders, in place of a scenario's
//! clients, run through a kill of the leader (`--ensemble 3 --kill-leader-at`): the kill is in
//! the trace, every contender asked and was granted, the servers' modes were read at the
//! horizon, and the fence held. The verdicts of the other properties are left to the findings
//! matrix (`scenarios/real-matrix.json`): whether a client declares LOST depends on how long
//! the election takes against the 1 s session timeout, which a real clock on a loaded machine
//! does not fix.
//!
//! And the follower cut (`mutex-follower-cut-split-brain`, `isolate_from_peers` of the
//! holder's server) and the lagging follower (`mutex-lagging-follower-split-brain`,
//! `lag_server` of it): the trace records the fault with the server it named, and the fence
//! holds. Whether the split brain shows depends on which server the holder's client library
//! chose (its own shuffle, not the seed's): only on a follower, about two runs of three.
//!
//! And the faults on every link between servers: a split with the leader alone
//! (`mutex-split-leader-in-minority`), random halves drawn from the seed, the same in a rerun
//! (`mutex-random-halves`), and slow, lossy links (`mutex-slow-lossy-server-links`): each is
//! recorded as it was carried out (a split with its groups), and the fence holds.
//! And a client cut off from its own server (`mutex-holder-cut-from-its-server`,
//! `cut_from_server`): the trace records the cut with the server it named, and the client
//! resumes its session on another server. And two servers of three crashed together
//! (`mutex-quorum-loss-by-crashes`): both are recorded, both serve again, and the fence holds.
//! And the leader crashed as it proposes a client's create (`mutex-create-survives-election`):
//! the next leader commits the create, and the client holds through that node.

mod support;

use std::collections::BTreeSet;

use serde_json::{Value, json};
use support::{real, ten_run_page_sweep, trace_of, violated};

/// `splitbrain real <scenario> --start-local --ensemble 3 <extra> --json`, checked to have run
/// on the ensemble without breaking `fence`: its summary and its trace.
fn on_an_ensemble(test: &str, scenario: &str, extra: &[&str], fence: &str) -> (Value, Value) {
    let _serial = real::testing::one_server_at_a_time();
    let mut args = vec![scenario, "--start-local", "--ensemble", "3"];
    args.extend_from_slice(extra);
    let (code, out) = real(test, &args);
    assert!(matches!(code, 0 | 1), "{out}");
    assert_eq!(out["target"], "ensemble-3", "{out}");
    assert!(!violated(&out, fence), "{fence}: {out}");
    let trace = trace_of(&out);
    (out, trace)
}

/// The faults of kind `fault` that `kind` events (`fault_start`, `fault_end`) of `trace`
/// record.
fn faults<'a>(trace: &'a Value, kind: &str, fault: &str) -> Vec<&'a Value> {
    (trace["events"].as_array().unwrap().iter())
        .filter(|e| e["kind"] == kind && e["fault"]["kind"] == fault)
        .map(|e| &e["fault"])
        .collect()
}

/// A leader kill at 300 ms, run as the module says.
fn run_through_a_leader_kill(test: &str, scenario: &str, library: &[&str], fence: &str) {
    let mut extra = vec!["--kill-leader-at", "300"];
    extra.extend_from_slice(library);
    let (out, trace) = on_an_ensemble(test, scenario, &extra, fence);
    let kill = json!({"at_ms": 300, "fault": {"kind": "restart_server", "down_ms": 2000}});
    assert_eq!(out["fault_schedule"], json!([kill]));
    let killed = |kind| faults(&trace, kind, "restart_server").len();
    assert_eq!((killed("fault_start"), killed("fault_end")), (1, 1));
    let clients = trace["meta"]["clients"].as_u64().unwrap();
    let of = |kind: &str| {
        (trace["events"].as_array().unwrap().iter())
            .filter(|e| e["kind"] == kind)
            .filter_map(|e| e["client"].as_u64())
            .collect::<BTreeSet<_>>()
    };
    let every: BTreeSet<u64> = (0..clients).collect();
    assert_eq!(of("call"), every, "each slot is a contender");
    assert_eq!(of("notice"), every, "each contender was answered");
    let modes: Vec<&Value> = (trace["events"].as_array().unwrap().iter())
        .filter(|e| e["kind"] == "server_modes")
        .collect();
    assert_eq!(modes.len(), 1, "the servers' modes, once, at the horizon");
    assert_eq!(modes[0]["modes"].as_array().map(Vec::len), Some(3));
}

/// `scenario`, whose one fault of kind `fault` acts on the server of client 0, run as the
/// module says: the fault starts and ends, recorded with the server its selector named.
fn run_through_a_fault_on_the_holder_s_server(
    test: &str,
    scenario: &str,
    fault: &str,
    library: &[&str],
) {
    let (_, trace) = on_an_ensemble(test, scenario, library, "mutual_exclusion_fenced");
    let (started, ended) = (
        faults(&trace, "fault_start", fault),
        faults(&trace, "fault_end", fault),
    );
    assert_eq!(
        (started.len(), ended.len()),
        (1, 1),
        "{started:?} {ended:?}"
    );
    assert_eq!(started[0], ended[0], "one fault, recorded alike");
    assert_eq!(started[0]["server"], json!({"server_of": 0}));
    let resolved = started[0]["resolved"].as_u64();
    assert!(resolved.is_some_and(|s| s < 3), "{}", started[0]);
}

/// The one fault of kind `fault` that `trace` records starting, checked to have named a
/// server of the three.
fn the_one_started<'a>(trace: &'a Value, fault: &str) -> &'a Value {
    let started = faults(trace, "fault_start", fault);
    assert_eq!(started.len(), 1, "{started:?}");
    let resolved = started[0]["resolved"].as_u64();
    assert!(resolved.is_some_and(|s| s < 3), "{}", started[0]);
    started[0]
}

/// The sessions client `client` was connected with, in order, and the times it lost a
/// connection, from its `raw_session` events.
fn connections(trace: &Value, client: u64) -> (Vec<u64>, Vec<u64>) {
    let states = (trace["events"].as_array().unwrap().iter())
        .filter(|e| e["kind"] == "raw_session" && e["client"] == client);
    let (mut sessions, mut lost) = (Vec::new(), Vec::new());
    for event in states {
        match event["state"]["state"].as_str() {
            Some("connected") => sessions.extend(event["state"]["session"].as_u64()),
            Some("disconnected") => lost.extend(event["t"].as_u64()),
            _ => {}
        }
    }
    (sessions, lost)
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_client_cut_from_its_server_resumes_its_session_on_another() {
    let scenario = "mutex-holder-cut-from-its-server";
    let (_, trace) = on_an_ensemble("client-cut", scenario, &[], "mutual_exclusion_fenced");
    the_one_started(&trace, "cut_from_server");
    let (sessions, lost) = connections(&trace, 0);
    assert!(!lost.is_empty(), "the cut connection was lost");
    // Its first session, resumed on another server while the cut held its own.
    assert!(sessions.len() >= 2, "{sessions:?}");
    assert_eq!(
        sessions[0], sessions[1],
        "resumed, not a new session: {sessions:?}"
    );
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

/// `mutex-follower-cut-split-brain`, run as the module says.
fn run_through_a_follower_cut(test: &str, library: &[&str]) {
    let scenario = "mutex-follower-cut-split-brain";
    run_through_a_fault_on_the_holder_s_server(test, scenario, "isolate_from_peers", library);
}

/// `mutex-lagging-follower-split-brain`, run as the module says.
fn run_through_a_lagging_follower(test: &str, library: &[&str]) {
    let scenario = "mutex-lagging-follower-split-brain";
    run_through_a_fault_on_the_holder_s_server(test, scenario, "lag_server", library);
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn the_holder_s_server_is_cut_off_from_its_peers_and_the_fence_holds() {
    run_through_a_follower_cut("follower-cut", &[]);
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn the_holder_s_server_lags_behind_its_peers_and_the_fence_holds() {
    run_through_a_lagging_follower("lagging-follower", &[]);
}

#[test]
#[ignore = "needs zookeeper and curator: scripts/test installs Debian's zookeeper and \
            libcurator-{recipes,framework,client}-java"]
fn curators_own_mutex_s_server_lags_behind_its_peers_and_the_fence_holds() {
    run_through_a_lagging_follower("lagging-follower-curator", &["--curator-in-place"]);
}

#[test]
#[ignore = "needs zookeeper and curator: scripts/test installs Debian's zookeeper and \
            libcurator-{recipes,framework,client}-java"]
fn curators_own_mutex_s_server_is_cut_off_from_its_peers_and_the_fence_holds() {
    run_through_a_follower_cut("follower-cut-curator", &["--curator-in-place"]);
}

/// The groups each `split_servers` of `trace` cut, as recorded at its start.
fn split_groups(trace: &Value) -> Vec<Value> {
    let started = faults(trace, "fault_start", "split_servers");
    let ended = faults(trace, "fault_end", "split_servers");
    assert_eq!(started, ended, "each split starts and ends, recorded alike");
    started.iter().map(|f| f["resolved"].clone()).collect()
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn the_leader_split_into_a_minority_is_recorded_and_the_fence_holds() {
    let scenario = "mutex-split-leader-in-minority";
    let (_, trace) = on_an_ensemble("split", scenario, &[], "mutual_exclusion_fenced");
    assert_eq!(split_groups(&trace), [json!([[2], [0, 1]])]);
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn two_servers_crashed_together_come_back_and_the_fence_holds() {
    let scenario = "mutex-quorum-loss-by-crashes";
    let (_, trace) = on_an_ensemble("crashes", scenario, &[], "mutual_exclusion_fenced");
    let resolved = |kind| -> Vec<Value> {
        (faults(&trace, kind, "crash_server").iter())
            .map(|f| f["resolved"].clone())
            .collect()
    };
    assert_eq!(
        resolved("fault_start"),
        [json!(2), json!(1)],
        "both down at once"
    );
    assert_eq!(
        resolved("fault_end"),
        [json!(2), json!(1)],
        "both serve again"
    );
    let modes = (trace["events"].as_array().unwrap().iter())
        .find(|e| e["kind"] == "server_modes")
        .expect("the servers' modes at the horizon");
    let serving = (modes["modes"].as_array().unwrap().iter())
        .filter(|mode| *mode == "leader" || *mode == "follower")
        .count();
    assert_eq!(serving, 3, "{modes}");
}

/// `mutex-create-survives-election` on three real servers: the peer proxies stop the leader
/// as it sends a follower its proposal of client 1's lock-node create; the client is answered
/// `connection_loss`, sends no other create, and acquires through the node that proposal
/// made, committed by the next leader: its token (the node's czxid) is of the stopped
/// leader's epoch, older than the zxids client 1 reads afterwards.
#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_create_the_leader_proposed_as_it_stopped_is_committed_by_the_next_leader() {
    let scenario = "mutex-create-survives-election";
    let (_, trace) = on_an_ensemble("at-proposal", scenario, &[], "mutual_exclusion_fenced");
    the_one_started(&trace, "crash_server");
    assert_eq!(faults(&trace, "fault_end", "crash_server").len(), 1);
    let client_1: Vec<&Value> = (trace["events"].as_array().unwrap().iter())
        .filter(|e| e["client"] == 1)
        .collect();
    let creates: Vec<&Value> = (client_1.iter().copied())
        .filter(|e| e["kind"] == "op_sent" && e["request"]["op"] == "create")
        .collect();
    assert_eq!(creates.len(), 1, "one lock-node create: {creates:?}");
    let answer = (client_1.iter())
        .find(|e| e["kind"] == "reply" && e["op"] == creates[0]["op"])
        .expect("the create is answered");
    assert_eq!(answer["result"], json!({"Err": "connection_loss"}));
    let token = (client_1.iter())
        .find(|e| e["kind"] == "notice" && e["notice"]["notice"] == "acquired")
        .and_then(|e| e["notice"]["token"].as_u64())
        .expect("client 1 acquires");
    let epoch = |zxid: u64| zxid >> 32;
    let later = (client_1.iter())
        .filter(|e| e["kind"] == "reply")
        .filter_map(|e| e["result"]["Ok"]["pzxid"].as_u64())
        .map(epoch)
        .max();
    assert!(
        later.is_some_and(|later| epoch(token) < later),
        "token {token:#x}, later epoch {later:?}"
    );
}

/// A seed of `mutex-random-halves` whose schedule draws two splits.
const TWO_SPLITS: &str = "0";

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn random_halves_are_drawn_from_the_seed_and_a_rerun_splits_alike() {
    let run = |test| {
        let extra = ["--seed", TWO_SPLITS];
        let (_, trace) = on_an_ensemble(
            test,
            "mutex-random-halves",
            &extra,
            "mutual_exclusion_fenced",
        );
        split_groups(&trace)
    };
    let first = run("random-halves");
    assert_eq!(first.len(), 2, "{first:?}");
    for groups in &first {
        let sizes: Vec<usize> = (groups.as_array().unwrap().iter())
            .map(|g| g.as_array().unwrap().len())
            .collect();
        assert_eq!(sizes, [1, 2], "a minority and a majority: {groups}");
    }
    assert_eq!(run("random-halves-again"), first, "the seed's halves again");
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn slow_lossy_server_links_are_recorded_and_the_fence_holds() {
    let scenario = "mutex-slow-lossy-server-links";
    let (_, trace) = on_an_ensemble("slow-links", scenario, &[], "mutual_exclusion_fenced");
    let started = faults(&trace, "fault_start", "slow_server_links");
    let ended = faults(&trace, "fault_end", "slow_server_links");
    assert_eq!((started.len(), ended.len()), (1, 1), "{started:?}");
    assert_eq!(started[0]["loss_percent"], 10);
}

/// The findings page's command (`book/src/findings/semaphore-deadlock.md`, "A leader's crash
/// is enough"): Curator's own `InterProcessSemaphoreMutex` in place of the four clients of
/// `semaphore-mutex-fault-free`, seeds 0..10 two at a time, each run on a 3-server ensemble
/// whose leader is killed 300 ms in. Whether a run hangs is a race (2 of 24 runs measured), and
/// so, as the module says, is whether a holder hears of its session's end before the next
/// grant: a contender starved of the CPU for its 1 s session breaks belief exclusion (seen once
/// in CI, on two cores). The test checks what holds in every run: each was made and judged, and
/// the fence held.
#[test]
#[ignore = "needs zookeeper and curator: scripts/test installs Debian's zookeeper and \
            libcurator-{recipes,framework,client}-java"]
fn curators_semaphore_mutex_keeps_the_fence_through_a_leader_kill() {
    let _serial = real::testing::one_server_at_a_time();
    let swept = ten_run_page_sweep(
        "ensemble-curator-semaphore-mutex",
        "semaphore-mutex-fault-free",
        &[
            "--ensemble",
            "3",
            "--kill-leader-at",
            "300",
            "--curator-in-place",
        ],
    );
    let fenced = (swept["properties"].as_array().unwrap().iter())
        .find(|p| p["name"] == "mutual_exclusion_fenced")
        .expect("the mutex's fence is judged");
    assert_eq!(fenced["seeds_violating"], 0, "{fenced}");
}
