//! [`Revokes`]: the revocation attempts not yet answered — `revocation_answered`'s monitor.
//!
//! An attempt begins at the user's `AttemptRevoke` call (of an owner on a client) and ends at
//! the recipe's `RevokeAttempted` to that owner, delivered or not: the recipe must say whether
//! it set the request, as Curator's `Revoker.attemptRevoke` returns or throws. The client's
//! crash ends its attempts (its process, and the recipe that would answer, are gone). An
//! attempt left unanswered when the run has come to its end is the violation: in the model
//! once nothing but a fault can happen any more, in a trace at the horizon with the grace
//! since the faults healed that `progress` allows.
//!
//! That the request then reaches the holder (its `RevocationRequested`) is not judged here:
//! which client's node the attempt marked is the set_data's path, and whose node that is is
//! its creator's session — neither is anything a monitor sees ([`Observation`] carries no op, path
//! or node owner), and the holder a monitor does see when the answer comes may already be
//! another client than the one whose node was first when the mark was set.

use std::collections::BTreeMap;

use coordination::ids::{ClientSlot, Owner};
use coordination::recipes::{Call, Notice};
use coordination::relabel::Relabel;

use super::{Holder, Observation};

/// What [`Revokes`] knows of one client, without its identity: its owners' unanswered
/// attempts (a sort key for the model's symmetry reduction).
pub type ClientRevokes = Vec<(Owner, u16)>;

/// The revocation monitor of [`crate::monitor`]: every attempt not yet answered, counted by
/// the owner that made it.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct Revokes {
    pending: BTreeMap<Holder, u16>,
}

impl Revokes {
    /// Takes in one observation.
    pub fn observe(&mut self, seen: Observation) {
        match seen {
            Observation::Call(client, Call::AttemptRevoke { owner }) => {
                let count = self.pending.entry((client, owner)).or_default();
                *count = count.saturating_add(1);
            }
            Observation::Notice(client, Notice::RevokeAttempted { owner, .. }) => {
                if let Some(count) = self.pending.get_mut(&(client, owner)) {
                    *count -= 1;
                    if *count == 0 {
                        self.pending.remove(&(client, owner));
                    }
                }
            }
            Observation::Crash(client) => self.pending.retain(|(c, _), _| *c != client),
            _ => {}
        }
    }

    /// The owners with an attempt not yet answered, each with how many.
    pub fn unanswered(&self) -> impl Iterator<Item = (Holder, u16)> + '_ {
        self.pending.iter().map(|(holder, count)| (*holder, *count))
    }

    /// What the monitor knows of `client`, without its identity.
    pub fn summary(&self, client: ClientSlot) -> ClientRevokes {
        (self.pending.iter())
            .filter(|((c, _), _)| *c == client)
            .map(|((_, owner), count)| (*owner, *count))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordination::relabel::ClientMap;

    const C0: ClientSlot = ClientSlot(0);
    const OWNER: Owner = Owner(0);

    fn run(seen: &[Observation]) -> Vec<(Holder, u16)> {
        let mut revokes = Revokes::default();
        for s in seen {
            revokes.observe(*s);
        }
        revokes.unanswered().collect()
    }

    fn attempt() -> Observation {
        Observation::Call(C0, Call::AttemptRevoke { owner: OWNER })
    }

    fn answer(delivered: bool) -> Observation {
        Observation::Notice(
            C0,
            Notice::RevokeAttempted {
                owner: OWNER,
                delivered,
            },
        )
    }

    #[test]
    fn an_attempt_waits_for_its_answer_delivered_or_not() {
        assert_eq!(run(&[attempt()]), [((C0, OWNER), 1)]);
        assert_eq!(run(&[attempt(), answer(true)]), []);
        assert_eq!(run(&[attempt(), answer(false)]), []);
        let other =
            Observation::Notice(ClientSlot(1), Notice::RevocationRequested { owner: OWNER });
        assert_eq!(
            run(&[attempt(), other]),
            [((C0, OWNER), 1)],
            "not an answer"
        );
    }

    #[test]
    fn each_attempt_is_answered_once_and_a_crash_ends_them() {
        assert_eq!(
            run(&[attempt(), attempt(), answer(true)]),
            [((C0, OWNER), 1)],
            "one answer for two attempts"
        );
        assert_eq!(run(&[answer(true), attempt()]), [((C0, OWNER), 1)]);
        assert_eq!(run(&[attempt(), Observation::Crash(C0)]), []);
    }

    #[test]
    fn relabelling_moves_an_attempt_with_its_client() {
        let mut revokes = Revokes::default();
        revokes.observe(attempt());
        let mut map = ClientMap::new();
        map.map_slot(C0, ClientSlot(1));
        let moved = revokes.relabel(&map);
        assert_eq!(moved.summary(ClientSlot(1)), [(OWNER, 1)]);
        assert_eq!(moved.summary(C0), []);
    }
}
