//! The recipe table: every recipe splitbrain ships, the known-bad ones included, as one row
//! each. A row is a [`RecipeDef`] — name, family, constructor, what the model needs and the
//! verdicts the model is expected to give — and the table makes [`RecipeKind`], the name a
//! scenario file, a trace and the command line use. The CLI's recipe lists, `check`, the
//! simulator and the model all read it, so a new built-in recipe costs its module in `coordination`
//! and one row here.
//!
//! Executors are generic over the recipe type: a [`Visitor`] is handed the row's
//! [`RecipeDef`] with its type (`RecipeKind::visit`), and a user's crate hands its own
//! `RecipeDef` to the same generic entry points.

use std::fmt;
use std::str::FromStr;

use coordination::framework::OnLost;
use coordination::recipe::Recipe;
use coordination::recipes::{
    Call, LeaderLatch, LeaderSelector, MultiLock, Mutex, NaiveHerdMutex, Notice, ReadWriteLock,
    Semaphore, SemaphoreMutex,
};
use coordination::relabel::Relabel;
use coordination::zk::Path;
use serde::{Deserialize, Serialize};

use crate::family::{Family, RecipeSettings};
use crate::model_spec::ModelSpec;
use crate::property::{Expectation, Property};

/// What every executor can run: a recipe speaking the shared vocabulary, whose client
/// identities the model's symmetry reduction can rewrite.
pub trait Testable: Recipe<Call = Call, Notice = Notice> + Relabel + 'static {}

impl<R: Recipe<Call = Call, Notice = Notice> + Relabel + 'static> Testable for R {}

/// One row of the recipe table: everything the executors need to know about a recipe.
pub struct RecipeDef<R> {
    /// The kebab-case name, as in scenario files, traces and on the command line.
    pub name: &'static str,
    /// One line: what it is (Curator's name for it, or what is wrong with it).
    pub about: &'static str,
    /// How workloads use it, which also says which properties are checked.
    pub family: Family,
    /// Whether it serves `MakeRevocable` / `AttemptRevoke` (`recipe_settings.revocable`).
    pub revocable: bool,
    /// The instance every client runs on a lock path, with the scenario's settings.
    pub build: fn(Path, &RecipeSettings) -> R,
    /// The directories below the lock path the recipe keeps its nodes in. The model's
    /// initial tree has them (as containers), as it has the lock path: creating them is the
    /// same for every recipe, and letting each client find them missing multiplies the states
    /// (16 times for `semaphore-mutex` with 3 clients). The simulator starts without them.
    pub directories: fn(&Path) -> Vec<Path>,
    /// The verdict the model is expected to give on `property` under a configuration.
    pub expectation: fn(Property, &ModelSpec) -> Expectation,
}

impl<R> RecipeDef<R> {
    /// The row of an exclusive lock named `name` whose clients `build` makes, with the
    /// defaults such a lock needs nothing else for: family [`Family::Lock`], not revocable, no
    /// directories below the lock path, and the verdicts every exclusive lock promises
    /// ([`exclusive_lock`]). Change any of them with struct update syntax:
    /// `RecipeDef { about: "…", ..RecipeDef::lock("my-lock", |path, _| MyLock::new(path)) }`.
    pub const fn lock(name: &'static str, build: fn(Path, &RecipeSettings) -> R) -> RecipeDef<R> {
        RecipeDef {
            name,
            about: "a lock of your own",
            family: Family::Lock,
            revocable: false,
            build,
            directories: none,
            expectation: exclusive_lock,
        }
    }
}

impl<R> fmt::Debug for RecipeDef<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecipeDef")
            .field("name", &self.name)
            .field("family", &self.family)
            .finish_non_exhaustive()
    }
}

/// Code that runs any recipe: handed a row's definition together with its type.
pub trait Visitor {
    /// What the visit returns.
    type Output;

    /// Runs with recipe `R` as `def` defines it.
    fn visit<R: Testable>(self, def: &'static RecipeDef<R>) -> Self::Output;
}

/// No directories below the lock path.
fn none(_: &Path) -> Vec<Path> {
    Vec::new()
}

/// `Violated` when `violated`, else `Holds`.
pub fn violated_if(violated: bool) -> Expectation {
    if violated {
        Expectation::Violated
    } else {
        Expectation::Holds
    }
}

/// What every exclusive lock (and election) shares: beliefs overlap (and an unfenced resource
/// loses an update) once a paused holder's session can expire, or the leader expire it while
/// the holder's cut-off follower still serves it (every expectation counts expiries and
/// follower cuts alike: [`Budgets::session_expiries`](crate::model_spec::Budgets::session_expiries)); a lock loop that gives its
/// waiter up at LOST (`on_lost = release`) leaves it unserved (see `waiter_gives_up`), and
/// so does a retry policy that runs out (`retries_run_out`), but every ask is answered;
/// everything else holds.
pub fn exclusive_lock(property: Property, spec: &ModelSpec) -> Expectation {
    let budgets = &spec.budgets;
    let overlap = spec.clients >= 2 && budgets.session_expiries() >= 1 && budgets.cycles >= 1;
    match property {
        Property::MutualExclusionBelief | Property::LeaderUniqueBelief => violated_if(overlap),
        Property::MutualExclusionFenced | Property::LeaderUniqueFenced => {
            violated_if(overlap && !spec.fenced)
        }
        Property::Progress => violated_if(released_at_lost(spec) || retries_run_out(spec)),
        _ => Expectation::Holds,
    }
}

/// Whether one request can fail more often than the retry policy retries it, so that the
/// acquire waiting for it fails (Curator's rethrows): each expiry and each connection loss
/// can fail a request twice, once in flight (`ConnectionLoss`) and once more at LOST
/// (`SessionExpired` for the retry sent before the client saw the connection go), and a
/// protected create counts every step against one budget (`check mutex --expiries 1
/// --connection-losses 1`, 21 steps, under `ExponentialBackoffRetry(1000, 3)`).
fn retries_run_out(spec: &ModelSpec) -> bool {
    let budgets = &spec.budgets;
    let failures = 2 * budgets.session_breaks();
    spec.clients >= 1
        && budgets.cycles >= 1
        && failures >= 1
        && !spec.framework.retry.allows(failures - 1)
}

/// As any exclusive lock, but a participant keeps its place in the election across LOST
/// whatever `on_lost` says (LeaderLatch at LOST only drops leadership): `progress` holds. For
/// the same reason it herds behind a node it kept ([`herd_behind_a_kept_node`]) whatever
/// `on_lost` says (`check leader-latch --clients 3 --connection-losses 1 --expiries 0`, 39
/// steps; 1 seed in 20,000 of random faults in the simulator).
fn latch(property: Property, spec: &ModelSpec) -> Expectation {
    match property {
        Property::Progress => Expectation::Holds,
        Property::HerdFree => violated_if(herd_behind_a_kept_node(spec)),
        _ => exclusive_lock(property, spec),
    }
}

/// Whether a waiter can be left unserved by a recipe whose waiters fail their ask when their
/// session is lost (`Failed { session_lost }`) instead of asking again on the new session as
/// Curator's lock loop does: once an expiry or a connection loss (and the LOST timer after
/// it) can reach a waiter, a client can end its last cycle unserved, and `progress` counts
/// that against the recipe.
fn waiter_gives_up(spec: &ModelSpec) -> bool {
    let budgets = &spec.budgets;
    let lost = budgets.session_breaks() >= 1;
    spec.clients >= 1 && budgets.cycles >= 1 && lost
}

/// Whether a lock loop that keeps its waiters across LOST gives them up there all the same,
/// under `on_lost = release` ([`waiter_gives_up`]).
fn released_at_lost(spec: &ModelSpec) -> bool {
    spec.framework.on_lost == OnLost::Release && waiter_gives_up(spec)
}

/// Whether Curator's lease loop can deadlock with `max_leases` leases: a client past the
/// internal lock whose session expires (or is orphaned and then expired) re-creates its lease
/// node on its new session and waits on, while the server has deleted its internal-lock node
/// and let the next client in. Once `max_leases` such breaks have put more lease nodes than
/// leases in the directory, every one a waiter's, each waiter sees too many children and
/// waits for a change that nobody makes (`check semaphore --max-leases 1`: 25 steps). Curator's
/// `internalAcquire1Lease` does the same; an acquire timeout ends it.
fn lease_loop_deadlocks(spec: &ModelSpec, max_leases: u32) -> bool {
    let budgets = &spec.budgets;
    let breaks = budgets.session_breaks();
    spec.framework.on_lost == OnLost::Curator
        && max_leases >= 1
        && u32::from(spec.clients) > max_leases
        && breaks >= max_leases
        && budgets.cycles >= 1
}

/// Whether one lease change can wake two lease takers once a fault ends a taker's session (an
/// expiry, or LOST declared while the server still holds the session) and Curator's lease
/// loop carries on (`on_lost = curator`), with a holder and two takers (three clients):
/// either the taker lists the leases on its new session with a watch, finds its lease node
/// gone, and starts over with that watch left behind (`semaphore-session-expiry`), or it
/// re-creates its lease node while the internal lock, its old node deleted, lets the next
/// taker in, and both then watch the lease directory (the way into the deadlock of
/// [`lease_loop_deadlocks`]). The next change wakes both (`check semaphore --clients 3`, also
/// with `--max-leases 3`; `check semaphore-mutex --clients 3`). Curator's
/// `internalAcquire1Lease` does the same; under `on_lost = release` the taker gives up its
/// nodes at LOST instead.
fn lease_loop_herd(spec: &ModelSpec) -> bool {
    let budgets = &spec.budgets;
    spec.framework.on_lost == OnLost::Curator
        && spec.clients >= 3
        && budgets.session_breaks() >= 1
        && budgets.cycles >= 1
}

/// `progress` of a semaphore of `max_leases` leases: a waiter gives up at LOST under
/// `on_lost = release` ([`released_at_lost`]) or when the retry policy runs out
/// ([`retries_run_out`]), and its acquire fails when the server has reaped the leases
/// directory ([`lease_directory_reaped`]); Curator's lease loop can deadlock instead
/// ([`lease_loop_deadlocks`]), the one way a semaphore leaves an ask unanswered (`answered`).
fn lease_progress(spec: &ModelSpec, max_leases: u32) -> Expectation {
    violated_if(
        released_at_lost(spec)
            || retries_run_out(spec)
            || lease_directory_reaped(spec)
            || lease_loop_deadlocks(spec, max_leases),
    )
}

/// Whether a lease taker can find the leases directory gone: a fault ends its session after
/// it created its lease node (an expiry, or LOST and then the server's expiry of the orphaned
/// session), the server deletes its lease and internal-lock nodes with the session, and its
/// sweep deletes the directories they leave empty before the taker lists the leases again on
/// its new session. That listing fails with `NoNode`, and so does the acquire, as Curator's
/// `internalAcquire1Lease` rethrows it (the lock loop's `attemptLock` would start over):
/// `check semaphore --clients 1 --reaps 1`, 16 steps.
fn lease_directory_reaped(spec: &ModelSpec) -> bool {
    let budgets = &spec.budgets;
    spec.clients >= 1 && budgets.cycles >= 1 && budgets.reaps >= 1 && budgets.session_breaks() >= 1
}

/// As any exclusive lock, with the progress of a semaphore of one lease
/// ([`lease_progress`]): `semaphore-mutex`.
fn one_lease_lock(property: Property, spec: &ModelSpec) -> Expectation {
    match property {
        Property::Progress => lease_progress(spec, 1),
        Property::Answered => violated_if(lease_loop_deadlocks(spec, 1)),
        Property::HerdFree => violated_if(lease_loop_herd(spec)),
        _ => curator_lock_loop(property, spec),
    }
}

/// As any exclusive lock, but a release wakes every waiter: a herd from 3 clients on (one
/// holds, two wait). And its one node has a fixed name: a holder that gives up at LOST
/// deletes `<path>/lock` by name on its new session, and when the server has expired the old
/// session first, the node it deletes is the next holder's. A third contender (or the same
/// client's next cycle) then takes the lock beside that holder, both sessions alive
/// (`live_session_exclusion`, 14 steps with 3 clients and an expiry). A LOST reached through
/// a connection loss can do the same once the server expires the orphaned old session. Its
/// waiters give up at LOST ([`waiter_gives_up`]).
fn naive_herd(property: Property, spec: &ModelSpec) -> Expectation {
    let budgets = &spec.budgets;
    let third = spec.clients >= 3 || (spec.clients >= 2 && budgets.cycles >= 2);
    let stale_delete = budgets.session_breaks() >= 1;
    match property {
        Property::HerdFree if spec.clients >= 3 && budgets.cycles >= 1 => Expectation::Violated,
        Property::Progress => violated_if(waiter_gives_up(spec)),
        _ => overlapping_live(property, spec, third && stale_delete && budgets.cycles >= 1),
    }
}

/// As any exclusive lock, plus a recipe bug that, when `bug`, lets two holders overlap while
/// both their sessions are alive: `live_session_exclusion` and the belief property are then
/// violated whatever the expiries, and an unfenced resource can lose an update.
fn overlapping_live(property: Property, spec: &ModelSpec, bug: bool) -> Expectation {
    match property {
        Property::LiveSessionExclusion => violated_if(bug),
        Property::MutualExclusionBelief | Property::LeaderUniqueBelief if bug => {
            Expectation::Violated
        }
        Property::MutualExclusionFenced | Property::LeaderUniqueFenced if bug && !spec.fenced => {
            Expectation::Violated
        }
        _ => exclusive_lock(property, spec),
    }
}

/// Whether Curator's lock loop can hold through a node of a session it has already given up
/// (CURATOR-604, open): a waiter whose client declares LOST by its own timer (a connection
/// loss, then the LOST timer before it reconnects) keeps its node and lists again on its new
/// session, `internalLockLoop` checking no owner; while the server still holds the old session
/// that node can come first, and the waiter holds through it until the server expires the old
/// session and the next waiter holds beside it, both clients' current sessions alive
/// (`check mutex --clients 2 --connection-losses 1 --expiries 0`). `on_lost = release` gives
/// the waiter up at LOST instead.
fn stale_node_grant(spec: &ModelSpec) -> bool {
    spec.framework.on_lost == OnLost::Curator
        && spec.clients >= 2
        && spec.budgets.cycles >= 1
        && spec.budgets.connection_losses >= 1
}

/// Whether one deletion can wake two waiters of a recipe whose waiters keep their node across
/// a LOST their client declared while the server still held the session (a connection loss):
/// the waiter watches its predecessor on its new session; when the server expires the old
/// session and deletes that node, the waiter behind it lists again and watches the same
/// predecessor (`LockInternals` watches only the predecessor, and a waiter learns that its own
/// node is gone only at its next listing), so the predecessor's deletion wakes both. It takes
/// three clients: a holder and two waiters (`check mutex --clients 3 --connection-losses 1
/// --expiries 0`, 39 steps; in the simulator `mutex-lock-loop-herd`).
fn herd_behind_a_kept_node(spec: &ModelSpec) -> bool {
    spec.clients >= 3 && spec.budgets.cycles >= 1 && spec.budgets.connection_losses >= 1
}

/// Every lock built on Curator's lock loop (`LockInternals`: the mutex and the locks over it):
/// an exclusive lock ([`exclusive_lock`]) that, under `on_lost = curator` with a connection
/// loss in the budget, holds through a node of a session it already gave up (CURATOR-604):
/// `live_session_exclusion` and the belief property are violated, and an unfenced resource
/// can lose an update; with three clients a deletion can wake two waiters (a waiter that kept
/// such a node, and the one behind it, watching one predecessor).
pub fn curator_lock_loop(property: Property, spec: &ModelSpec) -> Expectation {
    match property {
        Property::HerdFree if stale_node_grant(spec) && herd_behind_a_kept_node(spec) => {
            Expectation::Violated
        }
        _ => overlapping_live(property, spec, stale_node_grant(spec)),
    }
}

/// As any exclusive lock, but a waiter woken by its predecessor's deletion holds at once:
/// wrong when the predecessor was itself a waiter that went (its session expired, it timed
/// out, crashed or gave up at LOST) while the holder ahead of it still holds. That takes three
/// clients — one holds, two wait — and a way for the middle one to go; the woken one then holds
/// beside the holder, both sessions alive, and an unfenced resource can lose an update.
fn trusting_wakeup(property: Property, spec: &ModelSpec) -> Expectation {
    let budgets = &spec.budgets;
    let leaves = budgets.session_expiries() >= 1
        || budgets.crashes >= 1
        || budgets.connection_losses >= 1
        || spec.timeouts;
    let wrong_wakeup = spec.clients >= 3 && budgets.cycles >= 1 && leaves;
    overlapping_live(property, spec, wrong_wakeup || stale_node_grant(spec))
}

/// As Curator's lock loop, but a holder keeps its hold through every connection-state
/// change: once a change that the error policy says ends a hold can reach a holder (a
/// connection loss, whose LOST timer can fire before it reconnects, or an expiry), the hold
/// outlives it and `live_session_exclusion` is violated at the holder's next input, with one
/// client already; with two, the next waiter holds once the server has deleted the blind
/// holder's node (its session expired or closed at LOST), beside a holder that still
/// believes, and an unfenced resource can lose an update.
fn state_blind(property: Property, spec: &ModelSpec) -> Expectation {
    let budgets = &spec.budgets;
    let kept = spec.clients >= 1 && budgets.cycles >= 1 && budgets.session_breaks() >= 1;
    let overlap = kept && spec.clients >= 2;
    match property {
        Property::LiveSessionExclusion => violated_if(kept || stale_node_grant(spec)),
        Property::MutualExclusionBelief if overlap => Expectation::Violated,
        Property::MutualExclusionFenced if overlap && !spec.fenced => Expectation::Violated,
        _ => curator_lock_loop(property, spec),
    }
}

/// More clients believe they hold a lease than there are leases once a paused holder's
/// session can expire (its lease is freed while it still believes) and someone waits for that
/// lease. Only the internal lock's holder watches the leases, so a return wakes at most one
/// waiter unless a fault left a second taker watching them ([`lease_loop_herd`]). Its
/// progress is [`lease_progress`]'s.
fn semaphore(property: Property, spec: &ModelSpec) -> Expectation {
    let budgets = &spec.budgets;
    let max = spec.settings.max_leases;
    let acquires = spec.clients >= 1 && budgets.cycles >= 1 && max >= 1;
    match property {
        Property::LeaseBound => violated_if(
            acquires && budgets.session_expiries() >= 1 && u32::from(spec.clients) > max,
        ),
        Property::Progress => lease_progress(spec, max),
        Property::Answered => violated_if(lease_loop_deadlocks(spec, max)),
        Property::HerdFree => violated_if(lease_loop_herd(spec)),
        _ => Expectation::Holds,
    }
}

/// A writer and another holder believe at once once a paused holder's session can expire (a
/// writer's successor reads, or a reader's successor writes). Only writers use the resource,
/// so an unfenced one loses an update only with two writers. A writer's release wakes every
/// reader queued right behind it, and they all then read: no herd by `herd_free`'s rule (woken ≤
/// max(1, those that then acquire)). A herd needs readers woken by a queued writer's expiry
/// while another writer is still ahead of them: two writers, two readers and an expiry (4
/// clients): `check read-write-lock --clients 4 --writers 2` finds it in 29 steps (its full
/// space is larger than 7.6 M states), as the simulator does (`read-write-lock-session-expiry`).
fn read_write(property: Property, spec: &ModelSpec) -> Expectation {
    let budgets = &spec.budgets;
    let writers = spec.settings.writers.min(spec.clients);
    let readers = spec.clients - writers;
    let overlap = writers >= 1
        && spec.clients >= 2
        && budgets.cycles >= 1
        && (budgets.session_expiries() >= 1 || stale_node_grant(spec));
    match property {
        Property::RwExclusion => violated_if(overlap),
        Property::MutualExclusionFenced => violated_if(overlap && writers >= 2 && !spec.fenced),
        // With timeouts, one of two readers woken together by a writer's deletion may give up
        // before it acts: a wasted wake-up, a herd by the shared rule ("a timeout is no
        // fault", `check::counts_as_acquired`); checked with 3 clients. A queued writer's
        // timeout wakes readers as its expiry does (4 clients, reasoned).
        //
        // With two writers the lock loop's herd behind a kept node is reachable too: a writer
        // that kept its node across LOST watches the holder; once the server expires that node,
        // the next waiter watches the same holder, and the holder's release wakes both, while
        // the writer, its node gone, must queue again behind the other
        // (`check read-write-lock --clients 3 --writers 2 --connection-losses 1 --expiries 0`,
        // 39 steps). A reader that kept its node would start over and read at once, so one
        // writer is not enough.
        Property::HerdFree => violated_if(
            (readers >= 2
                && budgets.cycles >= 1
                && ((writers >= 2 && budgets.session_expiries() >= 1)
                    || (writers >= 1 && spec.timeouts)))
                || (writers >= 2 && stale_node_grant(spec) && herd_behind_a_kept_node(spec)),
        ),
        _ => curator_lock_loop(property, spec),
    }
}

/// The semaphores' internal lock and lease directories.
fn semaphore_directories(path: &Path) -> Vec<Path> {
    let recipe = Semaphore::new(path.clone(), 1);
    vec![recipe.internal_lock().clone(), recipe.leases().clone()]
}

/// Generates [`RecipeKind`] (with its names, serde and dispatch) from the rows.
macro_rules! recipe_table {
    ($(
        $(#[$doc:meta])*
        $kind:ident => $def:ident: $ty:ty = $row:expr;
    )*) => {
        $(
            $(#[$doc])*
            pub const $def: RecipeDef<$ty> = $row;
        )*

        /// A recipe of the table, by its kebab-case name in files, traces and commands.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum RecipeKind {
            $(
                $(#[$doc])*
                $kind,
            )*
        }

        impl RecipeKind {
            /// Every recipe of the table, in table order.
            pub const ALL: &'static [RecipeKind] = &[$(RecipeKind::$kind),*];

            /// Every recipe's name, in table order.
            pub const NAMES: &'static [&'static str] = &[$($def.name),*];

            /// Runs `visitor` with this recipe's definition and type.
            pub fn visit<V: Visitor>(self, visitor: V) -> V::Output {
                match self {
                    $(RecipeKind::$kind => visitor.visit(&$def),)*
                }
            }

            /// The row's kebab-case name.
            pub const fn name(self) -> &'static str {
                match self {
                    $(RecipeKind::$kind => $def.name,)*
                }
            }

            /// The row's one-line description.
            pub const fn about(self) -> &'static str {
                match self {
                    $(RecipeKind::$kind => $def.about,)*
                }
            }

            /// How workloads use the recipe.
            pub const fn family(self) -> Family {
                match self {
                    $(RecipeKind::$kind => $def.family,)*
                }
            }

            /// Whether the recipe serves revocation.
            pub const fn revocable(self) -> bool {
                match self {
                    $(RecipeKind::$kind => $def.revocable,)*
                }
            }
        }
    };
}

recipe_table! {
    /// Curator's InterProcessMutex (`coordination::recipes::Mutex`).
    Mutex => MUTEX: Mutex = RecipeDef {
        name: "mutex",
        about: "Curator's InterProcessMutex: reentrant, each waiter watches its predecessor; revocable",
        family: Family::Lock,
        revocable: true,
        build: |path, _| Mutex::new(path),
        directories: none,
        expectation: curator_lock_loop,
    };
    /// The known-bad lock where every waiter watches the lock node (`coordination::recipes::NaiveHerdMutex`).
    NaiveHerdMutex => NAIVE_HERD_MUTEX: NaiveHerdMutex = RecipeDef {
        name: "naive-herd-mutex",
        about: "known-bad: every waiter watches the lock node, so a release wakes them all (a herd)",
        family: Family::Lock,
        revocable: false,
        build: |path, _| NaiveHerdMutex::new(path),
        directories: none,
        expectation: naive_herd,
    };
    /// The known-bad mutex whose woken waiter holds without listing the children again
    /// (`coordination::recipes::Mutex::trusting_wakeups`).
    TrustingWakeupMutex => TRUSTING_WAKEUP_MUTEX: Mutex = RecipeDef {
        name: "trusting-wakeup-mutex",
        about: "known-bad: a waiter woken by its predecessor's deletion holds without listing again",
        family: Family::Lock,
        revocable: true,
        build: |path, _| Mutex::trusting_wakeups(path),
        directories: none,
        expectation: trusting_wakeup,
    };
    /// The known-bad mutex whose holder ignores connection-state changes
    /// (`coordination::recipes::Mutex::state_blind`).
    StateBlindMutex => STATE_BLIND_MUTEX: Mutex = RecipeDef {
        name: "state-blind-mutex",
        about: "known-bad: a holder hears neither SUSPENDED nor LOST and holds until it releases",
        family: Family::Lock,
        revocable: true,
        build: |path, _| Mutex::state_blind(path),
        directories: none,
        expectation: state_blind,
    };
    /// Curator's InterProcessSemaphoreMutex, not reentrant (`coordination::recipes::SemaphoreMutex`).
    SemaphoreMutex => SEMAPHORE_MUTEX: SemaphoreMutex = RecipeDef {
        name: "semaphore-mutex",
        about: "Curator's InterProcessSemaphoreMutex: a one-lease semaphore, not reentrant",
        family: Family::Lock,
        revocable: false,
        build: |path, _| SemaphoreMutex::new(path),
        directories: semaphore_directories,
        expectation: one_lease_lock,
    };
    /// Curator's InterProcessMultiLock over two mutexes below the lock path
    /// (`coordination::recipes::MultiLock::pair`). Every holder holds the first lock throughout, so
    /// the multi-lock overlaps exactly when its first lock does.
    MultiLock => MULTI_LOCK: MultiLock = RecipeDef {
        name: "multi-lock",
        about: "Curator's InterProcessMultiLock: two mutexes, all or nothing",
        family: Family::Lock,
        revocable: false,
        build: |path, settings| MultiLock::pair(&path).with_timeout_scope(settings.timeout_scope),
        directories: |path| MultiLock::pair(path).paths().cloned().collect(),
        expectation: curator_lock_loop,
    };
    /// Curator's InterProcessSemaphoreV2, `max_leases` leases (`coordination::recipes::Semaphore`).
    Semaphore => SEMAPHORE: Semaphore = RecipeDef {
        name: "semaphore",
        about: "Curator's InterProcessSemaphoreV2: max_leases leases under an internal mutex",
        family: Family::Semaphore,
        revocable: false,
        build: |path, settings| Semaphore::new(path, settings.max_leases),
        directories: semaphore_directories,
        expectation: semaphore,
    };
    /// Curator's LeaderLatch (`coordination::recipes::LeaderLatch`): a paused leader whose session
    /// expires still believes it leads when the next participant does.
    LeaderLatch => LEADER_LATCH: LeaderLatch = RecipeDef {
        name: "leader-latch",
        about: "Curator's LeaderLatch (5.7): leads while its own node is first",
        family: Family::Latch,
        revocable: false,
        build: |path, _| LeaderLatch::new(path),
        directories: none,
        expectation: latch,
    };
    /// Curator's LeaderSelector, without auto-requeue: the workload requeues
    /// (`coordination::recipes::LeaderSelector`). An exclusive lock (its internal mutex): a paused
    /// leader cancels only once it hears Suspended or Lost.
    LeaderSelector => LEADER_SELECTOR: LeaderSelector = RecipeDef {
        name: "leader-selector",
        about: "Curator's LeaderSelector over an internal mutex; the workload requeues",
        family: Family::Selector,
        revocable: false,
        build: |path, _| LeaderSelector::new(path, false),
        directories: none,
        expectation: curator_lock_loop,
    };
    /// Curator's InterProcessReadWriteLock (`coordination::recipes::ReadWriteLock`).
    ReadWriteLock => READ_WRITE_LOCK: ReadWriteLock = RecipeDef {
        name: "read-write-lock",
        about: "Curator's InterProcessReadWriteLock; readers watch the nearest writer ahead",
        family: Family::ReadWrite,
        revocable: false,
        build: |path, _| ReadWriteLock::new(path),
        directories: none,
        expectation: read_write,
    };
    /// The known-bad read-write lock whose readers watch the first write node ahead, as
    /// Curator's do (`coordination::recipes::ReadWriteLock::watching_first_writer`): a herd when a
    /// reader queues behind two writers.
    ReadWriteLockFirstWriterWatch => READ_WRITE_LOCK_FIRST_WRITER_WATCH: ReadWriteLock = RecipeDef {
        name: "read-write-lock-first-writer-watch",
        about: "known-bad: readers watch the first writer ahead (Curator's), a herd behind two writers",
        family: Family::ReadWrite,
        revocable: false,
        build: |path, _| ReadWriteLock::watching_first_writer(path),
        directories: none,
        expectation: read_write_first_writer,
    };
}

/// As the read-write lock, plus the herd behind two writers: a reader queued behind them
/// watches the first, so when it goes the reader wakes with the second writer (which watches
/// its predecessor), though only that writer can acquire. `check
/// read-write-lock-first-writer-watch --clients 3 --writers 2` finds it in 27 steps; with one
/// writer every woken reader acquires.
fn read_write_first_writer(property: Property, spec: &ModelSpec) -> Expectation {
    let writers = spec.settings.writers.min(spec.clients);
    let readers = spec.clients - writers;
    match property {
        Property::HerdFree if writers >= 2 && readers >= 1 && spec.budgets.cycles >= 1 => {
            Expectation::Violated
        }
        _ => read_write(property, spec),
    }
}

impl RecipeKind {
    /// The properties a trace of this recipe can be checked for.
    pub fn properties(self) -> &'static [Property] {
        self.family().properties()
    }
}

impl fmt::Display for RecipeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RecipeKind {
    type Err = String;

    /// The recipe of that name, or an error listing the table.
    fn from_str(name: &str) -> Result<RecipeKind, String> {
        RecipeKind::ALL
            .iter()
            .copied()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| {
                format!(
                    "expected a recipe ({}), found `{name}`",
                    RecipeKind::NAMES.join(", ")
                )
            })
    }
}

impl Serialize for RecipeKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for RecipeKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<RecipeKind, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse()
            .map_err(|_| serde::de::Error::unknown_variant(&name, RecipeKind::NAMES))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locks_row_has_the_defaults_of_an_exclusive_lock() {
        static MINE: RecipeDef<Mutex> = RecipeDef::lock("my-lock", MUTEX.build);
        assert_eq!(
            (MINE.name, MINE.family, MINE.revocable),
            ("my-lock", Family::Lock, false)
        );
        let path = Path::new("/locks/mine").expect("a valid path");
        assert!((MINE.directories)(&path).is_empty());
        let spec = ModelSpec::new(2);
        for property in Family::Lock.properties() {
            assert_eq!(
                (MINE.expectation)(*property, &spec),
                exclusive_lock(*property, &spec)
            );
        }
    }

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut names = RecipeKind::NAMES.to_vec();
        for kind in RecipeKind::ALL {
            assert_eq!(kind.name().parse::<RecipeKind>(), Ok(*kind));
            let json = serde_json::to_string(kind).unwrap();
            assert_eq!(serde_json::from_str::<RecipeKind>(&json).unwrap(), *kind);
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RecipeKind::ALL.len());
        let error = "nope".parse::<RecipeKind>().unwrap_err();
        assert!(error.contains("mutex, naive-herd-mutex"), "{error}");
    }

    /// Builds each row's recipe and reports its name, through the visitor.
    struct Named;

    impl Visitor for Named {
        type Output = &'static str;

        fn visit<R: Testable>(self, def: &'static RecipeDef<R>) -> &'static str {
            let path = Path::new("/locks/x").unwrap();
            let _built: R = (def.build)(path.clone(), &RecipeSettings::default());
            for dir in (def.directories)(&path) {
                assert!(dir.ancestors().contains(&path), "{dir} is below {path}");
            }
            def.name
        }
    }

    #[test]
    fn every_row_builds_and_visits_itself() {
        for kind in RecipeKind::ALL {
            assert_eq!(kind.visit(Named), kind.name());
        }
    }
}
