//! The `splitbrain` binary end to end: malformed scenario files, exact replays, shards, the
//! catalog sweep and shrunk counterexamples.

mod support;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use support::{scratch, splitbrain};

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(output), stderr(output)))
}

fn good_scenario() -> Value {
    json!({
        "name": "tiny",
        "description": "Two clients, no faults",
        "recipe": "mutex",
        "lock_path": "/locks/tiny",
        "clients": 2,
        "workload": {"acquisitions": 1, "hold_ms": 50, "think_ms": 10, "fenced": true},
        "horizon_ms": 5000,
        "faults": [{"at_ms": 100, "fault": {"kind": "pause", "client": 1, "for_ms": 20}}],
        "seeds": "0..4",
        "properties": {"mutual_exclusion_fenced": "holds"}
    })
}

/// Writes `text` as the only file of a catalog directory and runs `scenarios` on it.
fn rejected(name: &str, text: &str) -> (String, i32) {
    let dir = scratch(name);
    std::fs::write(dir.join("bad.json"), text).unwrap();
    let output = splitbrain(&["scenarios", "--catalog", dir.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(stdout(&output).is_empty(), "{}", stdout(&output));
    (stderr(&output), output.status.code().unwrap_or(-1))
}

#[test]
fn malformed_scenario_files_each_give_one_line_and_exit_2() {
    let edit = |pointer: &str, value: Value| {
        let mut scenario = good_scenario();
        *scenario.pointer_mut(pointer).unwrap() = value;
        scenario.to_string()
    };
    let without = |field: &str| {
        let mut scenario = good_scenario();
        scenario.as_object_mut().unwrap().remove(field);
        scenario.to_string()
    };
    let cases = [
        (
            "type",
            edit("/clients", json!("two")),
            "/clients: expected u16, found string \"two\"",
        ),
        (
            "unknown-field",
            edit("/workload/fenced", json!(true)).replace("\"fenced\"", "\"fencing\""),
            "/workload/fencing: expected one of",
        ),
        (
            "missing-field",
            without("horizon_ms"),
            "/: expected field `horizon_ms`, found nothing",
        ),
        (
            "recipe",
            edit("/recipe", json!("spin")),
            "/recipe: expected one of `mutex`, `naive-herd-mutex`, `trusting-wakeup-mutex`, \
             `state-blind-mutex`, `semaphore-mutex`, `multi-lock`, `semaphore`, `leader-latch`, `leader-selector`, `read-write-lock`, \
             `read-write-lock-first-writer-watch` (or a recipe of your own as {\"name\", \
             \"family\"}), found `spin`",
        ),
        (
            "fault-kind",
            edit("/faults/0/fault/kind", json!("meteor")),
            "/faults/0/fault/kind: expected one of `pause`",
        ),
        (
            "negative",
            edit("/faults/0/fault/for_ms", json!(-20)),
            "/faults/0/fault: expected u64, found integer `-20`",
        ),
        (
            "zero",
            edit("/faults/0/fault/for_ms", json!(0)),
            "/faults/0/fault/for_ms: expected a positive number of milliseconds, found 0",
        ),
        (
            "client-range",
            edit("/faults/0/fault/client", json!(2)),
            "/faults/0/fault/client: expected a client index below 2, found 2",
        ),
        (
            "property",
            edit("/properties", json!({"safety": "holds"})),
            "/properties/safety: expected one of `mutual_exclusion_belief`",
        ),
        (
            "expectation",
            edit("/properties", json!({"progress": "maybe"})),
            "/properties/progress: expected one of `holds`, `violated`, `unchecked`, found unknown variant `maybe`",
        ),
        (
            "seeds",
            edit("/seeds", json!("5..1")),
            "/seeds: expected a non-empty seed range like \"0..200\", found string \"5..1\"",
        ),
        (
            "horizon",
            edit("/faults/0/at_ms", json!(9000)),
            "/faults/0/at_ms: expected an instant before the horizon (5000 ms), found 9000",
        ),
        (
            "syntax",
            good_scenario().to_string().replacen('}', "},", 1),
            "/faults/0: expected valid JSON, found trailing comma",
        ),
    ];
    for (name, text, wanted) in cases {
        let (error, code) = rejected(name, &text);
        assert_eq!(code, 2, "{name}: {error}");
        assert_eq!(error.lines().count(), 1, "{name}: {error}");
        assert!(
            error.starts_with("splitbrain: ") && error.contains("bad.json: "),
            "{name}: {error}"
        );
        assert!(
            error.contains(wanted),
            "{name}: wanted {wanted:?} in {error}"
        );
    }
}

#[test]
fn a_directory_catalog_replaces_the_builtin_one() {
    let dir = scratch("catalog");
    std::fs::write(dir.join("tiny.json"), good_scenario().to_string()).unwrap();
    let output = splitbrain(&["scenarios", "--catalog", dir.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "tiny  Two clients, no faults\n");
    let output = splitbrain(&[
        "hunt",
        "--catalog",
        dir.to_str().unwrap(),
        "--json",
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(json_of(&output)["seeds_run"], 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unknown_names_are_one_line_errors() {
    let output = splitbrain(&["replay", "no-such-scenario", "--seed", "1"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with(
            "splitbrain: expected a scenario of the catalog (connection-loss-create, "
        )
    );
    let output = splitbrain(&["replay", "--from", "/nonexistent/trace.json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("/nonexistent/trace.json: expected a readable trace file"));
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Replays the trace at `from` with `replay --from`, writing its trace to `to`; requires the
/// same bytes as `from` and returns the command's stdout.
fn replay_from_identically(from: &Path, to: &Path) -> String {
    let output = splitbrain(&[
        "replay",
        "--from",
        from.to_str().unwrap(),
        "--trace",
        to.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        read(from),
        read(to),
        "the replay's trace is byte for byte the first"
    );
    stdout(&output)
}

#[test]
fn replay_gives_identical_traces_and_from_reproduces_them() {
    let dir = scratch("replay");
    let (a, b, c) = (dir.join("a.json"), dir.join("b.json"), dir.join("c.json"));
    for path in [&a, &b] {
        let args = [
            "replay",
            "gc-pause-split-brain",
            "--seed",
            "3",
            "--json",
            "--trace",
            path.to_str().unwrap(),
        ];
        let output = splitbrain(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        let summary = json_of(&output);
        assert_eq!(summary["scenario"], "gc-pause-split-brain");
        assert_eq!(summary["seed"], 3);
        assert_eq!(summary["trace"], path.to_str().unwrap());
        let properties: Vec<&str> = summary["violations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["property"].as_str().unwrap())
            .collect();
        assert!(properties.contains(&"mutual_exclusion_belief"), "{summary}");
        assert!(properties.contains(&"mutual_exclusion_fenced"), "{summary}");
    }
    assert_eq!(read(&a), read(&b));
    assert!(replay_from_identically(&a, &c).contains("mutual_exclusion_belief at "));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A trace carries its scenario's framework settings, so `replay --from` runs it under the
/// same error policy: `leader-latch-session-based` keeps leading through SUSPENDED and breaks
/// leader belief; replayed under the default (standard) policy it would step down and not.
#[test]
fn replay_from_keeps_a_non_default_framework() {
    let dir = scratch("replay-framework");
    let (first, again) = (dir.join("first.json"), dir.join("again.json"));
    let args = [
        "replay",
        "leader-latch-session-based",
        "--seed",
        "0",
        "--trace",
        first.to_str().unwrap(),
    ];
    let output = splitbrain(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("leader_unique_belief at "));
    let trace: Value = serde_json::from_slice(&read(&first)).unwrap();
    assert_eq!(
        trace["meta"]["scenario_spec"]["framework"]["error_policy"], "session-based",
        "the trace records the scenario's framework"
    );
    assert!(replay_from_identically(&first, &again).contains("leader_unique_belief at "));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_shrunk_counterexample_keeps_only_the_faults_it_needs_and_replays() {
    let dir = scratch("shrink");
    let (shrunk, again) = (dir.join("shrunk.json"), dir.join("again.json"));
    // The first seed whose unfenced run breaks belief exclusion with more faults than needed.
    let found = (0..100).find_map(|seed| {
        let seed = seed.to_string();
        let args = [
            "replay",
            "random-faults-mutex",
            "--seed",
            &seed,
            "--unfenced",
            "--shrink",
            "mutual_exclusion_belief",
            "--json",
            "--trace",
            shrunk.to_str().unwrap(),
        ];
        let output = splitbrain(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        let summary = json_of(&output);
        let original = summary["shrunk_from"].as_array().map_or(0, Vec::len);
        let kept = summary["fault_schedule"].as_array().unwrap().len();
        (kept < original).then_some(summary)
    });
    let summary = found.expect("a seed in 0..100 whose schedule shrinks");
    assert!(
        summary["violations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["property"] == "mutual_exclusion_belief"),
        "{summary}"
    );
    // What breaks belief exclusion here: a GC pause (the split brain fencing covers), or a
    // partition or a server restart (Curator's lock loop holding through a node of a session
    // it gave up), never a delay alone.
    assert!(
        summary["fault_schedule"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| ["pause", "partition", "isolate", "restart_server"]
                .contains(&f["fault"]["kind"].as_str().unwrap())),
        "only faults that break belief exclusion are kept: {summary}"
    );
    replay_from_identically(&shrunk, &again);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `hunt --json` over some scenarios and seeds, with extra arguments.
fn hunt(dir: &Path, extra: &[&str]) -> Value {
    let out = dir.join("out");
    let mut args = vec![
        "hunt",
        "--json",
        "--seeds",
        "0..30",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(&[
        "--scenario",
        "gc-pause-split-brain",
        "--scenario",
        "herd-naive",
        "--scenario",
        "random-faults-mutex",
    ]);
    args.extend_from_slice(extra);
    json_of(&splitbrain(&args))
}

#[test]
fn two_shards_cover_exactly_the_seeds_of_one_unsharded_run() {
    let dir = scratch("shards");
    let whole = hunt(&dir, &[]);
    let halves = [
        hunt(&dir, &["--shard", "0/2"]),
        hunt(&dir, &["--shard", "1/2"]),
    ];
    assert_eq!(whole["seeds_run"], 90);
    for (i, scenario) in whole["scenarios"].as_array().unwrap().iter().enumerate() {
        let parts: Vec<&Value> = halves.iter().map(|h| &h["scenarios"][i]).collect();
        let sum = |field: &dyn Fn(&Value) -> &Value| -> u64 {
            parts.iter().map(|p| field(p).as_u64().unwrap()).sum()
        };
        assert_eq!(
            sum(&|p| &p["seeds_run"]),
            scenario["seeds_run"].as_u64().unwrap()
        );
        assert_eq!(parts[0]["seeds_run"], 15);
        for (j, property) in scenario["properties"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            let violating = sum(&|p| &p["properties"][j]["seeds_violating"]);
            assert_eq!(
                violating,
                property["seeds_violating"].as_u64().unwrap(),
                "{property}"
            );
            let firsts: Vec<u64> = parts
                .iter()
                .filter_map(|p| p["properties"][j]["first_violating_seed"].as_u64())
                .collect();
            assert_eq!(
                firsts.iter().min().copied(),
                property["first_violating_seed"].as_u64()
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hunt_reports_expectations_in_the_json_contract() {
    let dir = scratch("hunt");
    let summary = hunt(&dir, &[]);
    for field in [
        "seeds_run",
        "seconds",
        "seeds_per_second",
        "all_met",
        "shard",
        "out",
    ] {
        assert!(summary.get(field).is_some(), "{field}: {summary}");
    }
    let written = read(&dir.join("out").join("summary.json"));
    let written: Value = serde_json::from_slice(&written).unwrap();
    assert_eq!(written, summary, "out/summary.json is what --json prints");
    let split = &summary["scenarios"][0];
    assert_eq!(split["name"], "gc-pause-split-brain");
    let belief = &split["properties"][0];
    assert_eq!(belief["name"], "mutual_exclusion_belief");
    assert_eq!(belief["expectation"], "violated");
    assert_eq!(belief["met"], true);
    assert_eq!(belief["first_violating_seed"], 0);
    let traces = belief["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 3, "first 3 violating seeds keep a trace");
    let kept: Vec<&Value> = belief["kept"].as_array().unwrap().iter().collect();
    assert_eq!(kept[1], &json!({"seed": 1, "shrunk": false}));
    assert_eq!(split["runs_failed"], 0);
    assert_eq!(split["seeds"], "0..30");
    assert!(Path::new(traces[0].as_str().unwrap()).exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hunt_over_the_catalog_meets_every_expectation() {
    let dir = scratch("catalog-hunt");
    let output = splitbrain(&["hunt", "--out", dir.to_str().unwrap()]);
    let table = stdout(&output);
    assert!(output.status.success(), "{table}{}", stderr(&output));
    assert!(
        table.contains("every expectation met: 198 scenario(s), 30400 runs"),
        "{table}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unmet_expectation_exits_1_and_says_so() {
    let dir = scratch("unmet");
    let out = dir.join("out");
    let args = [
        "hunt",
        "--scenario",
        "gc-pause-fenced",
        "--unfenced",
        "--seeds",
        "0..5",
        "--out",
        out.to_str().unwrap(),
    ];
    let output = splitbrain(&args);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let table = stdout(&output);
    let fenced_row = table
        .lines()
        .find(|line| line.contains("mutual_exclusion_fenced"))
        .unwrap();
    assert!(fenced_row.ends_with("NO"), "{table}");
    assert!(
        table.contains("expectations NOT met in: gc-pause-fenced"),
        "{table}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn one_worker_or_many_give_the_same_summary_and_traces() {
    let without_timing = |mut summary: Value| {
        let object = summary.as_object_mut().unwrap();
        object.remove("seconds");
        object.remove("seeds_per_second");
        summary
    };
    let kept_traces = |summary: &Value| -> Vec<Vec<u8>> {
        let scenarios = summary["scenarios"].as_array().unwrap();
        scenarios
            .iter()
            .flat_map(|s| s["properties"].as_array().unwrap())
            .flat_map(|p| p["traces"].as_array().unwrap())
            .map(|trace| read(Path::new(trace.as_str().unwrap())))
            .collect()
    };
    let dir = scratch("workers");
    let one = hunt(&dir, &["--jobs", "1", "--unfenced"]);
    let one_traces = kept_traces(&one);
    let many = hunt(&dir, &["--jobs", "5", "--unfenced"]);
    assert!(one_traces.len() > 9, "{}", one_traces.len());
    assert_eq!(kept_traces(&many), one_traces);
    assert_eq!(without_timing(many), without_timing(one));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The table `args` print, once checked to have the 30 rows, the first surviving and the last
/// not.
fn survival_table(args: &[&str]) -> String {
    let output = splitbrain(args);
    let table = stdout(&output);
    assert!(output.status.success(), "{table}{}", stderr(&output));
    let rows: Vec<&str> = (table.lines())
        .filter(|l| l.starts_with("| 1 s") || l.starts_with("| 4 s"))
        .collect();
    assert_eq!(rows.len(), 30, "{table}");
    assert!(
        rows[0].starts_with("| 1 s | 100 ms (0.1 T) | 100 % |"),
        "{table}"
    );
    assert!(
        rows[29].starts_with("| 4 s | 6000 ms (1.5 T) | 0 % |"),
        "{table}"
    );
    table
}

#[test]
fn survival_prints_one_row_per_timeout_and_partition_length() {
    let table = survival_table(&["survival", "--seeds", "3"]);
    assert!(
        table.starts_with("Client: splitbrain's (Java-timed)."),
        "{table}"
    );
    // The unmodified zookeeper-client, an idle session: it too survives a tenth of T and never
    // one and a half.
    let table = survival_table(&["survival", "--client", "zookeeper-client", "--seeds", "3"]);
    assert!(table.starts_with("Client: zookeeper-client."), "{table}");
    let refused = splitbrain(&["survival", "--seeds", "0"]);
    assert_eq!(
        stderr(&refused).trim(),
        "splitbrain: --seeds: expected at least 1 seed, found 0"
    );
}
