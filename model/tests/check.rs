//! The 2- and 3-client checks of `mutex` and `naive-herd-mutex` (2 of `semaphore-mutex`), with
//! pinned state counts: a
//! change in the state space must be a conscious change of these numbers.

use coordination::ids::ClientSlot;
use coordination::recipes::Notice;
use model::check::{Options, Outcome, check};
use model::replay::{actions_from_indices, indices_of, states, trace};
use model::{Action, Checked, LockModel, ModelSpec};
use recipe_table::property::{Expectation, Property};
use recipe_table::recipes::{
    LEADER_LATCH, LEADER_SELECTOR, MULTI_LOCK, MUTEX, NAIVE_HERD_MUTEX, READ_WRITE_LOCK, RecipeDef,
    SEMAPHORE, SEMAPHORE_MUTEX, TRUSTING_WAKEUP_MUTEX, Testable,
};
use scenarios::fault::Fault;
use stateright::{Checker, HasDiscoveries, Model};
use trace::{EventKind, Source};

/// Unique states with and without the symmetry reduction across the clients; each client's
/// The paths `check` shows, from the search it runs beside its DFS for the discoveries the
/// recipe table expects, and from a search run after it for the discoveries it made (as
/// `check` searched before), for a row of the recipe table under `config`.
struct BesideAndAfter(ModelSpec);

impl recipe_table::recipes::Visitor for BesideAndAfter {
    type Output = [model::check::Paths; 2];

    fn visit<R: Testable>(self, def: &'static RecipeDef<R>) -> Self::Output {
        let outcome = check(def, self.0, Options::default());
        let beside: model::check::Paths = (outcome.verdicts.iter())
            .map(|verdict| verdict.path.clone())
            .collect();
        let discovered: Vec<Checked> = (outcome.verdicts.iter())
            .filter(|verdict| verdict.path.is_some())
            .map(|verdict| verdict.property)
            .collect();
        let model = LockModel::new(def, self.0);
        let budget = model::check::SHORTEST_BUDGET;
        let mut after = model::check::shortest(&model, &discovered, budget, 1).into_iter();
        let after = (beside.iter())
            .map(|path| path.as_ref().and_then(|_| after.next().flatten()))
            .collect();
        [beside, after]
    }
}

/// The path search that runs beside the DFS finds the paths a search after it finds: every
/// row of the recipe table with 2 clients, and the lock loop's connection loss.
#[test]
fn the_paths_searched_beside_the_dfs_are_those_searched_after_it() {
    use recipe_table::recipes::RecipeKind;
    let rows = RecipeKind::ALL
        .iter()
        .map(|&kind| (kind, ModelSpec::new(2)));
    let lost = [(RecipeKind::Mutex, one_connection_loss(2))];
    for (kind, config) in rows.chain(lost) {
        let [beside, after] = kind.visit(BesideAndAfter(config));
        assert_eq!(beside, after, "{kind} {:?}", config.budgets);
        assert!(beside.iter().any(Option::is_some), "{kind}: some discovery");
    }
}

/// op and timer ids are renumbered either way, in the state itself (see `model::symmetry`;
/// without symmetry they were not, until the renumbering moved from the representative to the
/// step, which shrank every count `plain` by 27-66 % and no `symmetric` one); both with the
/// partial-order reduction (see `model::reduction`), which roughly halves the 2- and
/// 3-client spaces. Every count fell by a quarter to a half when a client began to close its
/// session once its workload is done and its requests are applied, as the simulator's do (no
/// fault or late event on a finished client's session any more; the counts before are in
/// that change's commit message). Every count rose, most by 2-6 % (a selector's, and
/// Curator's lock loop under a connection loss, by 28-37 %), when a call made while not
/// connected began to wait for a connection at most Curator's connection timeout (a timer the
/// model fires at any point) and a lock or lease waiter in its `wait()` to list again at every
/// connection-state change, as Curator's watcher wakes it (the counts before are in that
/// change's commit message).
struct Pinned {
    symmetric: usize,
    plain: usize,
}

fn run<R: Testable>(def: &'static RecipeDef<R>, config: ModelSpec, symmetry: bool) -> Outcome {
    let options = Options {
        symmetry,
        paths: symmetry,
        ..Options::default()
    };
    check(def, config, options)
}

/// The default options without counterexample paths: for tests that check verdicts and
/// counts only (the path search can cost more than the check).
fn verdicts_only() -> Options {
    Options {
        paths: false,
        ..Options::default()
    }
}

/// What the trace checkers need to judge a path of `model` as a whole (no time bound).
fn checker_context<R: Testable>(
    model: &LockModel<R>,
    max_leases: u32,
) -> properties::check::Context {
    properties::check::Context {
        lock_path: model.lock_path().clone(),
        horizon: u64::MAX,
        progress_grace: 0,
        max_leases,
        error_policy: Default::default(),
    }
}

/// Checks `R` with `clients` both ways: pinned counts, identical verdicts, all met.
fn pinned<R: Testable>(def: &'static RecipeDef<R>, clients: u16, expected: Pinned) -> Outcome {
    pinned_in(def, ModelSpec::new(clients), expected)
}

/// Checks `R` under `config` both ways: pinned counts, identical verdicts, all met.
fn pinned_in<R: Testable>(
    def: &'static RecipeDef<R>,
    config: ModelSpec,
    expected: Pinned,
) -> Outcome {
    let reduced = run(def, config, true);
    let plain = run(def, config, false);
    assert_eq!(
        (reduced.unique_states, plain.unique_states),
        (expected.symmetric, expected.plain),
        "unique states with and without symmetry"
    );
    let verdicts = |o: &Outcome| o.verdicts.iter().map(|v| v.holds).collect::<Vec<_>>();
    assert_eq!(verdicts(&reduced), verdicts(&plain));
    for verdict in &reduced.verdicts {
        assert!(verdict.met(), "{}: {verdict:?}", verdict.property);
    }
    assert!(reduced.complete && reduced.all_met());
    reduced
}

#[test]
fn mutex_with_two_clients() {
    let outcome = pinned(
        &MUTEX,
        2,
        Pinned {
            symmetric: 1_303,
            plain: 2_600,
        },
    );
    assert!(!outcome.verdict(Property::MutualExclusionBelief).holds);
    assert!(outcome.verdict(Property::HerdFree).holds);
}

/// Ending a hold at LOST (`OnLost::Release`) instead of keeping it until released (Curator's
/// default): a lost holder's node gets its delete at once on the new session, and its release
/// later answers `not_held`; a waiter gives up at LOST, which leaves it unserved (`progress`
/// violated, as the recipe table expects). 1848 / 3692 (the state space of before the default
/// changed) until the `progress` monitor kept who waits: it remembers a waiter that gave up
/// while its workload thinks or is done, which nothing else in the state tells apart (+48 /
/// +96).
#[test]
fn mutex_with_two_clients_releasing_at_lost() {
    let config = ModelSpec {
        framework: coordination::framework::FrameworkConfig {
            on_lost: coordination::framework::OnLost::Release,
            ..Default::default()
        },
        ..ModelSpec::new(2)
    };
    let outcome = pinned_in(
        &MUTEX,
        config,
        Pinned {
            symmetric: 1_139,
            plain: 2_272,
        },
    );
    assert!(!outcome.verdict(Property::Progress).holds);
}

/// Under `on_lost = release` a semaphore waiter whose session expires gives its ask up
/// (`Failed { session_lost }`) and, in its only cycle, is never served: `progress` counts
/// that as no progress, where the workload's phase alone (done, not acquiring) passed it.
/// Curator's lease loop (the default) asks again on the new session, as the mutex's lock
/// loop does. The path took 9 steps until a finished client closed its session: it no longer
/// handles what is still queued for it on its new session before nothing more can happen
/// (work, create, expiry, then three deliveries to LOST, the ask given up and the close).
#[test]
fn a_waiter_that_gives_up_at_lost_and_is_never_served_breaks_progress() {
    let releasing = ModelSpec {
        framework: coordination::framework::FrameworkConfig {
            on_lost: coordination::framework::OnLost::Release,
            ..Default::default()
        },
        ..ModelSpec::new(1)
    };
    let outcome = run(&SEMAPHORE, releasing, true);
    let progress = outcome.verdict(Property::Progress);
    assert!(!progress.holds);
    assert_eq!(progress.path.as_ref().map(Vec::len), Some(6));
    let semaphore = run(&SEMAPHORE, ModelSpec::new(1), true);
    assert!(semaphore.verdict(Property::Progress).holds);
    let mutex = run(&MUTEX, ModelSpec::new(1), true);
    assert!(mutex.verdict(Property::Progress).holds);
}

#[test]
fn naive_herd_mutex_with_two_clients_has_no_herd() {
    let outcome = pinned(
        &NAIVE_HERD_MUTEX,
        2,
        Pinned {
            symmetric: 412,
            plain: 820,
        },
    );
    assert!(outcome.verdict(Property::HerdFree).holds);
}

/// The internal lock and the lease phase multiply the mutex's states by about 12. Curator's
/// lease loop deadlocks after an expiry past the internal lock (`progress`, 25 steps): a hang,
/// the waiters still asking (`answered`, the same 25 steps).
#[test]
fn semaphore_mutex_with_two_clients() {
    let outcome = pinned(
        &SEMAPHORE_MUTEX,
        2,
        Pinned {
            // 26,843 / 53,612 before the `progress` monitor remembered waiters that gave up;
            // 24,587 / 129,328 before lease waiters went on across LOST (Curator's lease loop)
            // and the partial-order reduction (16,061 / 79,199 with the reduction).
            symmetric: 13_897,
            plain: 27_776,
        },
    );
    assert!(!outcome.verdict(Property::Progress).holds);
    let hang = outcome.verdict(Property::Answered);
    assert_eq!(hang.path.as_ref().map(Vec::len), Some(25), "{hang:?}");
    assert!(!outcome.verdict(Property::MutualExclusionBelief).holds);
    assert!(outcome.verdict(Property::MutualExclusionFenced).holds);
    assert!(outcome.verdict(Property::HerdFree).holds);
    assert!(outcome.verdict(Property::NoOrphans).holds);
}

/// A semaphore of `max_leases` leases, two clients.
fn one_or_two_leases(max_leases: u32) -> ModelSpec {
    let settings = recipe_table::family::RecipeSettings {
        max_leases,
        ..Default::default()
    };
    ModelSpec {
        settings,
        ..ModelSpec::new(2)
    }
}

/// Two leases for two clients: both hold at once, and an expired holder's freed lease has no
/// third client to go to, so the bound holds; a return wakes one waiter.
#[test]
fn semaphore_with_two_clients_and_two_leases() {
    let outcome = pinned_in(
        &SEMAPHORE,
        one_or_two_leases(2),
        Pinned {
            // 27,960 / 55,846 before the `progress` monitor remembered waiters that gave up;
            // 26,783 / 134,162 before lease waiters went on across LOST (Curator's lease loop)
            // and the partial-order reduction (18,471 / 90,443 with the reduction).
            symmetric: 16_186,
            plain: 32_354,
        },
    );
    assert!(outcome.verdict(Property::LeaseBound).holds);
    assert!(outcome.verdict(Property::HerdFree).holds);
    assert!(outcome.verdict(Property::NoOrphans).holds);
}

/// One lease for two clients: a paused holder's session expires, its lease goes to the
/// other client while it still believes it holds, two believers of one lease. And an expiry
/// past the internal lock lets both clients put a lease node down and wait for each other
/// (`progress`, 25 steps: Curator's lease loop, see `coordination::recipes::Semaphore`).
#[test]
fn semaphore_with_two_clients_and_one_lease() {
    let outcome = pinned_in(
        &SEMAPHORE,
        one_or_two_leases(1),
        Pinned {
            // 23,292 / 46,511 before the `progress` monitor remembered waiters that gave up;
            // 21,300 / 110,023 before lease waiters went on across LOST (Curator's lease loop)
            // and the partial-order reduction (14,164 / 69,046 with the reduction).
            symmetric: 12_549,
            plain: 25_080,
        },
    );
    assert!(!outcome.verdict(Property::LeaseBound).holds);
    let progress = outcome.verdict(Property::Progress);
    assert!(!progress.holds);
    assert_eq!(progress.path.as_ref().map(Vec::len), Some(25));
    assert!(outcome.verdict(Property::HerdFree).holds);
    assert!(outcome.verdict(Property::NoOrphans).holds);
}

/// Each participant's node, the Reconnected re-check and the reset at Lost: a paused
/// leader's belief overlaps the next leader's; the fence holds; a close wakes one.
#[test]
fn leader_latch_with_two_clients() {
    let outcome = pinned(
        &LEADER_LATCH,
        2,
        Pinned {
            symmetric: 1_949,
            plain: 3_892,
        },
    );
    assert!(!outcome.verdict(Property::LeaderUniqueBelief).holds);
    assert!(outcome.verdict(Property::LeaderUniqueFenced).holds);
    assert!(outcome.verdict(Property::HerdFree).holds);
    assert!(outcome.verdict(Property::NoOrphans).holds);
}

/// Two mutexes taken one after the other multiply the mutex's states by about 6.5; the split
/// brain needs the same fault as the mutex's (a paused holder's session expires), 8 steps
/// later (the second lock's create and listing, and the reverse release).
#[test]
fn multi_lock_with_two_clients() {
    let outcome = pinned(
        &MULTI_LOCK,
        2,
        Pinned {
            // 13,639 / 27,272 before the progress monitor, renumbered ids and the retry policy;
            // 17,226 / 71,702 before a waiter kept waiting across LOST (as Curator's does).
            symmetric: 8_004,
            plain: 15_990,
        },
    );
    assert!(!outcome.verdict(Property::MutualExclusionBelief).holds);
    assert!(outcome.verdict(Property::MutualExclusionFenced).holds);
    assert!(outcome.verdict(Property::HerdFree).holds);
    assert!(outcome.verdict(Property::NoOrphans).holds);
}

#[test]
fn mutex_with_three_clients_symmetry_shrinks_at_least_four_times() {
    let outcome = pinned(
        &MUTEX,
        3,
        Pinned {
            symmetric: 17_329,
            plain: 103_215,
        },
    );
    assert!(98_397 >= 4 * outcome.unique_states);
    assert!(outcome.verdict(Property::HerdFree).holds);
}

#[test]
fn naive_herd_mutex_with_three_clients_herds() {
    let outcome = pinned(
        &NAIVE_HERD_MUTEX,
        3,
        Pinned {
            symmetric: 3_389,
            plain: 19_077,
        },
    );
    assert!(18_711 >= 4 * outcome.unique_states);
    let herd = outcome.verdict(Property::HerdFree);
    assert_eq!(herd.expectation, Expectation::Violated);
    assert!(!herd.holds);
    let path = herd.path.as_ref().expect("a herd path");
    let model = LockModel::new(&NAIVE_HERD_MUTEX, ModelSpec::new(3));
    let trace = trace(&model, path, "herd").unwrap();
    let woken = trace
        .events
        .iter()
        .filter(|e| matches!(&e.kind, EventKind::WatchFired { .. }))
        .count();
    assert!(woken >= 2, "one delete wakes two waiters");
}

/// The split-brain counterexample: its length, and no shorter path exists (a depth-bounded
/// exhaustive search one step short finds nothing).
#[test]
fn the_belief_counterexample_is_minimal() {
    let config = ModelSpec::new(2);
    let outcome = check(&MUTEX, config, Options::default());
    let path = outcome
        .verdict(Property::MutualExclusionBelief)
        .path
        .clone()
        .expect("a counterexample");
    assert_eq!(path.len(), 11);
    let name = Property::MutualExclusionBelief.name();
    let bounded = |actions: usize| {
        LockModel::new(&MUTEX, config)
            .checker()
            // A state at depth d is reached by d - 1 actions; depths below the target are checked.
            .target_max_depth(actions + 2)
            .finish_when(HasDiscoveries::AnyOf([name].into()))
            .spawn_bfs()
            .join()
            .discovery(name)
            .is_some()
    };
    assert!(!bounded(path.len() - 1), "a shorter counterexample exists");
    assert!(bounded(path.len()));
}

#[test]
fn the_counterexample_becomes_a_trace_and_replays_by_index() {
    let config = ModelSpec::new(2);
    let model = LockModel::new(&MUTEX, config);
    let outcome = check(&MUTEX, config, Options::default());
    let path = outcome
        .verdict(Property::MutualExclusionBelief)
        .path
        .clone()
        .unwrap();
    let indices = indices_of(&model, &path).unwrap();
    assert_eq!(actions_from_indices(&model, &indices).unwrap(), path);
    let trace = trace(&model, &path, "split brain").unwrap();
    assert_eq!(trace.meta.source, Source::Model);
    assert_eq!(trace.meta.recipe.name(), "mutex");
    assert_eq!(trace.meta.settings["path"], indices.as_str());
    let acquired: Vec<_> = trace
        .events
        .iter()
        .filter(|e| matches!(&e.kind, EventKind::Notice { notice } if matches!(notice, coordination::recipes::Notice::Acquired { .. })))
        .map(|e| e.client)
        .collect();
    assert_eq!(acquired.len(), 2);
    assert_ne!(acquired[0], acquired[1]);
    assert!(
        trace
            .meta
            .fault_schedule
            .iter()
            .any(|f| matches!(f.fault, Fault::ExpireSession { .. }))
    );
    assert_eq!(trace.events.last().unwrap().t, path.len() as u64);
    assert!(trace.events.windows(2).all(|w| w[0].t <= w[1].t));
}

#[test]
fn an_unfenced_resource_loses_an_update() {
    let config = ModelSpec {
        fenced: false,
        ..ModelSpec::new(2)
    };
    let outcome = check(&MUTEX, config, Options::default());
    assert!(outcome.all_met());
    let fenced = outcome.verdict(Property::MutualExclusionFenced);
    assert_eq!(fenced.expectation, Expectation::Violated);
    let path = fenced.path.clone().unwrap();
    let trace = trace(&LockModel::new(&MUTEX, config), &path, "lost update").unwrap();
    let tokens: Vec<_> = trace
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::ResourceRead {
                token,
                accepted: true,
                ..
            }
            | EventKind::ResourceWrite {
                token,
                accepted: true,
                ..
            } => Some(token),
            _ => None,
        })
        .collect();
    assert!(
        tokens.windows(2).any(|w| w[1] < w[0]),
        "a stale holder's access is accepted after its successor's: {tokens:?}"
    );
}

#[test]
fn bad_paths_are_clear_errors() {
    let model = LockModel::new(&MUTEX, ModelSpec::new(2));
    let error = actions_from_indices(&model, "0/x").unwrap_err().to_string();
    assert!(error.contains("\"x\" is not a number"), "{error}");
    let error = actions_from_indices(&model, "0/99")
        .unwrap_err()
        .to_string();
    assert!(error.contains("step 1"), "{error}");
    assert!(actions_from_indices(&model, "1").is_err());
}

/// The search presents a listing to a recipe in the tree's order (reverse name order, not the
/// sequence order a recipe must sort into), although it renumbers the ids of the client that
/// receives it: a relabelled listing keeps the tree's order (until it did, the renumbering at
/// the step sorted every listing for the recipe, and a mutex that forgets to sort would have
/// passed).
#[test]
fn the_search_hands_recipes_listings_in_the_trees_order() {
    let model = LockModel::new(&MUTEX, ModelSpec::new(3));
    let mut level = vec![model.initial_canonical()];
    let mut listings = 0;
    let mut actions = Vec::new();
    for _ in 0..12 {
        let mut next_level = Vec::new();
        for state in &level {
            actions.clear();
            model.enabled(state, &mut actions);
            next_level.extend(
                actions
                    .iter()
                    .filter_map(|&action| model.next(state, action)),
            );
        }
        for state in &next_level {
            let events = state.peers.iter().filter_map(|peer| peer.handle.as_ref());
            for event in events.flat_map(|handle| &handle.events) {
                if let coordination::session::RawEvent::Reply {
                    result: Ok(coordination::zk::OpOk::Children { names, .. }),
                    ..
                } = event
                    && names.len() >= 2
                {
                    listings += 1;
                    assert!(names.is_sorted_by(|a, b| a > b), "{names:?}");
                }
            }
        }
        next_level.truncate(5_000);
        level = next_level;
    }
    assert!(listings > 0, "some listing of two nodes or more");
}

/// Mirror images (clients 0 and 1 swapped throughout) reach states with one representative.
#[test]
fn mirrored_paths_meet_in_one_representative() {
    use stateright::Representative;
    let model = LockModel::new(&MUTEX, ModelSpec::new(2));
    let path = check(&MUTEX, ModelSpec::new(2), Options::default())
        .verdict(Property::MutualExclusionBelief)
        .path
        .clone()
        .unwrap();
    let swap = |slot: ClientSlot| ClientSlot(1 - slot.0);
    let mirrored: Vec<Action> = path
        .iter()
        .map(|action| match *action {
            Action::Work(c) => Action::Work(swap(c)),
            Action::Deliver(c) => Action::Deliver(swap(c)),
            Action::Apply(c) => Action::Apply(swap(c)),
            Action::Expire(c) => Action::Expire(swap(c)),
            other => panic!("unexpected action {other:?}"),
        })
        .collect();
    let last = |actions: &[Action]| {
        model::replay::states(&model, actions)
            .unwrap()
            .pop()
            .unwrap()
    };
    let (a, b) = (last(&path), last(&mirrored));
    assert_ne!(a, b);
    assert_eq!(a.representative(), b.representative());
    let actions = |s| {
        let mut out = Vec::new();
        model.actions(s, &mut out);
        out.len()
    };
    assert_eq!(actions(&a), actions(&b));
}

/// The same trace checkers that judge simulator runs find each counterexample's violation in
/// the model's trace.
#[test]
fn the_trace_checkers_confirm_the_counterexamples() {
    fn confirm<R: Testable>(def: &'static RecipeDef<R>, config: ModelSpec, property: Property) {
        let model = LockModel::new(def, config);
        let outcome = check(def, config, Options::default());
        let path = outcome
            .verdict(property)
            .path
            .clone()
            .expect("a counterexample");
        let trace = trace(&model, &path, property.name()).unwrap();
        let cx = checker_context(&model, 1);
        let found = properties::check::check(&trace, property, &cx);
        assert!(!found.is_empty(), "{property} not confirmed: {trace:#?}");
    }
    confirm(&MUTEX, ModelSpec::new(2), Property::MutualExclusionBelief);
    confirm(&NAIVE_HERD_MUTEX, ModelSpec::new(3), Property::HerdFree);
    confirm(
        &SEMAPHORE_MUTEX,
        ModelSpec::new(2),
        Property::MutualExclusionBelief,
    );
    confirm(&SEMAPHORE, one_or_two_leases(1), Property::LeaseBound);
    confirm(
        &MULTI_LOCK,
        ModelSpec::new(2),
        Property::MutualExclusionBelief,
    );
    confirm(&READ_WRITE_LOCK, ModelSpec::new(2), Property::RwExclusion);
    confirm(
        &TRUSTING_WAKEUP_MUTEX,
        ModelSpec::new(3),
        Property::LiveSessionExclusion,
    );
    let unfenced = ModelSpec {
        fenced: false,
        ..ModelSpec::new(2)
    };
    confirm(&MUTEX, unfenced, Property::MutualExclusionFenced);
    // A waiter that gave up at LOST (`on_lost = release`) and was never served, by the same
    // `Waits` monitor.
    let releasing = ModelSpec {
        framework: coordination::framework::FrameworkConfig {
            on_lost: coordination::framework::OnLost::Release,
            ..Default::default()
        },
        ..ModelSpec::new(1)
    };
    confirm(&SEMAPHORE, releasing, Property::Progress);
}

/// The model and the trace checker judge belief with one monitor, so they agree step by step:
/// along each counterexample, a prefix of the path's trace passes the trace checker exactly
/// when every state the prefix visits satisfies the model's property.
#[test]
fn model_and_trace_checker_agree_on_belief_at_every_step_of_a_counterexample() {
    fn agree<R: Testable>(def: &'static RecipeDef<R>, config: ModelSpec, property: Property) {
        let model = LockModel::new(def, config);
        let outcome = check(def, config, Options::default());
        let path = (outcome.verdict(property).path.clone()).expect("a counterexample");
        let visited = states(&model, &path).unwrap();
        let cx = checker_context(&model, config.settings.max_leases);
        let mut held_so_far = true;
        for (steps, state) in visited.iter().enumerate() {
            held_so_far &= Checked::Shared(property).holds_in(&model, state);
            let prefix = trace(&model, &path[..steps], property.name()).unwrap();
            let passes = properties::check::check(&prefix, property, &cx).is_empty();
            assert_eq!(passes, held_so_far, "{} {property}, step {steps}", def.name);
        }
        assert!(!held_so_far, "a counterexample");
    }
    agree(&MUTEX, ModelSpec::new(2), Property::MutualExclusionBelief);
    agree(
        &LEADER_LATCH,
        ModelSpec::new(2),
        Property::LeaderUniqueBelief,
    );
    agree(&READ_WRITE_LOCK, ModelSpec::new(2), Property::RwExclusion);
    agree(
        &TRUSTING_WAKEUP_MUTEX,
        ModelSpec::new(3),
        Property::LiveSessionExclusion,
    );
}

/// `mutual_exclusion_fenced` is one monitor: the model and the trace checker judge the same
/// accesses alike. The model's own rule before (tokens in order, counter equal to the writes)
/// passed a write without a read and a block interleaved by a stale read, which the trace
/// checker flags.
#[test]
fn model_and_trace_checker_agree_on_fenced_accesses() {
    use coordination::fencing::Token;
    use coordination::ids::Owner;
    use properties::monitor::Access;
    let model = LockModel::new(&MUTEX, ModelSpec::new(2));
    let start = states(&model, &[]).unwrap().pop().unwrap();
    let blank = trace(&model, &[], "fenced").unwrap();
    let (c0, c1) = (ClientSlot(0), ClientSlot(1));
    let cases: [&[(ClientSlot, u64, Access)]; 4] = [
        &[(c0, 5, Access::Read(0)), (c0, 5, Access::Write(1))],
        &[(c0, 5, Access::Write(1))],
        &[
            (c1, 7, Access::Read(0)),
            (c0, 5, Access::Read(0)),
            (c1, 7, Access::Write(1)),
        ],
        &[(c0, 5, Access::Read(0)), (c0, 5, Access::Write(2))],
    ];
    let mut verdicts = Vec::new();
    for accesses in cases {
        let mut state = start.clone();
        let mut judged = blank.clone();
        for &(slot, token, access) in accesses {
            let (owner, token) = (Owner(0), Token(token));
            state.resource.accepted(slot, owner, token, access);
            let kind = match access {
                Access::Read(value) => EventKind::ResourceRead {
                    owner,
                    token,
                    accepted: true,
                    value: Some(value),
                },
                Access::Write(value) => EventKind::ResourceWrite {
                    owner,
                    token,
                    value,
                    accepted: true,
                },
            };
            let t = judged.events.len() as u64;
            let client = Some(slot);
            (judged.events).push(trace::Event { t, client, kind });
        }
        let fenced = Property::MutualExclusionFenced;
        let holds = Checked::Shared(fenced).holds_in(&model, &state);
        let cx = checker_context(&model, 1);
        let passes = properties::check::check(&judged, fenced, &cx).is_empty();
        assert_eq!(holds, passes, "{accesses:?}");
        verdicts.push(holds);
    }
    assert_eq!(verdicts, [true, false, false, false]);
}

/// A mutex whose woken waiter holds without listing again gives every verdict the mutex
/// gives with three clients and an expiry — the belief overlap the expiry causes anyway, and
/// nothing else — except `live_session_exclusion`: the middle waiter's session expires and
/// wakes the last one beside the holder, both sessions alive. Without an expiry, a timeout does
/// the same (and then the belief property sees it too).
#[test]
fn live_session_exclusion_alone_tells_a_trusting_wakeup_from_the_mutex() {
    let config = ModelSpec::new(3);
    let mutex = check(&MUTEX, config, Options::default());
    let bad = check(&TRUSTING_WAKEUP_MUTEX, config, Options::default());
    assert!(mutex.all_met() && bad.all_met());
    for (ours, theirs) in mutex.verdicts.iter().zip(&bad.verdicts) {
        let caught = ours.property == Checked::Shared(Property::LiveSessionExclusion);
        assert_eq!(ours.holds, theirs.holds || caught, "{}", ours.property);
    }
    assert!(mutex.verdict(Property::LiveSessionExclusion).holds);
    assert!(!bad.verdict(Property::LiveSessionExclusion).holds);
    let timeouts = ModelSpec {
        timeouts: true,
        budgets: model::Budgets {
            expiries: 0,
            ..Default::default()
        },
        ..config
    };
    let bad = check(&TRUSTING_WAKEUP_MUTEX, timeouts, Options::default());
    assert!(bad.all_met() && !bad.verdict(Property::LiveSessionExclusion).holds);
}

/// One cycle of a one-client mutex, to its end: acquire (create, list), hold, release.
const ONE_CYCLE: [Action; 7] = {
    let c0 = ClientSlot(0);
    [
        Action::Work(c0),
        Action::Apply(c0),
        Action::Deliver(c0),
        Action::Apply(c0),
        Action::Deliver(c0),
        Action::Work(c0),
        Action::Apply(c0),
    ]
};

/// The server's sweep deletes the lock directory once its last node is gone (a container that
/// has had children, as ZooKeeper's `ContainerManager` deletes it), and the mutex's next acquire
/// meets `NoNode`, creates the directory anew and gets a node whose sequence number starts over
/// at 0. Before the model reaped containers, the lock path stayed and the second node was
/// `…lock-0000000001`. The path replays through its action indices like any other.
#[test]
fn a_reaped_lock_directory_is_created_anew_and_its_sequence_numbers_start_over() {
    use coordination::zk::{OpOk, Request, ZkError};
    let config = ModelSpec {
        budgets: model::Budgets {
            cycles: 2,
            expiries: 0,
            reaps: 1,
            ..Default::default()
        },
        ..ModelSpec::new(1)
    };
    let model = LockModel::new(&MUTEX, config);
    let c0 = ClientSlot(0);
    let mut path = ONE_CYCLE.to_vec();
    let mut enabled = Vec::new();
    let mut state = states(&model, &path).unwrap().pop().unwrap();
    model.enabled(&state, &mut enabled);
    assert!(enabled.contains(&Action::ReapContainers), "{enabled:?}");
    path.push(Action::ReapContainers);
    state = model
        .step(&state, Action::ReapContainers, &mut model::model::Silent)
        .unwrap();
    assert!(state.server.tree.get(model.lock_path()).is_none(), "reaped");
    enabled.clear();
    model.enabled(&state, &mut enabled);
    assert!(!enabled.contains(&Action::ReapContainers), "one sweep");
    while state.beliefs.believed().next().is_none() {
        enabled.clear();
        model.enabled(&state, &mut enabled);
        let own = [Action::Deliver(c0), Action::Apply(c0), Action::Work(c0)];
        let action = *(own.iter())
            .find(|action| enabled.contains(action))
            .expect("the acquire goes on");
        state = model
            .step(&state, action, &mut model::model::Silent)
            .unwrap();
        path.push(action);
        assert!(path.len() < 40, "acquires again: {path:?}");
    }
    let run = trace(&model, &path, "reaped").unwrap();
    let mut nodes = Vec::new();
    let mut no_node = false;
    for event in &run.events {
        let EventKind::OpApplied {
            request: Request::Create { mode, .. },
            result,
            ..
        } = &event.kind
        else {
            continue;
        };
        match result {
            Ok(OpOk::Created { path, .. }) if mode.is_sequential() => {
                nodes.push(path.name().rsplit('-').next().unwrap().to_owned());
            }
            Err(ZkError::NoNode) => no_node = true,
            _ => {}
        }
    }
    assert!(no_node, "the create after the sweep meets NoNode");
    assert_eq!(
        nodes,
        ["0000000000", "0000000000"],
        "the sequence starts over"
    );
    let indices = indices_of(&model, &path).unwrap();
    assert_eq!(actions_from_indices(&model, &indices).unwrap(), path);
    let none = LockModel::new(
        &MUTEX,
        ModelSpec {
            budgets: model::Budgets {
                reaps: 0,
                ..config.budgets
            },
            ..config
        },
    );
    let settled = states(&none, &ONE_CYCLE).unwrap().pop().unwrap();
    enabled.clear();
    none.enabled(&settled, &mut enabled);
    assert!(!enabled.contains(&Action::ReapContainers), "--reaps 0");
}

/// `no_orphans` is not vacuous: a settled run is clean — the client closed its session when
/// its workload was done, as the simulator's does — and a lock node left in the same state
/// is an orphan, but not a container holding lock nodes (as `semaphore-mutex`'s `leases`).
#[test]
fn a_lock_node_left_after_the_workload_is_an_orphan() {
    use coordination::zk::{CreateMode, Path, Request};
    let model = LockModel::new(&MUTEX, ModelSpec::new(1));
    let mut settled = states(&model, &ONE_CYCLE).unwrap().pop().unwrap();
    assert_eq!(settled.resource.counter.value(), 1);
    assert!(settled.peers[0].handle.is_none() && settled.server.live.is_empty());
    let no_orphans = Checked::Shared(Property::NoOrphans);
    assert!(no_orphans.holds_in(&model, &settled));
    let ended = model::state::session_id(ClientSlot(0), 0);
    let create = |path: &str, mode| Request::Create {
        path: Path::new(path).unwrap(),
        data: Vec::new(),
        mode,
    };
    settled
        .server_mut()
        .tree
        .apply(ended, &create("/lock/leases", CreateMode::Container));
    assert!(no_orphans.holds_in(&model, &settled));
    let lease = create("/lock/leases/lease-", CreateMode::PersistentSequential);
    settled.server_mut().tree.apply(ended, &lease);
    assert!(!no_orphans.holds_in(&model, &settled));
}

/// `no_orphans` is one rule (`properties::monitor::orphaned`): the model and the trace checker
/// judge the same tree at the end of a run alike. A one-client mutex's cycle ends with its
/// session closed; each case then gives the client a second session that is still alive (a
/// quiescent state: the model judges it) and applies some creates, to the model's tree and,
/// as the model records them, to the run's trace, which ends with the tree's snapshot. Before, the model flagged every lock node
/// left (a live session's too) and the trace checker only those no live session owned.
#[test]
fn model_and_trace_checker_agree_on_orphans() {
    use coordination::world::Handle;
    use coordination::zk::{CreateMode, Path, Request, SessionId};
    use model::state::session_id;
    use trace::{Event, ServerSession};
    let model = LockModel::new(&MUTEX, ModelSpec::new(1));
    let settled = states(&model, &ONE_CYCLE).unwrap().pop().unwrap();
    let run = trace(&model, &ONE_CYCLE, "orphans").unwrap();
    let (ended, alive) = (session_id(ClientSlot(0), 0), session_id(ClientSlot(0), 1));
    let cx = checker_context(&model, 1);
    let no_orphans = Property::NoOrphans;
    type Create<'a> = (&'a str, CreateMode, SessionId);
    let cases: [&[Create<'_>]; 6] = [
        &[],
        &[("/lock/leases", CreateMode::Container, ended)],
        &[("/lock/lock-", CreateMode::EphemeralSequential, alive)],
        &[("/lock/lock-", CreateMode::PersistentSequential, alive)],
        &[("/lock/lock-", CreateMode::EphemeralSequential, ended)],
        &[
            ("/lock/leases", CreateMode::Container, alive),
            ("/lock/leases/lease-", CreateMode::Ephemeral, ended),
        ],
    ];
    let mut verdicts = Vec::new();
    for creates in cases {
        let mut state = settled.clone();
        let mut judged = run.clone();
        let mut record = |kind| {
            let t = judged.events.len() as u64;
            judged.events.push(Event {
                t,
                client: None,
                kind,
            });
        };
        state.server_mut().open(alive);
        let mut handle = Handle::open(alive, model::model::SESSION_TIMEOUT);
        handle.events.clear();
        state.peer_mut(ClientSlot(0)).handle = Some(handle);
        record(EventKind::ServerSession {
            session: alive,
            change: ServerSession::Created,
        });
        for (op, &(path, mode, session)) in creates.iter().enumerate() {
            let request = Request::Create {
                path: Path::new(path).unwrap(),
                data: Vec::new(),
                mode,
            };
            let applied = state.server_mut().tree.apply(session, &request);
            record(EventKind::OpApplied {
                session,
                op: coordination::ids::OpId(op as u32),
                request,
                result: applied.result,
                zxid: applied.zxid,
                read_from: None,
            });
        }
        // The run ends here: its trace ends with the tree, as a quiescent path's does.
        record(EventKind::tree_snapshot(&state.server.tree));
        assert!(model::predicates::quiescent(&model, &state));
        let holds = Checked::Shared(no_orphans).holds_in(&model, &state);
        let passes = properties::check::check(&judged, no_orphans, &cx).is_empty();
        assert_eq!(holds, passes, "{creates:?}");
        verdicts.push(holds);
    }
    assert_eq!(verdicts, [true, true, true, false, false, false]);
}

/// `check --json` prints exactly the documented shape.
#[test]
fn the_json_summary_has_the_agreed_shape() {
    let outcome = check(&NAIVE_HERD_MUTEX, ModelSpec::new(2), Options::default());
    let json = serde_json::to_value(outcome.summary(|p| Some(format!("{p}.report.html")))).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = vec![
        "recipe",
        "clients",
        "budgets",
        "states",
        "unique_states",
        "max_depth",
        "seconds",
        "states_per_second",
        "complete",
        "properties",
        "all_met",
    ];
    expected.sort_unstable();
    let mut keys = keys;
    keys.sort_unstable();
    assert_eq!(keys, expected);
    assert_eq!(json["recipe"], "naive-herd-mutex");
    assert_eq!(json["budgets"]["connection_losses"], 0);
    let belief = &json["properties"][0];
    assert_eq!(belief["name"], "mutual_exclusion_belief");
    assert_eq!(belief["kind"], "always");
    assert_eq!(belief["expectation"], "violated");
    assert_eq!(belief["verdict"], "violated");
    assert_eq!(belief["met"], true);
    assert_eq!(belief["counterexample_steps"], 7);
    assert_eq!(belief["report"], "mutual_exclusion_belief.report.html");
    assert_eq!(json["properties"][5]["name"], "progress");
    assert_eq!(json["properties"][6]["name"], "answered");
    assert_eq!(json["properties"][7]["name"], "answered_by_deadline");
    assert_eq!(json["properties"][8]["name"], "revocation_answered");
    assert_eq!(json["properties"][9]["kind"], "sometimes");
    assert_eq!(json["all_met"], true);
}

/// Without a workload nothing is acquired, and nothing overlaps: every expectation says so.
#[test]
fn without_cycles_nobody_acquires() {
    let config = ModelSpec {
        budgets: model::Budgets {
            cycles: 0,
            ..model::Budgets::default()
        },
        ..ModelSpec::new(2)
    };
    let outcome = check(&MUTEX, config, Options::default());
    assert!(outcome.all_met(), "{:?}", outcome.verdicts);
    assert!(!outcome.verdict(Checked::SomeoneAcquires).holds);
}

/// With the default budgets a selector is its internal mutex (start and relinquish are the
/// mutex's acquire and release, and no connection drops to cancel a leadership), except at
/// LOST: a mutex holder keeps its hold and node until released (Curator's `InterProcessMutex`),
/// a leader is cancelled and gives its node up at once (Curator's `LeaderSelector`), so the
/// selector has 4321 states to the mutex's 4231 (2458 and 2368 before the retry policy's
/// sleeps; they were equal, 1848, while both gave up at LOST).
#[test]
fn leader_selector_with_two_clients_is_its_mutex() {
    let outcome = pinned(
        &LEADER_SELECTOR,
        2,
        Pinned {
            symmetric: 1_671,
            plain: 3_336,
        },
    );
    assert!(!outcome.verdict(Property::LeaderUniqueBelief).holds);
    assert!(outcome.verdict(Property::LeaderUniqueFenced).holds);
}

/// One connection loss, waiters giving up at LOST (`on_lost = release`): a leader cut off is
/// cancelled at Suspended (NotLeader; its node goes once reconnected, where a mutex holder
/// would hold on), a few thousand states more than the mutex's 97,073; still one leader by
/// fencing, no herd, no orphan.
#[test]
fn leader_selector_with_two_clients_and_a_connection_loss() {
    let mut config = ModelSpec::new(2);
    config.budgets.connection_losses = 1;
    config.framework.on_lost = coordination::framework::OnLost::Release;
    let outcome = pinned_in(
        &LEADER_SELECTOR,
        config,
        // 97_300 / 192_028 before the belief monitor: it keeps each client's current session
        // (its last delivered `Connected`) and whether the server still holds it, which the
        // old rule read off the handle; with a connection loss those tell more states apart.
        // 121,912 / 240,925 before the `progress` monitor remembered a participant that gave
        // up at LOST (and a leader stepped down into a new wait).
        Pinned {
            symmetric: 96_304,
            plain: 192_739,
        },
    );
    assert!(!outcome.verdict(Property::LeaderUniqueBelief).holds);
    assert!(outcome.verdict(Property::LeaderUniqueFenced).holds);
    assert!(outcome.verdict(Property::HerdFree).holds);
    assert!(outcome.verdict(Property::NoOrphans).holds);
}

/// The same under Curator's lock loop (the default): the participant whose connection drops
/// after its node was created gives up that session at LOST, lists again on its new session,
/// finds its old node first and leads through it; the server then expires the old session and
/// the other participant leads too, both sessions alive: `live_session_exclusion` is violated
/// (15 steps), the fence still holds.
#[test]
fn curator_s_lock_loop_leads_through_a_node_of_the_session_it_gave_up() {
    let mut config = ModelSpec::new(2);
    config.budgets.connection_losses = 1;
    let outcome = run(&LEADER_SELECTOR, config, true);
    // 157_298 before the belief monitor, which tells apart the clients' current sessions and
    // whether the server still holds them (as under `on_lost = release` above); 209_952
    // before op and timer ids were renumbered, and 209,952 -> 778,651 with Curator's retry
    // policy, whose sleeps are timers the model fires at any point; 198_525 before the
    // partial-order reduction.
    assert_eq!(outcome.unique_states, 131_900);
    let live = outcome.verdict(Property::LiveSessionExclusion);
    assert!(!live.holds);
    assert_eq!(live.path.as_ref().map(Vec::len), Some(15));
    assert!(outcome.verdict(Property::LeaderUniqueFenced).holds);
    // The recipe table expects it (`curator_lock_loop`): every verdict is as expected.
    assert!(outcome.all_met(), "{:?}", outcome.verdicts);
}

/// CURATOR-604 in the mutex itself, with no expiry in the budget: a waiter cut off after its
/// create declares LOST by its own timer, lists again on its new session with its old node,
/// holds through it, and once the server expires the old session the other client holds too,
/// both clients' current sessions alive. The fence holds; nobody is left waiting.
#[test]
fn mutex_holds_through_a_node_of_the_session_it_gave_up() {
    let outcome = pinned_in(
        &MUTEX,
        one_connection_loss(2),
        Pinned {
            symmetric: 4_394,
            plain: 8_788,
        },
    );
    assert!(!outcome.verdict(Property::LiveSessionExclusion).holds);
    assert!(!outcome.verdict(Property::MutualExclusionBelief).holds);
    assert!(outcome.verdict(Property::MutualExclusionFenced).holds);
    assert!(outcome.verdict(Property::Progress).holds);
}

/// One client cut off past its LOST timer, no expiry: the budget of CURATOR-604's stale-node
/// grant and of the herd behind a kept node.
fn one_connection_loss(clients: u16) -> ModelSpec {
    let mut config = ModelSpec::new(clients);
    config.budgets.expiries = 0;
    config.budgets.connection_losses = 1;
    config
}

/// Checks `def` under `config`: complete, `unique` states, every verdict as the recipe table
/// expects, `herd_free` violated (no counterexample paths: the verdicts are what is checked).
fn herds_behind_a_kept_node<R: Testable>(
    def: &'static RecipeDef<R>,
    config: ModelSpec,
    unique: usize,
) -> Outcome {
    let outcome = check(def, config, verdicts_only());
    assert!(
        outcome.complete && outcome.all_met(),
        "{:?}",
        outcome.verdicts
    );
    assert_eq!(outcome.unique_states, unique);
    assert!(!outcome.verdict(Property::HerdFree).holds);
    outcome
}

/// The same lock loop wakes two waiters with one deletion (found by a random-faults hunt of
/// the simulator first, `mutex-lock-loop-herd`): with three clients a waiter that kept its
/// old session's node watches its predecessor on its new session; the server expires the old
/// session, the waiter behind the vanished node lists again and watches the same predecessor,
/// and its deletion wakes both. Two clients cannot show it (one holds, two wait).
#[test]
fn mutex_lock_loop_herds_behind_a_node_of_a_session_given_up() {
    let outcome = herds_behind_a_kept_node(&MUTEX, one_connection_loss(3), 55_472);
    assert!(outcome.verdict(Property::Progress).holds);
    let two = check(&MUTEX, one_connection_loss(2), Options::default());
    assert!(two.verdict(Property::HerdFree).holds);
}

/// LeaderLatch keeps its node across LOST whatever `on_lost` says, so it herds the same way
/// (found by a random-faults hunt of the simulator, 1 seed in 20,000, before the model was
/// asked): a participant that kept its old session's node and the one behind that node end up
/// watching one predecessor.
#[test]
fn leader_latch_herds_behind_a_node_it_kept_across_lost() {
    let outcome = herds_behind_a_kept_node(&LEADER_LATCH, one_connection_loss(3), 96_656);
    assert!(outcome.verdict(Property::LeaderUniqueBelief).holds);
}

/// The read-write lock runs the same lock loop, and herds the same way once a *writer* keeps
/// its node (found by a random-faults hunt of the simulator, 13 seeds in 20,000, first 2417):
/// woken with the waiter behind its vanished node, it must queue again behind that waiter. A
/// reader that kept its node starts over and reads at once, so one writer cannot show it.
#[test]
fn read_write_lock_herds_behind_a_writers_kept_node() {
    let writers = |writers| ModelSpec {
        settings: recipe_table::family::RecipeSettings {
            writers,
            ..Default::default()
        },
        ..one_connection_loss(3)
    };
    herds_behind_a_kept_node(&READ_WRITE_LOCK, writers(2), 163_749);
    let one = check(&READ_WRITE_LOCK, writers(1), verdicts_only());
    assert!(one.all_met() && one.verdict(Property::HerdFree).holds);
}

/// The search for the shortest counterexample gives up past its budget, and `check` then
/// keeps the path its DFS found, minimized: still a counterexample, never longer than that.
/// The search finds the same path on one thread and on several.
#[test]
fn a_shortest_path_search_past_its_budget_gives_up_for_the_dfs_path() {
    let model = LockModel::new(&MUTEX, ModelSpec::new(2));
    let belief = Checked::Shared(Property::MutualExclusionBelief);
    let search = |budget, threads| model::check::shortest(&model, &[belief], budget, threads);
    assert_eq!(search(5, 1), vec![None]);
    assert_eq!(search(5, 3), vec![None]);
    let [shortest] = <[_; 1]>::try_from(search(model::check::SHORTEST_BUDGET, 1)).unwrap();
    let shortest = shortest.expect("a counterexample within the budget");
    assert_eq!(
        search(model::check::SHORTEST_BUDGET, 3),
        vec![Some(shortest.clone())]
    );
    let outcome = check(&MUTEX, ModelSpec::new(2), Options::default());
    assert_eq!(outcome.verdict(belief).path.as_ref(), Some(&shortest));
    let visited = states(&model, &shortest).unwrap();
    assert!(!belief.holds_in(&model, visited.last().unwrap()));
}

/// A retry policy that runs out fails the acquire, as Curator's `acquire()` throws: with one
/// retry, the expiry that fails a request in flight and then its retry at LOST leaves the
/// waiter unserved (`progress`, as the recipe table expects), but answered (`answered`: it
/// gave up, it does not hang); retrying forever serves it.
#[test]
fn mutex_acquire_fails_when_the_retry_policy_runs_out() {
    let mut config = ModelSpec::new(2);
    config.framework.retry = coordination::retry::RetryPolicy::NTimes {
        n: 1,
        sleep_ms: 100,
    };
    let bounded = check(&MUTEX, config, Options::default());
    assert!(bounded.all_met(), "{:?}", bounded.verdicts);
    assert!(!bounded.verdict(Property::Progress).holds);
    assert!(bounded.verdict(Property::Answered).holds);
    config.framework.retry = coordination::retry::RetryPolicy::Forever { sleep_ms: 100 };
    let forever = check(&MUTEX, config, Options::default());
    assert!(forever.all_met(), "{:?}", forever.verdicts);
    assert!(forever.verdict(Property::Progress).holds);
}

/// One writer and one reader are not interchangeable: symmetry merges no permutation, only
/// states that differ in op and timer ids (4371 before the ids were renumbered).
#[test]
fn read_write_lock_with_two_clients() {
    let outcome = pinned(
        &READ_WRITE_LOCK,
        2,
        Pinned {
            symmetric: 2_429,
            plain: 2_429,
        },
    );
    assert!(!outcome.verdict(Property::RwExclusion).holds);
    assert!(outcome.verdict(Property::MutualExclusionFenced).holds);
    assert!(outcome.verdict(Property::HerdFree).holds);
    assert!(outcome.verdict(Property::NoOrphans).holds);
}

/// One writer, two readers: symmetry swaps only the readers (about half the states); a
/// deletion of the writer's node wakes both readers, who then both read: no herd.
#[test]
fn read_write_lock_with_three_clients_merges_only_the_readers() {
    let outcome = pinned(
        &READ_WRITE_LOCK,
        3,
        Pinned {
            symmetric: 50_405,
            plain: 100_667,
        },
    );
    assert!(outcome.verdict(Property::HerdFree).holds);
    assert!(outcome.verdict(Property::MutualExclusionFenced).holds);
}

/// Checks a row of the recipe table under a config (symmetry, no paths).
struct CheckRow(ModelSpec);

impl recipe_table::recipes::Visitor for CheckRow {
    type Output = Outcome;

    fn visit<R: Testable>(self, def: &'static RecipeDef<R>) -> Outcome {
        check(def, self.0, verdicts_only())
    }
}

#[test]
fn every_row_of_the_recipe_table_checks_with_every_expectation_met() {
    for kind in recipe_table::recipes::RecipeKind::ALL {
        let outcome = kind.visit(CheckRow(ModelSpec::new(2)));
        assert_eq!(outcome.recipe, kind.name());
        assert!(outcome.complete && outcome.all_met(), "{kind}: {outcome:?}");
    }
}

/// With one sweep of the empty containers every row still gets the verdicts the recipe table
/// expects, and the sweep reaches states the check without it does not: every row's lock
/// directory is a container. The one verdict it changes is the semaphores' `progress` (see
/// `a_semaphore_acquire_fails_when_its_lease_directory_was_reaped`).
#[test]
fn every_row_checks_with_every_expectation_met_under_one_sweep() {
    let mut swept = ModelSpec::new(2);
    swept.budgets.reaps = 1;
    for kind in recipe_table::recipes::RecipeKind::ALL {
        let outcome = kind.visit(CheckRow(swept));
        let before = kind.visit(CheckRow(ModelSpec::new(2)));
        assert!(outcome.complete && outcome.all_met(), "{kind}: {outcome:?}");
        assert!(
            outcome.unique_states > before.unique_states,
            "{kind}: {} states",
            outcome.unique_states
        );
    }
}

/// The lengths of the shortest paths to every property's discovery, searched over the
/// reduced space (as `check` does) and over every interleaving, for a row of the recipe table
/// under `config`.
struct PathLengths(ModelSpec);

impl recipe_table::recipes::Visitor for PathLengths {
    type Output = [Vec<Option<usize>>; 2];

    fn visit<R: Testable>(self, def: &'static RecipeDef<R>) -> Self::Output {
        let properties = Checked::of(def.family);
        [true, false].map(|reduction| {
            let model = LockModel::new(def, self.0).with_reduction(reduction);
            model::check::shortest(&model, &properties, model::check::SHORTEST_BUDGET, 2)
                .iter()
                .map(|path| path.as_ref().map(Vec::len))
                .collect()
        })
    }
}

/// `check` searches its counterexamples over the reduced space, where a client's local,
/// invisible delivery is taken alone; minimized, they are as short as the search over every
/// interleaving finds: every row of the recipe table with 2 clients, and the lock loop's and
/// the latch's connection loss.
#[test]
fn the_counterexample_paths_are_as_short_as_the_full_searchs() {
    use recipe_table::recipes::RecipeKind;
    let rows = RecipeKind::ALL
        .iter()
        .map(|&kind| (kind, ModelSpec::new(2)));
    let lost =
        [RecipeKind::Mutex, RecipeKind::LeaderLatch].map(|kind| (kind, one_connection_loss(2)));
    for (kind, config) in rows.chain(lost) {
        let [reduced, full] = kind.visit(PathLengths(config));
        assert_eq!(reduced, full, "{kind} {:?}", config.budgets);
        assert!(
            reduced.iter().any(Option::is_some),
            "{kind}: some discovery"
        );
    }
}

#[test]
fn the_first_writer_watch_herds_behind_two_writers_and_only_there() {
    let settings = recipe_table::family::RecipeSettings {
        writers: 2,
        ..Default::default()
    };
    let config = ModelSpec {
        settings,
        ..ModelSpec::new(3)
    };
    let def = &recipe_table::recipes::READ_WRITE_LOCK_FIRST_WRITER_WATCH;
    let options = verdicts_only();
    let curator = check(def, config, options);
    assert!(!curator.verdict(Property::HerdFree).holds, "the herd");
    assert!(curator.all_met());
    let nearest = check(&READ_WRITE_LOCK, config, options);
    assert!(nearest.verdict(Property::HerdFree).holds, "no herd");
}

/// Whether some step of the model, from a state it reaches, records events that `wanted`
/// accepts (a breadth-first search over all states, without symmetry).
fn reaches<R: Testable>(
    def: &'static RecipeDef<R>,
    config: ModelSpec,
    wanted: fn(&[EventKind]) -> bool,
) -> bool {
    struct Look(Vec<EventKind>);
    impl model::model::Recorder for Look {
        fn record(&mut self, _: Option<ClientSlot>, kind: impl FnOnce() -> EventKind) {
            self.0.push(kind());
        }
    }
    let model = LockModel::new(def, config);
    let first = model.initial(&mut model::model::Silent);
    let mut seen = std::collections::BTreeSet::from([first.clone()]);
    let mut queue = std::collections::VecDeque::from([first]);
    while let Some(state) = queue.pop_front() {
        let mut actions = Vec::new();
        model.enabled(&state, &mut actions);
        for action in actions {
            let mut look = Look(Vec::new());
            let Some(next) = model.step(&state, action, &mut look) else {
                continue;
            };
            if wanted(&look.0) {
                return true;
            }
            if seen.insert(next.clone()) {
                queue.push_back(next);
            }
        }
    }
    false
}

/// Whether `events` has a notice that `notice` accepts followed by a call that `call`
/// accepts.
fn notice_then_call(
    events: &[EventKind],
    notice: fn(&Notice) -> bool,
    call: fn(&coordination::recipes::Call) -> bool,
) -> bool {
    let heard = events
        .iter()
        .position(|e| matches!(e, EventKind::Notice { notice: n } if notice(n)));
    heard.is_some_and(|at| {
        events[at..]
            .iter()
            .any(|e| matches!(e, EventKind::Call { call: c } if call(c)))
    })
}

fn times_out(events: &[EventKind]) -> bool {
    events.iter().any(|e| {
        matches!(
            e,
            EventKind::Notice {
                notice: Notice::TimedOut { .. }
            }
        )
    })
}

fn is_release(call: &coordination::recipes::Call) -> bool {
    matches!(call, coordination::recipes::Call::Release { .. })
}

/// Acquires with a timeout: a waiter may give up at any point (the recipe's timer fires), so
/// some path has a `TimedOut`; every verdict stays as without timeouts.
#[test]
fn mutex_with_two_clients_and_timeouts_times_out() {
    let config = ModelSpec {
        timeouts: true,
        ..ModelSpec::new(2)
    };
    let outcome = pinned_in(
        &MUTEX,
        config,
        Pinned {
            symmetric: 6_635,
            plain: 13_264,
        },
    );
    assert!(!outcome.verdict(Property::MutualExclusionBelief).holds);
    assert!(outcome.verdict(Property::MutualExclusionFenced).holds);
    assert!(outcome.verdict(Property::HerdFree).holds);
    assert!(outcome.verdict(Property::NoOrphans).holds);
    assert!(reaches(&MUTEX, config, times_out), "a waiter times out");
    assert!(
        !reaches(&MUTEX, ModelSpec::new(2), times_out),
        "only with timeouts"
    );
}

/// Revocation as the simulator runs it: each cycle makes the lock revocable and asks the
/// holder to give way. A holder asked during its hold releases at once; one asked before its
/// grant releases as soon as it has read. Every verdict stays as without revocation.
#[test]
fn revocable_mutex_with_two_clients_cuts_holds_short() {
    let mut config = ModelSpec::new(2);
    config.settings.revocable = true;
    let outcome = pinned_in(
        &MUTEX,
        config,
        Pinned {
            symmetric: 13_502,
            plain: 27_016,
        },
    );
    assert!(!outcome.verdict(Property::MutualExclusionBelief).holds);
    assert!(outcome.verdict(Property::MutualExclusionFenced).holds);
    assert!(outcome.verdict(Property::HerdFree).holds);
    assert!(outcome.verdict(Property::NoOrphans).holds);
    assert!(outcome.verdict(Property::RevocationAnswered).holds);
    assert!(
        reaches(&MUTEX, config, |events| notice_then_call(
            events,
            |n| matches!(n, Notice::RevocationRequested { .. }),
            is_release
        )),
        "a holder asked during its hold releases"
    );
    assert!(
        reaches(&MUTEX, config, |events| notice_then_call(
            events,
            |n| n.granted().is_some(),
            is_release
        )),
        "a waiter asked before its grant releases once granted"
    );
}

/// The mutex with `other_call` emptied (mutant 18 of `scripts/mutants`): `MakeRevocable` and
/// `AttemptRevoke` do nothing, so no attempt is answered and nobody is asked to release.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, coordination::relabel::Relabel)]
struct DroppedRevocationMutex(coordination::recipes::Mutex);

impl coordination::recipe::Recipe for DroppedRevocationMutex {
    type Call = coordination::recipes::Call;
    type Notice = Notice;

    fn handle(
        &mut self,
        input: coordination::recipe::Input<Self::Call>,
        cx: &mut coordination::recipe::Ctx<'_, Notice>,
    ) {
        use coordination::recipes::Call;
        if let coordination::recipe::Input::Call(
            Call::MakeRevocable { .. } | Call::AttemptRevoke { .. },
        ) = input
        {
            return;
        }
        for notice in cx.run_inner(&mut self.0, input) {
            cx.notify(notice);
        }
    }
}

static DROPPED_REVOCATION_MUTEX: RecipeDef<DroppedRevocationMutex> = RecipeDef {
    name: "dropped-revocation-mutex",
    about: "the mutex with its revocation calls dropped (other_call emptied)",
    family: recipe_table::family::Family::Lock,
    revocable: true,
    build: |path, _| DroppedRevocationMutex(coordination::recipes::Mutex::new(path)),
    directories: |_| Vec::new(),
    expectation: recipe_table::recipes::curator_lock_loop,
};

/// `revocation_answered` kills the mutant no other property sees (`progress` holds: a FIFO
/// lock serves every waiter, revoked or not): the revocable check finds an attempt left
/// unanswered at the end of a path, and the trace checker finds it in that path's trace. The
/// mutex itself holds it (`revocable_mutex_with_two_clients_cuts_holds_short`).
#[test]
fn a_mutex_that_drops_revocation_calls_leaves_an_attempt_unanswered() {
    let mut config = ModelSpec::new(2);
    config.settings.revocable = true;
    let outcome = check(&DROPPED_REVOCATION_MUTEX, config, Options::default());
    assert!(outcome.complete);
    let verdict = outcome.verdict(Property::RevocationAnswered);
    assert!(!verdict.holds);
    let path = verdict.path.clone().expect("a counterexample");
    assert_eq!(path.len(), 14);
    for verdict in &outcome.verdicts {
        let caught = verdict.property == Checked::Shared(Property::RevocationAnswered);
        assert!(verdict.met() || caught, "{}: {verdict:?}", verdict.property);
    }
    let model = LockModel::new(&DROPPED_REVOCATION_MUTEX, config);
    let trace = trace(&model, &path, "revocation_answered").unwrap();
    let cx = checker_context(&model, 1);
    let found = properties::check::check(&trace, Property::RevocationAnswered, &cx);
    let clients: Vec<_> = found.iter().map(|v| v.clients.clone()).collect();
    assert_eq!(clients, [[ClientSlot(0)], [ClientSlot(1)]], "{found:?}");
    assert!(
        found[0]
            .message
            .ends_with("when nothing but a fault could happen any more"),
        "{}",
        found[0].message
    );
    // Without revocation the mutant is the mutex.
    let plain = check(
        &DROPPED_REVOCATION_MUTEX,
        ModelSpec::new(2),
        verdicts_only(),
    );
    assert!(plain.all_met() && plain.verdict(Property::RevocationAnswered).holds);
}

#[test]
fn a_timeout_cuts_a_one_thread_search_short_and_a_finished_search_is_complete() {
    let within = |seconds| Options {
        timeout: Some(std::time::Duration::from_secs(seconds)),
        ..verdicts_only()
    };
    // Out of time at once: one thread stops too (stateright's own timeout never fired there).
    let cut = check(&MUTEX, ModelSpec::new(4), within(0));
    assert!(!cut.complete, "{cut:?}");
    assert!(cut.unique_states < 10, "{}", cut.unique_states);
    // A search that ends in time is complete, however long it took.
    let full = check(&MUTEX, ModelSpec::new(2), within(3600));
    assert!(full.complete && full.all_met());
}

/// Curator's semaphore fails an acquire whose leases directory the server reaped: the taker's
/// session ends after it created its lease node (an expiry, or LOST and the server's expiry of
/// the orphaned session after a connection loss), the server deletes its internal-lock and
/// lease nodes, its sweep deletes the two directories they leave empty, and the taker's
/// listing of the leases on its new session fails with `NoNode`, which Curator's
/// `internalAcquire1Lease` rethrows: the waiter is never served (`progress`), though it is
/// answered. Without the sweep the lease loop starts over and the semaphore makes progress.
/// `check semaphore --clients 1 --reaps 1`: 16 steps, the sweep among them.
#[test]
fn a_semaphore_acquire_fails_when_its_lease_directory_was_reaped() {
    let mut swept = ModelSpec::new(1);
    swept.budgets.reaps = 1;
    let outcome = run(&SEMAPHORE, swept, true);
    assert!(outcome.all_met());
    let progress = outcome.verdict(Property::Progress);
    assert!(!progress.holds && outcome.verdict(Property::Answered).holds);
    let path = progress.path.clone().expect("a counterexample");
    assert_eq!(path.len(), 16);
    let expiry = path.iter().position(|a| matches!(a, Action::Expire(_)));
    let sweep = path.iter().position(|a| *a == Action::ReapContainers);
    assert!(expiry.unwrap() < sweep.unwrap(), "{path:?}");
    let model = LockModel::new(&SEMAPHORE, swept);
    let replayed = trace(&model, &path, "reaped-leases").unwrap();
    let failed = (replayed.events.iter()).any(|event| {
        matches!(
            event.kind,
            EventKind::Notice {
                notice: Notice::Failed {
                    reason: coordination::recipes::FailReason::Zk(
                        coordination::zk::ZkError::NoNode
                    ),
                    ..
                }
            }
        )
    });
    assert!(failed, "the acquire fails with NoNode");
    let mut lost = one_connection_loss(1);
    lost.budgets.reaps = 1;
    let outcome = run(&SEMAPHORE, lost, true);
    assert!(outcome.all_met() && !outcome.verdict(Property::Progress).holds);
    for unswept in [ModelSpec::new(1), one_connection_loss(1)] {
        let outcome = run(&SEMAPHORE, unswept, true);
        assert!(outcome.all_met() && outcome.verdict(Property::Progress).holds);
    }
}
