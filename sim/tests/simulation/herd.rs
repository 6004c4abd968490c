//! Herd behaviour: how many waiting clients each deletion wakes.

use coordination::framework::OnLost;
use coordination::zk::Request;
use properties::check::check;
use recipe_table::property::Property;
use scenarios::scenario::{RecipeKind, Workload};
use trace::{EventKind, Source, Trace};

use crate::query::{
    catalog_scenario, find, is_acquired, on, run, run_scenario, sim, sim_context, violations,
    workload,
};
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

/// The catalog's `mutex-lock-loop-herd`, found by a hunt of random faults: after a server
/// restart longer than T, Curator's lock loop keeps each waiter's old node and lists again on
/// its new session. Once the server expires an old session, the waiter whose node vanished
/// (it learns that only at its next listing) and the waiter behind that node watch the same
/// predecessor, and its deletion wakes both. In seed 1 c0 and c2 are woken at once: c2 is
/// first and holds, c0 finds its node gone and starts over with a new one. Giving waiters up
/// at LOST (`on_lost = release`) wakes one at a time on the same seed.
#[test]
fn curators_lock_loop_wakes_two_waiters_after_a_server_restart_longer_than_t() {
    let scenario = catalog_scenario("mutex-lock-loop-herd");
    let trace = run_scenario(&scenario, 1);
    let herds = check(&trace, Property::HerdFree, &sim_context(&scenario));
    let [herd] = &herds[..] else {
        panic!("one herd: {herds:?}");
    };
    let woken: Vec<u16> = herd.clients.iter().map(|c| c.0).collect();
    assert_eq!(woken, [0, 2], "{herd:?}");
    let after = herd.events[herd.events.len() - 1];
    let (_, grant) = find(
        &trace,
        after,
        |e| matches!(&e.kind, EventKind::Notice { notice } if is_acquired(notice)),
    )
    .expect("a grant after the herd");
    assert!(on(grant, 2), "c2 is first and holds: {grant:?}");
    let c0_asks: Vec<&Request> = (trace.events[after..].iter())
        .filter(|e| on(e, 0))
        .filter_map(|e| match &e.kind {
            EventKind::OpSent { request, .. } => Some(request),
            _ => None,
        })
        .take(2)
        .collect();
    assert!(
        matches!(
            c0_asks[..],
            [Request::GetChildren { .. }, Request::Create { .. }]
        ),
        "c0 lists again, finds its node gone and starts over: {c0_asks:?}"
    );
    let mut releasing = scenario.clone();
    releasing.framework.on_lost = OnLost::Release;
    let trace = run_scenario(&releasing, 1);
    assert_eq!(violations(&releasing, &trace, Property::HerdFree), 0);
}

/// A real trace has no server side, so `herd_free` finds its changes there from the watch
/// events each client received and the versions their watches were left on. On the
/// simulator's runs, which record both sides, that finding agrees with the server's record
/// (each fired watch with its zxid) seed for seed: herds of deleted nodes (`mutex-acquire-timeout`,
/// `herd-naive`, `mutex-lock-loop-herd`), of child watches (the semaphores' lease loop), and
/// wake-ups of readers together alike.
#[test]
fn herds_found_from_what_clients_received_agree_with_the_servers_record() {
    let expected = [
        ("mutex-acquire-timeout", 40),
        ("herd-naive", 40),
        ("mutex-lock-loop-herd", 3),
        ("herd-free-mutex", 0),
        ("read-write-lock-fault-free", 0),
        ("read-write-lock-first-writer-watch-herd", 40),
        ("semaphore-session-expiry", 6),
        ("semaphore-mutex-session-expiry", 19),
    ];
    let seen = expected.map(|(name, _)| {
        let scenario = catalog_scenario(name);
        let mut seen = 0;
        for seed in 0..40 {
            let mut trace = run_scenario(&scenario, seed);
            let recorded = violations(&scenario, &trace, Property::HerdFree);
            trace.meta.source = Source::Real;
            let received = violations(&scenario, &trace, Property::HerdFree);
            assert_eq!(received, recorded, "{name} seed {seed}");
            seen += usize::from(recorded > 0);
        }
        (name, seen)
    });
    assert_eq!(seen, expected, "seeds of 40 with a herd");
}
