//! [`Beliefs`]: who believes they hold what, taken from what the recipe tells its user and
//! what the user calls, never inferred from the connection state; and whether a holder gave
//! its hold up when its error policy says it must.
//!
//! A hold (of an owner on a client, per [`Role`]) begins at the recipe's grant (`Acquired`,
//! `IsLeader`; once more per reentrant grant or lease) and ends at the user's call that gives
//! it back (`Release` of that mode, `Relinquish`, `Close`), at the recipe's `NotLeader`,
//! `Lost` or `Closed`, or when the client's process crashes. The recipe's `Suspended` notice
//! suspends its holder's holds under the standard error policy (the recipe says they are not
//! safe) and `Reconnected` restores them; under the session-based policy the holder keeps
//! them through `Suspended`.
//!
//! Every client's current session is the one it last connected on; it is alive until the
//! server ends it (or an `expire_session` fault starts on it). A session the monitor has no
//! record of being ended counts as alive, so that nothing is excused without evidence.
//!
//! The policy's obligation: when the client hears a connection-state change that its
//! [`ErrorPolicy`] says ends holds, every hold it then believes must have ended before the
//! client handles its next input (the recipe answers a session change in the same step).

use std::collections::{BTreeMap, BTreeSet};

use coordination::ids::{ClientSlot, Owner};
use coordination::recipes::{Call, Mode, Notice};
use coordination::relabel::Relabel;
use coordination::zk::SessionId;

use super::{ErrorPolicy, Observation};
use recipe_table::property::Property;

/// One holder: an owner on a client.
pub type Holder = (ClientSlot, Owner);

/// What a hold is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub enum Role {
    /// A lock acquired in `mode`.
    Lock(Mode),
    /// Leadership of an election.
    Leader,
}

/// One holder's hold of one role.
pub type Key = (Holder, Role);

/// A hold as the monitor keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
struct Hold {
    /// Grants not yet given back: reentrant holds, or leases.
    count: u32,
    /// The recipe said `Suspended` (standard policy) and not yet `Reconnected`.
    suspended: bool,
}

/// What [`Beliefs`] knows of one client, without its identity (no slot, no session id): a
/// sort key for the model's symmetry reduction that does not depend on how clients are
/// numbered.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientBeliefs {
    /// Its holds: owner, role, grants, suspended.
    holds: Vec<(Owner, Role, u32, bool)>,
    /// Whether its current session is alive (true when unknown).
    live: bool,
    /// How many of its holds are owed, and how many overdue.
    owed: (usize, usize),
}

/// Two holds that `property` forbids at once; `a` is the one whose key sorts first.
pub type Conflict = (Key, Key);

/// The belief monitor of [`crate::monitor`]: every hold believed, from the recipe's grant
/// until the user gives it back or the recipe says it is over; each client's current session
/// and whether the server still holds it; and the holds the error policy says must end now.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct Beliefs {
    #[relabel(skip)]
    policy: ErrorPolicy,
    holds: BTreeMap<Key, Hold>,
    /// Each client's current session and whether the server still holds it.
    sessions: BTreeMap<ClientSlot, (SessionId, bool)>,
    /// Sessions the server ended before their client connected on them.
    ended_early: BTreeSet<SessionId>,
    /// Holds believed when their client heard a change that obliges them to end.
    owed: BTreeSet<Key>,
    /// Holds that were still believed when their client handled its next input.
    overdue: BTreeSet<Key>,
}

impl Beliefs {
    /// No holds yet, judged under `policy`.
    pub fn new(policy: ErrorPolicy) -> Beliefs {
        Beliefs {
            policy,
            ..Beliefs::default()
        }
    }

    /// Takes in one observation. `Input`, `Session` and `DeadlinePassed` change no hold and
    /// no session's liveness (the belief checkers skip their conflict bookkeeping on them).
    pub fn observe(&mut self, seen: Observation) {
        match seen {
            Observation::Call(client, call) => {
                self.input(client);
                self.on_call(client, call);
            }
            Observation::Notice(client, notice) => self.on_notice(client, notice),
            Observation::Session(client, event) => {
                self.input(client);
                if self.policy.obliges(event) {
                    let believed: Vec<Key> = self.believed_of(client).collect();
                    self.owed.extend(believed);
                }
            }
            Observation::Connected(client, session) => {
                self.input(client);
                // Connected again on the same session keeps what the server did to it.
                let alive = match self.sessions.get(&client) {
                    Some(&(current, alive)) if current == session => alive,
                    _ => !self.ended_early.remove(&session),
                };
                self.sessions.insert(client, (session, alive));
            }
            Observation::Input(client) => self.input(client),
            Observation::SessionEnded(session) => self.end_session(session),
            Observation::Expire(client) => {
                if let Some(&(session, _)) = self.sessions.get(&client) {
                    self.end_session(session);
                }
            }
            Observation::Crash(client) => self.end_where(|((c, _), _)| *c == client),
            // A timer, which the simulator's traces do not record either.
            Observation::DeadlinePassed(..) => {}
        }
        // Only a hold still believed is owed, so that a step that met its obligation leaves
        // no trace of it in the state.
        if !self.owed.is_empty() {
            let holds = &self.holds;
            (self.owed).retain(|key| holds.get(key).is_some_and(|hold| !hold.suspended));
        }
    }

    /// Whether `key` is believed held now.
    pub fn believes(&self, key: &Key) -> bool {
        self.holds.get(key).is_some_and(|hold| !hold.suspended)
    }

    /// The holds believed now.
    pub fn believed(&self) -> impl Iterator<Item = Key> + '_ {
        (self.holds.iter())
            .filter(|(_, hold)| !hold.suspended)
            .map(|(key, _)| *key)
    }

    /// Whether `client`'s current session is alive on the server (true when unknown).
    pub fn on_live_session(&self, client: ClientSlot) -> bool {
        self.sessions.get(&client).is_none_or(|&(_, alive)| alive)
    }

    /// Every pair of believed holds that `property` forbids at once (for
    /// `live_session_exclusion`, only those whose clients are both on live sessions).
    pub fn conflicts(&self, property: Property) -> impl Iterator<Item = Conflict> + '_ {
        let live = property == Property::LiveSessionExclusion;
        let held = || {
            self.believed()
                .filter(move |((client, _), _)| !live || self.on_live_session(*client))
        };
        let mut pairs = Vec::new();
        for (i, a) in held().enumerate() {
            for b in held().skip(i + 1) {
                if a.0 != b.0 && conflict(property, a.1, b.1) {
                    pairs.push((a, b));
                }
            }
        }
        pairs.into_iter()
    }

    /// The leases believed held now, each lease counted.
    pub fn leases(&self) -> u32 {
        (self.holds.iter())
            .filter(|((_, role), hold)| *role == Role::Lock(Mode::Lease) && !hold.suspended)
            .map(|(_, hold)| hold.count)
            .sum()
    }

    /// How many grants `key`'s hold stands for (0 when not held).
    pub fn count(&self, key: &Key) -> u32 {
        self.holds.get(key).map_or(0, |hold| hold.count)
    }

    /// Holds whose client heard a change its policy says ends them and which it still
    /// believes: overdue ones (its next input came) and those of the step under way.
    pub fn kept_too_long(&self) -> impl Iterator<Item = Key> + '_ {
        let owed = self.owed.iter().filter(|key| self.believes(key));
        self.overdue.iter().chain(owed).copied()
    }

    /// Holds found overdue so far, and forgets them (a trace checker reports each once).
    pub fn take_overdue(&mut self) -> BTreeSet<Key> {
        std::mem::take(&mut self.overdue)
    }

    /// What the monitor knows of `client`, without its identity.
    pub fn summary(&self, client: ClientSlot) -> ClientBeliefs {
        let of = |set: &BTreeSet<Key>| set.iter().filter(|((c, _), _)| *c == client).count();
        ClientBeliefs {
            holds: (self.holds.iter())
                .filter(|(((c, _), _), _)| *c == client)
                .map(|(((_, owner), role), hold)| (*owner, *role, hold.count, hold.suspended))
                .collect(),
            live: self.on_live_session(client),
            owed: (of(&self.owed), of(&self.overdue)),
        }
    }

    fn believed_of(&self, client: ClientSlot) -> impl Iterator<Item = Key> + '_ {
        self.believed().filter(move |((c, _), _)| *c == client)
    }

    /// `client` handles another input: what it owed and still believes is overdue.
    fn input(&mut self, client: ClientSlot) {
        if self.owed.is_empty() {
            return;
        }
        let owed: Vec<Key> = (self.owed.iter())
            .filter(|((c, _), _)| *c == client)
            .copied()
            .collect();
        for key in owed {
            self.owed.remove(&key);
            if self.believes(&key) {
                self.overdue.insert(key);
            }
        }
    }

    fn on_call(&mut self, client: ClientSlot, call: Call) {
        let who = (client, call.owner());
        match call {
            Call::Release { mode, .. } => self.release((who, Role::Lock(mode))),
            Call::Relinquish { .. } => self.release((who, Role::Leader)),
            Call::Close { .. } => self.end((who, Role::Leader)),
            _ => {}
        }
    }

    fn on_notice(&mut self, client: ClientSlot, notice: Notice) {
        let who = (client, notice.owner());
        match notice {
            Notice::Acquired { mode, .. } => self.grant((who, Role::Lock(mode))),
            Notice::IsLeader { .. } => self.grant((who, Role::Leader)),
            Notice::NotLeader { .. } => self.end((who, Role::Leader)),
            Notice::Suspended { .. } if self.policy == ErrorPolicy::Standard => {
                self.suspend(who, true)
            }
            Notice::Reconnected { .. } => self.suspend(who, false),
            Notice::Lost { .. } | Notice::Closed { .. } => self.end_where(|(w, _)| *w == who),
            _ => {}
        }
    }

    fn grant(&mut self, key: Key) {
        let hold = self.holds.entry(key).or_insert(Hold {
            count: 0,
            suspended: false,
        });
        hold.count += 1;
    }

    /// One grant of `key` is given back; the last one ends the hold.
    fn release(&mut self, key: Key) {
        if let Some(hold) = self.holds.get_mut(&key) {
            hold.count -= 1;
            if hold.count == 0 {
                self.end(key);
            }
        }
    }

    fn suspend(&mut self, who: Holder, suspended: bool) {
        for ((w, _), hold) in &mut self.holds {
            if *w == who {
                hold.suspended = suspended;
            }
        }
    }

    fn end(&mut self, key: Key) {
        self.holds.remove(&key);
        self.owed.remove(&key);
    }

    fn end_where(&mut self, which: impl Fn(&Key) -> bool) {
        let ending: Vec<Key> = self.holds.keys().filter(|k| which(k)).copied().collect();
        for key in ending {
            self.end(key);
        }
    }

    /// The server ended `session`.
    fn end_session(&mut self, session: SessionId) {
        let current = (self.sessions.values_mut()).find(|(s, _)| *s == session);
        match current {
            Some((_, alive)) => *alive = false,
            None => {
                self.ended_early.insert(session);
            }
        }
    }
}

/// Whether holds of roles `a` and `b` by two holders at once break `property`.
pub fn conflict(property: Property, a: Role, b: Role) -> bool {
    let write = Role::Lock(Mode::Write);
    match property {
        Property::MutualExclusionBelief => {
            a == Role::Lock(Mode::Exclusive) && b == Role::Lock(Mode::Exclusive)
        }
        Property::LeaderUniqueBelief => a == Role::Leader && b == Role::Leader,
        Property::RwExclusion => a == write || b == write,
        Property::LiveSessionExclusion => [
            Property::MutualExclusionBelief,
            Property::LeaderUniqueBelief,
            Property::RwExclusion,
        ]
        .into_iter()
        .any(|exclusive| conflict(exclusive, a, b)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordination::fencing::Token;
    use coordination::recipe::SessionEvent;
    use coordination::relabel::ClientMap;

    const C0: ClientSlot = ClientSlot(0);
    const C1: ClientSlot = ClientSlot(1);
    const OWNER: Owner = Owner(0);

    fn leads(client: ClientSlot) -> Observation {
        Observation::Notice(
            client,
            Notice::IsLeader {
                owner: OWNER,
                token: Token(5),
            },
        )
    }

    fn run(policy: ErrorPolicy, seen: &[Observation]) -> Beliefs {
        let mut beliefs = Beliefs::new(policy);
        for s in seen {
            beliefs.observe(*s);
        }
        beliefs
    }

    #[test]
    fn a_leader_believes_until_the_recipe_says_otherwise_whatever_the_connection() {
        let lost = SessionEvent::Lost {
            server_confirmed: true,
        };
        let beliefs = run(
            ErrorPolicy::Standard,
            &[
                Observation::Connected(C0, SessionId(1)),
                leads(C0),
                Observation::Session(C0, SessionEvent::Suspended),
                Observation::Session(C0, lost),
                Observation::Connected(C0, SessionId(2)),
                leads(C1),
            ],
        );
        let leader = ((C0, OWNER), Role::Leader);
        assert!(beliefs.believes(&leader), "no notice ended it");
        assert_eq!(beliefs.conflicts(Property::LiveSessionExclusion).count(), 1);
        assert_eq!(beliefs.kept_too_long().collect::<Vec<_>>(), [leader]);
    }

    #[test]
    fn a_recipe_that_steps_down_at_suspended_owes_nothing() {
        let beliefs = run(
            ErrorPolicy::Standard,
            &[
                leads(C0),
                Observation::Session(C0, SessionEvent::Suspended),
                Observation::Notice(C0, Notice::NotLeader { owner: OWNER }),
                Observation::Input(C0),
            ],
        );
        assert_eq!(beliefs.kept_too_long().count(), 0);
        assert_eq!(beliefs.believed().count(), 0);
    }

    #[test]
    fn the_session_based_policy_keeps_a_hold_through_suspended_until_lost() {
        let acquired = Notice::Acquired {
            owner: OWNER,
            token: Token(5),
            mode: Mode::Exclusive,
        };
        let key = ((C0, OWNER), Role::Lock(Mode::Exclusive));
        let suspended = [
            Observation::Notice(C0, acquired),
            Observation::Session(C0, SessionEvent::Suspended),
            Observation::Notice(C0, Notice::Suspended { owner: OWNER }),
            Observation::Input(C0),
        ];
        let standard = run(ErrorPolicy::Standard, &suspended);
        assert!(!standard.believes(&key));
        let session_based = run(ErrorPolicy::SessionBased, &suspended);
        assert!(session_based.believes(&key));
        assert_eq!(session_based.kept_too_long().count(), 0);
        let mut late = session_based;
        late.observe(Observation::Session(
            C0,
            SessionEvent::Lost {
                server_confirmed: false,
            },
        ));
        late.observe(Observation::Input(C0));
        assert_eq!(late.take_overdue().into_iter().collect::<Vec<_>>(), [key]);
    }

    #[test]
    fn an_expired_session_excuses_its_holder_until_it_connects_again() {
        let mut beliefs = run(
            ErrorPolicy::Standard,
            &[
                Observation::Connected(C0, SessionId(1)),
                Observation::Connected(C1, SessionId(2)),
                leads(C0),
                Observation::Expire(C0),
                leads(C1),
            ],
        );
        assert!(!beliefs.on_live_session(C0));
        beliefs.observe(Observation::Connected(C0, SessionId(1)));
        assert!(
            !beliefs.on_live_session(C0),
            "a late Connected does not revive it"
        );
        assert_eq!(beliefs.conflicts(Property::LeaderUniqueBelief).count(), 1);
        assert_eq!(beliefs.conflicts(Property::LiveSessionExclusion).count(), 0);
        beliefs.observe(Observation::SessionEnded(SessionId(3)));
        beliefs.observe(Observation::Connected(C0, SessionId(3)));
        assert!(!beliefs.on_live_session(C0), "ended before it connected");
    }

    #[test]
    fn relabelling_swaps_clients_and_their_sessions() {
        let beliefs = run(
            ErrorPolicy::Standard,
            &[Observation::Connected(C0, SessionId(1)), leads(C0)],
        );
        let mut map = ClientMap::new();
        map.map_slot(C0, C1);
        map.map_slot(C1, C0);
        map.map_session(SessionId(1), SessionId(2));
        let swapped = beliefs.relabel(&map);
        assert!(swapped.believes(&((C1, OWNER), Role::Leader)));
        assert_eq!(swapped.sessions.get(&C1), Some(&(SessionId(2), true)));
    }
}
