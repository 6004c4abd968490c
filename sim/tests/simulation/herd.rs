//! Herd behaviour: how many waiting clients each deletion wakes.

use scenarios::scenario::{RecipeKind, Workload};
use scenarios::trace::Trace;

use crate::query::{run, sim, workload};
use crate::wakeups::{lease_wakeups, woken_by_each_delete, woken_per_deletion};

fn ten_waiters(recipe: RecipeKind) -> Trace {
    let workload = Workload {
        stagger_ms: 0,
        ..workload(1, 50)
    };
    run(sim("herd", 10, workload).recipe(recipe), 21, Vec::new())
}

#[test]
fn mutex_wakes_at_most_one_waiter_per_deletion() {
    let trace = ten_waiters(RecipeKind::Mutex);
    let woken = woken_by_each_delete(&trace, "lock");
    assert_eq!(woken.len(), 10, "every client released");
    let count = |pred: fn(usize) -> bool| woken.iter().filter(|&&n| pred(n)).count();
    let (zero, one, many) = (count(|n| n == 0), count(|n| n == 1), count(|n| n >= 2));
    println!("Mutex, 10 clients: deletions waking 0: {zero}, 1: {one}, >=2: {many}");
    assert_eq!(many, 0);
    assert!(one >= 1, "waiters are woken one at a time");
}

#[test]
fn naive_herd_mutex_wakes_the_whole_herd() {
    let trace = ten_waiters(RecipeKind::NaiveHerdMutex);
    let most = woken_per_deletion(&trace).into_values().max().unwrap_or(0);
    println!("NaiveHerdMutex, 10 clients: the largest wake-up is {most} clients");
    assert!(most >= 9, "a release wakes the herd: {most}");
}

/// The semaphore mutex's waiters watch the leases' children, but only the internal lock's
/// holder waits on them: each lease change reaches one session, never the herd of ten.
#[test]
fn semaphore_mutex_wakes_no_herd_on_lease_changes() {
    let trace = ten_waiters(RecipeKind::SemaphoreMutex);
    let woken = lease_wakeups(&trace);
    let most = woken.values().copied().max().unwrap_or(0);
    println!(
        "SemaphoreMutex, 10 clients: {} lease changes woke a session, at most {most} each",
        woken.len()
    );
    assert!(woken.len() >= 9, "waiters are woken by lease changes");
    assert_eq!(most, 1, "{woken:?}");
    assert!(woken_per_deletion(&trace).values().all(|&n| n <= 1));
}
