//! [`Waits`]: who waits to be served — `progress`'s monitor.
//!
//! A wait (of an owner on a client, per [`Role`]) begins at the user's ask (`Acquire`,
//! `Start`, `Requeue`, or a `NotLeader` that steps a leader down while it stays in the
//! election) and ends when the recipe grants it (`Acquired`, `IsLeader`). It also ends when
//! the ask is refused the way the run may expect (a `TimedOut`, or a `Failed` that answers
//! the call itself: a refused upgrade, a call the recipe does not serve …), when the user
//! leaves (`Close`, `Closed`) or when the client's process crashes. An ask that fails
//! because of what the faults did (`Failed` with a lost session, a vanished node or a server
//! error, or `Lost` while waiting) serves nobody: the waiter has *given up*, and its wait
//! goes on until a later ask of the same holder is granted.
//!
//! The same monitor judges `answered_by_deadline`: an acquire with a timeout waits
//! [`Wait::Timed`]; when its deadline passes ([`Observation::DeadlinePassed`]) while it still waits,
//! the waiter is [`late`](Waits::late) for good, which that property forbids whatever comes
//! after (a late grant or refusal, or nothing).

use std::collections::{BTreeMap, BTreeSet};

use coordination::ids::{ClientSlot, Owner};
use coordination::recipes::{Call, FailReason, Notice};
use coordination::relabel::Relabel;

use super::{Holder, Key, Observation, Role};

/// Where one holder stands with one role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub enum Wait {
    /// It asked and waits for the answer.
    Asking,
    /// It asked with a timeout and waits for the answer, its deadline not passed yet.
    Timed,
    /// Its ask failed because of a fault; it has not been served since.
    GaveUp,
    /// It leads (a leader steps down into a wait while it stays in the election).
    Leading,
}

impl Wait {
    /// Whether the waiter still asks for an answer (with or without a timeout): it has
    /// neither given up nor is it leading. `asking` and `give_up` must agree on this (the
    /// herd monitor missed timed asks when they did not).
    fn asks(self) -> bool {
        matches!(self, Wait::Asking | Wait::Timed)
    }
}

/// What [`Waits`] knows of one client, without its identity: its waits, by owner and role (a
/// sort key for the model's symmetry reduction).
pub type ClientWaits = Vec<(Owner, Role, Wait)>;

/// The progress monitor of [`crate::monitor`]: every wait not yet served.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct Waits {
    waits: BTreeMap<Key, Wait>,
    /// The waiters that missed a deadline (`answered_by_deadline`): kept for good.
    late: BTreeSet<Key>,
}

impl Waits {
    /// Takes in one observation. Only `Call`, `Notice` and `Crash` change the waits, and only
    /// `DeadlinePassed` the late ones (`progress` and `answered_by_deadline` skip their
    /// bookkeeping on the others).
    pub fn observe(&mut self, seen: Observation) {
        match seen {
            Observation::Call(client, call) => self.on_call((client, call.owner()), call),
            Observation::Notice(client, notice) => self.on_notice((client, notice.owner()), notice),
            Observation::Crash(client) => self.waits.retain(|((c, _), _), _| *c != client),
            Observation::DeadlinePassed(client, owner) => {
                let timed = (self.waits.iter()).filter(|(((c, o), _), wait)| {
                    (*c, *o) == (client, owner) && **wait == Wait::Timed
                });
                let late: Vec<Key> = timed.map(|(key, _)| *key).collect();
                self.late.extend(late);
            }
            _ => {}
        }
    }

    /// The waits not yet served, each with whether its waiter gave up.
    pub fn unserved(&self) -> impl Iterator<Item = (Key, bool)> + '_ {
        (self.waits.iter()).filter_map(|(key, wait)| match wait {
            Wait::Asking | Wait::Timed => Some((*key, false)),
            Wait::GaveUp => Some((*key, true)),
            Wait::Leading => None,
        })
    }

    /// Whether `client` waits for an answer to an ask (has not given up).
    pub fn asking(&self, client: ClientSlot) -> bool {
        (self.waits.iter()).any(|(((c, _), _), wait)| *c == client && wait.asks())
    }

    /// The waiters whose deadline passed before their acquire was answered
    /// (`answered_by_deadline`).
    pub fn late(&self) -> impl Iterator<Item = Key> + '_ {
        self.late.iter().copied()
    }

    /// What the monitor knows of `client`, without its identity.
    pub fn summary(&self, client: ClientSlot) -> ClientWaits {
        (self.waits.iter())
            .filter(|(((c, _), _), _)| *c == client)
            .map(|(((_, owner), role), wait)| (*owner, *role, *wait))
            .collect()
    }

    fn on_call(&mut self, who: Holder, call: Call) {
        match call {
            Call::Acquire {
                mode,
                timeout: Some(_),
                ..
            } => self.ask((who, Role::Lock(mode)), Wait::Timed),
            Call::Acquire { mode, .. } => self.ask((who, Role::Lock(mode)), Wait::Asking),
            Call::Start { .. } | Call::Requeue { .. } => {
                self.ask((who, Role::Leader), Wait::Asking)
            }
            Call::Relinquish { .. } | Call::Close { .. } => {
                self.waits.remove(&(who, Role::Leader));
            }
            _ => {}
        }
    }

    fn on_notice(&mut self, who: Holder, notice: Notice) {
        match notice {
            Notice::Acquired { mode, .. } => {
                self.waits.remove(&(who, Role::Lock(mode)));
            }
            Notice::IsLeader { .. } => {
                self.waits.insert((who, Role::Leader), Wait::Leading);
            }
            Notice::NotLeader { .. } => {
                let key = (who, Role::Leader);
                if self.waits.get(&key) == Some(&Wait::Leading) {
                    self.waits.insert(key, Wait::Asking);
                }
            }
            Notice::Failed { reason, .. } if fault_failure(reason) => self.give_up(who),
            Notice::Lost { .. } => self.give_up(who),
            Notice::TimedOut { .. } | Notice::Failed { .. } => {
                (self.waits).retain(|(w, _), wait| *w != who || *wait == Wait::Leading);
            }
            Notice::Closed { .. } => self.waits.retain(|(w, _), _| *w != who),
            _ => {}
        }
    }

    /// `key` asks (`Asking`, or `Timed` with a timeout): it waits, unless it already does (a
    /// retry keeps the wait it began).
    fn ask(&mut self, key: Key, asking: Wait) {
        let wait = self.waits.entry(key).or_insert(asking);
        if *wait == Wait::GaveUp {
            *wait = asking;
        }
    }

    /// `who`'s asks failed because of a fault: its waits stay unserved.
    fn give_up(&mut self, who: Holder) {
        for ((w, _), wait) in &mut self.waits {
            if *w == who && wait.asks() {
                *wait = Wait::GaveUp;
            }
        }
    }
}

/// Whether a call that failed for `reason` failed because of what the faults did (the
/// session, the node or a request lost), rather than as the answer the call itself asks for
/// (a refused upgrade, a second start, a call the recipe does not serve …).
pub fn fault_failure(reason: FailReason) -> bool {
    match reason {
        FailReason::SessionLost
        | FailReason::NodeVanished
        | FailReason::Zk(_)
        | FailReason::Library => true,
        FailReason::AlreadyAcquiring
        | FailReason::NotHeld
        | FailReason::Unsupported
        | FailReason::UpgradeWouldDeadlock
        | FailReason::AlreadyStarted
        | FailReason::NotStarted => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordination::fencing::Token;
    use coordination::recipes::Mode;

    const C0: ClientSlot = ClientSlot(0);
    const OWNER: Owner = Owner(0);
    const KEY: Key = ((C0, OWNER), Role::Lock(Mode::Exclusive));

    fn run(seen: &[Observation]) -> Vec<(Key, bool)> {
        let mut waits = Waits::default();
        for s in seen {
            waits.observe(*s);
        }
        waits.unserved().collect()
    }

    fn acquire() -> Observation {
        Observation::Call(C0, Call::acquire(OWNER, None))
    }

    fn failed(reason: FailReason) -> Observation {
        Observation::Notice(
            C0,
            Notice::Failed {
                owner: OWNER,
                reason,
            },
        )
    }

    #[test]
    fn a_grant_serves_and_an_expected_refusal_ends_the_wait() {
        let acquired = Observation::Notice(
            C0,
            Notice::Acquired {
                owner: OWNER,
                token: Token(5),
                mode: Mode::Exclusive,
            },
        );
        assert_eq!(run(&[acquire()]), [(KEY, false)]);
        assert_eq!(run(&[acquire(), acquired]), []);
        let timed_out = Observation::Notice(C0, Notice::TimedOut { owner: OWNER });
        assert_eq!(run(&[acquire(), timed_out]), []);
        assert_eq!(
            run(&[acquire(), failed(FailReason::UpgradeWouldDeadlock)]),
            []
        );
    }

    #[test]
    fn a_waiter_that_gives_up_at_lost_is_not_served_until_a_later_grant() {
        let lost = failed(FailReason::SessionLost);
        assert_eq!(run(&[acquire(), lost]), [(KEY, true)]);
        assert_eq!(run(&[acquire(), lost, acquire()]), [(KEY, false)]);
        let lost_notice = Observation::Notice(C0, Notice::Lost { owner: OWNER });
        assert_eq!(run(&[acquire(), lost_notice]), [(KEY, true)]);
        assert_eq!(run(&[acquire(), lost, Observation::Crash(C0)]), []);
    }

    #[test]
    fn a_leader_that_steps_down_waits_again() {
        let start = Observation::Call(C0, Call::Start { owner: OWNER });
        let leads = Observation::Notice(
            C0,
            Notice::IsLeader {
                owner: OWNER,
                token: Token(5),
            },
        );
        let not_leader = Observation::Notice(C0, Notice::NotLeader { owner: OWNER });
        let leader = ((C0, OWNER), Role::Leader);
        assert_eq!(run(&[start, leads]), []);
        assert_eq!(run(&[start, leads, not_leader]), [(leader, false)]);
        let close = Observation::Call(
            C0,
            Call::Close {
                owner: OWNER,
                notify: false,
            },
        );
        assert_eq!(run(&[start, close, not_leader]), []);
    }
}
