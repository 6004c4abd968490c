//! `herd_free`: per change, the server's watch events that wake a waiter reach at most
//! max(1, n) clients that are waiting at that moment, where n is how many of them then
//! acquire. The rule, what a change is, who is woken and who "then acquires" are the
//! [`Herds`] monitor's to say (the model keeps the same one); this checker folds it over the
//! trace, with the [`Waits`] monitor for who is waiting. A change is one request (one zxid),
//! or one node an expiry deletes (a zxid no request has). Watches fired by a reconnect's
//! SetWatches (no zxid) do not count.

use std::collections::{BTreeMap, BTreeSet};

use lock::ids::ClientSlot;
use lock::zk::{EventKind as ZkEventKind, Path, SessionId, Zxid};

use crate::monitor::{Herd, Herds, Seen, Waits, changes};
use crate::property::{Property, Violation};
use crate::trace::{EventKind, Trace};

use super::{list, when};

/// Every change that woke more waiting clients than could then acquire (and more than one).
pub fn check(trace: &Trace) -> Vec<Violation> {
    // The zxids of requests, each one change (the others are expiries').
    let requests: BTreeSet<Zxid> = (trace.events.iter())
        .filter_map(|event| match &event.kind {
            EventKind::OpApplied { zxid, .. } => *zxid,
            _ => None,
        })
        .collect();
    let mut fold = Fold {
        trace,
        waits: Waits::default(),
        herds: Herds::default(),
        wakes: BTreeMap::new(),
        fired: Vec::new(),
        violations: Vec::new(),
    };
    for (index, event) in trace.events.iter().enumerate() {
        if let EventKind::WatchFired {
            session,
            event: watched,
            zxid: Some(zxid),
        } = &event.kind
        {
            if fold.fired.last().is_some_and(|(z, ..)| z != zxid) {
                fold.flush(&requests);
            }
            let watch = (*session, watched.kind, index);
            fold.fired.push((*zxid, watched.path.clone(), watch));
            continue;
        }
        fold.flush(&requests);
        if let Some(seen) = Seen::of_event(event.client, &event.kind) {
            fold.waits.observe(seen);
            let herds = fold.herds.observe(seen, &fold.waits);
            fold.report(herds);
        }
    }
    fold.flush(&requests);
    let unfinished: Vec<Herd> = fold.herds.unfinished().collect();
    fold.report(unfinished);
    fold.violations
}

/// The monitors folded over a trace so far.
struct Fold<'a> {
    trace: &'a Trace,
    waits: Waits,
    herds: Herds,
    /// Each wake of several clients still open: its zxid, and the clients it woke, each with
    /// the event of the watch that woke it.
    wakes: BTreeMap<u16, (Zxid, BTreeMap<ClientSlot, usize>)>,
    /// The watches fired by the zxid under way, each with its node and event.
    fired: Vec<(Zxid, Path, (SessionId, ZkEventKind, usize))>,
    violations: Vec<Violation>,
}

impl Fold<'_> {
    /// The zxid under way has fired all its watches: the monitor takes in its changes.
    fn flush(&mut self, requests: &BTreeSet<Zxid>) {
        let Some(&(zxid, ..)) = self.fired.first() else {
            return;
        };
        let fired = std::mem::take(&mut self.fired);
        let per_node = !requests.contains(&zxid);
        let watches = fired.into_iter().map(|(_, node, watch)| (node, watch));
        for change in changes(watches, per_node) {
            let (woken, id, herds) = self.herds.wake(change, &self.waits);
            self.report(herds);
            if let Some(id) = id {
                self.wakes.insert(id, (zxid, woken));
            }
        }
    }

    /// The wakes the monitor found to be herds, as violations.
    fn report(&mut self, herds: Vec<Herd>) {
        for (id, wake) in herds {
            if let Some((zxid, clients)) = self.wakes.remove(&id) {
                let violation = herd(self.trace, zxid, &clients, usize::from(wake.acquired));
                self.violations.push(violation);
            }
        }
    }
}

/// The violation of the change `zxid` waking `clients`, of which `acquired` then acquired.
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
