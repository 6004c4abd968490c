//! `herd_free`: per deletion zxid, the server's NodeDeleted watch events reach at most one
//! client that is waiting for the lock at that moment (waiting: an acquire call outstanding,
//! without `Acquired`, `TimedOut` or `Failed` yet). Watches fired by a reconnect's SetWatches
//! (no zxid) and events of other kinds do not count.

use std::collections::{BTreeMap, BTreeSet};

use lock::ids::ClientSlot;
use lock::zk::{EventKind as ZkEventKind, Zxid};

use crate::property::{Property, Violation};
use crate::trace::{EventKind, Trace};

use super::timeline::{Timeline, session_owners};
use super::{list, when};

/// Every deletion that woke more than one waiting client.
pub fn check(trace: &Trace) -> Vec<Violation> {
    let timeline = Timeline::of(trace);
    let owners = session_owners(trace);
    // Per deletion zxid: the waiting clients woken, and the watch events that woke them.
    let mut woken: BTreeMap<Zxid, (BTreeSet<ClientSlot>, Vec<usize>)> = BTreeMap::new();
    for (index, event) in trace.events.iter().enumerate() {
        let EventKind::WatchFired {
            session,
            event,
            zxid: Some(zxid),
        } = &event.kind
        else {
            continue;
        };
        if event.kind != ZkEventKind::NodeDeleted {
            continue;
        }
        let Some(client) = owners.get(session).copied() else {
            continue;
        };
        if timeline.waiting_at(index).any(|w| w.who.0 == client) {
            let entry = woken.entry(*zxid).or_default();
            entry.0.insert(client);
            entry.1.push(index);
        }
    }
    woken
        .into_iter()
        .filter(|(_, (clients, _))| clients.len() > 1)
        .map(|(zxid, (clients, events))| {
            let clients: Vec<ClientSlot> = clients.into_iter().collect();
            let at = trace.events[events[0]].t;
            let message = format!(
                "one deletion (zxid {}) at {} woke {} waiting clients at once: {}",
                zxid.0,
                when(trace, at),
                clients.len(),
                list(&clients)
            );
            Violation {
                property: Property::HerdFree,
                at,
                until: None,
                clients,
                events,
                message,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::fixtures::Build;

    fn waiting_three() -> Build {
        Build::new()
            .connected(0, 10)
            .connected(1, 11)
            .connected(2, 12)
            .acquire(0)
            .acquired(0, 5)
            .acquire(1)
            .acquire(2)
            .release(0)
    }

    #[test]
    fn one_woken_waiter_per_deletion_passes() {
        let trace = waiting_three()
            .deleted_watch(11, "/lock/a", 20)
            .acquired(1, 6)
            .release(1)
            .deleted_watch(12, "/lock/b", 21)
            .trace();
        assert_eq!(check(&trace), []);
    }

    #[test]
    fn a_herd_is_caught() {
        let trace = waiting_three()
            .deleted_watch(11, "/lock/a", 20)
            .deleted_watch(12, "/lock/a", 20)
            .trace();
        let violations = check(&trace);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].clients, [ClientSlot(1), ClientSlot(2)]);
        assert_eq!(violations[0].events, [8, 9]);
        assert_eq!(
            violations[0].message,
            "one deletion (zxid 20) at 8.000 ms woke 2 waiting clients at once: c1, c2"
        );
    }

    #[test]
    fn clients_that_are_not_waiting_and_reconnect_watches_do_not_count() {
        let trace = waiting_three()
            .timed_out(2)
            .deleted_watch(11, "/lock/a", 20)
            .deleted_watch(12, "/lock/a", 20)
            .deleted_watch(10, "/lock/a", 20)
            .trace();
        assert_eq!(check(&trace), []);
        let mut trace = waiting_three()
            .deleted_watch(11, "/lock/a", 20)
            .deleted_watch(12, "/lock/a", 20)
            .trace();
        if let EventKind::WatchFired { zxid, .. } = &mut trace.events[9].kind {
            *zxid = None;
        }
        assert_eq!(check(&trace), []);
    }
}
