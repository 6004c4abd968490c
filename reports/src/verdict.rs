//! A violation in words: who, what, and for how long. The banner, the timeline labels and
//! the story all say it the same way.

use lock::ids::ClientSlot;
use scenarios::property::{Property, Violation};

use crate::clock::Clock;

/// The clients as a list: `c0`, `c0 and c1`, `c0, c1 and c2`.
pub(crate) fn who(clients: &[ClientSlot]) -> String {
    let names: Vec<String> = clients.iter().map(ToString::to_string).collect();
    match names.as_slice() {
        [] => "no client".to_owned(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The violation's extent, when it spans an interval.
pub(crate) fn extent(violation: &Violation) -> Option<u64> {
    violation
        .until
        .filter(|&until| until > violation.at)
        .map(|until| until - violation.at)
}

/// Whether the property is about holding something at once: its violation is an overlap.
pub(crate) fn is_overlap(property: Property) -> bool {
    matches!(
        property,
        Property::MutualExclusionBelief
            | Property::LeaderUniqueBelief
            | Property::RwExclusion
            | Property::LeaseBound
            | Property::LiveSessionExclusion
    )
}

/// The headline: what went wrong, between whom, for how long.
pub(crate) fn headline(violation: &Violation, clock: Clock) -> String {
    let who = who(&violation.clients);
    let lasting = extent(violation)
        .map(|d| format!(" for {}", clock.duration(d)))
        .unwrap_or_default();
    match violation.property {
        Property::MutualExclusionBelief => {
            format!("Split brain: {who} both believed they held the lock{lasting}")
        }
        Property::LeaderUniqueBelief => {
            format!("Split brain: {who} both believed they led{lasting}")
        }
        Property::RwExclusion => format!("{who} held the read-write lock incompatibly{lasting}"),
        Property::LiveSessionExclusion => {
            format!("Recipe bug: {who} held at once while both their sessions were alive{lasting}")
        }
        Property::LeaseBound => {
            format!("{who} held more leases than the semaphore allows{lasting}")
        }
        Property::MutualExclusionFenced | Property::LeaderUniqueFenced => {
            format!("The protected resource was corrupted: accesses of {who} were not fenced")
        }
        Property::HerdFree => format!("Herd effect: one change woke {who}"),
        Property::Progress => format!("No progress: {who} still waiting when the run ended"),
        Property::Answered => {
            format!("Hang: {who} still waiting for an answer to its ask when the run ended")
        }
        Property::NoOrphans => "Orphaned lock nodes left after every session closed".to_owned(),
        Property::AnsweredByDeadline => {
            format!("Missed deadline: {who} still waited when its acquire's timeout was up")
        }
        Property::RevocationAnswered => {
            format!("Revocation dropped: {who} had no answer to its attempt to revoke the lock")
        }
    }
}

/// The timeline's label over the violation: `⚠ c0 + c1 both hold · 1.850s`.
pub(crate) fn label(violation: &Violation, clock: Clock) -> String {
    let names: Vec<String> = violation.clients.iter().map(ToString::to_string).collect();
    let lasting = extent(violation)
        .map(|d| format!(" · {}", clock.duration(d)))
        .unwrap_or_default();
    if is_overlap(violation.property) {
        let verb = if names.len() == 2 {
            "both hold"
        } else {
            "all hold"
        };
        format!("⚠ {} {verb}{lasting}", names.join(" + "))
    } else {
        let what = match violation.property {
            Property::MutualExclusionFenced | Property::LeaderUniqueFenced => "fencing broken",
            Property::HerdFree => "herd",
            Property::Progress => "no progress",
            Property::Answered => "unanswered",
            Property::NoOrphans => "orphaned node",
            Property::AnsweredByDeadline => "missed deadline",
            Property::RevocationAnswered => "revocation unanswered",
            overlap => overlap.name(),
        };
        format!("⚠ {what}{lasting}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_read_as_a_list() {
        assert_eq!(who(&[ClientSlot(0)]), "c0");
        assert_eq!(who(&[ClientSlot(0), ClientSlot(1)]), "c0 and c1");
        assert_eq!(
            who(&[ClientSlot(0), ClientSlot(1), ClientSlot(2)]),
            "c0, c1 and c2"
        );
    }
}
