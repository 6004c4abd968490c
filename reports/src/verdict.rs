//! A violation in words: who, what, and for how long. The banner, the timeline labels and
//! the story all say it the same way.

use coordination::ids::ClientSlot;
use recipe_table::property::{Property, Violation};

use crate::clock::Clock;

/// The clients as a list: `c0`, `c0 and c1`, `c0, c1 and c2`.
pub(crate) fn who(clients: &[ClientSlot]) -> String {
    let names: Vec<String> = clients.iter().map(ToString::to_string).collect();
    match names.as_slice() {
        [] => "no client".to_owned(),
        names => and_list(names),
    }
}

/// Items as a list: `a`, `a and b`, `a, b and c` (nothing for none).
pub(crate) fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
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

/// Whether the violation is an overlap: holding something at once. `live_session_exclusion`
/// is also violated by one client alone, whose hold outlived the connection-state change at
/// which the error policy ends it.
pub(crate) fn is_overlap(violation: &Violation) -> bool {
    match violation.property {
        Property::MutualExclusionBelief
        | Property::LeaderUniqueBelief
        | Property::RwExclusion
        | Property::LeaseBound => true,
        Property::LiveSessionExclusion => !is_kept_hold(violation),
        _ => false,
    }
}

/// Whether `live_session_exclusion` was violated by one client keeping its hold past the
/// connection-state change that ends it, rather than by an overlap.
fn is_kept_hold(violation: &Violation) -> bool {
    violation.property == Property::LiveSessionExclusion && violation.clients.len() == 1
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
        Property::LiveSessionExclusion if is_kept_hold(violation) => {
            format!("Recipe bug: {who} kept its hold past the connection-state change that ends it")
        }
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
        Property::NoTimeTravel => {
            format!("Time travel: {who} read an older view of the tree than it had been told of")
        }
    }
}

/// The timeline's label over the violation: `⚠ c0 + c1 both hold · 1.850s`.
pub(crate) fn label(violation: &Violation, clock: Clock) -> String {
    let names: Vec<String> = violation.clients.iter().map(ToString::to_string).collect();
    let lasting = extent(violation)
        .map(|d| format!(" · {}", clock.duration(d)))
        .unwrap_or_default();
    if is_overlap(violation) {
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
            Property::LiveSessionExclusion => "hold kept",
            Property::NoTimeTravel => "time travel",
            overlap => overlap.name(),
        };
        format!("⚠ {what}{lasting}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::Source;

    fn live_session_exclusion(clients: &[ClientSlot], until: Option<u64>) -> Violation {
        Violation {
            property: Property::LiveSessionExclusion,
            at: 7,
            until,
            clients: clients.to_vec(),
            events: vec![7],
            message: String::new(),
        }
    }

    #[test]
    fn a_hold_kept_alone_reads_as_kept_not_as_an_overlap() {
        let clock = Clock::new(Source::Model);
        let kept = live_session_exclusion(&[ClientSlot(0)], None);
        assert!(!is_overlap(&kept));
        assert_eq!(
            headline(&kept, clock),
            "Recipe bug: c0 kept its hold past the connection-state change that ends it"
        );
        assert_eq!(label(&kept, clock), "⚠ hold kept");
        let overlap = live_session_exclusion(&[ClientSlot(0), ClientSlot(1)], Some(9));
        assert!(is_overlap(&overlap));
        assert_eq!(label(&overlap, clock), "⚠ c0 + c1 both hold · 2 steps");
    }

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
