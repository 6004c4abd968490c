//! Who held what when and who waited when, exactly as the checkers see it: the trace folded
//! through the [`Beliefs`] monitor (which the belief checkers and `lease_bound` fold) and the
//! [`Waits`] monitor (which `progress` folds), under the error policy the trace's run spec
//! records. Locks, semaphores and elections all come down to holds of a [`Role`]: an
//! exclusive lock, a read or a write side, a lease, or leadership. Instants are event
//! indices (the trace's order); `t` is looked up for messages.

use std::collections::BTreeMap;

use coordination::fencing::Token;
use coordination::recipes::Mode;
use trace::Trace;

use super::tokens::Tokens;
use crate::monitor::{Beliefs, ErrorPolicy, Key, Observation, Waits};
use crate::verdict::error_policy;

pub use crate::monitor::{Holder, Role};

/// An interval of events `[start, end)`; `end == None` runs to the end of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    /// The holder or waiter.
    pub who: Holder,
    /// What is held or waited for.
    pub role: Role,
    /// Index of the event that began it.
    pub start: usize,
    /// Index of the event that ended it.
    pub end: Option<usize>,
    /// The fencing token of a hold, from its latest grant (none for a wait).
    pub token: Option<Token>,
    /// How many holds it stands for: 1 for a hold however reentrant, the number of leases
    /// for a holder's leases (each lease is a hold of its own, so a change in their number
    /// ends the interval and begins the next), 0 for a wait.
    pub count: u32,
}

impl Interval {
    /// The end as an index, `len` when open.
    pub fn end_or(&self, len: usize) -> usize {
        self.end.unwrap_or(len)
    }
}

/// The holds and waits of a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    /// Holds, each while [`Beliefs`] believes it (held and not suspended) and the number of
    /// holds it stands for stays the same: from the grant (`Acquired`, `IsLeader`) or the
    /// `Reconnected` that restores a suspended hold, to the call that gives the last grant
    /// back (`Release`, `Relinquish`, `Close`), `NotLeader`, `Lost`, `Closed`, a crash or,
    /// under the standard error policy, `Suspended`.
    pub holds: Vec<Interval>,
    /// Waits, each while [`Waits`] has its waiter asking: from an ask (`Acquire`, `Start`,
    /// `Requeue`, or `NotLeader` while still in the election) to its grant, its refusal
    /// (`TimedOut`, `Failed`), giving up (`Lost`, a `Failed` because of a fault), leaving
    /// (`Relinquish`, `Close`, `Closed`) or a crash.
    pub waits: Vec<Interval>,
}

impl Timeline {
    /// Reads the holds and waits off `trace`, under the error policy its run spec records
    /// (the one its verdicts are judged under).
    pub fn of(trace: &Trace) -> Timeline {
        Timeline::under(trace, error_policy(trace))
    }

    /// Reads the holds and waits off `trace`, its `Suspended` notices read by `policy`.
    pub fn under(trace: &Trace, policy: ErrorPolicy) -> Timeline {
        let mut beliefs = Beliefs::new(policy);
        let mut waits = Waits::default();
        let mut tokens = Tokens::default();
        let mut holds = Stretches::default();
        let mut asking = Stretches::default();
        for (index, event) in trace.events.iter().enumerate() {
            let Some(seen) = Observation::of_event(event.client, &event.kind) else {
                continue;
            };
            beliefs.observe(seen);
            waits.observe(seen);
            tokens.observe(seen);
            let held = beliefs.believed().map(|key| {
                let count = holds_of(key.1, beliefs.count(&key));
                (key, count, tokens.get(&key))
            });
            holds.step(index, held);
            let waiting = (waits.unserved()).filter(|(_, gave_up)| !gave_up);
            asking.step(index, waiting.map(|(key, _)| (key, 0, None)));
        }
        Timeline {
            holds: holds.finish(),
            waits: asking.finish(),
        }
    }
}

/// How many holds `grants` grants of `role` not yet given back are: each lease is a hold of
/// its own, the reentrant grants of any other role one hold.
fn holds_of(role: Role, grants: u32) -> u32 {
    if role == Role::Lock(Mode::Lease) {
        grants
    } else {
        1
    }
}

/// The intervals of one kind (holds or waits) being read: those under way, by key, and
/// those ended.
#[derive(Default)]
struct Stretches {
    open: BTreeMap<Key, Interval>,
    ended: Vec<Interval>,
}

impl Stretches {
    /// After event `index`, the keys under way are `now`, each with the number of holds it
    /// stands for and its token: the interval of a key that is gone or whose number changed
    /// ends at `index`, and one begins there for a key new or renumbered; an interval that
    /// goes on takes the key's latest token.
    fn step(&mut self, index: usize, now: impl Iterator<Item = (Key, u32, Option<Token>)>) {
        let now: BTreeMap<Key, (u32, Option<Token>)> = now
            .map(|(key, count, token)| (key, (count, token)))
            .collect();
        let ending: Vec<Key> = (self.open.iter())
            .filter(|(key, open)| now.get(key).is_none_or(|(count, _)| *count != open.count))
            .map(|(key, _)| *key)
            .collect();
        for key in ending {
            if let Some(ended) = self.open.remove(&key) {
                self.ended.push(Interval {
                    end: Some(index),
                    ..ended
                });
            }
        }
        for ((who, role), (count, token)) in now {
            let open = self.open.entry((who, role)).or_insert(Interval {
                who,
                role,
                start: index,
                end: None,
                token,
                count,
            });
            open.token = token;
        }
    }

    /// Every interval, in the order they began (those still open at the end last among
    /// equals).
    fn finish(self) -> Vec<Interval> {
        let mut all = self.ended;
        all.extend(self.open.into_values());
        all.sort_by_key(|interval| interval.start);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordination::ids::ClientSlot;
    use trace::build::{Build, OWNER};

    /// `who` as the trace builder's clients hold.
    fn on(client: u16) -> Holder {
        (ClientSlot(client), OWNER)
    }

    /// Asserts that after every event of `trace`, the intervals of `timeline` that cover it
    /// are exactly the holds [`Beliefs`] believes then (each with the number of holds it
    /// stands for) and the waits [`Waits`] has asking then, folded here apart.
    fn agrees_with_the_monitors(trace: &Trace, policy: ErrorPolicy) {
        let timeline = Timeline::under(trace, policy);
        let mut beliefs = Beliefs::new(policy);
        let mut waits = Waits::default();
        let covering = |intervals: &[Interval], index: usize| -> BTreeMap<Key, u32> {
            let mut at = BTreeMap::new();
            for i in intervals.iter().filter(|i| i.start <= index) {
                if i.end.is_none_or(|end| index < end) {
                    let before = at.insert((i.who, i.role), i.count);
                    assert_eq!(before, None, "two intervals of {i:?} at event {index}");
                }
            }
            at
        };
        for (index, event) in trace.events.iter().enumerate() {
            if let Some(seen) = Observation::of_event(event.client, &event.kind) {
                beliefs.observe(seen);
                waits.observe(seen);
            }
            let believed: BTreeMap<Key, u32> = (beliefs.believed())
                .map(|key| (key, holds_of(key.1, beliefs.count(&key))))
                .collect();
            assert_eq!(
                covering(&timeline.holds, index),
                believed,
                "holds after event {index}"
            );
            let asking: BTreeMap<Key, u32> = (waits.unserved())
                .filter(|(_, gave_up)| !gave_up)
                .map(|(key, _)| (key, 0))
                .collect();
            assert_eq!(
                covering(&timeline.waits, index),
                asking,
                "waits after event {index}"
            );
        }
    }

    /// Each of the builder's traces the tests below read, and a recorded one.
    fn traces() -> Vec<Trace> {
        let file = "fixtures/real-mutex-acquire-timeout.trace.json";
        let text = include_str!("../../fixtures/real-mutex-acquire-timeout.trace.json");
        let recorded = Trace::from_json(file, text).unwrap();
        vec![
            recorded,
            suspended_holder().trace(),
            leases().trace(),
            leader_steps_down().trace(),
            Build::new()
                .acquire(0)
                .acquired(0, 5)
                .acquire(0)
                .acquired(0, 5)
                .acquire(1)
                .release(0)
                .release(0)
                .acquired(1, 6)
                .lost(1)
                .acquire(2)
                .failed(2)
                .acquire(2)
                .timed_out(2)
                .trace(),
        ]
    }

    fn suspended_holder() -> Build {
        Build::new()
            .acquire(0)
            .acquired(0, 5)
            .suspended(0)
            .reconnected(0)
            .suspended(0)
            .lost(0)
    }

    fn leases() -> Build {
        Build::new()
            .acquired_as(0, 5, Mode::Lease)
            .acquired_as(0, 6, Mode::Lease)
            .release_as(0, Mode::Lease)
            .release_as(0, Mode::Lease)
    }

    fn leader_steps_down() -> Build {
        Build::new()
            .start(0)
            .leads(0, 5)
            .not_leader(0)
            .leads(0, 6)
            .close(0)
    }

    #[test]
    fn the_timeline_shows_what_the_monitors_hold_under_either_policy() {
        for trace in traces() {
            for policy in [ErrorPolicy::Standard, ErrorPolicy::SessionBased] {
                agrees_with_the_monitors(&trace, policy);
            }
        }
    }

    #[test]
    fn a_suspended_hold_ends_under_the_standard_policy_only() {
        let trace = suspended_holder().trace();
        let spans = |policy| {
            (Timeline::under(&trace, policy).holds.iter())
                .map(|hold| (hold.start, hold.end, hold.token))
                .collect::<Vec<_>>()
        };
        let token = Some(Token(5));
        assert_eq!(
            spans(ErrorPolicy::Standard),
            [(1, Some(2), token), (3, Some(4), token)],
            "held again from Reconnected, with its token"
        );
        assert_eq!(spans(ErrorPolicy::SessionBased), [(1, Some(5), token)]);
        assert_eq!(
            Timeline::of(&trace),
            Timeline::under(&trace, Default::default())
        );
    }

    #[test]
    fn each_change_in_the_number_of_leases_begins_an_interval() {
        let holds = Timeline::of(&leases().trace()).holds;
        let counted: Vec<(usize, Option<usize>, u32, Option<Token>)> = (holds.iter())
            .map(|hold| (hold.start, hold.end, hold.count, hold.token))
            .collect();
        assert_eq!(
            counted,
            [
                (0, Some(1), 1, Some(Token(5))),
                (1, Some(2), 2, Some(Token(6))),
                (2, Some(3), 1, Some(Token(6))),
            ]
        );
    }

    #[test]
    fn a_leader_that_steps_down_waits_until_it_leads_again() {
        let timeline = Timeline::of(&leader_steps_down().trace());
        let spans = |intervals: &[Interval]| -> Vec<(Holder, usize, Option<usize>)> {
            (intervals.iter())
                .map(|i| (i.who, i.start, i.end))
                .collect()
        };
        assert_eq!(
            spans(&timeline.holds),
            [(on(0), 1, Some(2)), (on(0), 3, Some(4))]
        );
        assert_eq!(
            spans(&timeline.waits),
            [(on(0), 0, Some(1)), (on(0), 2, Some(3))]
        );
    }
}
