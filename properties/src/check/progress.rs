//! `progress`: once every fault has healed, each waiter is served within the grace the
//! scenario allows; a waiter still unserved at the horizon, after waiting at least the grace
//! since the faults healed (or since it began waiting, if later), is a violation. Who waits
//! is the [`Waits`] monitor's to say (the model keeps the same one): a waiter whose ask failed
//! because of a fault (its session lost, its node vanished) has given up, not been served,
//! and waits on until a later ask of its is granted.
//!
//! `answered` is the same check counting only the waiters that still ask: one that gave up
//! has had its answer, so a violation of `answered` is a hang, not a give-up.

use std::cell::OnceCell;

use crate::monitor::{Key, Observation, Waits};
use recipe_table::property::{Property, Violation};
use trace::{EventKind, Source, Trace};

use super::Context;
use super::healed::healed_at;
use super::{ms, when};

/// A trace's end and the [`Waits`] monitor folded over it (none while a fault is in force at
/// its end), worked out once for both properties (see [`unserved`]).
pub type Folded = OnceCell<Option<(End, Marks, Marks)>>;

/// Every waiter unserved at the horizon (`progress`).
pub fn check(trace: &Trace, cx: &Context) -> Vec<Violation> {
    unserved(trace, cx, Property::Progress, &Folded::new())
}

/// Every waiter still asking at the horizon, its ask neither granted nor answered otherwise
/// (`answered`): a waiter that gave up is not one.
pub fn check_answered(trace: &Trace, cx: &Context) -> Vec<Violation> {
    unserved(trace, cx, Property::Answered, &Folded::new())
}

/// The waits unserved at the horizon as `property` (`progress` or `answered`) counts them;
/// `folded` holds the end and the monitor's fold of `trace` once either property has needed
/// them.
pub(super) fn unserved(
    trace: &Trace,
    cx: &Context,
    property: Property,
    folded: &Folded,
) -> Vec<Violation> {
    let folded = folded.get_or_init(|| {
        let end = End::of(trace, cx)?;
        let (unserved, gave_up) = fold(trace);
        Some((end, unserved, gave_up))
    });
    let Some((end, unserved, gave_up)) = folded else {
        return Vec::new();
    };
    let &End {
        healed: healed_t,
        horizon,
        ..
    } = end;
    let mut unserved = unserved.clone();
    if property == Property::Answered {
        unserved.retain(|(key, _)| marked(gave_up, key).is_none());
    }
    // Only a violation's message needs it: no scan on the runs that pass.
    let faulted = || (trace.events.iter()).any(|e| matches!(e.kind, EventKind::FaultStart { .. }));
    let mut violations: Vec<Violation> = (unserved.into_iter())
        .filter_map(|(key, start)| {
            let since = trace.events[start].t;
            end.overdue(since).then(|| {
                let client = key.0.0;
                // A waiter that gave up is not waiting any more: it was not served.
                let gave_up_at = marked(gave_up, &key).map(|at| trace.events[at].t);
                let failed = gave_up_at.map_or_else(String::new, |at| {
                    format!(", gave up when its ask failed at {},", when(trace, at))
                });
                // What became of the wait, at the end of a run in time and of a model's path.
                let (by_the_horizon, by_the_end) = match gave_up_at {
                    Some(_) => (
                        "was not granted the lock again by the horizon",
                        "was not granted the lock again before nothing but a fault could happen \
                         any more",
                    ),
                    None => (
                        "was still waiting at the horizon",
                        "was still waiting when nothing but a fault could happen any more",
                    ),
                };
                let message = match trace.meta.source {
                    Source::Model => format!(
                        "{client} began waiting for the lock at {}{failed} and {by_the_end} ({})",
                        when(trace, since),
                        when(trace, horizon),
                    ),
                    Source::Sim | Source::Real => format!(
                        "{client} began waiting for the lock at {}{failed} and {by_the_horizon} \
                         ({}), {}",
                        ms(since),
                        ms(horizon),
                        if faulted() {
                            format!(
                                "{} after the last fault healed",
                                ms(horizon - healed_t.min(horizon))
                            )
                        } else {
                            "in a run without faults".to_owned()
                        }
                    ),
                };
                let mut events = vec![start];
                events.extend(marked(gave_up, &key));
                Violation {
                    property,
                    at: since,
                    until: Some(horizon),
                    clients: vec![client],
                    events,
                    message,
                }
            })
        })
        .collect();
    violations.sort_by(|a, b| a.events.cmp(&b.events));
    violations
}

/// The end of a run as `progress` judges what is still pending there (and
/// `revocation_answered` with it): the instant the last fault healed, the horizon (the
/// context's, or the trace's last instant if later) and the grace.
#[derive(Clone, Copy, Debug)]
pub(super) struct End {
    /// When the last fault healed (0 in a run without faults).
    pub healed: u64,
    /// When the run is judged.
    pub horizon: u64,
    grace: u64,
}

impl End {
    /// The end of `trace`, `None` while a fault is still in force at its end (no verdict).
    pub(super) fn of(trace: &Trace, cx: &Context) -> Option<End> {
        let healed = healed_at(&trace.events)?;
        Some(End {
            healed: trace.events.get(healed).map_or(0, |e| e.t),
            horizon: cx.horizon.max(trace.events.last().map_or(0, |e| e.t)),
            grace: cx.progress_grace,
        })
    }

    /// Whether something pending since `since` is overdue at the horizon: the grace has
    /// passed since the later of `since` and the faults' healing.
    pub(super) fn overdue(&self, since: u64) -> bool {
        since.max(self.healed).saturating_add(self.grace) <= self.horizon
    }
}

/// Each wait with the index of an event, sorted by wait.
pub(super) type Marks = Vec<(Key, usize)>;

/// Folds the [`Waits`] monitor over `trace`: the waits unserved at its end, each with the
/// event that began it, and, of those whose waiter gave up, the event at which it did.
fn fold(trace: &Trace) -> (Marks, Marks) {
    let mut waits = Waits::default();
    let mut began = Marks::new();
    let mut gave_up = Marks::new();
    // The waits unserved, sorted by wait, before and after the event. `began` marks exactly
    // the unserved waits and `gave_up` those whose waiter gave up, so an event that leaves
    // them as they were changes neither.
    let mut unserved: Vec<(Key, bool)> = Vec::new();
    let mut before: Vec<(Key, bool)> = Vec::new();
    for (index, event) in trace.events.iter().enumerate() {
        let Some(seen) = Observation::of_event(event.client, &event.kind) else {
            continue;
        };
        // Only calls, notices and crashes change the waits (`Waits::observe`).
        let may_change = matches!(
            seen,
            Observation::Call(..) | Observation::Notice(..) | Observation::Crash(_)
        );
        waits.observe(seen);
        if !may_change {
            continue;
        }
        std::mem::swap(&mut before, &mut unserved);
        unserved.clear();
        unserved.extend(waits.unserved());
        if unserved == before {
            continue;
        }
        // Whether `key` is unserved, and if so whether its waiter gave up.
        let state =
            |key: &Key| (unserved.binary_search_by(|(k, _)| k.cmp(key))).map(|at| unserved[at].1);
        began.retain(|(key, _)| state(key).is_ok());
        gave_up.retain(|(key, _)| state(key) == Ok(true));
        for &(key, given_up) in &unserved {
            mark(&mut began, key, index);
            if given_up {
                mark(&mut gave_up, key, index);
            }
        }
    }
    (began, gave_up)
}

/// Marks `key` at event `index`, unless it is marked already.
fn mark(marks: &mut Marks, key: Key, index: usize) {
    if let Err(at) = marks.binary_search_by(|(k, _)| k.cmp(&key)) {
        marks.insert(at, (key, index));
    }
}

/// The event at which `key` is marked.
fn marked(marks: &Marks, key: &Key) -> Option<usize> {
    (marks.binary_search_by(|(k, _)| k.cmp(key)))
        .ok()
        .map(|at| marks[at].1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::ending as cx;
    use coordination::recipes::FailReason;
    use scenarios::fault::Fault;
    use trace::build::Build;

    const PAUSE: Fault = Fault::Pause {
        client: 0,
        for_ms: 5,
    };

    #[test]
    fn served_waiters_pass() {
        let trace = Build::new().acquire(0).acquired(0, 5).acquire(1).trace();
        assert_eq!(check(&trace, &cx(100, 10)).len(), 1);
        let trace = Build::new()
            .acquire(0)
            .acquired(0, 5)
            .acquire(1)
            .release(0)
            .acquired(1, 6)
            .trace();
        assert_eq!(check(&trace, &cx(100, 10)), []);
        let trace = Build::new()
            .acquire(0)
            .failed_for(0, FailReason::UpgradeWouldDeadlock)
            .acquire(1)
            .timed_out(1)
            .trace();
        assert_eq!(check(&trace, &cx(100, 10)), [], "refusals the run expects");
    }

    #[test]
    fn a_waiter_that_gives_up_at_lost_and_never_acquires_is_caught() {
        let gave_up = Build::new().acquire(0).acquired(0, 5).acquire(1).failed(1);
        let violations = check(&gave_up.clone().trace(), &cx(100, 10));
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].events, [2, 3]);
        assert_eq!(
            violations[0].message,
            "c1 began waiting for the lock at 2.000 ms, gave up when its ask failed at 3.000 ms, \
             and was not granted the lock again by the horizon (100.000 ms), in a run without \
             faults"
        );
        let retried = gave_up.release(0).acquire(1).acquired(1, 6).trace();
        assert_eq!(check(&retried, &cx(100, 10)), [], "a later ask was granted");
    }

    #[test]
    fn a_waiter_that_gave_up_is_answered_and_one_still_asking_is_not() {
        let gave_up = Build::new().acquire(0).acquired(0, 5).acquire(1).failed(1);
        assert_eq!(check_answered(&gave_up.clone().trace(), &cx(100, 10)), []);
        let asking = gave_up.acquire(1).trace();
        let violations = check_answered(&asking, &cx(100, 10));
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].property, Property::Answered);
        assert_eq!(violations[0].events, [2], "unserved since its first ask");
        assert_eq!(check(&asking, &cx(100, 10)).len(), 1, "unserved too");
    }

    #[test]
    fn a_stuck_waiter_after_the_faults_healed_is_caught() {
        let trace = Build::new()
            .acquire(0)
            .acquired(0, 5)
            .acquire(1)
            .fault(PAUSE)
            .at_ms(10)
            .fault_end(PAUSE)
            .trace();
        let violations = check(&trace, &cx(100, 50));
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].events, [2]);
        assert_eq!(
            violations[0].message,
            "c1 began waiting for the lock at 2.000 ms and was still waiting at the horizon \
             (100.000 ms), 90.000 ms after the last fault healed"
        );
        assert_eq!(check(&trace, &cx(100, 95)), [], "within the grace");
    }

    #[test]
    fn a_stuck_waiter_in_a_run_without_faults_is_told_so() {
        let trace = Build::new().acquire(0).acquired(0, 5).acquire(1).trace();
        let violations = check(&trace, &cx(100, 10));
        assert_eq!(
            violations[0].message,
            "c1 began waiting for the lock at 2.000 ms and was still waiting at the horizon \
             (100.000 ms), in a run without faults"
        );
    }

    #[test]
    fn no_verdict_while_a_fault_is_in_force() {
        let partition = Fault::Partition {
            a: scenarios::fault::Node::Server,
            b: scenarios::fault::Node::Client(0),
            oneway: false,
            for_ms: None,
        };
        let trace = Build::new().acquire(1).fault(partition.clone()).trace();
        assert_eq!(check(&trace, &cx(100, 10)), []);
        let trace = Build::new()
            .acquire(1)
            .fault(partition)
            .fault(Fault::Heal)
            .trace();
        assert_eq!(check(&trace, &cx(100, 10)).len(), 1);
    }
}
