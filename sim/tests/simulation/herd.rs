//! Herd behaviour: how many waiting clients each deletion wakes.

use std::collections::BTreeMap;

use lock::zk::{EventKind as WatchKind, Zxid};
use scenarios::scenario::{RecipeKind, Workload};
use scenarios::trace::{EventKind, Trace};

use crate::query::{run, sim, workload};

/// For each deletion zxid that fired NodeDeleted watches, how many sessions it woke.
fn woken_per_deletion(trace: &Trace) -> BTreeMap<Zxid, usize> {
    let mut woken = BTreeMap::new();
    for event in &trace.events {
        if let EventKind::WatchFired {
            event,
            zxid: Some(zxid),
            ..
        } = &event.kind
            && event.kind == WatchKind::NodeDeleted
        {
            *woken.entry(*zxid).or_insert(0) += 1;
        }
    }
    woken
}

/// Deletions of lock nodes: zxids of successful deletes and of session ends.
fn deletions(trace: &Trace) -> Vec<Zxid> {
    (trace.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::OpApplied {
                request: lock::zk::Request::Delete { path, .. },
                zxid: Some(zxid),
                ..
            } if path.name().contains("lock") => Some(*zxid),
            _ => None,
        })
        .collect()
}

/// For each change of a semaphore's leases (by zxid), how many sessions its child watch woke.
pub fn lease_wakeups(trace: &Trace) -> BTreeMap<Zxid, usize> {
    let mut woken = BTreeMap::new();
    for event in &trace.events {
        if let EventKind::WatchFired {
            event,
            zxid: Some(zxid),
            ..
        } = &event.kind
            && event.path.name() == "leases"
        {
            *woken.entry(*zxid).or_insert(0) += 1;
        }
    }
    woken
}

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
    let woken = woken_per_deletion(&trace);
    let deletions = deletions(&trace);
    assert_eq!(deletions.len(), 10, "every client released");
    let count = |pred: fn(usize) -> bool| {
        (deletions.iter())
            .filter(|z| pred(woken.get(z).copied().unwrap_or(0)))
            .count()
    };
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
