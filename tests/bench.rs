//! `splitbrain bench` end to end at tiny sizes: it measures every figure through the same
//! child commands a user runs and writes bench.json and bench.md. (What the figures are is
//! measured by the command itself, never asserted here: only that each was measured.) `bench
//! --real` needs a real ZooKeeper and Apache Curator; its test is ignored without them.

mod support;

use serde_json::{Value, json};
use support::{scratch, splitbrain};

#[test]
fn bench_writes_every_figure_as_json_and_markdown() {
    let out = scratch("bench");
    let output = splitbrain(&[
        "bench",
        "--runs",
        "1",
        "--seeds",
        "3",
        "--memory-seeds",
        "2",
        "--model-clients",
        "2",
        "--model-cap",
        "30",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("bench [9/9]"), "progress: {stderr}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bench.json")).unwrap()).unwrap();
    assert!(json["one_core"]["seeds_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(json["all_cores"]["seeds"], 3);
    for servers in ["standalone", "ensemble"] {
        let hunt = &json["ensemble"][servers];
        assert_eq!(
            (&hunt["jobs"], &hunt["seeds"]),
            (&json!(1), &json!(3)),
            "{json}"
        );
        assert!(hunt["seeds_per_s"].as_f64().unwrap() > 0.0, "{json}");
    }
    assert!(json["simulated_s_per_seed"].as_f64().unwrap() > 1.0);
    assert_eq!(json["memory"][1]["seeds"], 20);
    assert!(json["memory"][1]["peak_rss_mb"].as_f64().unwrap() > 1.0);
    assert!(json["first_split_brain"]["seed"].is_u64(), "{json}");
    let model = json["model"].as_array().unwrap();
    assert_eq!(model.len(), 3);
    // Two clients finish in well under a second: the symmetric check is complete and smaller;
    // the follower cut in place of the expiry is measured beside them.
    for row in model {
        assert_eq!(row["complete"], true, "{row}");
    }
    assert!(model[0]["unique_states"].as_u64() < model[1]["unique_states"].as_u64());
    let faults: Vec<&Value> = model.iter().map(|row| &row["faults"]).collect();
    assert_eq!(
        faults,
        [&json!("expiry"), &json!("expiry"), &json!("follower_cut")]
    );
    assert_ne!(model[2]["unique_states"], model[0]["unique_states"]);
    let markdown = std::fs::read_to_string(out.join("bench.md")).unwrap();
    assert!(markdown.contains("| 2 | yes | one expiry |"), "{markdown}");
    assert!(
        markdown.contains("| 2 | yes | one follower cut |"),
        "{markdown}"
    );
    assert!(markdown.contains("3-server ensemble"), "{markdown}");
    assert!(
        markdown.contains("first GC-pause split brain"),
        "{markdown}"
    );
}

#[test]
fn bench_refuses_zero_sizes_in_one_line() {
    let output = splitbrain(&[
        "bench",
        "--seeds",
        "0",
        "--out",
        "/nonexistent/never-written",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--seeds"), "{stderr}");
}

#[test]
fn bench_real_refuses_a_session_timeout_the_server_would_not_grant_in_one_line() {
    let output = splitbrain(&[
        "bench",
        "--real",
        "--tick-ms",
        "2000",
        "--session-timeout-ms",
        "1000",
        "--out",
        "/nonexistent/never-written",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--session-timeout-ms"), "{stderr}");
}

/// A tiny `bench --real`: the results file has every contestant at every count, and the
/// counts are what the runs must give (never a duration: only that each was measured).
#[test]
#[ignore = "needs ZooKeeper and the Curator jars: scripts/test installs Debian's zookeeper and \
            libcurator-*-java"]
fn bench_real_measures_both_libraries_and_the_herd_at_each_count() {
    let out = scratch("bench-real");
    let output = splitbrain(&[
        "bench",
        "--real",
        "--quick",
        "--contenders",
        "1,3",
        "--acquisitions",
        "30",
        "--leaderships",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bench-real.json")).unwrap())
            .unwrap();
    assert_eq!(json["sizes"]["runs"], 1);
    assert!(json["load_average"][0].is_string(), "{json}");
    // By default both storages, tmpfs (judged) first, each against its own server.
    let storages = json["storages"].as_array().unwrap();
    let names: Vec<&str> = (storages.iter())
        .map(|s| s["storage"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tmpfs", "disk"], "{json}");
    assert_eq!(storages[0]["directory"], "/dev/shm");
    for storage in storages {
        measured_both_libraries_and_the_herd(storage);
    }
    let markdown = std::fs::read_to_string(out.join("bench-real.md")).unwrap();
    assert!(markdown.contains("on tmpfs (`/dev/shm`)"), "{markdown}");
    assert!(
        markdown.contains("### The transaction log on disk"),
        "{markdown}"
    );
    assert!(markdown.contains("| 3 |"), "{markdown}");
    assert!(
        markdown.contains("Targets, judged with the log on tmpfs:"),
        "{markdown}"
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("bench-real.json"));
}

/// One storage's results: every contestant at counts 1 and 3, and both latches.
fn measured_both_libraries_and_the_herd(json: &Value) {
    let locks = json["locks"].as_array().unwrap();
    assert_eq!(locks.len(), 2, "{json}");
    for (row, contenders) in locks.iter().zip([1u64, 3]) {
        assert_eq!(row["contenders"], contenders);
        let figures = row["figures"].as_array().unwrap();
        let names: Vec<&str> = figures
            .iter()
            .map(|f| f["contestant"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["our-mutex", "curator-mutex", "naive-herd"]);
        for figure in figures {
            let run = &figure["runs"][0];
            assert_eq!(run["acquisitions"], 30, "{figure}");
            assert!(
                run["acquisitions_per_s"].as_f64().unwrap() > 0.0,
                "{figure}"
            );
            assert!(
                run["cpu_ms_per_acquisition"].as_f64().unwrap() > 0.0,
                "{figure}"
            );
            assert!(run["p99_ms"].as_f64() >= run["p50_ms"].as_f64(), "{figure}");
            // Alone, nobody waits, so no release wakes anyone.
            if contenders == 1 {
                assert_eq!(run["server_watches"], 0, "{figure}");
            }
        }
        // Ours wakes at most one waiter per release, seen by the server and by the sessions;
        // Curator keeps its watch events inside.
        let ours = &figures[0]["runs"][0];
        assert!(ours["server_watches"].as_u64().unwrap() <= 30, "{ours}");
        assert!(ours["client_watches"].as_u64().unwrap() <= 30, "{ours}");
        assert!(figures[1]["runs"][0]["client_watches"].is_null());
        assert!(figures[2]["runs"][0]["client_watches"].is_u64());
    }
    // 3 participants × 3 leaderships: every leadership but the first follows a close.
    let failover = json["failover"].as_array().unwrap();
    let latches: Vec<(&str, u64)> = failover
        .iter()
        .map(|f| {
            (
                f["contestant"].as_str().unwrap(),
                f["failovers"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(latches, [("our-latch", 8), ("curator-latch", 8)]);
}

#[test]
fn bench_real_refuses_a_disk_storage_on_tmpfs_before_any_server_starts() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_splitbrain"))
        .args(["bench", "--real", "--storage", "disk", "--out"])
        .arg(scratch("bench-real-storage"))
        .env("TMPDIR", "/dev/shm")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--storage disk: the temporary directory /dev/shm is a tmpfs"),
        "{stderr}"
    );
}
