//! Sharded hunts put back together: four shard processes (two given `--shard I/N`, two
//! indexed the way a Kubernetes Indexed Job does it) merged by `splitbrain merge` give the
//! summary, index.html and verdicts of one process over the same seeds; and a merge of
//! shards that do not fit together says why in one line.

mod support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::{command, scratch, splitbrain};

const SHARDS: u64 = 4;

/// The hunt every test shards: three scenarios, one with shrunk traces (`--unfenced` breaks
/// the fencing random-faults-mutex expects to hold: seed 25 does), seeds 8..32 of each.
fn hunt_args(out: &Path) -> Vec<String> {
    let mut args: Vec<String> = [
        "hunt",
        "--json",
        "--unfenced",
        "--seeds",
        "8..32",
        "--jobs",
        "2",
    ]
    .map(str::to_owned)
    .to_vec();
    for scenario in ["gc-pause-split-brain", "herd-naive", "random-faults-mutex"] {
        args.extend(["--scenario".to_owned(), scenario.to_owned()]);
    }
    args.extend(["--out".to_owned(), out.display().to_string()]);
    args
}

fn run(args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    splitbrain(&args)
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// Runs the shards as separate processes at once; shards 0 and 1 get `--shard I/N`, 2 and 3
/// get `--shards N` and their index from JOB_COMPLETION_INDEX.
fn run_shards(dir: &Path) -> Vec<String> {
    let children: Vec<_> = (0..SHARDS)
        .map(|index| {
            let out = dir.join(format!("shard-{index}"));
            let mut args = hunt_args(&out);
            let mut shard = command(&[]);
            if index < 2 {
                args.extend(["--shard".to_owned(), format!("{index}/{SHARDS}")]);
            } else {
                args.extend(["--shards".to_owned(), SHARDS.to_string()]);
                shard.env("JOB_COMPLETION_INDEX", index.to_string());
            }
            let child = shard
                .args(&args)
                .env_remove("SPLITBRAIN_SHARDS")
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("the binary runs");
            (child, out)
        })
        .collect();
    children
        .into_iter()
        .map(|(mut child, out)| {
            let status = child.wait().unwrap();
            // Exit 1 when --unfenced breaks fencing in one of the shard's seeds, else 0.
            let code = status.code();
            assert!(matches!(code, Some(0 | 1)), "{}: {code:?}", out.display());
            out.display().to_string()
        })
        .collect()
}

/// The summary with its timing fields removed and `out` replaced by `OUT` in every path.
fn comparable(summary: &Value, out: &str) -> Value {
    match summary {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| !["seconds", "seeds_per_second"].contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), comparable(value, out)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| comparable(v, out)).collect()),
        Value::String(text) => Value::String(text.replace(out, "OUT")),
        other => other.clone(),
    }
}

fn first_violating_seeds(summary: &Value) -> Vec<(String, String, Value)> {
    let mut firsts = Vec::new();
    for scenario in summary["scenarios"].as_array().unwrap() {
        for property in scenario["properties"].as_array().unwrap() {
            firsts.push((
                scenario["name"].as_str().unwrap().to_owned(),
                property["name"].as_str().unwrap().to_owned(),
                property["first_violating_seed"].clone(),
            ));
        }
    }
    firsts
}

#[test]
fn four_shard_processes_merged_equal_one_process_over_the_same_seeds() {
    let dir = scratch("merge-equal");
    let whole_out = dir.join("whole").display().to_string();
    let whole = run(&hunt_args(Path::new(&whole_out)));
    assert_eq!(whole.status.code(), Some(1));
    let whole = json_of(&whole);
    let shards = run_shards(&dir);
    let merged_out = dir.join("merged").display().to_string();
    let mut args = vec!["merge".to_owned(), "--json".to_owned()];
    args.extend(shards.iter().rev().cloned());
    args.extend(["--out".to_owned(), merged_out.clone()]);
    let merged = run(&args);
    assert_eq!(
        merged.status.code(),
        Some(1),
        "same exit code as one process"
    );
    let merged = json_of(&merged);

    assert_eq!(merged["seeds_run"], 72);
    assert_eq!(
        first_violating_seeds(&merged),
        first_violating_seeds(&whole)
    );
    assert_eq!(
        comparable(&merged, &merged_out),
        comparable(&whole, &whole_out)
    );
    let written: Value = serde_json::from_slice(
        &std::fs::read(Path::new(&merged_out).join("summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(written, merged, "summary.json is what --json printed");
    let page = |out: &str| std::fs::read(Path::new(out).join("index.html")).unwrap();
    assert_eq!(page(&merged_out), page(&whole_out), "the same index.html");
    // Every kept trace is there, byte for byte the one process's, with a report beside it.
    let mut kept = 0;
    for scenario in merged["scenarios"].as_array().unwrap() {
        for property in scenario["properties"].as_array().unwrap() {
            for (trace, report) in property["traces"]
                .as_array()
                .unwrap()
                .iter()
                .zip(property["reports"].as_array().unwrap())
            {
                let trace = trace.as_str().unwrap();
                let theirs = trace.replace(&merged_out, &whole_out);
                assert_eq!(
                    std::fs::read(trace).unwrap(),
                    std::fs::read(theirs).unwrap()
                );
                assert!(Path::new(report.as_str().unwrap()).exists(), "{report}");
                kept += 1;
            }
        }
    }
    assert!(kept > 9, "traces kept, shrunk ones included: {kept}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn shards_that_do_not_fit_together_are_one_line_errors() {
    let dir = scratch("merge-errors");
    let shards = run_shards(&dir);
    let out = dir.join("merged").display().to_string();
    let merge = |dirs: &[&str]| {
        let mut args = vec!["merge"];
        args.extend_from_slice(dirs);
        args.extend_from_slice(&["--out", &out]);
        let output = splitbrain(&args);
        assert_eq!(output.status.code(), Some(2));
        let error = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(error.lines().count(), 1, "{error}");
        error
    };
    let [s0, s1, s2, s3] = [0, 1, 2, 3].map(|i| shards[i].as_str());
    let error = merge(&[s0, s1, s3]);
    assert!(
        error.contains(
            "missing shards 2/4: expected the summaries of all 4 shards, found 0/4, 1/4, 3/4"
        ),
        "{error}"
    );
    let error = merge(&[s0, s1, s2, s3, s1]);
    assert!(
        error.contains("/shard: expected each shard once, found shard 1/4 again"),
        "{error}"
    );
    let error = merge(&[s0, s1, s2, &format!("{s3}-absent")]);
    assert!(
        error.contains("-absent/summary.json: expected the summary of `splitbrain hunt"),
        "{error}"
    );

    let edited = |name: &str, from: &str, to: &str| {
        let copy = dir.join(name);
        std::fs::create_dir_all(&copy).unwrap();
        let text = std::fs::read_to_string(Path::new(s2).join("summary.json")).unwrap();
        assert!(text.contains(from), "{from}");
        std::fs::write(copy.join("summary.json"), text.replacen(from, to, 1)).unwrap();
        copy.display().to_string()
    };
    let bad = edited("malformed", "\"seeds_run\": 6,", "\"seeds_run\": \"six\",");
    let error = merge(&[s0, s1, &bad, s3]);
    assert!(
        error.contains(
            "malformed/summary.json: /scenarios/0/seeds_run: expected u64, found string \"six\""
        ),
        "{error}"
    );
    let other = edited(
        "other-range",
        "\"seeds\": \"8..32\"",
        "\"seeds\": \"0..40\"",
    );
    let error = merge(&[s0, s1, &other, s3]);
    assert!(
        error.contains("other-range/summary.json: /scenarios/0/seeds: expected seeds 8..32 like"),
        "{error}"
    );
    let text = std::fs::read_to_string(Path::new(s2).join("summary.json")).unwrap();
    let summary: Value = serde_json::from_str(&text).unwrap();
    let digest = summary["scenarios"][1]["scenario_digest"].as_str().unwrap();
    assert_eq!(digest.len(), 16, "{digest}");
    let changed = edited("other-catalog", digest, "0123456789abcdef");
    let error = merge(&[s0, s1, &changed, s3]);
    assert!(error.contains(&format!("other-catalog/summary.json: /scenarios/1/scenario_digest: expected scenario digest {digest} like")), "{error}");
    let short = edited("unfinished", "\"seeds_run\": 6,", "\"seeds_run\": 5,");
    let error = merge(&[s0, s1, &short, s3]);
    assert!(
        error.contains(
            "/scenarios/0/seeds_run: expected 6 (the seeds of 8..32 in shard 2/4), found 5"
        ),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
