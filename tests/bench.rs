//! `splitbrain bench` end to end at tiny sizes: it measures every figure through the same
//! child commands a user runs and writes bench.json and bench.md. (What the figures are is
//! measured by the command itself, never asserted here: only that each was measured.)

mod support;

use serde_json::Value;
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
    assert!(stderr.contains("bench [7/7]"), "progress: {stderr}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bench.json")).unwrap()).unwrap();
    assert!(json["one_core"]["seeds_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(json["all_cores"]["seeds"], 3);
    assert!(json["simulated_s_per_seed"].as_f64().unwrap() > 1.0);
    assert_eq!(json["memory"][1]["seeds"], 20);
    assert!(json["memory"][1]["peak_rss_mb"].as_f64().unwrap() > 1.0);
    assert!(json["first_split_brain"]["seed"].is_u64(), "{json}");
    let model = json["model"].as_array().unwrap();
    assert_eq!(model.len(), 2);
    // Two clients finish in well under a second: the symmetric check is complete and smaller.
    assert_eq!(model[0]["complete"], true);
    assert_eq!(model[1]["complete"], true);
    assert!(model[0]["unique_states"].as_u64() < model[1]["unique_states"].as_u64());
    let markdown = std::fs::read_to_string(out.join("bench.md")).unwrap();
    assert!(markdown.contains("| 2 | yes |"), "{markdown}");
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
