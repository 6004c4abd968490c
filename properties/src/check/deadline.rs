//! `answered_by_deadline`: an acquire with a timeout is answered — granted or refused — by
//! its deadline. Whether a waiter missed it is the [`Waits`] monitor's to say (the model keeps
//! the same one): a wait that still waits when its deadline passes is late for good.
//!
//! When the deadline passes depends on the trace's source:
//! - simulated: at the call's instant plus its timeout, in simulated time, with
//!   [`SIM_SLACK`] for the client's own steps; a pause of the client that covers the deadline
//!   moves it to the pause's end (a paused client runs nothing, its timers included);
//! - model: when the acquire's timeout timer has fired and the client has handled it (the
//!   model records that as `deadline_passed`), so "the timer fired and the client still
//!   waits" is the violation;
//! - real: unchecked (no violation is reported): a real client's timers run on wall-clock
//!   time, and how late a busy machine wakes a sleeping thread is no property of the recipe.

use std::collections::BTreeMap;

use coordination::ids::{ClientSlot, Owner};
use coordination::recipes::{Call, Notice};

use crate::monitor::{Key, Observation, Waits};
use recipe_table::property::{Property, Violation};
use scenarios::fault::Fault;
use trace::{EventKind, Source, Trace};

use super::when;

/// How long after its deadline, in simulated time, an answer still counts as on time: the
/// simulated client's steps between recording the call and arming its timer take a few tens
/// of nanoseconds (measured: a 300 ms timeout answered 50 ns after the call's instant plus
/// 300 ms), and 1 ms is far below any timeout a workload sets.
pub const SIM_SLACK: u64 = 1_000_000;

/// Every acquire with a timeout that was not answered by its deadline.
pub fn check(trace: &Trace) -> Vec<Violation> {
    let mut fold = Fold {
        trace,
        waits: Waits::default(),
        deadlines: BTreeMap::new(),
        earliest: u64::MAX,
        pauses: BTreeMap::new(),
        violations: Vec::new(),
    };
    if trace.meta.source == Source::Real {
        return Vec::new();
    }
    for (index, event) in trace.events.iter().enumerate() {
        if trace.meta.source == Source::Sim {
            fold.pass_deadlines(event.t, index);
        }
        fold.note(index);
        if let Some(seen) = Observation::of_event(event.client, &event.kind) {
            fold.observe(seen, index);
        }
    }
    fold.violations
}

/// The monitor folded over a trace, with the deadlines and pauses a simulated trace tells by
/// its times.
struct Fold<'a> {
    trace: &'a Trace,
    waits: Waits,
    /// Each timed acquire's deadline (trace time) and the index of its call.
    deadlines: BTreeMap<(ClientSlot, Owner), (u64, usize)>,
    /// At most the earliest of `deadlines` (`u64::MAX` when there is none): until it
    /// passes, no deadline can have.
    earliest: u64,
    /// Each client's pauses, as (start, end) in trace time.
    pauses: BTreeMap<ClientSlot, Vec<(u64, u64)>>,
    violations: Vec<Violation>,
}

impl Fold<'_> {
    /// Takes note of the deadline an acquire call sets and of a pause that begins.
    fn note(&mut self, index: usize) {
        let event = &self.trace.events[index];
        match (&event.kind, event.client) {
            (
                EventKind::Call {
                    call:
                        Call::Acquire {
                            owner,
                            timeout: Some(timeout),
                            ..
                        },
                },
                Some(client),
            ) => {
                let nanos = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
                let deadline = event.t.saturating_add(nanos);
                self.deadlines.insert((client, *owner), (deadline, index));
                self.earliest = self.earliest.min(deadline);
            }
            (
                EventKind::FaultStart {
                    fault: Fault::Pause { client, for_ms },
                },
                _,
            ) => {
                let end = event.t.saturating_add(for_ms.saturating_mul(1_000_000));
                let pauses = self.pauses.entry(ClientSlot(*client)).or_default();
                pauses.push((event.t, end));
            }
            _ => {}
        }
    }

    /// Every deadline earlier than `now` passes (before the event at `index` is taken in).
    fn pass_deadlines(&mut self, now: u64, index: usize) {
        // A pause only moves a deadline later: none has passed while none is before `now`.
        if self.earliest.saturating_add(SIM_SLACK) >= now {
            return;
        }
        let due = |&(deadline, _): &(u64, usize)| deadline.saturating_add(SIM_SLACK) < now;
        if !self.deadlines.values().any(due) {
            self.earliest = self.earliest_deadline();
            return;
        }
        let passed: Vec<(ClientSlot, Owner)> = (self.deadlines.iter())
            .filter(|((client, _), (deadline, _))| {
                self.paused_until(*client, *deadline)
                    .saturating_add(SIM_SLACK)
                    < now
            })
            .map(|(key, _)| *key)
            .collect();
        for (client, owner) in passed {
            self.deadlines.remove(&(client, owner));
            self.observe(Observation::DeadlinePassed(client, owner), index);
        }
        self.earliest = self.earliest_deadline();
    }

    fn earliest_deadline(&self) -> u64 {
        (self.deadlines.values())
            .map(|&(deadline, _)| deadline)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// `deadline`, moved to the end of every pause of `client` that covers it.
    fn paused_until(&self, client: ClientSlot, mut deadline: u64) -> u64 {
        let pauses = self.pauses.get(&client).map_or(&[][..], Vec::as_slice);
        while let Some(&(_, end)) =
            (pauses.iter()).find(|(start, end)| (*start..*end).contains(&deadline))
        {
            deadline = end;
        }
        deadline
    }

    /// Feeds `seen` to the monitor; a waiter it finds late is a violation at `index`.
    fn observe(&mut self, seen: Observation, index: usize) {
        // Only a passed deadline makes a waiter late (`Waits::observe`).
        if !matches!(seen, Observation::DeadlinePassed(..)) {
            self.waits.observe(seen);
            return;
        }
        let before: Vec<Key> = self.waits.late().collect();
        self.waits.observe(seen);
        let late: Vec<Key> = (self.waits.late())
            .filter(|key| !before.contains(key))
            .collect();
        for key in late {
            let violation = self.late(key, index);
            self.violations.push(violation);
        }
    }

    /// The violation of `key`'s wait, found late at event `index`.
    fn late(&self, ((client, owner), _): Key, index: usize) -> Violation {
        let trace = self.trace;
        let t = trace.events.get(index).map_or(0, |e| e.t);
        let asked = (self.deadlines.get(&(client, owner)).map(|(_, call)| *call))
            .or_else(|| last_call(trace, client, owner, index));
        let answer =
            (trace.events.iter().enumerate().skip(index)).find_map(|(i, e)| match e.kind {
                EventKind::Notice { notice }
                    if e.client == Some(client) && notice.owner() == owner =>
                {
                    answer_of(&notice).map(|what| (i, what))
                }
                _ => None,
            });
        let then = match answer {
            Some((i, what)) => format!("; it {what} at {}", when(trace, trace.events[i].t)),
            None => "; it was never answered".to_owned(),
        };
        let asked_at = asked.map_or(String::new(), |i| {
            format!(" asked at {}", when(trace, trace.events[i].t))
        });
        let mut events: Vec<usize> = asked.into_iter().collect();
        events.push(index);
        events.extend(answer.map(|(i, _)| i));
        Violation {
            property: Property::AnsweredByDeadline,
            at: t,
            until: None,
            clients: vec![client],
            events,
            message: format!(
                "{client}'s acquire{asked_at} was still waiting when its deadline passed ({}){then}",
                when(trace, t),
            ),
        }
    }
}

/// The index of `client`'s last acquire call by `owner` before `index`.
fn last_call(trace: &Trace, client: ClientSlot, owner: Owner, index: usize) -> Option<usize> {
    (trace.events[..index].iter().enumerate().rev()).find_map(|(i, e)| match e.kind {
        EventKind::Call {
            call: Call::Acquire { owner: o, .. },
        } if e.client == Some(client) && o == owner => Some(i),
        _ => None,
    })
}

/// How `notice` answers an acquire, if it does.
fn answer_of(notice: &Notice) -> Option<&'static str> {
    match notice {
        Notice::Acquired { .. } => Some("acquired"),
        Notice::TimedOut { .. } => Some("timed out"),
        Notice::Failed { .. } => Some("failed"),
        _ => None,
    }
}
