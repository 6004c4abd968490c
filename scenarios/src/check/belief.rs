//! The belief properties, read off the holds as the clients believed them (a hold runs from
//! `Acquired` or `IsLeader` until the first of the release call — `Release`, `Relinquish`,
//! `Close` —, `Suspended`, `NotLeader`, `Lost` or a crash of the client; `Reconnected` with
//! the same session holds again):
//! - `mutual_exclusion_belief`: no two holders (owner on a client) hold an exclusive lock at
//!   one instant;
//! - `leader_unique_belief`: no two participants believe they lead at one instant;
//! - `rw_exclusion`: a write hold overlaps no hold of another holder, read or write (the
//!   write holder's own read hold, a downgrade, is allowed);
//! - `live_session_exclusion`: any of those overlaps, narrowed to the instants at which the
//!   sessions of both holds are alive on the server (see [`LiveSessions`]). A holder whose
//!   session the server has expired believes on stale news (what fencing is for); two holders
//!   on live sessions are a recipe bug.

use lock::recipes::Mode;

use crate::property::{Property, Violation};
use crate::trace::Trace;

use super::live_sessions::LiveSessions;
use super::timeline::{Interval, Role, Timeline};
use super::when;

/// Every overlap of two holds that `property` forbids.
pub fn check(trace: &Trace, property: Property) -> Vec<Violation> {
    let timeline = Timeline::of(trace);
    let live = (property == Property::LiveSessionExclusion).then(|| LiveSessions::of(trace));
    let len = trace.events.len();
    let mut violations = Vec::new();
    for (i, a) in timeline.holds.iter().enumerate() {
        for b in &timeline.holds[i + 1..] {
            if a.who == b.who || !conflict(property, a.role, b.role) {
                continue;
            }
            let mut window = (b.start, a.end_or(len).min(b.end_or(len)));
            if let Some(live) = &live {
                for hold in [a, b] {
                    let (from, to) = live.alive(live.session_at(hold.who.0, hold.start));
                    window = (window.0.max(from), window.1.min(to));
                }
            }
            if window.0 < window.1 {
                violations.push(overlap(trace, property, a, b, window));
            }
        }
    }
    violations
}

/// Whether holds of roles `a` and `b` by two holders at once break `property`.
fn conflict(property: Property, a: Role, b: Role) -> bool {
    let write = Role::Lock(Mode::Write);
    match property {
        Property::LeaderUniqueBelief => a == Role::Leader && b == Role::Leader,
        Property::RwExclusion => a == write || b == write,
        Property::LiveSessionExclusion => [
            Property::MutualExclusionBelief,
            Property::LeaderUniqueBelief,
            Property::RwExclusion,
        ]
        .into_iter()
        .any(|exclusive| conflict(exclusive, a, b)),
        _ => a == Role::Lock(Mode::Exclusive) && b == Role::Lock(Mode::Exclusive),
    }
}

/// The violation of `a` and `b` overlapping (`a` starts first) over the events
/// `[start, end)`.
fn overlap(
    trace: &Trace,
    property: Property,
    a: &Interval,
    b: &Interval,
    (start, end): (usize, usize),
) -> Violation {
    let len = trace.events.len();
    let t = |index: usize| trace.events[index.min(len - 1)].t;
    let until = (end < len).then(|| t(end));
    let mut events = vec![a.start, b.start];
    events.extend((start > b.start).then_some(start));
    events.extend((end < len).then_some(end));
    let token = |i: &Interval| {
        i.token
            .map_or_else(String::new, |t| format!(" (token {t})"))
    };
    let till = until.map_or_else(|| "the end of the run".to_owned(), |t| when(trace, t));
    let (both, got, had) = match wording(property, a.role) {
        Property::LeaderUniqueBelief => (
            "both believed they were leader".to_owned(),
            "became leader".to_owned(),
            "still led".to_owned(),
        ),
        Property::RwExclusion => (
            format!(
                "held the {} and the {} lock at once",
                side(a.role),
                side(b.role)
            ),
            format!("acquired the {} lock", side(b.role)),
            format!("still held the {} lock", side(a.role)),
        ),
        _ => (
            "both believed they held the lock".to_owned(),
            "acquired".to_owned(),
            "still held it".to_owned(),
        ),
    };
    let live = match property {
        Property::LiveSessionExclusion => " while both their sessions were alive on the server",
        _ => "",
    };
    let message = format!(
        "{} and {} {both}{live} from {} until {}: {}{} {got} at {} while {}{} {had}",
        a.who.0,
        b.who.0,
        when(trace, t(start)),
        till,
        b.who.0,
        token(b),
        when(trace, t(b.start)),
        a.who.0,
        token(a),
    );
    Violation {
        property,
        at: t(start),
        until,
        clients: vec![a.who.0, b.who.0],
        events,
        message,
    }
}

/// The belief property whose words describe an overlap of `property` beginning with a hold
/// of `role`.
fn wording(property: Property, role: Role) -> Property {
    match (property, role) {
        (Property::LiveSessionExclusion, Role::Leader) => Property::LeaderUniqueBelief,
        (Property::LiveSessionExclusion, Role::Lock(Mode::Read | Mode::Write)) => {
            Property::RwExclusion
        }
        _ => property,
    }
}

/// `read` or `write`, for messages.
fn side(role: Role) -> &'static str {
    match role {
        Role::Lock(Mode::Read) => "read",
        Role::Lock(Mode::Write) => "write",
        _ => "exclusive",
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
        assert_eq!(check(&trace, Property::MutualExclusionBelief), []);
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
        let violations = check(&trace, Property::MutualExclusionBelief);
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
            check(&trace, Property::MutualExclusionBelief)[0].message,
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
        assert_eq!(check(&trace, Property::MutualExclusionBelief), []);
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
        let violations = check(&trace, Property::MutualExclusionBelief);
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
        assert_eq!(check(&trace, Property::MutualExclusionBelief), []);
        let trace = Build::new().acquired(0, 5).acquired(1, 6).trace();
        let violations = check(&trace, Property::MutualExclusionBelief);
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
        assert_eq!(check(&trace, Property::MutualExclusionBelief).len(), 1);
    }

    #[test]
    fn two_leaders_at_once_break_leader_uniqueness_and_not_lock_exclusion() {
        let trace = Build::new()
            .start(0)
            .start(1)
            .leads(0, 5)
            .leads(1, 6)
            .not_leader(0)
            .close(1)
            .trace();
        let violations = check(&trace, Property::LeaderUniqueBelief);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].events, [2, 3, 4]);
        assert_eq!(
            violations[0].message,
            "c0 and c1 both believed they were leader from 3.000 ms until 4.000 ms: c1 (token 6) \
             became leader at 3.000 ms while c0 (token 5) still led"
        );
        assert_eq!(check(&trace, Property::MutualExclusionBelief), []);
    }

    #[test]
    fn a_leader_that_is_told_not_leader_stops_leading() {
        let trace = Build::new()
            .start(0)
            .leads(0, 5)
            .not_leader(0)
            .leads(1, 6)
            .close(1)
            .trace();
        assert_eq!(check(&trace, Property::LeaderUniqueBelief), []);
    }

    #[test]
    fn readers_share_and_a_writer_excludes_everyone_but_its_own_read_hold() {
        let readers = Build::new()
            .acquired_as(0, 5, Mode::Read)
            .acquired_as(1, 6, Mode::Read)
            .release_as(0, Mode::Read)
            .acquired_as(1, 6, Mode::Write)
            .acquired_as(1, 7, Mode::Read)
            .trace();
        assert_eq!(check(&readers, Property::RwExclusion), []);
        let writer = Build::new()
            .acquired_as(0, 5, Mode::Write)
            .acquired_as(1, 6, Mode::Read)
            .release_as(0, Mode::Write)
            .trace();
        let violations = check(&writer, Property::RwExclusion);
        assert_eq!(violations.len(), 1);
        assert_eq!(
            violations[0].message,
            "c0 and c1 held the write and the read lock at once from 1.000 ms until 2.000 ms: c1 \
             (token 6) acquired the read lock at 1.000 ms while c0 (token 5) still held the \
             write lock"
        );
    }

    /// c0 holds on session 1 and c1 on session 2; `expire` ends session 1 before c1 acquires.
    fn two_holders(expire: bool) -> Trace {
        let created = crate::trace::ServerSession::Created;
        let mut build = Build::new()
            .server_session(1, created)
            .connected(0, 1)
            .server_session(2, created)
            .connected(1, 2)
            .acquired(0, 5);
        if expire {
            build = build.server_session(1, crate::trace::ServerSession::Expired);
        }
        build.acquired(1, 6).release(1).release(0).trace()
    }

    #[test]
    fn holders_on_live_sessions_break_live_session_exclusion_and_a_stale_one_does_not() {
        let stale = two_holders(true);
        assert_eq!(check(&stale, Property::MutualExclusionBelief).len(), 1);
        assert_eq!(check(&stale, Property::LiveSessionExclusion), []);
        let live = two_holders(false);
        let violations = check(&live, Property::LiveSessionExclusion);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].events, [4, 5, 6]);
        assert_eq!(
            violations[0].message,
            "c0 and c1 both believed they held the lock while both their sessions were alive on \
             the server from 5.000 ms until 6.000 ms: c1 (token 6) acquired at 5.000 ms while c0 \
             (token 5) still held it"
        );
    }

    #[test]
    fn live_session_exclusion_starts_when_both_sessions_are_alive_and_covers_every_family() {
        let created = crate::trace::ServerSession::Created;
        let trace = Build::new()
            .connected(0, 1)
            .leads(0, 5)
            .connected(1, 2)
            .leads(1, 6)
            .server_session(2, created)
            .not_leader(1)
            .trace();
        let violations = check(&trace, Property::LiveSessionExclusion);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].events, [1, 3, 4, 5]);
        assert!(
            violations[0].message.starts_with(
                "c0 and c1 both believed they were leader while both their sessions were alive \
                 on the server from 4.000 ms"
            ),
            "{}",
            violations[0].message
        );
        let readers = Build::new()
            .acquired_as(0, 5, Mode::Read)
            .acquired_as(1, 6, Mode::Read)
            .acquired_as(2, 7, Mode::Write)
            .trace();
        assert_eq!(check(&readers, Property::LiveSessionExclusion).len(), 2);
        let leases = Build::new()
            .acquired_as(0, 5, Mode::Lease)
            .acquired_as(1, 6, Mode::Lease)
            .trace();
        assert_eq!(check(&leases, Property::LiveSessionExclusion), []);
    }
}
