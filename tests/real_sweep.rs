//! `splitbrain real --seeds A..B` and `splitbrain real-matrix`: sweeps of a scenario's seeds on
//! a real ZooKeeper, one run per seed under its seed's fault schedule, tallied and summarized
//! as `hunt` does, and a library × scenario matrix of them written as a findings table. Bad
//! input and runs that fail for the harness's reasons need no server; the ignored tests need
//! Debian's `zookeeper` (and Curator's jars), hold `real::testing::one_server_at_a_time()`,
//! and assert verdicts, never durations.

mod support;

use std::path::{Path, PathBuf};

use scenarios::scenario::Scenario;
use serde_json::{Value, json};
use support::{json_of, splitbrain, stderr};

/// A fresh directory for the test `name` of this process (so that two runs of this test binary
/// at once, as the real-server tests are checked under load, never share one), removed when
/// the test passes and kept to look at when it fails.
struct Scratch(PathBuf);

fn scratch(name: &str) -> Scratch {
    Scratch(support::scratch(&format!("{name}-{}", std::process::id())))
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// An address on which nothing listens.
fn nobody() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().to_string()
}

/// `gc-pause-split-brain` with its pause drawn per seed instead of fixed: one pause of client
/// 0 for 2.5 s (past its 1 s session) at 1.2–1.5 s, while it holds its first grant (from
/// its first request, at 0 ms, for 2 s: a grant up to a second late on a loaded machine is
/// still caught), so that a run violates belief exclusion by the server's doing, each seed
/// pausing at another instant. Written to a file in
/// `dir`; the scenario and its path.
fn drawn_pause(dir: &Path) -> (Scenario, PathBuf) {
    let mut scenario: Value = serde_json::from_str(include_str!(
        "../scenarios/catalog/gc-pause-split-brain.json"
    ))
    .unwrap();
    scenario["name"] = json!("drawn-pause");
    scenario["lock_path"] = json!("/locks/drawn-pause");
    scenario["faults"] = json!([]);
    scenario["random_faults"] = json!([{
        "count": 1,
        "at_ms": {"min": 1200, "max": 1500},
        "pick": [{"kind": "pause", "client": 0, "for_ms": 2500}]
    }]);
    let file = dir.join("drawn-pause.json");
    std::fs::write(&file, scenario.to_string()).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    (
        Scenario::from_json("drawn-pause.json", &text).unwrap(),
        file,
    )
}

/// Runs `splitbrain <args>` expecting exit code 2 and one line on stderr; the line.
fn refused(args: &[&str]) -> String {
    let output = splitbrain(args);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let text = stderr(&output);
    text.trim_end().to_owned()
}

#[test]
fn a_sweeps_flags_are_checked_before_any_run() {
    let seeds = refused(&[
        "real",
        "herd-free-mutex",
        "--connect",
        "x:1",
        "--seeds",
        "3..1",
    ]);
    assert!(
        seeds.contains("expected a non-empty seed range (start < end), found \"3..1\""),
        "{seeds}"
    );
    let keep = refused(&["real", "herd-free-mutex", "--connect", "x:1", "--keep", "2"]);
    assert!(keep.contains("--seeds <A..B>"), "{keep}");
    let jobs = refused(&[
        "real",
        "herd-free-mutex",
        "--connect",
        "x:1",
        "--seeds",
        "0..4",
        "--jobs",
        "2",
    ]);
    assert!(
        jobs.contains("--jobs <N>") && jobs.contains("--connect"),
        "{jobs}"
    );
    let both = refused(&[
        "real",
        "herd-free-mutex",
        "--connect",
        "x:1",
        "--seeds",
        "0..4",
        "--seed",
        "2",
    ]);
    assert!(both.contains("cannot be used with"), "{both}");
}

#[test]
fn a_sweep_every_seed_of_which_is_refused_fails_naming_the_first() {
    let dir = scratch("all-refused");
    let mut scenario: Value =
        serde_json::from_str(include_str!("../scenarios/catalog/herd-free-mutex.json")).unwrap();
    scenario["faults"] = json!([{"at_ms": 100, "fault": {
        "kind": "drop", "from": {"client": 0}, "to": "server", "percent": 30, "for_ms": 500
    }}]);
    let file = dir.join("dropping.json");
    std::fs::write(&file, scenario.to_string()).unwrap();
    let args = [
        "real",
        file.to_str().unwrap(),
        "--connect",
        "127.0.0.1:1",
        "--seeds",
        "0..3",
    ];
    assert_eq!(
        refused(&args),
        "splitbrain: every seed of 0..3 is refused; seed 0: faults[0]: drop has no real \
         counterpart yet (TCP retransmits what a link loses: a loss is only a delay)"
    );
}

#[test]
fn a_sweep_whose_every_run_fails_counts_and_names_each_in_its_summary() {
    let dir = scratch("all-failed");
    let addr = nobody();
    let out = dir.join("out");
    let output = splitbrain(&[
        "real",
        "herd-free-mutex",
        "--connect",
        &addr,
        "--seeds",
        "4..6",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.starts_with("splitbrain: herd-free-mutex: every run of the sweep failed"),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "seed 4: --connect {addr}: no ZooKeeper server answered"
        )),
        "{message}"
    );
    let summary = read_json(&out.join("summary.json"));
    let tally = &summary["scenarios"][0];
    assert_eq!(
        (&tally["seeds_run"], &tally["runs_failed"]),
        (&json!(2), &json!(2))
    );
    let seeds: Vec<&Value> = tally["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["seed"])
        .collect();
    assert_eq!(seeds, [&json!(4), &json!(5)]);
    assert_eq!(summary["seeds_refused"], 0);
    assert_eq!(summary["interrupted"], false);
    assert!(out.join("index.html").is_file());
}

/// Writes a matrix file of `rows` over the libraries `splitbrain` and `curator` in `dir`.
fn matrix_file(dir: &Path, rows: Value) -> PathBuf {
    let matrix = json!({
        "description": "A test's matrix.",
        "libraries": {
            "splitbrain": {"description": "splitbrain's recipes", "real_flags": []},
            "curator": {"description": "Curator's own", "real_flags": ["--curator-in-place"]}
        },
        "rows": rows,
    });
    let file = dir.join("matrix.json");
    std::fs::write(&file, matrix.to_string()).unwrap();
    file
}

#[test]
fn a_malformed_matrix_file_is_refused_naming_the_file_and_the_field() {
    let dir = scratch("bad-matrix");
    let file = matrix_file(
        &dir,
        json!([{"library": "splitbrain", "scenario": "herd-free-mutex", "seeds": "0..x"}]),
    );
    let message = refused(&["real-matrix", file.to_str().unwrap(), "--connect", "x:1"]);
    assert!(
        message.starts_with(&format!("splitbrain: {}: /rows/0/seeds: ", file.display())),
        "{message}"
    );
    let missing = dir.join("no-such-matrix.json");
    let message = refused(&["real-matrix", missing.to_str().unwrap(), "--connect", "x:1"]);
    assert!(
        message.starts_with(&format!(
            "splitbrain: {}: expected a readable matrix file",
            missing.display()
        )),
        "{message}"
    );
}

#[test]
fn a_matrix_row_that_cannot_be_judged_is_written_so_and_exits_1() {
    let dir = scratch("unjudged-matrix");
    let file = matrix_file(
        &dir,
        json!([{"library": "splitbrain", "scenario": "herd-free-mutex", "seeds": "0..1"}]),
    );
    let out = dir.join("out");
    let output = splitbrain(&[
        "real-matrix",
        file.to_str().unwrap(),
        "--connect",
        &nobody(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let findings = read_json(&out.join("findings.json"));
    let row = &findings["rows"][0];
    assert_eq!(
        (&row["library"], &row["recipe"]),
        (&json!("splitbrain"), &json!("mutex"))
    );
    assert_eq!((&row["runs"], &row["runs_failed"]), (&json!(1), &json!(1)));
    let error = row["error"].as_str().unwrap();
    assert!(error.contains("every run of the sweep failed"), "{error}");
    let page = std::fs::read_to_string(out.join("findings.md")).unwrap();
    assert!(page.contains("\n## splitbrain: mutex\n"), "{page}");
    assert!(
        page.contains("- herd-free-mutex: not judged: herd-free-mutex: every run"),
        "{page}"
    );
    let summary = out.join("splitbrain/herd-free-mutex/summary.json");
    assert_eq!(read_json(&summary)["scenarios"][0]["runs_failed"], 1);
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_sweep_on_an_ensemble_keeps_the_first_violating_run_whose_schedule_a_rerun_repeats() {
    let _serial = real::testing::one_server_at_a_time();
    let dir = scratch("ensemble-sweep");
    let (scenario, file) = drawn_pause(&dir);
    let out = dir.join("out");
    let file = file.to_str().unwrap();
    let sweep = splitbrain(&[
        "real",
        file,
        "--start-local",
        "--ensemble",
        "3",
        "--seeds",
        "0..2",
        "--keep",
        "1",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let summary = json_of(&sweep);
    assert_eq!(sweep.status.code(), Some(0), "{summary}");
    let tally = &summary["scenarios"][0];
    assert_eq!(
        (&tally["seeds_run"], &tally["runs_failed"]),
        (&json!(2), &json!(0)),
        "failed runs: {}",
        tally["failures"]
    );
    let belief = (tally["properties"].as_array().unwrap().iter())
        .find(|p| p["name"] == "mutual_exclusion_belief")
        .unwrap();
    // A pause that catches client 0 holding is a split brain by belief (the server expires
    // its session meanwhile); on a loaded machine its first grant can come after the pause.
    let first = belief["first_violating_seed"]
        .as_u64()
        .expect("a violating run");
    let other = 1 - first;
    // The first violating run is kept, and nothing of the other (violating or not).
    let stem = |seed: u64, ext: &str| out.join(format!("drawn-pause.seed-{seed}.{ext}"));
    let kept = stem(first, "trace.json");
    assert_eq!(belief["traces"], json!([kept.display().to_string()]));
    assert!(stem(first, "html").is_file());
    assert!(!stem(other, "trace.json").exists() && !stem(other, "html").exists());
    assert!(out.join("index.html").is_file());
    let trace = read_json(&kept);
    assert_eq!(trace["meta"]["settings"]["target"], "ensemble-3");
    let recorded = &trace["meta"]["fault_schedule"];
    let drawn = |seed| serde_json::to_value(scenario.fault_schedule(seed)).unwrap();
    assert_eq!(recorded, &drawn(first));
    assert_ne!(drawn(0), drawn(1), "each seed draws its own pause");
    // `real --seed S` runs the sweep's run's schedule again (here on a standalone server).
    let rerun = splitbrain(&[
        "real",
        file,
        "--start-local",
        "--seed",
        &first.to_string(),
        "--json",
        "--out",
        dir.join("rerun").to_str().unwrap(),
    ]);
    let rerun = json_of(&rerun);
    assert_eq!(&rerun["fault_schedule"], recorded);
    let rerun_trace = read_json(Path::new(rerun["trace"].as_str().unwrap()));
    assert_eq!(&rerun_trace["meta"]["fault_schedule"], recorded);
}

#[test]
#[ignore = "needs zookeeper and curator: scripts/test installs Debian's zookeeper and \
            libcurator-{recipes,framework,client}-java"]
fn a_matrix_of_our_mutex_and_curators_writes_their_findings() {
    let _serial = real::testing::one_server_at_a_time();
    let dir = scratch("matrix");
    let (_, scenario) = drawn_pause(&dir);
    let scenario = scenario.to_str().unwrap();
    let file = matrix_file(
        &dir,
        json!([
            {"library": "splitbrain", "scenario": scenario, "seeds": "0..1"},
            {"library": "curator", "scenario": scenario, "seeds": "1..2"},
        ]),
    );
    let out = dir.join("out");
    let output = splitbrain(&[
        "real-matrix",
        file.to_str().unwrap(),
        "--start-local",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let findings = json_of(&output);
    assert_eq!(output.status.code(), Some(0), "{findings}");
    assert_eq!(findings, read_json(&out.join("findings.json")));
    let rows = findings["rows"].as_array().unwrap();
    let page = std::fs::read_to_string(out.join("findings.md")).unwrap();
    let curators = page.find("\n## curator: mutex\n").expect("Curator's table");
    let ours = page.find("\n## splitbrain: mutex\n").expect("our table");
    assert!(ours < curators, "in the order of the rows:\n{page}");
    let tables = [&page[ours..curators], &page[curators..]];
    for ((row, table), (library, seed)) in rows
        .iter()
        .zip(tables)
        .zip([("splitbrain", 0), ("curator", 1)])
    {
        assert_eq!(
            (&row["library"], &row["runs"]),
            (&json!(library), &json!(1)),
            "{row}"
        );
        assert_eq!(
            (&row["runs_failed"], &row["error"]),
            (&json!(0), &Value::Null),
            "{row}"
        );
        // The row is its sweep's summary, in the table as in the JSON.
        let dir = out.join(library).join("drawn-pause");
        let summary = read_json(&dir.join("summary.json"));
        let tally = &summary["scenarios"][0]["properties"];
        for (found, swept) in row["properties"]
            .as_array()
            .unwrap()
            .iter()
            .zip(tally.as_array().unwrap())
        {
            assert_eq!(found["name"], swept["name"]);
            assert_eq!(
                found["violating_runs"], swept["seeds_violating"],
                "{library}"
            );
            assert_eq!(found["first_violating_seed"], swept["first_violating_seed"]);
            let first = found["first_violating_seed"]
                .as_u64()
                .map_or("-".into(), |s| s.to_string());
            let line = format!(
                "| drawn-pause | {} | {} | {} of 1 | {first} |",
                found["name"].as_str().unwrap(),
                found["expectation"].as_str().unwrap(),
                found["violating_runs"]
            );
            assert!(table.contains(&line), "{line}\n{table}");
        }
        let kept = dir.join(format!("drawn-pause.seed-{seed}.trace.json"));
        let violating = row["properties"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["violating_runs"] == 1);
        assert_eq!(kept.is_file(), violating, "{}", kept.display());
    }
}
