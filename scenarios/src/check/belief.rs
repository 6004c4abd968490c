//! `mutual_exclusion_belief`: no two holders (owner on a client) believe they hold the lock at
//! one instant. A hold runs from `Acquired` until the first of the release call, `Suspended`,
//! `Lost` or a crash of the client; `Reconnected` with the same session holds again.

use crate::property::{Property, Violation};
use crate::trace::Trace;

use super::timeline::{Interval, Timeline};
use super::when;

/// Every overlap of two holds.
pub fn check(trace: &Trace) -> Vec<Violation> {
    let timeline = Timeline::of(trace);
    let len = trace.events.len();
    let mut violations = Vec::new();
    for (i, a) in timeline.holds.iter().enumerate() {
        for b in &timeline.holds[i + 1..] {
            if b.start >= a.end_or(len) {
                continue;
            }
            if a.who != b.who {
                violations.push(overlap(trace, a, b));
            }
        }
    }
    violations
}

/// The violation of `a` and `b` overlapping (`a` starts first).
fn overlap(trace: &Trace, a: &Interval, b: &Interval) -> Violation {
    let len = trace.events.len();
    let t = |index: usize| trace.events[index.min(len - 1)].t;
    let end = a.end_or(len).min(b.end_or(len));
    let until = (end < len).then(|| t(end));
    let mut events = vec![a.start, b.start];
    events.extend((end < len).then_some(end));
    let token = |i: &Interval| {
        i.token
            .map_or_else(String::new, |t| format!(" (token {t})"))
    };
    let till = until.map_or_else(|| "the end of the run".to_owned(), |t| when(trace, t));
    let message = format!(
        "{} and {} both believed they held the lock from {} until {}: {}{} acquired at {} while \
         {}{} still held it",
        a.who.0,
        b.who.0,
        when(trace, t(b.start)),
        till,
        b.who.0,
        token(b),
        when(trace, t(b.start)),
        a.who.0,
        token(a),
    );
    Violation {
        property: Property::MutualExclusionBelief,
        at: t(b.start),
        until,
        clients: vec![a.who.0, b.who.0],
        events,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::fixtures::Build;
    use lock::ids::ClientSlot;

    #[test]
    fn handing_the_lock_over_is_not_an_overlap() {
        let trace = Build::new()
            .acquire(0)
            .acquire(1)
            .acquired(0, 5)
            .release(0)
            .acquired(1, 6)
            .release(1)
            .trace();
        assert_eq!(check(&trace), []);
    }

    #[test]
    fn an_acquire_before_the_release_call_overlaps() {
        let trace = Build::new()
            .acquire(0)
            .acquired(0, 5)
            .acquire(1)
            .acquired(1, 6)
            .release(0)
            .release(1)
            .trace();
        let violations = check(&trace);
        assert_eq!(violations.len(), 1);
        let v = &violations[0];
        assert_eq!(v.clients, [ClientSlot(0), ClientSlot(1)]);
        assert_eq!(v.events, [1, 3, 4]);
        assert_eq!((v.at, v.until), (3_000_000, Some(4_000_000)));
        assert_eq!(
            v.message,
            "c0 and c1 both believed they held the lock from 3.000 ms until 4.000 ms: c1 (token \
             6) acquired at 3.000 ms while c0 (token 5) still held it"
        );
    }

    #[test]
    fn model_traces_name_steps_not_milliseconds() {
        let mut trace = Build::new()
            .acquired(0, 5)
            .acquired(1, 6)
            .release(0)
            .trace();
        trace.meta.source = crate::trace::Source::Model;
        for (step, event) in trace.events.iter_mut().enumerate() {
            event.t = step as u64;
        }
        assert_eq!(
            check(&trace)[0].message,
            "c0 and c1 both believed they held the lock from step 1 until step 2: c1 (token 6) \
             acquired at step 1 while c0 (token 5) still held it"
        );
    }

    #[test]
    fn suspended_and_lost_end_a_hold() {
        let trace = Build::new()
            .acquired(0, 5)
            .suspended(0)
            .acquired(1, 6)
            .release(1)
            .acquired(2, 7)
            .lost(2)
            .acquired(0, 8)
            .trace();
        assert_eq!(check(&trace), []);
    }

    #[test]
    fn a_reconnected_holder_holds_again() {
        let trace = Build::new()
            .acquired(0, 5)
            .suspended(0)
            .acquired(1, 6)
            .reconnected(0)
            .release(1)
            .trace();
        let violations = check(&trace);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].events, [2, 3, 4]);
    }

    #[test]
    fn a_crash_ends_a_hold_and_an_open_hold_overlaps_to_the_end() {
        let crash = crate::fault::Fault::Crash { client: 0 };
        let trace = Build::new()
            .acquired(0, 5)
            .fault(crash)
            .acquired(1, 6)
            .trace();
        assert_eq!(check(&trace), []);
        let trace = Build::new().acquired(0, 5).acquired(1, 6).trace();
        let violations = check(&trace);
        assert_eq!(violations[0].until, None);
        assert!(violations[0].message.contains("until the end of the run"));
    }

    #[test]
    fn a_reentrant_hold_ends_at_the_last_release() {
        let trace = Build::new()
            .acquired(0, 5)
            .acquired(0, 5)
            .release(0)
            .acquired(1, 6)
            .release(0)
            .trace();
        assert_eq!(check(&trace).len(), 1);
    }
}
