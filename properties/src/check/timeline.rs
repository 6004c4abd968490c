//! What every hold checker reads off a trace: who held what when (as the clients believed),
//! who waited when, which session belongs to which client, and when the faults had all
//! healed. Locks, semaphores and elections all come down to holds of a [`Role`]: an exclusive
//! lock, a read or a write side, a lease, or leadership. Instants are event indices (the
//! trace's order); `t` is looked up for messages.

use std::collections::BTreeMap;

use coordination::fencing::Token;
use coordination::ids::ClientSlot;
use coordination::recipes::{Call, Mode, Notice};
use coordination::session::RawState;
use coordination::zk::SessionId;

use scenarios::fault::Fault;
use trace::{Event, EventKind, Trace};

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
    /// The fencing token of a hold (none for a wait); a lease interval's latest lease's.
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
    /// Belief holds: from `Acquired` (`IsLeader`) to the release call (`Relinquish`, `Close`,
    /// `NotLeader`), `Suspended`, `Lost` or a crash; a `Reconnected` starts a new interval
    /// with the same token. A holder's leases are one interval per number of leases held.
    pub holds: Vec<Interval>,
    /// Waits: from an acquire call (`Start`, `Requeue`, or `NotLeader` while still in the
    /// election) to its `Acquired` (`IsLeader`), `TimedOut`, `Failed`, `Lost`, `Close` or a
    /// crash.
    pub waits: Vec<Interval>,
}

#[derive(Clone, Copy, Debug)]
enum State {
    Waiting {
        since: usize,
    },
    Holding {
        since: usize,
        token: Token,
        count: u32,
    },
    Suspended {
        token: Token,
        count: u32,
    },
}

/// One holder's state for one role.
use crate::monitor::Key;

impl Timeline {
    /// Reads the holds and waits off `trace`.
    pub fn of(trace: &Trace) -> Timeline {
        let mut reader = Reader::default();
        for (index, event) in trace.events.iter().enumerate() {
            match (&event.kind, event.client) {
                (EventKind::Call { call }, Some(client)) => reader.on_call(client, *call, index),
                (EventKind::Notice { notice }, Some(client)) => {
                    reader.on_notice(client, *notice, index)
                }
                (
                    EventKind::FaultStart {
                        fault: Fault::Crash { client },
                    },
                    _,
                ) => reader.end_all(|(who, _), _| who.0.0 == *client, index),
                _ => {}
            }
        }
        let mut timeline = reader.timeline;
        for (key, state) in reader.states {
            timeline.close(key, state, None);
        }
        timeline.holds.sort_by_key(|i| i.start);
        timeline.waits.sort_by_key(|i| i.start);
        timeline
    }

    /// Ends `key`'s interval at `end` (`None`: open at the end of the trace).
    fn close(&mut self, (who, role): Key, state: State, end: Option<usize>) {
        let (list, start, token, count) = match state {
            State::Waiting { since } => (&mut self.waits, since, None, 0),
            State::Holding {
                since,
                token,
                count,
            } => (&mut self.holds, since, Some(token), holds(role, count)),
            State::Suspended { .. } => return,
        };
        list.push(Interval {
            who,
            role,
            start,
            end,
            token,
            count,
        });
    }
}

/// Whether each acquisition of `role` is a hold of its own (a lease), rather than one more
/// reentrant acquisition of one hold.
fn each_holds(role: Role) -> bool {
    role == Role::Lock(Mode::Lease)
}

/// How many holds `count` acquisitions of `role` not yet released are.
fn holds(role: Role, count: u32) -> u32 {
    if each_holds(role) { count } else { 1 }
}

/// The timeline being read, with every holder's current state.
#[derive(Default)]
struct Reader {
    timeline: Timeline,
    states: BTreeMap<Key, State>,
}

impl Reader {
    fn on_call(&mut self, client: ClientSlot, call: Call, index: usize) {
        let who = (client, call.owner());
        match call {
            Call::Acquire { mode, .. } => self.wait(who, Role::Lock(mode), index),
            Call::Start { .. } | Call::Requeue { .. } => self.wait(who, Role::Leader, index),
            Call::Release { mode, .. } => self.release((who, Role::Lock(mode)), index),
            Call::Relinquish { .. } => self.release((who, Role::Leader), index),
            Call::Close { .. } => self.end((who, Role::Leader), index),
            Call::Await { .. }
            | Call::HasLeadership { .. }
            | Call::Interrupt { .. }
            | Call::MakeRevocable { .. }
            | Call::AttemptRevoke { .. } => {}
        }
    }

    fn on_notice(&mut self, client: ClientSlot, notice: Notice, index: usize) {
        let who = (client, notice.owner());
        match notice {
            Notice::Acquired { token, mode, .. } => {
                self.hold((who, Role::Lock(mode)), token, index)
            }
            Notice::IsLeader { token, .. } => self.hold((who, Role::Leader), token, index),
            Notice::NotLeader { .. } => {
                if matches!(
                    self.states.get(&(who, Role::Leader)),
                    Some(State::Holding { .. })
                ) {
                    self.end((who, Role::Leader), index);
                    self.wait(who, Role::Leader, index);
                }
            }
            Notice::TimedOut { .. } | Notice::Failed { .. } => self.end_all(
                |(w, _), state| *w == who && matches!(state, State::Waiting { .. }),
                index,
            ),
            Notice::Suspended { .. } => {
                let held: Vec<(Key, State)> = self.of(who).collect();
                for (key, state) in held {
                    if let State::Holding { token, count, .. } = state {
                        self.timeline.close(key, state, Some(index));
                        self.states.insert(key, State::Suspended { token, count });
                    }
                }
            }
            Notice::Reconnected { .. } => {
                let suspended: Vec<(Key, State)> = self.of(who).collect();
                for (key, state) in suspended {
                    if let State::Suspended { token, count } = state {
                        let since = index;
                        self.states.insert(
                            key,
                            State::Holding {
                                since,
                                token,
                                count,
                            },
                        );
                    }
                }
            }
            Notice::Lost { .. } | Notice::Closed { .. } => {
                self.end_all(|(w, _), _| *w == who, index)
            }
            Notice::Released { .. }
            | Notice::Awaited { .. }
            | Notice::Leadership { .. }
            | Notice::RevocationRequested { .. }
            | Notice::RevokeAttempted { .. } => {}
        }
    }

    /// `who`'s states, every role.
    fn of(&self, who: Holder) -> impl Iterator<Item = (Key, State)> + '_ {
        self.states
            .iter()
            .filter(move |((w, _), _)| *w == who)
            .map(|(key, state)| (*key, *state))
    }

    /// `who` starts waiting for `role`, unless it already waits or holds.
    fn wait(&mut self, who: Holder, role: Role, index: usize) {
        self.states
            .entry((who, role))
            .or_insert(State::Waiting { since: index });
    }

    /// `key` holds with `token`: one more reentrant hold (or lease), or the end of its wait.
    fn hold(&mut self, key: Key, token: Token, index: usize) {
        let state = match self.states.get(&key).copied() {
            Some(held @ State::Holding { since, count, .. }) => State::Holding {
                since: self.recount(key, held, since, index),
                token,
                count: count + 1,
            },
            Some(State::Waiting { since }) => {
                let wait = State::Waiting { since };
                self.timeline.close(key, wait, Some(index));
                State::Holding {
                    since: index,
                    token,
                    count: 1,
                }
            }
            _ => State::Holding {
                since: index,
                token,
                count: 1,
            },
        };
        self.states.insert(key, state);
    }

    /// One hold of `key` is released: the last one ends the interval.
    fn release(&mut self, key: Key, index: usize) {
        match self.states.get(&key).copied() {
            Some(
                held @ State::Holding {
                    since,
                    token,
                    count,
                },
            ) if count > 1 => {
                let since = self.recount(key, held, since, index);
                let count = count - 1;
                self.states.insert(
                    key,
                    State::Holding {
                        since,
                        token,
                        count,
                    },
                );
            }
            Some(State::Suspended { token, count }) if count > 1 => {
                let count = count - 1;
                self.states.insert(key, State::Suspended { token, count });
            }
            Some(State::Holding { .. } | State::Suspended { .. }) => self.end(key, index),
            Some(State::Waiting { .. }) | None => {}
        }
    }

    /// Where `key`'s hold `held`, held since `since`, stands once its count changes at
    /// `index`: the same interval, unless that changes the number of holds it stands for
    /// (leases), which ends it there and begins the next.
    fn recount(&mut self, key: Key, held: State, since: usize, index: usize) -> usize {
        if !each_holds(key.1) {
            return since;
        }
        self.timeline.close(key, held, Some(index));
        index
    }

    /// Ends `key`'s wait or hold at `index`.
    fn end(&mut self, key: Key, index: usize) {
        if let Some(state) = self.states.remove(&key) {
            self.timeline.close(key, state, Some(index));
        }
    }

    /// Ends, at `index`, every state `which` selects.
    fn end_all(&mut self, which: impl Fn(&Key, &State) -> bool, index: usize) {
        let ending: Vec<Key> = self
            .states
            .iter()
            .filter(|(key, state)| which(key, state))
            .map(|(key, _)| *key)
            .collect();
        for key in ending {
            self.end(key, index);
        }
    }
}

/// Which client each session belongs to, from the clients' `Connected` events.
pub fn session_owners(trace: &Trace) -> BTreeMap<SessionId, ClientSlot> {
    trace
        .events
        .iter()
        .filter_map(|event| match (&event.kind, event.client) {
            (
                EventKind::RawSession {
                    state: RawState::Connected { session, .. },
                },
                Some(client),
            ) => Some((*session, client)),
            _ => None,
        })
        .collect()
}

/// The index of the event after which no fault is in force any more (the last fault's end,
/// or the last instantaneous fault), `Some(0)` when there were no faults, `None` when a fault
/// is still in force at the end of the trace.
pub fn healed_at(events: &[Event]) -> Option<usize> {
    let mut open: Vec<&Fault> = Vec::new();
    let mut last = 0;
    for (index, event) in events.iter().enumerate() {
        match &event.kind {
            EventKind::FaultStart { fault } => {
                last = index;
                match fault {
                    Fault::Heal => open.retain(|f| matches!(f, Fault::Pause { .. })),
                    Fault::ExpireSession { .. }
                    | Fault::Crash { .. }
                    | Fault::RestartServer { .. } => {}
                    other => open.push(other),
                }
            }
            EventKind::FaultEnd { fault } => {
                last = index;
                if let Some(at) = open.iter().position(|f| *f == fault) {
                    open.remove(at);
                }
            }
            _ => {}
        }
    }
    open.is_empty().then_some(last)
}
