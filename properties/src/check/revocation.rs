//! `revocation_answered`: every revocation attempt is answered by the end of the run. Which
//! attempts are unanswered is the [`Revokes`] monitor's to say (the model keeps the same
//! one); an attempt still unanswered at the horizon is a violation once the grace `progress`
//! allows has passed since the faults healed (or since the attempt, if later). Model traces
//! count steps and get no verdict here, as for `progress`: the model judges the end of a
//! path itself (nothing but a fault can happen any more).

use std::collections::{BTreeMap, VecDeque};

use coordination::recipes::{Call, Notice};

use crate::monitor::{Holder, Observation, Revokes};
use recipe_table::property::{Property, Violation};
use trace::{EventKind, Source, Trace};

use super::Context;
use super::progress::End;
use super::{ms, when};

/// Every attempt unanswered at the horizon.
pub fn check(trace: &Trace, cx: &Context) -> Vec<Violation> {
    let Some(end) = End::of(trace, cx) else {
        return Vec::new();
    };
    let faulted = (trace.events.iter()).any(|e| matches!(e.kind, EventKind::FaultStart { .. }));
    let at_the_end = match trace.meta.source {
        Source::Model => "when nothing but a fault could happen any more".to_owned(),
        Source::Sim | Source::Real if faulted => format!(
            "at the horizon ({}), {} after the last fault healed",
            ms(end.horizon),
            ms(end.horizon - end.healed.min(end.horizon))
        ),
        Source::Sim | Source::Real => {
            format!(
                "at the horizon ({}), in a run without faults",
                ms(end.horizon)
            )
        }
    };
    let mut violations = Vec::new();
    for ((client, owner), calls) in fold(trace) {
        for call in calls {
            let since = trace.events[call].t;
            if !end.overdue(since) {
                continue;
            }
            violations.push(Violation {
                property: Property::RevocationAnswered,
                at: since,
                until: Some(end.horizon),
                clients: vec![client],
                events: vec![call],
                message: format!(
                    "{client} (owner {}) attempted to revoke the lock at {} and had no answer \
                     {at_the_end}",
                    owner.0,
                    when(trace, since),
                ),
            });
        }
    }
    violations.sort_by(|a, b| a.events.cmp(&b.events));
    violations
}

/// Folds the [`Revokes`] monitor over `trace`: the calls of the attempts unanswered at its
/// end, by owner. An owner's attempts are answered in the order they were made (one
/// session's replies come in request order), so an answer settles the oldest.
fn fold(trace: &Trace) -> BTreeMap<Holder, VecDeque<usize>> {
    let mut revokes = Revokes::default();
    let mut calls: BTreeMap<Holder, VecDeque<usize>> = BTreeMap::new();
    for (index, event) in trace.events.iter().enumerate() {
        let Some(seen) = Observation::of_event(event.client, &event.kind) else {
            continue;
        };
        // Only these change the attempts (most events are replies and watch events).
        let changes = matches!(
            seen,
            Observation::Call(_, Call::AttemptRevoke { .. })
                | Observation::Notice(_, Notice::RevokeAttempted { .. })
                | Observation::Crash(_)
        );
        if !changes {
            continue;
        }
        revokes.observe(seen);
        let counts: BTreeMap<Holder, u16> = revokes.unanswered().collect();
        calls.retain(|holder, pending| {
            let count = usize::from(counts.get(holder).copied().unwrap_or(0));
            while pending.len() > count {
                pending.pop_front();
            }
            count > 0
        });
        for (holder, count) in counts {
            let pending = calls.entry(holder).or_default();
            while pending.len() < usize::from(count) {
                pending.push_back(index);
            }
        }
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::ending as cx;
    use scenarios::fault::{Fault, Node};
    use trace::build::{Build, OWNER};

    trait Revoking {
        fn attempt(self, client: u16) -> Build;
        fn answered(self, client: u16, delivered: bool) -> Build;
    }

    impl Revoking for Build {
        fn attempt(self, client: u16) -> Build {
            let call = Call::AttemptRevoke { owner: OWNER };
            self.push(Some(client), EventKind::Call { call })
        }

        fn answered(self, client: u16, delivered: bool) -> Build {
            let notice = Notice::RevokeAttempted {
                owner: OWNER,
                delivered,
            };
            self.notice(client, notice)
        }
    }

    #[test]
    fn answered_attempts_pass_delivered_or_not() {
        let trace = (Build::new().acquire(0).acquired(0, 5))
            .attempt(1)
            .answered(1, true)
            .attempt(1)
            .answered(1, false)
            .trace();
        assert_eq!(check(&trace, &cx(100, 10)), []);
    }

    #[test]
    fn an_attempt_dropped_by_the_recipe_is_caught() {
        // The mutant that drops `AttemptRevoke`: no answer ever comes.
        let trace = (Build::new().acquire(0).acquired(0, 5))
            .attempt(1)
            .acquire(1)
            .trace();
        let violations = check(&trace, &cx(100, 10));
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].events, [2]);
        assert_eq!(violations[0].clients, [coordination::ids::ClientSlot(1)]);
        assert_eq!(
            violations[0].message,
            "c1 (owner 1) attempted to revoke the lock at 2.000 ms and had no answer at the \
             horizon (100.000 ms), in a run without faults"
        );
        assert_eq!(check(&trace, &cx(100, 99)), [], "within the grace");
    }

    #[test]
    fn an_answer_settles_the_oldest_attempt() {
        let trace = (Build::new().attempt(1).attempt(1).answered(1, true)).trace();
        let violations = check(&trace, &cx(100, 10));
        assert_eq!(violations.len(), 1);
        assert_eq!(
            violations[0].events,
            [1],
            "the second attempt is unanswered"
        );
    }

    #[test]
    fn no_verdict_while_a_fault_is_in_force_nor_after_a_crash() {
        let partition = Fault::Partition {
            a: Node::Server,
            b: Node::Client(1),
            oneway: false,
            for_ms: None,
        };
        let trace = Build::new().attempt(1).fault(partition).trace();
        assert_eq!(check(&trace, &cx(100, 10)), []);
        let crash = Fault::Crash { client: 1 };
        let trace = Build::new().attempt(1).fault(crash).trace();
        assert_eq!(check(&trace, &cx(100, 10)), []);
    }
}
