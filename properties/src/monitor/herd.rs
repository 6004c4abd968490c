//! [`Herds`]: who a change to the tree woke — `herd_free`'s monitor.
//!
//! The rule: one change wakes at most max(1, n) clients that are waiting at that moment,
//! where n is how many of them then acquire (made for read-write locks: one writer's release
//! may rightly wake every reader queued behind it; for exclusive locks and elections n ≤ 1).
//! A change is one request, or one node an expiry deletes (each deletion wakes its own
//! waiter). A client is woken by a watch event that wakes waiters ([`wakes_waiters`]) fired
//! for its current session — the one it last connected on, until it gives it up at `Lost`:
//! the client never hears a watch of a session it has abandoned — while the [`Waits`]
//! monitor has it asking. A woken client "then acquires" when its wait ends as
//! [`counts_as_acquired`] says before another change wakes it; one still waiting when the run
//! ends did not.

use std::collections::BTreeMap;

use coordination::ids::ClientSlot;
use coordination::recipe::SessionEvent;
use coordination::recipes::{FailReason, Notice};
use coordination::relabel::Relabel;
use coordination::zk::{EventKind as ZkEventKind, Path, SessionId};

use super::{Observation, Waits};

/// One change that woke several waiting clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Wake {
    /// How many waiting clients it woke.
    pub woken: u16,
    /// How many of them then acquired (before another change woke them).
    pub acquired: u16,
}

impl Wake {
    /// Whether the wake broke the rule, with `pending` of its clients still to decide (each
    /// counted as one that may acquire): it woke more than max(1, those that acquired or may).
    fn herd(self, pending: usize) -> bool {
        usize::from(self.woken) > (usize::from(self.acquired) + pending).max(1)
    }
}

/// A wake that broke the rule, by the id [`Herds::wake`] gave it.
pub type Herd = (u16, Wake);

/// The herd monitor of [`crate::monitor`].
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct Herds {
    /// Each client's current session, until it gives it up.
    sessions: BTreeMap<ClientSlot, SessionId>,
    /// The wake each woken client belongs to, until it acquires, stops waiting or is woken
    /// again.
    woken: BTreeMap<ClientSlot, u16>,
    /// Wakes of several clients whose clients are not all done with them, by id (the lowest
    /// free one).
    #[relabel(skip)]
    wakes: BTreeMap<u16, Wake>,
    /// A wake has broken the rule already, whatever its clients still do (sticky).
    #[relabel(skip)]
    herd: bool,
}

impl Herds {
    /// Takes in one observation, after `waits` has; the wakes it showed to be herds.
    pub fn observe(&mut self, seen: Observation, waits: &Waits) -> Vec<Herd> {
        match seen {
            Observation::Connected(client, session) => {
                self.sessions.insert(client, session);
            }
            Observation::Session(client, SessionEvent::Lost { .. }) => {
                self.sessions.remove(&client);
            }
            Observation::Notice(client, notice) if !waits.asking(client) => {
                self.leave(client, counts_as_acquired(&notice));
            }
            Observation::Call(client, _) if !waits.asking(client) => self.leave(client, false),
            Observation::Crash(client) => self.leave(client, false),
            _ => {}
        }
        self.settle()
    }

    /// One change fired watches `fired` (the session and the kind of each, with a tag the
    /// caller gets back): the waiting clients it woke, each with the tag of the first watch
    /// that woke it, and the id of the wake when there are several; the wakes it showed to be
    /// herds (those it woke again left theirs).
    pub fn wake<T: Copy>(
        &mut self,
        fired: impl IntoIterator<Item = (SessionId, ZkEventKind, T)>,
        waits: &Waits,
    ) -> (BTreeMap<ClientSlot, T>, Option<u16>, Vec<Herd>) {
        let mut woken: BTreeMap<ClientSlot, T> = BTreeMap::new();
        for (session, kind, tag) in fired {
            let client = (self.sessions.iter()).find(|(_, s)| **s == session);
            if let Some((&client, _)) = client.filter(|(c, _)| waits.asking(**c))
                && wakes_waiters(kind)
            {
                woken.entry(client).or_insert(tag);
            }
        }
        for &client in woken.keys() {
            self.leave(client, false);
        }
        let herds = self.settle();
        let id = (woken.len() > 1).then(|| {
            // Each open wake holds two clients or more, so fewer than 2^15 are open: a free id
            // is found by counting.
            let id = (0..).find(|id| !self.wakes.contains_key(id)).unwrap_or(0);
            let count = u16::try_from(woken.len()).unwrap_or(u16::MAX);
            let wake = Wake {
                woken: count,
                acquired: 0,
            };
            self.wakes.insert(id, wake);
            for &client in woken.keys() {
                self.woken.insert(client, id);
            }
            id
        });
        (woken, id, herds)
    }

    /// Whether no wake has broken the rule yet, its clients still deciding counted as ones
    /// that may acquire.
    pub fn holds(&self) -> bool {
        !self.herd
    }

    /// The wakes whose clients are not all done and that broke the rule if the run ends now
    /// (each client still deciding counted as one that did not acquire).
    pub fn unfinished(&self) -> impl Iterator<Item = Herd> + '_ {
        (self.wakes.iter())
            .filter(|(_, wake)| wake.herd(0))
            .map(|(id, wake)| (*id, *wake))
    }

    /// Whether the run passes if it ends now.
    pub fn holds_at_end(&self) -> bool {
        self.holds() && self.unfinished().next().is_none()
    }

    /// What the monitor knows of `client`, without its identity: the wake it belongs to and
    /// whether it has a current session.
    pub fn summary(&self, client: ClientSlot) -> (Option<u16>, bool) {
        let wake = self.woken.get(&client).copied();
        (wake, self.sessions.contains_key(&client))
    }

    /// `client` is done with its wake-up: it acquired, or not.
    fn leave(&mut self, client: ClientSlot, acquired: bool) {
        let Some(id) = self.woken.remove(&client) else {
            return;
        };
        if let Some(wake) = self.wakes.get_mut(&id).filter(|_| acquired) {
            wake.acquired += 1;
        }
    }

    /// Notes a herd once a wake has woken more than max(1, those that acquired or may still
    /// acquire), and forgets wakes whose clients are all done: those that broke the rule.
    fn settle(&mut self) -> Vec<Herd> {
        let mut herds = Vec::new();
        let woken = &self.woken;
        let pending = |id: u16| woken.values().filter(|w| **w == id).count();
        self.wakes.retain(|&id, wake| {
            let pending = pending(id);
            self.herd |= wake.herd(pending);
            if pending == 0 && wake.herd(0) {
                herds.push((id, *wake));
            }
            pending > 0
        });
        herds
    }
}

/// Whether a watch event of `kind` wakes a waiter (its node or its siblings changed), as
/// opposed to a data change (a revocation request).
pub fn wakes_waiters(kind: ZkEventKind) -> bool {
    matches!(
        kind,
        ZkEventKind::NodeDeleted | ZkEventKind::NodeChildrenChanged
    )
}

/// Whether a woken waiter whose wait ends with `notice` counts as one that then acquired: a
/// grant (or `Await`'s `true`, which ends an awaiting latch user's wait), or its session lost
/// first (a fault kept it from acting on the wake-up, which is no sign that it could not
/// acquire: a reader woken by a writer's release while cut off).
pub fn counts_as_acquired(notice: &Notice) -> bool {
    notice.granted().is_some()
        || matches!(
            notice,
            Notice::Failed {
                reason: FailReason::SessionLost,
                ..
            } | Notice::Awaited { leader: true, .. }
        )
}

/// The fired watches of one request's change, or of an expiry's (`per_node`: the watches on
/// each node path are a change of their own, so that each deletion wakes its own waiter and a
/// child watch counts with the changes of the node it watches), each watch with its node.
pub fn changes<T>(fired: impl IntoIterator<Item = (Path, T)>, per_node: bool) -> Vec<Vec<T>> {
    let mut changes: BTreeMap<Option<Path>, Vec<T>> = BTreeMap::new();
    for (node, watch) in fired {
        changes
            .entry(per_node.then_some(node))
            .or_default()
            .push(watch);
    }
    changes.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordination::fencing::Token;
    use coordination::ids::Owner;
    use coordination::recipes::{Call, Mode};

    const OWNER: Owner = Owner(0);

    /// Clients 1 and 2 connected on sessions 11 and 12, both asking for the lock.
    fn two_waiting() -> (Waits, Herds) {
        let (mut waits, mut herds) = (Waits::default(), Herds::default());
        for client in [1, 2] {
            let slot = ClientSlot(client);
            for seen in [
                Observation::Connected(slot, SessionId(10 + u64::from(client))),
                Observation::Call(slot, Call::acquire(OWNER, None)),
            ] {
                waits.observe(seen);
                herds.observe(seen, &waits);
            }
        }
        (waits, herds)
    }

    fn deleted(sessions: &[u64]) -> Vec<(SessionId, ZkEventKind, ())> {
        (sessions.iter())
            .map(|s| (SessionId(*s), ZkEventKind::NodeDeleted, ()))
            .collect()
    }

    #[test]
    fn a_woken_client_still_waiting_when_the_run_ends_did_not_acquire() {
        let (mut waits, mut herds) = two_waiting();
        let (woken, id, _) = herds.wake(deleted(&[11, 12]), &waits);
        assert_eq!(woken.len(), 2);
        assert_eq!(id, Some(0));
        let acquired = Observation::Notice(
            ClientSlot(1),
            Notice::Acquired {
                owner: OWNER,
                token: Token(5),
                mode: Mode::Exclusive,
            },
        );
        waits.observe(acquired);
        assert_eq!(herds.observe(acquired, &waits), []);
        assert!(herds.holds(), "client 2 may still acquire");
        assert!(!herds.holds_at_end(), "unless the run ends now");
        let wake = Wake {
            woken: 2,
            acquired: 1,
        };
        assert_eq!(herds.unfinished().collect::<Vec<_>>(), [(0, wake)]);
    }

    #[test]
    fn a_watch_of_a_session_its_client_gave_up_wakes_nobody() {
        let (waits, mut herds) = two_waiting();
        let lost = SessionEvent::Lost {
            server_confirmed: false,
        };
        herds.observe(Observation::Session(ClientSlot(1), lost), &waits);
        let (woken, id, _) = herds.wake(deleted(&[11, 12]), &waits);
        assert_eq!(woken.keys().copied().collect::<Vec<_>>(), [ClientSlot(2)]);
        assert_eq!(id, None);
        assert!(herds.holds_at_end());
    }
}
