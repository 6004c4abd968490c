//! What the tests of programs share: the run's setup, and running part of a test in a second
//! process of the same test binary, to show that a seed gives the same result there as here.

// Each test binary compiles this module and uses a part of it.
#![allow(dead_code)]

pub mod lock_user;

use std::process::Command;
use std::time::Duration;

use programs::simulated::Setup;
use scenarios::scenario::ServerSettings;

/// A fault-free run of `clients` programs with `seed`, against a server with 200 ms ticks
/// (session timeouts of 400 ms to 4 s), for two minutes at most.
pub fn setup(seed: u64, clients: u16) -> Setup {
    Setup {
        seed,
        clients,
        server: ServerSettings::standalone(200, 4_000, 60_000),
        faults: Vec::new(),
        horizon: Duration::from_secs(120),
    }
}

/// Set in the child process: the seed it runs.
const CHILD_SEED: &str = "SPLITBRAIN_CHILD_SEED";

/// What the child prints before each line of its result.
const MARK: &str = "child: ";

/// In the child process, the seed it was given; `None` in the parent.
fn child_seed() -> Option<u64> {
    let seed = std::env::var(CHILD_SEED).ok()?;
    Some(seed.parse().expect("the parent passes a number"))
}

/// In the child process: prints its result, line by line, for the parent to read.
fn report(lines: &[String]) {
    for line in lines {
        println!("{MARK}{line}");
    }
}

/// The test named `test` of this binary shows that `run` gives the same lines for `seed` in a
/// child process, where it is the process's first run, as here after a run of `other`. Call
/// it as the whole body of that test: in the child it reports instead.
pub fn same_in_child(test: &str, seed: u64, other: u64, run: impl Fn(u64) -> Vec<String>) {
    if let Some(seed) = child_seed() {
        return report(&run(seed));
    }
    let child = in_child(test, seed);
    run(other);
    assert_eq!(
        child,
        run(seed),
        "seed {seed} in a child (its first run) and here (after seed {other})"
    );
}

/// Runs the test named `test` of this binary in a child process with `seed`, and returns
/// the lines it reported.
fn in_child(test: &str, seed: u64) -> Vec<String> {
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_SEED, seed.to_string())
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&child.stdout);
    assert!(child.status.success(), "the child failed: {stdout}");
    stdout
        .lines()
        // libtest may print the test's name on the same line, before the first report.
        .filter_map(|line| line.split_once(MARK).map(|(_, line)| line.to_owned()))
        .collect()
}
