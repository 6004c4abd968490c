//! `splitbrain real --library zookeeper-async`: the Rust crate's own `shared_lock` and
//! `LeaderLatch` in place of a scenario's clients, run by this binary with no build of their
//! own; what the crate cannot run is refused before any server starts, naming what it serves.

mod support;

use support::{splitbrain, stderr};

/// Runs `splitbrain real <scenario> --start-local --library zookeeper-async <placement>`
/// expecting one line on stderr and exit code 2.
fn refused(scenario: &str, placement: &[&str]) -> String {
    let mut args = vec![
        "real",
        scenario,
        "--start-local",
        "--library",
        "zookeeper-async",
    ];
    args.extend_from_slice(placement);
    let output = splitbrain(&args);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let text = stderr(&output);
    assert_eq!(text.lines().count(), 1, "{text}");
    text.trim_end().to_owned()
}

#[test]
fn zookeeper_async_is_refused_what_its_crate_does_not_serve_before_the_run() {
    assert_eq!(
        refused("semaphore-fault-free", &["--in-place"]),
        "splitbrain: recipe: zookeeper-async contenders run shared_lock::lock or LeaderLatch, \
         so the recipe must be `mutex` or `leader-latch`, found `semaphore`"
    );
    assert!(
        refused("herd-free-mutex", &["--contenders", "2"]).starts_with(
            "splitbrain: --contenders: zookeeper-async's shared_lock orders a lock path's \
             children by their name's text after its last `_`"
        )
    );
    assert_eq!(
        refused("mutex-acquire-timeout", &["--in-place"]),
        "splitbrain: workload: zookeeper-async's shared_lock::lock takes no timeout, so \
         acquire_timeout_ms must be absent"
    );
    assert_eq!(
        refused("leader-latch-await", &["--in-place"]),
        "splitbrain: recipe_settings: zookeeper-async's LeaderLatch has no await, so awaits \
         must be false"
    );
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn zookeeper_async_shared_lock_panics_when_its_node_is_third_in_line() {
    // Four contenders of herd-free-mutex, each queueing many times: shared_lock's binary
    // search by UUID in a list sorted by sequence (recipes/shared_lock.rs:140) misses its own
    // node, about half the time for the second of three, and the contender's report of the
    // panic ends the run (book/src/findings/zookeeper-async.md). The first time this binary
    // runs the crate's contenders, with no build of their own.
    let _serial = real::testing::one_server_at_a_time();
    let output = splitbrain(&[
        "real",
        "herd-free-mutex",
        "--start-local",
        "--library",
        "zookeeper-async",
        "--in-place",
    ]);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("a failure splitbrain has no name for: `panicked`")
            && text.contains("zookeeper-async-5.0.0/src/recipes/shared_lock.rs:140:"),
        "{text}"
    );
}
