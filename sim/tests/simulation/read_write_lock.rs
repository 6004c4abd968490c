//! ReadWriteLock (Curator's InterProcessReadWriteLock) under the simulator: what Curator's
//! TestInterProcessReadWriteLock checks — readers share, a writer excludes everyone, a reader
//! queued behind a writer waits for it, a killed holder's session frees the lock — plus the
//! reader's nearest-writer watch (against Curator's first-writer watch), the GC-pause split
//! brain and server restarts, on the catalog's read-write-lock scenarios.

use coordination::recipes::{Mode, Notice};
use properties::check::{check, check_all};
use recipe_table::family::RecipeSettings;
use recipe_table::property::Property;
use scenarios::scenario::{RecipeKind, Scenario, Workload};
use trace::{EventKind, ServerSession, Trace};

use crate::query::{
    assert_everyone_granted, assert_everyone_served, catalog_scenario, count_server, first_notice,
    first_session_expiry, holds, index, is_rejected_write, is_release_call, long_sessions,
    most_at_once, notice_of, on, run_scenario, sim_context,
};

/// The catalog scenario `read-write-lock-<name>`.
fn scenario(name: &str) -> Scenario {
    catalog_scenario(&format!("read-write-lock-{name}"))
}

/// The properties of `scenario` that are violated in `trace`.
fn violated(scenario: &Scenario, trace: &Trace) -> Vec<Property> {
    let cx = sim_context(scenario);
    let mut found: Vec<Property> = check_all(trace, scenario.recipe.properties(), &cx)
        .into_iter()
        .map(|v| v.property)
        .collect();
    found.dedup();
    found
}

/// True for an Acquired notice of a write hold.
fn is_write_grant(notice: &Notice) -> bool {
    matches!(
        notice,
        Notice::Acquired {
            mode: Mode::Write,
            ..
        }
    )
}

/// True for an Acquired notice of a read hold.
fn is_read_grant(notice: &Notice) -> bool {
    matches!(
        notice,
        Notice::Acquired {
            mode: Mode::Read,
            ..
        }
    )
}

#[test]
fn readers_share_writers_exclude_and_everyone_is_served() {
    let scenario = scenario("fault-free");
    assert_eq!(scenario.recipe_settings.writers, 2);
    for seed in 0..5 {
        let trace = run_scenario(&scenario, seed);
        assert_eq!(violated(&scenario, &trace), [], "seed {seed}");
        assert!(
            most_at_once(&trace, Mode::Read) >= 2,
            "seed {seed}: readers share"
        );
        assert_eq!(most_at_once(&trace, Mode::Write), 1, "seed {seed}");
        assert_everyone_served(&scenario, &trace, seed);
        // Write tokens increase in the order the writes were granted.
        let tokens: Vec<_> = holds(&trace, Mode::Write)
            .iter()
            .map(|h| h.token.unwrap())
            .collect();
        assert!(tokens.windows(2).all(|w| w[0] < w[1]), "seed {seed}");
    }
}

/// One writer and nine readers, staggered: with this seed the first reader's node comes
/// first, the writer queues behind it and the eight later readers queue behind the writer.
/// They wait for it although only a reader holds (no writer starvation), and the writer's
/// release wakes exactly those eight, who all then read at once (no herd by `herd_free`'s rule
/// for read-write locks: woken ≤ max(1, those that then acquire)).
#[test]
fn readers_queued_behind_a_writer_wait_for_it_and_its_release_wakes_only_readers() {
    let workload = Workload {
        stagger_ms: 20,
        ..crate::query::workload(1, 500)
    };
    let settings = RecipeSettings {
        writers: 1,
        ..RecipeSettings::default()
    };
    let sim = crate::query::sim("rw-herd", 10, workload)
        .recipe(RecipeKind::ReadWriteLock)
        .recipe_settings(settings);
    let trace = crate::query::run(sim, 9, Vec::new());
    let read_grants = |range: std::ops::Range<usize>| {
        (trace.events[range].iter())
            .filter(|e| matches!(&e.kind, EventKind::Notice { notice } if is_read_grant(notice)))
            .count()
    };
    let write = first_notice(&trace, 0, "the writer's grant", is_write_grant);
    let release = index(&trace, write, "the writer's release", |e| {
        is_release_call(e, 0)
    });
    assert_eq!(
        read_grants(0..release),
        1,
        "only the reader ahead of the writer read"
    );
    let deletion = (trace.events[release..].iter())
        .find_map(|e| match &e.kind {
            EventKind::WatchFired {
                zxid: Some(zxid), ..
            } => Some(*zxid),
            _ => None,
        })
        .expect("the write node's deletion fired watches");
    let woken = (trace.events.iter())
        .filter(
            |e| matches!(&e.kind, EventKind::WatchFired { zxid: Some(z), .. } if *z == deletion),
        )
        .count();
    let then_read = read_grants(release..trace.events.len());
    println!(
        "ReadWriteLock, 1 writer, 9 readers: the write release woke {woken}, {then_read} then read"
    );
    assert_eq!((woken, then_read), (8, 8));
    assert_eq!(most_at_once(&trace, Mode::Read), 8, "all at once");
    let cx = sim_context(&Scenario {
        recipe_settings: settings,
        ..scenario("fault-free")
    });
    assert_eq!(check(&trace, Property::HerdFree, &cx), []);
}

#[test]
fn a_paused_writer_believes_while_the_next_writer_writes_but_its_stale_write_is_rejected() {
    let scenario = scenario("gc-pause");
    let trace = run_scenario(&scenario, 0);
    assert_eq!(violated(&scenario, &trace), [Property::RwExclusion]);
    let expired = first_session_expiry(&trace, 0, "the paused writer's expiry");
    let read = first_notice(&trace, 2, "the reader's grant", is_read_grant);
    assert!(
        expired < read,
        "the reader waited for the writer's node to go"
    );
    let rejected = (trace.events.iter()).any(|e| on(e, 0) && is_rejected_write(e));
    assert!(
        rejected,
        "the resource rejects the paused writer's stale token"
    );
}

/// Readers are not fenced: a paused reader whose session expires still believes it reads
/// when the writer queued behind it writes, and the resource (which only writers use) cannot
/// tell.
#[test]
fn a_paused_reader_believes_while_the_writer_writes() {
    let scenario = scenario("gc-pause-reader");
    let trace = run_scenario(&scenario, 0);
    assert_eq!(violated(&scenario, &trace), [Property::RwExclusion]);
    let expired = first_session_expiry(&trace, 1, "the paused reader's expiry");
    let write = index(
        &trace,
        expired,
        "the writer's second grant",
        notice_of(0, is_write_grant),
    );
    let reader_release = index(&trace, write, "the reader's release", |e| {
        is_release_call(e, 1)
    });
    assert!(
        write < reader_release,
        "the writer writes while the reader still reads"
    );
    let rejected = (trace.events.iter()).any(is_rejected_write);
    assert!(!rejected, "the writer's accesses are all accepted");
}

#[test]
fn expired_sessions_free_the_lock_and_everyone_is_served() {
    let scenario = scenario("session-expiry");
    for seed in 0..5 {
        let trace = run_scenario(&scenario, seed);
        // The scenario expects the herd, and leaves rw_exclusion unchecked: a client whose
        // session the server expires believes it holds until it hears its connection close,
        // which can come after the next holder's grant (seed 0: 1.8 ms).
        let unexpected: Vec<Property> = violated(&scenario, &trace)
            .into_iter()
            .filter(|p| ![Property::HerdFree, Property::RwExclusion].contains(p))
            .collect();
        assert_eq!(unexpected, [], "seed {seed}");
        assert_eq!(count_server(&trace, ServerSession::Expired), 3);
        assert_everyone_granted(&scenario, &trace, seed);
    }
}

#[test]
fn server_restarts_keep_readers_sharing_and_writers_excluding() {
    // With sessions long enough to outlast the restarts' downtime and the reconnect sleeps.
    let scenario = long_sessions(scenario("server-restart"));
    for seed in 0..5 {
        let trace = run_scenario(&scenario, seed);
        assert_eq!(violated(&scenario, &trace), [], "seed {seed}");
        assert_everyone_served(&scenario, &trace, seed);
    }
}

/// The same workload with Curator's reader watch (the first write node ahead) and with ours
/// (the nearest): Curator's wakes readers that cannot read yet, ours never does here.
#[test]
fn curator_s_first_writer_watch_herds_where_the_nearest_writer_watch_does_not() {
    let ours = scenario("fault-free");
    let curator = scenario("first-writer-watch-herd");
    assert_eq!(curator.recipe, RecipeKind::ReadWriteLockFirstWriterWatch);
    assert_eq!(
        (curator.clients, &curator.workload, curator.recipe_settings),
        (ours.clients, &ours.workload, ours.recipe_settings),
        "the same workload"
    );
    for seed in 0..5 {
        assert_eq!(
            violated(&ours, &run_scenario(&ours, seed)),
            [],
            "seed {seed}"
        );
        let trace = run_scenario(&curator, seed);
        assert_eq!(
            violated(&curator, &trace),
            [Property::HerdFree],
            "seed {seed}"
        );
        // Still live: every reader and writer gets through.
        assert_everyone_served(&curator, &trace, seed);
    }
}
