//! `herd_free`: per change, the server's watch events that wake a waiter (`NodeDeleted` and
//! `NodeChildrenChanged`) reach at most max(1, n) clients that are waiting at that moment,
//! where n is how many of them then acquire (DESIGN's rule, made for read-write locks: one
//! writer's release may rightly wake every reader queued behind it; for exclusive locks and
//! elections n ≤ 1, so at most one). A change is one request (one zxid), or one node an expiry
//! deletes: an expiry deletes all its session's ephemerals in one zxid, and each deletion
//! wakes its own waiter (there, a child watch counts with the changes of the node it watches).
//! Waiting: an acquire (or start) outstanding, without its grant, `TimedOut` or `Failed` yet.
//! A woken client "then acquires" when its wait ends in a grant before another change wakes
//! it, or ends because its session was lost (`Failed { SessionLost }`) before one does: a
//! fault kept it from acting on the wake, which is no sign that it could not acquire (a reader
//! woken by a writer's release while cut off from the server). Watches fired by a reconnect's
//! SetWatches (no zxid), watches fired for a session its client has given up (after its
//! `Lost`, before its next `Connected`: the client never hears them, as in the model) and
//! events of other kinds do not count.

use std::collections::{BTreeMap, BTreeSet};

use lock::coordination::RawState;
use lock::ids::ClientSlot;
use lock::recipe::SessionEvent;
use lock::recipes::{FailReason, Notice};
use lock::zk::{EventKind as ZkEventKind, Path, SessionId, Zxid};

use crate::property::{Property, Violation};
use crate::trace::{EventKind, Trace};

use super::timeline::Timeline;
use super::{list, when};

/// One change to the tree: the zxid of a request, or the zxid of an expiry with the node
/// whose watches fired.
type Change = (Zxid, Option<Path>);

/// Every change that woke more waiting clients than could then acquire (and more than one).
pub fn check(trace: &Trace) -> Vec<Violation> {
    let timeline = Timeline::of(trace);
    // The zxids of requests, each one change (the others are expiries').
    let requests: BTreeSet<Zxid> = (trace.events.iter())
        .filter_map(|event| match &event.kind {
            EventKind::OpApplied { zxid, .. } => *zxid,
            _ => None,
        })
        .collect();
    // Each client's current session: from its `Connected` until the client gives it up
    // (`Lost`); a watch fired for a session its client has abandoned wakes nobody.
    let mut current: BTreeMap<ClientSlot, SessionId> = BTreeMap::new();
    // Per change: the waiting clients woken, each with the watch event that woke it.
    let mut woken: BTreeMap<Change, BTreeMap<ClientSlot, usize>> = BTreeMap::new();
    for (index, event) in trace.events.iter().enumerate() {
        match (&event.kind, event.client) {
            (
                EventKind::RawSession {
                    state: RawState::Connected { session, .. },
                },
                Some(client),
            ) => {
                current.insert(client, *session);
            }
            (
                EventKind::Session {
                    event: SessionEvent::Lost { .. },
                },
                Some(client),
            ) => {
                current.remove(&client);
            }
            _ => {}
        }
        let EventKind::WatchFired {
            session,
            event,
            zxid: Some(zxid),
        } = &event.kind
        else {
            continue;
        };
        if !wakes_waiters(event.kind) {
            continue;
        }
        let node = (!requests.contains(zxid)).then(|| event.path.clone());
        let Some(client) = current
            .iter()
            .find(|(_, s)| *s == session)
            .map(|(client, _)| *client)
        else {
            continue;
        };
        if timeline.waiting_at(index).any(|w| w.who.0 == client) {
            woken
                .entry((*zxid, node))
                .or_default()
                .entry(client)
                .or_insert(index);
        }
    }
    let wakes: Vec<(ClientSlot, usize)> = woken
        .values()
        .flat_map(|clients| clients.iter().map(|(c, i)| (*c, *i)))
        .collect();
    let acquires_then = |client: ClientSlot, at: usize| {
        let Some(end) = timeline
            .waiting_at(at)
            .find(|w| w.who.0 == client)
            .and_then(|w| w.end)
        else {
            return false;
        };
        let woken_again = wakes.iter().any(|&(c, i)| c == client && at < i && i < end);
        let ended_well = match &trace.events[end].kind {
            EventKind::Notice { notice } => counts_as_acquired(notice),
            _ => false,
        };
        ended_well && !woken_again
    };
    woken
        .into_iter()
        .filter_map(|((zxid, _), clients)| {
            let acquired = clients
                .iter()
                .filter(|&(&c, &i)| acquires_then(c, i))
                .count();
            (clients.len() > acquired.max(1)).then(|| herd(trace, zxid, &clients, acquired))
        })
        .collect()
}

/// Whether a watch event of `kind` wakes a waiter (its node or its siblings changed), as
/// opposed to a data change (a revocation request). The model's herd rule uses the same test.
pub fn wakes_waiters(kind: ZkEventKind) -> bool {
    matches!(
        kind,
        ZkEventKind::NodeDeleted | ZkEventKind::NodeChildrenChanged
    )
}

/// Whether a woken waiter whose wait ends with `notice` counts as one that then acquired: a
/// grant (or `Await`'s `true`, which ends an awaiting latch user's wait), or its session lost first (a fault kept it from acting on the wake-up). The model's
/// herd rule uses the same test.
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

/// The violation of the deletion `zxid` waking `clients`, of which `acquired` then acquired.
fn herd(
    trace: &Trace,
    zxid: Zxid,
    clients: &BTreeMap<ClientSlot, usize>,
    acquired: usize,
) -> Violation {
    let mut events: Vec<usize> = clients.values().copied().collect();
    events.sort_unstable();
    let clients: Vec<ClientSlot> = clients.keys().copied().collect();
    let at = trace.events[events[0]].t;
    let then = if acquired > 1 {
        format!(" (only {acquired} of them then acquired)")
    } else {
        String::new()
    };
    let message = format!(
        "one change (zxid {}) at {} woke {} waiting clients at once{then}: {}",
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
            "one change (zxid 20) at 8.000 ms woke 2 waiting clients at once: c1, c2"
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

    #[test]
    fn a_watch_of_a_session_its_client_gave_up_wakes_nobody() {
        // c1 gives its session 11 up (LOST) and waits on a new one, 13; the server still
        // holds 11 and fires its old watch: c1 never hears it (random-faults-mutex, seed
        // 195401, was flagged as a herd for it).
        let trace = waiting_three()
            .session_lost(1)
            .connected(1, 13)
            .acquire(1)
            .deleted_watch(11, "/lock/a", 20)
            .deleted_watch(12, "/lock/a", 20)
            .trace();
        assert_eq!(check(&trace), []);
        let heard = waiting_three()
            .deleted_watch(11, "/lock/a", 20)
            .deleted_watch(12, "/lock/a", 20)
            .trace();
        assert_eq!(check(&heard).len(), 1);
    }

    #[test]
    fn readers_woken_together_that_all_acquire_are_not_a_herd() {
        let woken_together = || {
            waiting_three()
                .deleted_watch(11, "/lock/w", 20)
                .deleted_watch(12, "/lock/w", 20)
                .acquired(1, 6)
        };
        let both = woken_together().acquired(2, 7).trace();
        assert_eq!(check(&both), []);
        let one = woken_together()
            .deleted_watch(12, "/lock/x", 21)
            .acquired(2, 7)
            .trace();
        assert_eq!(check(&one).len(), 1, "c2 needed a second wake-up");
    }

    #[test]
    fn a_woken_reader_whose_session_is_lost_before_it_acts_is_no_herd() {
        let woken_together = || {
            waiting_three()
                .deleted_watch(11, "/lock/w", 20)
                .deleted_watch(12, "/lock/w", 20)
                .acquired(1, 6)
        };
        assert_eq!(check(&woken_together().failed(2).trace()), []);
        let timed_out = woken_together().timed_out(2).trace();
        assert_eq!(check(&timed_out).len(), 1, "a timeout is no fault");
    }

    /// c1 and c2, both waiting, get a watch event of `kind` of the change zxid 20, on `a` and
    /// on `b`.
    fn both_woken(kind: ZkEventKind, a: &str, b: &str) -> Trace {
        (waiting_three().watch_fired(11, kind, a, 20))
            .watch_fired(12, kind, b, 20)
            .trace()
    }

    #[test]
    fn child_watches_wake_too() {
        let children = both_woken(ZkEventKind::NodeChildrenChanged, "/lock", "/lock");
        assert_eq!(check(&children).len(), 1);
        let data = both_woken(ZkEventKind::NodeDataChanged, "/lock/a", "/lock/a");
        assert_eq!(check(&data), []);
    }

    #[test]
    fn an_expiry_counts_per_deletion_and_a_request_per_zxid() {
        // c0's session expires holding two nodes; each deletion wakes its successor.
        let expiry = both_woken(ZkEventKind::NodeDeleted, "/lock/a", "/lock/b");
        assert_eq!(check(&expiry), []);
        // One request's change wakes a node's watcher and a child watcher of its parent.
        let request = waiting_three()
            .deleted(10, "/lock/a", 20)
            .deleted_watch(11, "/lock/a", 20)
            .watch_fired(12, ZkEventKind::NodeChildrenChanged, "/lock", 20)
            .trace();
        assert_eq!(check(&request).len(), 1);
    }
}
