//! The property vocabulary, one set of names for scenario files, `hunt`, `check`, reports and
//! tests, and the shape of a checker's verdict.

use std::fmt;

use coordination::ids::ClientSlot;
use serde::{Deserialize, Serialize};

/// A property a run can be checked for (the book's "Properties" page says what each means).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Property {
    /// No two clients hold the same exclusive lock at one instant, as they believe.
    MutualExclusionBelief,
    /// Accepted resource accesses form non-interleaved blocks in increasing token order and
    /// no update is lost.
    MutualExclusionFenced,
    /// No deletion wakes more than one waiting client.
    HerdFree,
    /// No waiter is still waiting at the horizon once faults have healed.
    Progress,
    /// Every ask is answered: no waiter is still waiting for the answer to its ask at the
    /// horizon once faults have healed. Unlike `progress`, an ask that failed, timed out or
    /// was refused has had its answer, so this tells a recipe that hangs from one that gives
    /// up (as Curator's bounded retry policies and error policies let a recipe do).
    Answered,
    /// No lock node is left once all sessions have closed.
    NoOrphans,
    /// At most one leader at an instant, as the participants believe.
    LeaderUniqueBelief,
    /// Leaders' accesses to the resource are fenced as for `mutual_exclusion_fenced`.
    LeaderUniqueFenced,
    /// A writer excludes everyone else in a read-write lock.
    RwExclusion,
    /// No more leases out at once than the semaphore allows.
    LeaseBound,
    /// No two holders of an exclusive hold (an exclusive lock, leadership, a write lock and
    /// any other hold) believe they hold at one instant while both their sessions are alive
    /// on the server: the overlap no correct recipe shows under any fault, unlike the belief
    /// overlap of a holder whose session the server has already expired.
    LiveSessionExclusion,
    /// An acquire with a timeout is answered (granted or refused) by its deadline: the call's
    /// instant plus its timeout in simulated time (moved to the end of a pause of the client
    /// that covers it); in the model, by the time the acquire's timeout timer has fired.
    AnsweredByDeadline,
    /// Every revocation attempt (`AttemptRevoke`) is answered (`RevokeAttempted`, delivered or
    /// not) by the end of the run: in the model, before nothing but a fault can happen any
    /// more; in a simulated or real trace, by the horizon, once the faults have healed and the
    /// grace `progress` allows has passed. Holds trivially where nobody attempts one (a lock
    /// that is not revocable).
    RevocationAnswered,
    /// A session never reads state older than what it has already been told of (by a reply
    /// or a watch event), whichever server of an ensemble answers it: ZooKeeper's single
    /// system image.
    NoTimeTravel,
}

impl Property {
    /// Every property, in declaration order.
    pub const ALL: [Property; 14] = [
        Property::MutualExclusionBelief,
        Property::MutualExclusionFenced,
        Property::HerdFree,
        Property::Progress,
        Property::Answered,
        Property::NoOrphans,
        Property::LeaderUniqueBelief,
        Property::LeaderUniqueFenced,
        Property::RwExclusion,
        Property::LeaseBound,
        Property::LiveSessionExclusion,
        Property::AnsweredByDeadline,
        Property::RevocationAnswered,
        Property::NoTimeTravel,
    ];

    /// The property's name as it appears in files and output.
    pub fn name(self) -> &'static str {
        match self {
            Property::MutualExclusionBelief => "mutual_exclusion_belief",
            Property::MutualExclusionFenced => "mutual_exclusion_fenced",
            Property::HerdFree => "herd_free",
            Property::Progress => "progress",
            Property::Answered => "answered",
            Property::NoOrphans => "no_orphans",
            Property::LeaderUniqueBelief => "leader_unique_belief",
            Property::LeaderUniqueFenced => "leader_unique_fenced",
            Property::RwExclusion => "rw_exclusion",
            Property::LeaseBound => "lease_bound",
            Property::LiveSessionExclusion => "live_session_exclusion",
            Property::AnsweredByDeadline => "answered_by_deadline",
            Property::RevocationAnswered => "revocation_answered",
            Property::NoTimeTravel => "no_time_travel",
        }
    }

    /// What kind of promise the property is: the book's "Properties" page's exclusion
    /// properties are safety, its liveness ones liveness, and its herds and cleanup
    /// efficiency (a herd or a node left behind wastes work but breaks no promise to a user).
    pub fn class(self) -> Class {
        match self {
            Property::MutualExclusionBelief
            | Property::MutualExclusionFenced
            | Property::LeaderUniqueBelief
            | Property::LeaderUniqueFenced
            | Property::RwExclusion
            | Property::LeaseBound
            | Property::LiveSessionExclusion
            | Property::NoTimeTravel => Class::Safety,
            Property::Progress
            | Property::Answered
            | Property::AnsweredByDeadline
            | Property::RevocationAnswered => Class::Liveness,
            Property::HerdFree | Property::NoOrphans => Class::Efficiency,
        }
    }
}

/// The kinds of property, most severe first (so that sorting by class puts the gravest
/// violation first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Nothing bad happens: exclusion, fencing, the lease bound.
    Safety,
    /// Something good eventually happens: waiters are served, asks answered.
    Liveness,
    /// Nothing is wasted: no herd of needless wake-ups, no node left behind.
    Efficiency,
}

/// Orders `violations` most severe first — safety, then liveness, then efficiency — keeping
/// the order they came in within a class, with the violations of `focus` (the property a
/// trace was shrunk for, say) ahead of all: the first is the one a report is about.
pub fn most_severe_first(violations: &mut [Violation], focus: Option<Property>) {
    violations.sort_by_key(|v| (Some(v.property) != focus, v.property.class()));
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a scenario expects of a property over its seed range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expectation {
    /// No seed violates it.
    Holds,
    /// At least one seed violates it.
    Violated,
    /// Not checked.
    Unchecked,
}

impl Expectation {
    /// The expectation as scenario files spell it.
    pub fn name(self) -> &'static str {
        match self {
            Expectation::Holds => "holds",
            Expectation::Violated => "violated",
            Expectation::Unchecked => "unchecked",
        }
    }

    /// Whether a property is as expected, given whether any run (a seed, a real run, a model
    /// checker's search) violated it: `holds` wants none to, `violated` at least one, and
    /// `unchecked` takes either. Every verdict on an expectation is this one.
    pub fn is_met(self, violated: bool) -> bool {
        match self {
            Expectation::Holds => !violated,
            Expectation::Violated => violated,
            Expectation::Unchecked => true,
        }
    }

    /// Why `violating` of `runs` runs (counted in `unit`s: "seeds", "runs", ...) do not meet
    /// this expectation of `property`, or `None` when they do: the one wording of an unmet
    /// expectation, `progress: expected to hold, violated in 3 of 200 seeds` or
    /// `herd_free: expected a violation, found none in 200 seeds`.
    pub fn unmet(
        self,
        property: impl fmt::Display,
        violating: u64,
        runs: u64,
        unit: &str,
    ) -> Option<String> {
        if self.is_met(violating > 0) {
            return None;
        }
        Some(match self {
            Expectation::Violated => {
                format!("{property}: expected a violation, found none in {runs} {unit}")
            }
            _ => format!("{property}: expected to hold, violated in {violating} of {runs} {unit}"),
        })
    }
}

/// One violation a checker found in a trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The property violated.
    pub property: Property,
    /// When the violation begins (trace time `t`).
    pub at: u64,
    /// When it ends, for violations that span an interval (an overlap of holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<u64>,
    /// The clients involved.
    pub clients: Vec<ClientSlot>,
    /// Indices into the trace's events of the events involved.
    pub events: Vec<usize>,
    /// One sentence a person can read.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn violation(property: Property, at: u64) -> Violation {
        Violation {
            property,
            at,
            until: None,
            clients: Vec::new(),
            events: Vec::new(),
            message: String::new(),
        }
    }

    #[test]
    fn violations_order_safety_then_liveness_then_efficiency_stably() {
        use Property::*;
        let mut found: Vec<Violation> = [
            (HerdFree, 1),
            (Progress, 2),
            (NoOrphans, 3),
            (Answered, 4),
            (MutualExclusionFenced, 5),
            (HerdFree, 6),
        ]
        .map(|(p, at)| violation(p, at))
        .into();
        most_severe_first(&mut found, None);
        let order: Vec<(Property, u64)> = found.iter().map(|v| (v.property, v.at)).collect();
        assert_eq!(
            order,
            [
                (MutualExclusionFenced, 5),
                (Progress, 2),
                (Answered, 4),
                (HerdFree, 1),
                (NoOrphans, 3),
                (HerdFree, 6)
            ]
        );
        most_severe_first(&mut found, Some(HerdFree));
        let order: Vec<u64> = found.iter().map(|v| v.at).collect();
        assert_eq!(order, [1, 6, 5, 2, 4, 3], "the focus first, then by class");
    }

    #[test]
    fn an_expectation_is_met_by_what_it_names_and_worded_once() {
        let met = |e: Expectation, violating| e.unmet(Property::Progress, violating, 200, "seeds");
        assert_eq!(met(Expectation::Holds, 0), None);
        assert_eq!(met(Expectation::Violated, 3), None);
        assert_eq!(met(Expectation::Unchecked, 0), None);
        assert_eq!(met(Expectation::Unchecked, 3), None);
        assert_eq!(
            met(Expectation::Holds, 3).as_deref(),
            Some("progress: expected to hold, violated in 3 of 200 seeds")
        );
        assert_eq!(
            met(Expectation::Violated, 0).as_deref(),
            Some("progress: expected a violation, found none in 200 seeds")
        );
    }
}
