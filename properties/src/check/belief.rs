//! The belief properties, read by folding the [`Beliefs`] monitor over a trace: holds are
//! believed from the recipe's grants until the user gives them back or the recipe says they
//! are over (see [`crate::monitor`]; the same monitor runs inside the model):
//! - `mutual_exclusion_belief`: no two holders (owner on a client) hold an exclusive lock at
//!   one instant;
//! - `leader_unique_belief`: no two participants believe they lead at one instant;
//! - `rw_exclusion`: a write hold overlaps no hold of another holder, read or write (the
//!   write holder's own read hold, a downgrade, is allowed);
//! - `live_session_exclusion`: any of those overlaps, narrowed to the instants at which both
//!   clients' current sessions are alive on the server. A holder whose session the server
//!   has expired believes on stale news (what fencing is for); two holders on live sessions
//!   are a recipe bug. So is a hold kept past the connection-state change at which the
//!   error policy ends it (standard: the client hears `Suspended`; session-based: `Lost`),
//!   which this property also reports.

use std::collections::BTreeMap;

use coordination::fencing::Token;
use coordination::ids::ClientSlot;
use coordination::recipe::SessionEvent;
use coordination::recipes::Mode;

use crate::monitor::{Beliefs, Conflict, ErrorPolicy, Holder, Key, Observation, Role};
use recipe_table::property::{Property, Violation};
use trace::Trace;

use super::tokens::Tokens;
use super::when;

/// A believed hold as messages tell it: whose, of what, since which event, with which token.
#[derive(Clone, Copy, Debug)]
struct Held {
    who: Holder,
    role: Role,
    start: usize,
    token: Option<Token>,
}

/// Whether `property` is one of the belief properties this module checks.
pub fn judges(property: Property) -> bool {
    matches!(
        property,
        Property::MutualExclusionBelief
            | Property::LeaderUniqueBelief
            | Property::RwExclusion
            | Property::LiveSessionExclusion
    )
}

/// Every overlap of two holds that `property` forbids, read by folding the [`Beliefs`]
/// monitor over the trace under `policy`; for `live_session_exclusion`, also every hold kept
/// past the connection-state change at which `policy` says it must end.
pub fn check(trace: &Trace, property: Property, policy: ErrorPolicy) -> Vec<Violation> {
    check_each(trace, &[property], policy).concat()
}

/// [`check`] for each of `properties`, in their order, from one fold of the monitor (its
/// state does not depend on the property judged).
pub fn check_each(
    trace: &Trace,
    properties: &[Property],
    policy: ErrorPolicy,
) -> Vec<Vec<Violation>> {
    let mut fold = Fold {
        trace,
        policy,
        beliefs: Beliefs::new(policy),
        held: BTreeMap::new(),
        tokens: Tokens::default(),
        obliged: BTreeMap::new(),
        judged: (properties.iter())
            .map(|&property| KeptRun {
                property,
                open: BTreeMap::new(),
                violations: Vec::new(),
            })
            .collect(),
    };
    for (index, event) in trace.events.iter().enumerate() {
        if let Some(seen) = Observation::of_event(event.client, &event.kind) {
            fold.step(index, seen);
        }
    }
    fold.finish()
}

/// The monitor being folded over a trace, with what messages need besides (event indices and
/// tokens, which the monitor leaves out).
struct Fold<'a> {
    trace: &'a Trace,
    policy: ErrorPolicy,
    beliefs: Beliefs,
    /// The believed holds, each since the event that began its belief.
    held: BTreeMap<Key, Held>,
    /// Each hold's token, from its latest grant.
    tokens: Tokens,
    /// Each client's latest connection-state change that obliged its holders, and where.
    obliged: BTreeMap<ClientSlot, (usize, SessionEvent)>,
    /// Each property judged.
    judged: Vec<KeptRun>,
}

/// One property's judgement so far.
struct KeptRun {
    property: Property,
    /// The forbidden pairs under way, each since the event that began it.
    open: BTreeMap<Conflict, usize>,
    violations: Vec<Violation>,
}

impl Fold<'_> {
    fn step(&mut self, index: usize, seen: Observation) {
        self.beliefs.observe(seen);
        self.tokens.observe(seen);
        if let Observation::Session(client, event) = seen
            && self.policy.obliges(event)
        {
            self.obliged.insert(client, (index, event));
        }
        // KeptRun on the holds as they stood before this event (its input may end them).
        if self.judges(Property::LiveSessionExclusion) {
            for key in self.beliefs.take_overdue() {
                self.report_kept(key, Some(index));
            }
        }
        // The most common events (replies, watch events, connection-state changes) change no
        // hold and no session's liveness: the conflicts and the believed holds are the ones
        // the previous step left, so `open` and `held` stand as they are.
        if matches!(
            seen,
            Observation::Input(_) | Observation::Session(..) | Observation::DeadlinePassed(..)
        ) {
            return;
        }
        let Fold {
            trace,
            beliefs,
            held,
            tokens,
            judged,
            ..
        } = &mut *self;
        for judged in judged.iter_mut() {
            let now: Vec<Conflict> = beliefs.conflicts(judged.property).collect();
            let ended: Vec<(Conflict, usize)> = (judged.open.iter())
                .filter(|(pair, _)| !now.contains(pair))
                .map(|(pair, from)| (*pair, *from))
                .collect();
            for (pair, from) in ended {
                judged.open.remove(&pair);
                let violation = overlap_of(trace, held, judged.property, pair, (from, Some(index)));
                judged.violations.push(violation);
            }
            for pair in now {
                judged.open.entry(pair).or_insert(index);
            }
        }
        held.retain(|key, _| beliefs.believes(key));
        for key in beliefs.believed() {
            let token = tokens.get(&key);
            held.entry(key).or_insert(Held {
                who: key.0,
                role: key.1,
                start: index,
                token,
            });
        }
    }

    fn finish(mut self) -> Vec<Vec<Violation>> {
        let Fold {
            trace,
            held,
            judged,
            ..
        } = &mut self;
        for judged in judged.iter_mut() {
            for (pair, from) in std::mem::take(&mut judged.open) {
                let violation = overlap_of(trace, held, judged.property, pair, (from, None));
                judged.violations.push(violation);
            }
        }
        if self.judges(Property::LiveSessionExclusion) {
            let kept: Vec<Key> = self.beliefs.kept_too_long().collect();
            for key in kept {
                self.report_kept(key, None);
            }
        }
        (self.judged.into_iter())
            .map(|mut judged| {
                judged.violations.sort_by(|a, b| a.events.cmp(&b.events));
                judged.violations
            })
            .collect()
    }

    /// Whether `property` is among those judged.
    fn judges(&self, property: Property) -> bool {
        self.judged.iter().any(|judged| judged.property == property)
    }

    /// `key`'s hold outlived the connection-state change at which the policy ends it: seen
    /// at event `at` (the client's next input), or at the end of the trace
    /// (`live_session_exclusion`).
    fn report_kept(&mut self, key: Key, at: Option<usize>) {
        let trace = self.trace;
        let Some(&(obliged, event)) = self.obliged.get(&key.0.0) else {
            return;
        };
        let hold = self.held[&key];
        let len = trace.events.len();
        let t = |index: usize| trace.events[index.min(len - 1)].t;
        let mut events = vec![hold.start, obliged];
        events.extend(at);
        let heard = match event {
            SessionEvent::Lost { .. } => "lost",
            _ => "suspended",
        };
        let policy = match self.policy {
            ErrorPolicy::Standard => "standard",
            ErrorPolicy::SessionBased => "session-based",
        };
        let (what, said) = match hold.role {
            Role::Leader => ("leadership", "not leader"),
            Role::Lock(mode) => (side_hold(mode), "suspended, lost or released"),
        };
        let next = at.map_or_else(
            || "the end of the run".to_owned(),
            |at| format!("its next input at {}", when(trace, t(at))),
        );
        let message = format!(
            "{} kept its {what}{} past {next} although it heard {heard} at {}, which ends {what} \
             under the {policy} error policy: the recipe never said {said}",
            hold.who.0,
            hold.token
                .map_or_else(String::new, |t| format!(" (token {t})")),
            when(trace, t(obliged)),
        );
        let violation = Violation {
            property: Property::LiveSessionExclusion,
            at: t(obliged),
            until: None,
            clients: vec![hold.who.0],
            events,
            message,
        };
        (self.judged.iter_mut())
            .filter(|judged| judged.property == Property::LiveSessionExclusion)
            .for_each(|judged| judged.violations.push(violation.clone()));
    }
}

/// The violation of `property` by the overlap of the holds of `pair` (both believed when
/// this is asked) over the events `[from, to)` (`to`: the end of the trace when `None`).
fn overlap_of(
    trace: &Trace,
    held: &BTreeMap<Key, Held>,
    property: Property,
    (a, b): Conflict,
    (from, to): (usize, Option<usize>),
) -> Violation {
    let (a, b) = (held[&a], held[&b]);
    let (a, b) = if b.start < a.start { (b, a) } else { (a, b) };
    let window = (from, to.unwrap_or(trace.events.len()));
    overlap(trace, property, &a, &b, window)
}

/// `hold of the lock`, `hold of the write lock`, `lease`, for messages.
fn side_hold(mode: Mode) -> &'static str {
    match mode {
        Mode::Exclusive => "hold of the lock",
        Mode::Read => "hold of the read lock",
        Mode::Write => "hold of the write lock",
        Mode::Lease => "lease",
    }
}

/// The violation of `a` and `b` overlapping (`a` starts first) over the events
/// `[start, end)`.
fn overlap(
    trace: &Trace,
    property: Property,
    a: &Held,
    b: &Held,
    (start, end): (usize, usize),
) -> Violation {
    let len = trace.events.len();
    let t = |index: usize| trace.events[index.min(len - 1)].t;
    let until = (end < len).then(|| t(end));
    let mut events = vec![a.start, b.start];
    events.extend((start > b.start).then_some(start));
    events.extend((end < len).then_some(end));
    let token = |i: &Held| {
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
    use coordination::ids::ClientSlot;
    use trace::build::Build;

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
        assert_eq!(
            check(
                &trace,
                Property::MutualExclusionBelief,
                ErrorPolicy::Standard
            ),
            []
        );
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
        let violations = check(
            &trace,
            Property::MutualExclusionBelief,
            ErrorPolicy::Standard,
        );
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
        trace.meta.source = trace::Source::Model;
        for (step, event) in trace.events.iter_mut().enumerate() {
            event.t = step as u64;
        }
        assert_eq!(
            check(
                &trace,
                Property::MutualExclusionBelief,
                ErrorPolicy::Standard
            )[0]
            .message,
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
        assert_eq!(
            check(
                &trace,
                Property::MutualExclusionBelief,
                ErrorPolicy::Standard
            ),
            []
        );
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
        let violations = check(
            &trace,
            Property::MutualExclusionBelief,
            ErrorPolicy::Standard,
        );
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].events, [2, 3, 4]);
    }

    #[test]
    fn a_crash_ends_a_hold_and_an_open_hold_overlaps_to_the_end() {
        let crash = scenarios::fault::Fault::Crash { client: 0 };
        let trace = Build::new()
            .acquired(0, 5)
            .fault(crash)
            .acquired(1, 6)
            .trace();
        assert_eq!(
            check(
                &trace,
                Property::MutualExclusionBelief,
                ErrorPolicy::Standard
            ),
            []
        );
        let trace = Build::new().acquired(0, 5).acquired(1, 6).trace();
        let violations = check(
            &trace,
            Property::MutualExclusionBelief,
            ErrorPolicy::Standard,
        );
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
        assert_eq!(
            check(
                &trace,
                Property::MutualExclusionBelief,
                ErrorPolicy::Standard
            )
            .len(),
            1
        );
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
        let violations = check(&trace, Property::LeaderUniqueBelief, ErrorPolicy::Standard);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].events, [2, 3, 4]);
        assert_eq!(
            violations[0].message,
            "c0 and c1 both believed they were leader from 3.000 ms until 4.000 ms: c1 (token 6) \
             became leader at 3.000 ms while c0 (token 5) still led"
        );
        assert_eq!(
            check(
                &trace,
                Property::MutualExclusionBelief,
                ErrorPolicy::Standard
            ),
            []
        );
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
        assert_eq!(
            check(&trace, Property::LeaderUniqueBelief, ErrorPolicy::Standard),
            []
        );
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
        assert_eq!(
            check(&readers, Property::RwExclusion, ErrorPolicy::Standard),
            []
        );
        let writer = Build::new()
            .acquired_as(0, 5, Mode::Write)
            .acquired_as(1, 6, Mode::Read)
            .release_as(0, Mode::Write)
            .trace();
        let violations = check(&writer, Property::RwExclusion, ErrorPolicy::Standard);
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
        let created = trace::ServerSession::Created;
        let mut build = Build::new()
            .server_session(1, created)
            .connected(0, 1)
            .server_session(2, created)
            .connected(1, 2)
            .acquired(0, 5);
        if expire {
            build = build.server_session(1, trace::ServerSession::Expired);
        }
        build.acquired(1, 6).release(1).release(0).trace()
    }

    #[test]
    fn holders_on_live_sessions_break_live_session_exclusion_and_a_stale_one_does_not() {
        let stale = two_holders(true);
        assert_eq!(
            check(
                &stale,
                Property::MutualExclusionBelief,
                ErrorPolicy::Standard
            )
            .len(),
            1
        );
        assert_eq!(
            check(
                &stale,
                Property::LiveSessionExclusion,
                ErrorPolicy::Standard
            ),
            []
        );
        let live = two_holders(false);
        let violations = check(&live, Property::LiveSessionExclusion, ErrorPolicy::Standard);
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
    fn a_belief_kept_into_a_new_session_counts_there_and_every_family_is_covered() {
        // c0 leads on session 1, which expires; the recipe never says NotLeader, so c0 still
        // leads once it connects on session 3 (the step-down that does nothing).
        let expired = trace::ServerSession::Expired;
        let trace = Build::new()
            .connected(0, 1)
            .leads(0, 5)
            .connected(1, 2)
            .leads(1, 6)
            .server_session(1, expired)
            .connected(0, 3)
            .not_leader(1)
            .trace();
        let violations = check(
            &trace,
            Property::LiveSessionExclusion,
            ErrorPolicy::Standard,
        );
        assert_eq!(violations.len(), 2);
        assert_eq!(violations[0].events, [1, 3, 4]);
        assert_eq!(violations[1].events, [1, 3, 5, 6]);
        assert!(
            violations[1].message.starts_with(
                "c0 and c1 both believed they were leader while both their sessions were alive \
                 on the server from 5.000 ms"
            ),
            "{}",
            violations[1].message
        );
        let readers = Build::new()
            .acquired_as(0, 5, Mode::Read)
            .acquired_as(1, 6, Mode::Read)
            .acquired_as(2, 7, Mode::Write)
            .trace();
        assert_eq!(
            check(
                &readers,
                Property::LiveSessionExclusion,
                ErrorPolicy::Standard
            )
            .len(),
            2
        );
        let leases = Build::new()
            .acquired_as(0, 5, Mode::Lease)
            .acquired_as(1, 6, Mode::Lease)
            .trace();
        assert_eq!(
            check(
                &leases,
                Property::LiveSessionExclusion,
                ErrorPolicy::Standard
            ),
            []
        );
    }

    #[test]
    fn one_fold_for_several_properties_judges_each_as_its_own_fold_does() {
        // c0's framework gives its session up, the recipe never says so, c0 goes on.
        let kept_past_lost = Build::new()
            .connected(0, 1)
            .acquired(0, 5)
            .session_lost(0)
            .acquire(0)
            .acquired(1, 6)
            .trace();
        let all = [
            Property::MutualExclusionBelief,
            Property::LiveSessionExclusion,
            Property::RwExclusion,
            Property::LeaderUniqueBelief,
        ];
        let mut found = 0;
        for trace in [two_holders(true), two_holders(false), kept_past_lost] {
            let each = check_each(&trace, &all, ErrorPolicy::Standard);
            for (property, violations) in all.iter().zip(each) {
                assert_eq!(
                    violations,
                    check(&trace, *property, ErrorPolicy::Standard),
                    "{property}"
                );
                found += violations.len();
            }
        }
        assert!(found >= 4, "the traces break some of them ({found})");
    }
}
