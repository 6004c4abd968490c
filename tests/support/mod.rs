//! What the command-line tests share: running the binary, a fresh directory per test, and a
//! report's sections.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `splitbrain` binary with `args`.
pub fn splitbrain(args: &[&str]) -> Output {
    command(args).output().expect("the binary runs")
}

/// The `splitbrain` binary with `args`, to run or spawn (with environment variables, say).
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_splitbrain"));
    command.args(args);
    command
}

/// A fresh, empty directory for the test `name` under cargo's temporary target directory,
/// named by the test binary and this process, so that test binaries running at once (two
/// copies of one included, as the load checks run them) never share one. The directories
/// an earlier, finished process left for the same test are removed; a failed test's stays
/// until then, for the paths its message names.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn scratch(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let prefix = format!("{}-{name}-", env!("CARGO_CRATE_NAME"));
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let file_name = entry.file_name();
        let owner = (file_name.to_str())
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|pid| pid.parse::<u32>().ok());
        if owner.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let dir = root.join(format!("{prefix}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What a command wrote on stderr.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// What a command printed on stdout, as JSON; a panic showing both streams when it is not.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn json_of(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        let stdout = String::from_utf8_lossy(&output.stdout);
        panic!("{e}: {stdout}\n{}", stderr(output))
    })
}

/// The element of the report `html` with `id`, up to the end of its section (or banner).
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start =
        (html.find(&format!("id=\"{id}\""))).unwrap_or_else(|| panic!("no element with id {id}"));
    let end = (html[start..].find("</section>"))
        .into_iter()
        .chain(html[start..].find("</header>"))
        .min()
        .map_or(html.len(), |e| start + e);
    &html[start..end]
}

/// A findings page's sweep: `splitbrain real <scenario> --start-local <flags> --seeds 0..10
/// --jobs 2`, with `--json` and a fresh `--out` for the test `name`; the sweep's one scenario,
/// checked to have made its ten runs and judged each (none failed).
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn ten_run_page_sweep(name: &str, scenario: &str, flags: &[&str]) -> serde_json::Value {
    let out = scratch(name);
    let mut args = vec!["real", scenario, "--start-local"];
    args.extend_from_slice(flags);
    args.extend(["--seeds", "0..10", "--jobs", "2", "--json", "--out"]);
    args.push(out.to_str().unwrap());
    let output = splitbrain(&args);
    let summary = json_of(&output);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{summary}");
    let swept = summary["scenarios"][0].clone();
    assert_eq!(
        (swept["seeds_run"].as_u64(), swept["runs_failed"].as_u64()),
        (Some(10), Some(0)),
        "failed runs: {}\nstderr: {}",
        swept["failures"],
        stderr(&output)
    );
    swept
}

/// `splitbrain real <args> --json --out <a fresh directory for the test `test`>`: its exit
/// code and the JSON it printed.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn real(test: &str, args: &[&str]) -> (i32, serde_json::Value) {
    let dir = scratch(test);
    let mut all = vec!["real", "--json", "--out", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    let output = splitbrain(&all);
    (output.status.code().unwrap_or(-1), json_of(&output))
}

/// The trace a `real --json` run's summary names, parsed.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn trace_of(out: &serde_json::Value) -> serde_json::Value {
    let path = out["trace"].as_str().expect("the summary names its trace");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Whether a run's summary lists `property` among its violations.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn violated(run: &serde_json::Value, property: &str) -> bool {
    let violations = run["violations"].as_array().unwrap();
    violations.iter().any(|v| v["property"] == property)
}
