//! The properties the model checks, named as everywhere else (`scenarios::property`), plus
//! one reachability check. Each is a predicate on one state; the history a property needs
//! (the property monitors shared with the trace checkers) is kept in the state.

use std::fmt;

use scenarios::property::Property as Shared;
use scenarios::usage::Family;
use scenarios::workload::Phase;
use serde::Serialize;
use stateright::{Expectation, Property};

use crate::model::{Action, LockModel};
use crate::state::State;
use scenarios::recipes::Testable;

/// A property the model checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Checked {
    /// No two clients believe they hold the lock at once.
    MutualExclusionBelief,
    /// The resource's accepted accesses come in non-interleaved blocks in increasing token
    /// order, each write an increment of its own read, and no accepted increment is lost (the
    /// [`Fenced`](scenarios::monitor::Fenced) monitor, which the trace checker folds too).
    MutualExclusionFenced,
    /// No change wakes more waiting clients than max(1, those that then acquire), a client
    /// still waiting when nothing more can happen counted as one that did not (the
    /// [`Herds`](scenarios::monitor::Herds) monitor, which the trace checker folds too).
    HerdFree,
    /// Once the workloads are done and everything has settled, no lock node is left.
    NoOrphans,
    /// Nothing can stop short while a client waits: no reachable state has a client waiting
    /// to be served (its ask not granted, or failed because of a fault and not granted
    /// since) or for the answer to its release call when only faults could still happen.
    Progress,
    /// No two participants believe they lead at once.
    LeaderUniqueBelief,
    /// The leaders' accesses to the resource are fenced (as `MutualExclusionFenced`).
    LeaderUniqueFenced,
    /// A writer believes it holds a read-write lock only while nobody else believes they hold.
    RwExclusion,
    /// No more leases believed held than the semaphore allows, each lease counted (the
    /// belief monitor's [`leases`](scenarios::monitor::Beliefs::leases), which the trace
    /// checker folds too).
    LeaseBound,
    /// No two clients believe they hold (lead, write) at once while both their sessions are
    /// alive on the server.
    LiveSessionExclusion,
    /// No acquire still waits once its timeout timer has fired (the
    /// [`Waits`](scenarios::monitor::Waits) monitor's late waiters, as the trace checker's).
    AnsweredByDeadline,
    /// Some client acquires the lock (a `sometimes` property: an example must exist).
    SomeoneAcquires,
}

/// Whether a property must hold in every state or be met in some state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// In every reachable state; a discovery is a counterexample.
    Always,
    /// In some reachable state; a discovery is an example.
    Sometimes,
}

impl Checked {
    /// Every property, in the order they are reported.
    pub const ALL: [Checked; 12] = [
        Checked::MutualExclusionBelief,
        Checked::LeaderUniqueBelief,
        Checked::RwExclusion,
        Checked::LeaseBound,
        Checked::LiveSessionExclusion,
        Checked::MutualExclusionFenced,
        Checked::LeaderUniqueFenced,
        Checked::HerdFree,
        Checked::NoOrphans,
        Checked::Progress,
        Checked::AnsweredByDeadline,
        Checked::SomeoneAcquires,
    ];

    /// The properties checked for recipes of `family`, in [`Checked::ALL`] order: the
    /// family's shared properties and `someone_acquires`.
    pub fn of(family: Family) -> Vec<Checked> {
        let shared = family.properties();
        Checked::ALL
            .into_iter()
            .filter(|p| p.shared().is_none_or(|s| shared.contains(&s)))
            .collect()
    }

    /// The property's name in output and in stateright's discoveries.
    pub fn name(self) -> &'static str {
        match self.shared() {
            Some(shared) => shared.name(),
            None => "someone_acquires",
        }
    }

    /// The shared vocabulary's property, if it is one.
    pub fn shared(self) -> Option<Shared> {
        match self {
            Checked::MutualExclusionBelief => Some(Shared::MutualExclusionBelief),
            Checked::MutualExclusionFenced => Some(Shared::MutualExclusionFenced),
            Checked::HerdFree => Some(Shared::HerdFree),
            Checked::NoOrphans => Some(Shared::NoOrphans),
            Checked::Progress => Some(Shared::Progress),
            Checked::LeaderUniqueBelief => Some(Shared::LeaderUniqueBelief),
            Checked::LeaderUniqueFenced => Some(Shared::LeaderUniqueFenced),
            Checked::RwExclusion => Some(Shared::RwExclusion),
            Checked::LeaseBound => Some(Shared::LeaseBound),
            Checked::LiveSessionExclusion => Some(Shared::LiveSessionExclusion),
            Checked::AnsweredByDeadline => Some(Shared::AnsweredByDeadline),
            Checked::SomeoneAcquires => None,
        }
    }

    /// Always or sometimes.
    pub fn kind(self) -> Kind {
        match self {
            Checked::SomeoneAcquires => Kind::Sometimes,
            _ => Kind::Always,
        }
    }

    /// The property of that name.
    pub fn from_name(name: &str) -> Option<Checked> {
        Checked::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whether `state` satisfies the property's condition (for `always`: is not a
    /// counterexample; for `sometimes`: is an example).
    pub fn holds_in<R: Testable>(self, model: &LockModel<R>, state: &State<R>) -> bool {
        match self {
            Checked::MutualExclusionBelief | Checked::LeaderUniqueBelief | Checked::RwExclusion => {
                no_conflict(state, self)
            }
            Checked::LeaseBound => state.beliefs.leases() <= model.config().settings.max_leases,
            Checked::LiveSessionExclusion => {
                no_conflict(state, self) && state.beliefs.kept_too_long().next().is_none()
            }
            Checked::MutualExclusionFenced | Checked::LeaderUniqueFenced => {
                state.resource.fenced.holds()
            }
            Checked::HerdFree => {
                let herds = &state.herds;
                herds.holds() && (herds.holds_at_end() || !quiescent(model, state))
            }
            Checked::NoOrphans => !settled(model, state) || !has_lock_nodes(model, state),
            Checked::Progress => !stuck(model, state),
            Checked::AnsweredByDeadline => state.waits.late().next().is_none(),
            Checked::SomeoneAcquires => state.beliefs.believed().next().is_some(),
        }
    }
}

impl fmt::Display for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// No two believed holds that `checked` forbids at once, as the belief monitor (the trace
/// checkers' too) judges them.
fn no_conflict<R>(state: &State<R>, checked: Checked) -> bool {
    let shared = checked.shared().expect("a belief property");
    state.beliefs.conflicts(shared).next().is_none()
}

/// Every workload is done and the run has come to its end (see [`quiescent`]).
fn settled<R: Testable>(model: &LockModel<R>, state: &State<R>) -> bool {
    let done = state
        .peers
        .iter()
        .all(|p| p.workload.phase() == Phase::Done);
    done && quiescent(model, state)
}

/// A client waits and nothing but a fault can happen any more: no event to handle, no
/// request to apply, no timer or workload step pending, no orphaned session for the server
/// to expire. The path to such a state is a waiter left waiting forever (DESIGN's
/// `progress`, on a path). Who waits is the [`Waits`](scenarios::monitor::Waits) monitor's to
/// say, as in the trace checker: an ask not yet granted, one whose waiter gave up when the
/// ask failed because of a fault among them. A path can also stop short of the answer to an
/// end call (a release or close), which the workload knows of.
fn stuck<R: Testable>(model: &LockModel<R>, state: &State<R>) -> bool {
    let unserved = state.waits.unserved().next().is_some();
    let ending =
        (state.peers.iter()).any(|peer| matches!(peer.workload.phase(), Phase::Ending { .. }));
    (unserved || ending) && quiescent(model, state)
}

/// Nothing but a fault can happen any more in `state`: the run has come to its end.
pub fn quiescent<R: Testable>(model: &LockModel<R>, state: &State<R>) -> bool {
    let mut actions = Vec::new();
    model.enabled(state, &mut actions);
    actions.iter().all(|action| {
        matches!(
            action,
            Action::Expire(_) | Action::Crash(_) | Action::LoseConnection { .. }
        )
    })
}

/// Whether a lock node is left: any node below the lock path but the containers a recipe
/// creates to hold its nodes (`semaphore-mutex`'s `locks` and `leases`).
fn has_lock_nodes<R: Testable>(model: &LockModel<R>, state: &State<R>) -> bool {
    let path = model.lock_path();
    state
        .server
        .tree
        .nodes()
        .any(|(node, n)| !n.container && node.ancestors().contains(path))
}

macro_rules! property {
    ($expectation:ident, $checked:expr) => {
        Property {
            expectation: Expectation::$expectation,
            name: $checked.name(),
            condition: |model, state| $checked.holds_in(model, state),
        }
    };
}

/// The stateright property of `checked`.
fn property<R: Testable>(checked: Checked) -> Property<LockModel<R>> {
    match checked {
        Checked::MutualExclusionBelief => property!(Always, Checked::MutualExclusionBelief),
        Checked::MutualExclusionFenced => property!(Always, Checked::MutualExclusionFenced),
        Checked::LeaderUniqueBelief => property!(Always, Checked::LeaderUniqueBelief),
        Checked::LeaderUniqueFenced => property!(Always, Checked::LeaderUniqueFenced),
        Checked::RwExclusion => property!(Always, Checked::RwExclusion),
        Checked::LeaseBound => property!(Always, Checked::LeaseBound),
        Checked::LiveSessionExclusion => property!(Always, Checked::LiveSessionExclusion),
        Checked::HerdFree => property!(Always, Checked::HerdFree),
        Checked::NoOrphans => property!(Always, Checked::NoOrphans),
        Checked::Progress => property!(Always, Checked::Progress),
        Checked::AnsweredByDeadline => property!(Always, Checked::AnsweredByDeadline),
        Checked::SomeoneAcquires => property!(Sometimes, Checked::SomeoneAcquires),
    }
}

/// The stateright properties of a recipe of `family`, in [`Checked::of`] order.
pub fn all<R: Testable>(family: Family) -> Vec<Property<LockModel<R>>> {
    Checked::of(family).into_iter().map(property).collect()
}
