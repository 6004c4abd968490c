//! The properties the model checks, as predicates on one state, named as everywhere else (`recipe_table::property`), plus
//! one reachability check. Each is a predicate on one state; the history a property needs
//! (the property monitors shared with the trace checkers) is kept in the state.

use std::fmt;

use properties::monitor::{TreeNode, orphaned};
use recipe_table::family::Family;
use recipe_table::property::Property;
use runtime::workload::Phase;
use serde::Serialize;
use stateright::Expectation;

use crate::model::{Action, LockModel};
use crate::state::State;
use recipe_table::recipes::Testable;

/// A property the model checks: one of the shared vocabulary's, or the model's one
/// reachability check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Checked {
    /// A property of the shared vocabulary, as [`Checked::holds_in`] judges it in a state.
    Shared(Property),
    /// Some client acquires the lock (a `sometimes` property: an example must exist).
    SomeoneAcquires,
}

impl From<Property> for Checked {
    fn from(property: Property) -> Checked {
        Checked::Shared(property)
    }
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
    /// Every property, in the order they are reported: the belief properties, the fenced
    /// ones, then those about the run as a whole, and `someone_acquires` last: the shared
    /// properties, each listed once (a new one must take its place here), but
    /// `no_time_travel`, which the model's server cannot break: it is one tree, which answers
    /// every read from its latest state, and a cut follower answers from the tree it had at
    /// the cut, older than nothing its client was told after.
    pub const ALL: [Checked; Property::ALL.len()] = [
        Checked::Shared(Property::MutualExclusionBelief),
        Checked::Shared(Property::LeaderUniqueBelief),
        Checked::Shared(Property::RwExclusion),
        Checked::Shared(Property::LeaseBound),
        Checked::Shared(Property::LiveSessionExclusion),
        Checked::Shared(Property::MutualExclusionFenced),
        Checked::Shared(Property::LeaderUniqueFenced),
        Checked::Shared(Property::HerdFree),
        Checked::Shared(Property::NoOrphans),
        Checked::Shared(Property::Progress),
        Checked::Shared(Property::Answered),
        Checked::Shared(Property::AnsweredByDeadline),
        Checked::Shared(Property::RevocationAnswered),
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
        match self {
            Checked::Shared(shared) => shared.name(),
            Checked::SomeoneAcquires => "someone_acquires",
        }
    }

    /// The shared vocabulary's property, if it is one.
    pub fn shared(self) -> Option<Property> {
        match self {
            Checked::Shared(shared) => Some(shared),
            Checked::SomeoneAcquires => None,
        }
    }

    /// Always or sometimes.
    pub fn kind(self) -> Kind {
        match self {
            Checked::Shared(_) => Kind::Always,
            Checked::SomeoneAcquires => Kind::Sometimes,
        }
    }

    /// The property of that name.
    pub fn from_name(name: &str) -> Option<Checked> {
        Checked::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whether `state` satisfies the property's condition (for `always`: is not a
    /// counterexample; for `sometimes`: is an example).
    pub fn holds_in<R: Testable>(self, model: &LockModel<R>, state: &State<R>) -> bool {
        let Checked::Shared(shared) = self else {
            return state.beliefs.believed().next().is_some();
        };
        match shared {
            Property::MutualExclusionBelief
            | Property::LeaderUniqueBelief
            | Property::RwExclusion => no_conflict(state, shared),
            // Each lease counted by the belief monitor's
            // [`leases`](properties::monitor::Beliefs::leases), as the trace checker's.
            Property::LeaseBound => state.beliefs.leases() <= model.config().settings.max_leases,
            Property::LiveSessionExclusion => {
                no_conflict(state, shared) && state.beliefs.kept_too_long().next().is_none()
            }
            // The accesses' [`Fenced`](properties::monitor::Fenced) monitor, which the trace
            // checker folds too.
            Property::MutualExclusionFenced | Property::LeaderUniqueFenced => {
                state.resource.fenced.holds()
            }
            // No change wakes more waiting clients than max(1, those that then acquire), a
            // client still waiting when nothing more can happen counted as one that did not
            // (the [`Herds`](properties::monitor::Herds) monitor, as the trace checker's).
            Property::HerdFree => {
                let herds = &state.herds;
                herds.holds() && (herds.holds_at_end() || !quiescent(model, state))
            }
            Property::NoOrphans => !has_orphans(model, state) || !quiescent(model, state),
            Property::Progress => !stuck(model, state, false),
            // The same, counting only the waiters that still ask: one that gave up has had its
            // answer.
            Property::Answered => !stuck(model, state, true),
            // The [`Waits`](properties::monitor::Waits) monitor's late waiters, as the trace
            // checker's: no acquire still waits once its timeout timer has fired.
            Property::AnsweredByDeadline => state.waits.late().next().is_none(),
            // The [`Revokes`](properties::monitor::Revokes) monitor, as the trace checker's:
            // no revocation attempt is left unanswered once nothing but a fault can happen.
            Property::RevocationAnswered => {
                state.revokes.unanswered().next().is_none() || !quiescent(model, state)
            }
            // Not among [`Checked::ALL`]: no read of the model's server is older than its
            // session was told of (above).
            Property::NoTimeTravel => true,
        }
    }
}

impl fmt::Display for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// No two believed holds that `property` forbids at once, as the belief monitor (the trace
/// checkers' too) judges them.
fn no_conflict<R>(state: &State<R>, property: Property) -> bool {
    state.beliefs.conflicts(property).next().is_none()
}

/// A client waits and nothing but a fault can happen any more: no event to handle, no
/// request to apply, no timer or workload step pending, no orphaned session for the server
/// to expire. The path to such a state is a waiter left waiting forever (the
/// `progress` property, on a path). Who waits is the [`Waits`](properties::monitor::Waits) monitor's to
/// say, as in the trace checker: an ask not yet granted, one whose waiter gave up when the
/// ask failed because of a fault among them, unless `asking_only` (`answered`: a waiter that
/// gave up has had its answer). A path can also stop short of the answer to an end call (a
/// release or close), which the workload knows of.
fn stuck<R: Testable>(model: &LockModel<R>, state: &State<R>, asking_only: bool) -> bool {
    let unserved = (state.waits.unserved()).any(|(_, gave_up)| !(asking_only && gave_up));
    let ending =
        (state.peers.iter()).any(|peer| matches!(peer.workload.phase(), Phase::Ending { .. }));
    (unserved || ending) && quiescent(model, state)
}

/// Nothing but a fault can happen any more in `state`: the run has come to its end. A sweep
/// of the empty containers counts as a fault here: the server's sweep comes every few
/// seconds, and a run may end before the next one (the state after the sweep is judged too).
/// A cut-off follower's giving up does not: it comes syncLimit × tick after the cut, before
/// the run can end.
pub fn quiescent<R: Testable>(model: &LockModel<R>, state: &State<R>) -> bool {
    let mut actions = Vec::new();
    model.enabled(state, &mut actions);
    actions.iter().all(|action| {
        matches!(
            action,
            Action::Expire(_)
                | Action::Crash(_)
                | Action::LoseConnection { .. }
                | Action::FailAttempt(_)
                | Action::ReapContainers
                | Action::CutFollower(_)
        )
    })
}

/// Whether the tree holds a lock node that no live session owns, by the rule the trace
/// checker applies ([`orphaned`]). A client closes its session once its workload is done, so
/// where every workload is done this is any lock node at all.
fn has_orphans<R: Testable>(model: &LockModel<R>, state: &State<R>) -> bool {
    state.server.tree.nodes().any(|(path, node)| {
        let view = TreeNode {
            path,
            owner: node.stat.ephemeral_owner,
            container: node.container,
        };
        orphaned(view, model.lock_path(), |session| {
            state.server.live.contains(&session)
        })
    })
}

/// The condition of the `AT`-th property of [`Checked::ALL`]: stateright takes a plain `fn`
/// as a property's condition, so each property's is an instance of this one by its place.
fn condition<R: Testable, const AT: usize>(model: &LockModel<R>, state: &State<R>) -> bool {
    Checked::ALL[AT].holds_in(model, state)
}

/// The stateright property of `checked`.
fn property<R: Testable>(checked: Checked) -> stateright::Property<LockModel<R>> {
    type Condition<R> = fn(&LockModel<R>, &State<R>) -> bool;
    let conditions: [Condition<R>; Checked::ALL.len()] = [
        condition::<R, 0>,
        condition::<R, 1>,
        condition::<R, 2>,
        condition::<R, 3>,
        condition::<R, 4>,
        condition::<R, 5>,
        condition::<R, 6>,
        condition::<R, 7>,
        condition::<R, 8>,
        condition::<R, 9>,
        condition::<R, 10>,
        condition::<R, 11>,
        condition::<R, 12>,
        condition::<R, 13>,
    ];
    let at = (Checked::ALL.iter())
        .position(|&p| p == checked)
        .expect("every property is in Checked::ALL");
    stateright::Property {
        expectation: match checked.kind() {
            Kind::Always => Expectation::Always,
            Kind::Sometimes => Expectation::Sometimes,
        },
        name: checked.name(),
        condition: conditions[at],
    }
}

/// The stateright properties of a recipe of `family`, in [`Checked::of`] order.
pub fn all<R: Testable>(family: Family) -> Vec<stateright::Property<LockModel<R>>> {
    Checked::of(family).into_iter().map(property).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shared_property_but_no_time_travel_has_one_place_in_the_report_order() {
        for property in Property::ALL {
            let places = (Checked::ALL.iter()).filter(|&&p| p == Checked::Shared(property));
            let expected = usize::from(property != Property::NoTimeTravel);
            assert_eq!(places.count(), expected, "{property}");
        }
        assert_eq!(Checked::ALL.last(), Some(&Checked::SomeoneAcquires));
    }
}
