//! What every lock checker reads off a trace: who held the lock when (as the clients
//! believed), who waited when, which session belongs to which client, and when the faults had
//! all healed. Instants are event indices (the trace's order); `t` is looked up for messages.

use std::collections::BTreeMap;

use lock::coordination::RawState;
use lock::fencing::Token;
use lock::ids::{ClientSlot, Owner};
use lock::recipes::{LockCall, LockNotice};
use lock::zk::SessionId;

use crate::fault::Fault;
use crate::trace::{Event, EventKind, Trace};

/// One holder: an owner on a client.
pub type Holder = (ClientSlot, Owner);

/// An interval of events `[start, end)`; `end == None` runs to the end of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    /// The holder or waiter.
    pub who: Holder,
    /// Index of the event that began it.
    pub start: usize,
    /// Index of the event that ended it.
    pub end: Option<usize>,
    /// The fencing token of a hold (none for a wait).
    pub token: Option<Token>,
}

impl Interval {
    /// True when event `index` falls strictly inside the interval (after its start).
    pub fn covers(&self, index: usize) -> bool {
        self.start < index && self.end.is_none_or(|end| index <= end)
    }

    /// The end as an index, `len` when open.
    pub fn end_or(&self, len: usize) -> usize {
        self.end.unwrap_or(len)
    }
}

/// The holds and waits of a lock trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    /// Belief holds: from `Acquired` to the release call, `Suspended`, `Lost` or a crash; a
    /// `Reconnected` starts a new interval with the same token.
    pub holds: Vec<Interval>,
    /// Waits: from an acquire call to its `Acquired`, `TimedOut` or `Failed` (or a crash).
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

impl Timeline {
    /// Reads the holds and waits off `trace`.
    pub fn of(trace: &Trace) -> Timeline {
        let mut timeline = Timeline::default();
        let mut states: BTreeMap<Holder, State> = BTreeMap::new();
        for (index, event) in trace.events.iter().enumerate() {
            match &event.kind {
                EventKind::Call { call } => {
                    let Some(client) = event.client else { continue };
                    timeline.on_call(&mut states, client, *call, index);
                }
                EventKind::Notice { notice } => {
                    let Some(client) = event.client else { continue };
                    timeline.on_notice(&mut states, client, *notice, index);
                }
                EventKind::FaultStart {
                    fault: Fault::Crash { client },
                } => {
                    let crashed: Vec<Holder> = states
                        .keys()
                        .filter(|(c, _)| c.0 == *client)
                        .copied()
                        .collect();
                    for who in crashed {
                        let state = states.remove(&who).expect("listed above");
                        timeline.close(who, state, index);
                    }
                }
                _ => {}
            }
        }
        for (who, state) in states {
            timeline.close_open(who, state);
        }
        timeline.holds.sort_by_key(|i| i.start);
        timeline.waits.sort_by_key(|i| i.start);
        timeline
    }

    fn on_call(
        &mut self,
        states: &mut BTreeMap<Holder, State>,
        client: ClientSlot,
        call: LockCall,
        index: usize,
    ) {
        let who = (client, call.owner());
        match (call, states.get(&who).copied()) {
            (LockCall::Acquire { .. }, None) => {
                states.insert(who, State::Waiting { since: index });
            }
            (
                LockCall::Release { .. },
                Some(State::Holding {
                    since,
                    token,
                    count,
                }),
            ) => {
                if count > 1 {
                    states.insert(
                        who,
                        State::Holding {
                            since,
                            token,
                            count: count - 1,
                        },
                    );
                } else {
                    states.remove(&who);
                    self.push_hold(who, since, Some(index), token);
                }
            }
            (LockCall::Release { .. }, Some(State::Suspended { token, count })) if count > 1 => {
                states.insert(
                    who,
                    State::Suspended {
                        token,
                        count: count - 1,
                    },
                );
            }
            (LockCall::Release { .. }, Some(State::Suspended { .. })) => {
                states.remove(&who);
            }
            _ => {}
        }
    }

    fn on_notice(
        &mut self,
        states: &mut BTreeMap<Holder, State>,
        client: ClientSlot,
        notice: LockNotice,
        index: usize,
    ) {
        let who = |owner| (client, owner);
        match notice {
            LockNotice::Acquired { owner, token } => {
                let state = match states.get(&who(owner)).copied() {
                    Some(State::Holding { since, count, .. }) => State::Holding {
                        since,
                        token,
                        count: count + 1,
                    },
                    Some(State::Waiting { since }) => {
                        self.push_wait(who(owner), since, Some(index));
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
                states.insert(who(owner), state);
            }
            LockNotice::TimedOut { owner } | LockNotice::Failed { owner, .. } => {
                if let Some(State::Waiting { since }) = states.get(&who(owner)).copied() {
                    states.remove(&who(owner));
                    self.push_wait(who(owner), since, Some(index));
                }
            }
            LockNotice::Suspended { owner } => {
                if let Some(State::Holding {
                    since,
                    token,
                    count,
                }) = states.get(&who(owner)).copied()
                {
                    self.push_hold(who(owner), since, Some(index), token);
                    states.insert(who(owner), State::Suspended { token, count });
                }
            }
            LockNotice::Reconnected { owner } => {
                if let Some(State::Suspended { token, count }) = states.get(&who(owner)).copied() {
                    states.insert(
                        who(owner),
                        State::Holding {
                            since: index,
                            token,
                            count,
                        },
                    );
                }
            }
            LockNotice::Lost { owner } => {
                if let Some(state) = states.remove(&who(owner)) {
                    self.close(who(owner), state, index);
                }
            }
            LockNotice::Released { .. } => {}
        }
    }

    /// Ends `who`'s interval at `index`.
    fn close(&mut self, who: Holder, state: State, index: usize) {
        match state {
            State::Waiting { since } => self.push_wait(who, since, Some(index)),
            State::Holding { since, token, .. } => self.push_hold(who, since, Some(index), token),
            State::Suspended { .. } => {}
        }
    }

    /// Leaves `who`'s interval open at the end of the trace.
    fn close_open(&mut self, who: Holder, state: State) {
        match state {
            State::Waiting { since } => self.push_wait(who, since, None),
            State::Holding { since, token, .. } => self.push_hold(who, since, None, token),
            State::Suspended { .. } => {}
        }
    }

    fn push_hold(&mut self, who: Holder, start: usize, end: Option<usize>, token: Token) {
        let token = Some(token);
        self.holds.push(Interval {
            who,
            start,
            end,
            token,
        });
    }

    fn push_wait(&mut self, who: Holder, start: usize, end: Option<usize>) {
        self.waits.push(Interval {
            who,
            start,
            end,
            token: None,
        });
    }

    /// The clients waiting at event `index`.
    pub fn waiting_at(&self, index: usize) -> impl Iterator<Item = &Interval> {
        self.waits.iter().filter(move |w| w.covers(index))
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
                    Fault::ExpireSession { .. } | Fault::Crash { .. } | Fault::RestartServer => {}
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
