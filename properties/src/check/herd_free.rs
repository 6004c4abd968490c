//! `herd_free`: per change, the watch events that wake a waiter reach at most max(1, n)
//! clients that are waiting at that moment, where n is how many of them then acquire. The
//! rule, who is woken and who "then acquires" are the [`Herds`] monitor's to say (the model
//! keeps the same one); this checker finds the changes in the trace and folds the monitor over
//! it, with the [`Waits`] monitor for who is waiting.
//!
//! What a change is depends on what the trace recorded. A simulated or model trace has the
//! server's side: each fired watch with the zxid of its change, so a change is one request (one
//! zxid) or one node an expiry deletes (a zxid no request has), and watches fired by a
//! reconnect's SetWatches (no zxid) do not count. In a simulated trace a fired watch wakes its
//! client only if the event reaches it ([`received`]): one sent on a connection that dies
//! first wakes nobody. (The model loses none: a connection loss there keeps the events already
//! queued for the client, so its monitor and its traces count every fired watch.) A real trace has only the clients' side, whose watch events carry no
//! zxid from ZooKeeper 3.8; there a change is found from what each client received
//! ([`delivered`]).

mod delivered;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use coordination::ids::ClientSlot;
use coordination::zk::{EventKind as ZkEventKind, Path, SessionId, Zxid};

use crate::monitor::{Herd, Herds, Observation, Waits, changes};
use recipe_table::property::{Property, Violation};
use trace::{EventKind, Source, Trace};

use super::received::received;
use super::{list, when};

/// Every change that woke more waiting clients than could then acquire (and more than one).
pub fn check(trace: &Trace) -> Vec<Violation> {
    let changes = match trace.meta.source {
        Source::Sim => fired(trace, Some(&received(trace))),
        Source::Model => fired(trace, None),
        Source::Real => delivered::changes(trace),
    };
    let mut changes = changes.into_iter().peekable();
    let mut fold = Fold {
        trace,
        waits: Waits::default(),
        herds: Herds::default(),
        wakes: BTreeMap::new(),
        violations: Vec::new(),
    };
    for (index, event) in trace.events.iter().enumerate() {
        while let Some((_, change)) = changes.next_if(|(at, _)| *at == index) {
            fold.wake(change);
        }
        if let Some(seen) = Observation::of_event(event.client, &event.kind) {
            fold.waits.observe(seen);
            let herds = fold.herds.observe(seen, &fold.waits);
            fold.report(herds);
        }
    }
    let unfinished: Vec<Herd> = fold.herds.unfinished().collect();
    fold.report(unfinished);
    fold.violations
}

/// One change to the tree and the watch events it caused: each with the session it was for,
/// its kind and the index of the trace event that tells it.
struct Change {
    what: What,
    watches: Vec<(SessionId, ZkEventKind, usize)>,
}

/// Which change, as a violation names it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum What {
    /// The change of this zxid (the server's record).
    Zxid(Zxid),
    /// The deletion of this node (what its watchers received).
    Deletion(Path),
    /// A change among the children of this node (what one child watcher received).
    Children(Path),
}

impl fmt::Display for What {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            What::Zxid(zxid) => write!(f, "zxid {}", zxid.0),
            What::Deletion(node) => write!(f, "the deletion of {node}"),
            What::Children(node) => write!(f, "among the children of {node}"),
        }
    }
}

/// The changes of the server's fired watches, each at the index of its first watch event: the
/// watches of one zxid, recorded together, split per node when no request has that zxid (an
/// expiry's). With `received`, only the watches whose event reached its client count (a change
/// none reached is left out).
fn fired(trace: &Trace, received: Option<&BTreeMap<usize, usize>>) -> Vec<(usize, Change)> {
    let requests: BTreeSet<Zxid> = (trace.events.iter())
        .filter_map(|event| match &event.kind {
            EventKind::OpApplied { zxid, .. } => *zxid,
            _ => None,
        })
        .collect();
    let mut found = Vec::new();
    let mut run: Vec<(Zxid, Path, (SessionId, ZkEventKind, usize))> = Vec::new();
    let mut flush = |run: &mut Vec<(Zxid, Path, (SessionId, ZkEventKind, usize))>| {
        let Some(&(zxid, _, (_, _, at))) = run.first() else {
            return;
        };
        let watches = (run.drain(..))
            .filter(|(.., (_, _, index))| received.is_none_or(|r| r.contains_key(index)))
            .map(|(_, node, watch)| (node, watch));
        for watches in changes(watches, !requests.contains(&zxid)) {
            let what = What::Zxid(zxid);
            found.push((at, Change { what, watches }));
        }
    };
    for (index, event) in trace.events.iter().enumerate() {
        match &event.kind {
            EventKind::WatchFired {
                session,
                event: watched,
                zxid: Some(zxid),
            } => {
                if run.last().is_some_and(|(z, ..)| z != zxid) {
                    flush(&mut run);
                }
                run.push((*zxid, watched.path.clone(), (*session, watched.kind, index)));
            }
            _ => flush(&mut run),
        }
    }
    flush(&mut run);
    found
}

/// The monitors folded over a trace so far.
struct Fold<'a> {
    trace: &'a Trace,
    waits: Waits,
    herds: Herds,
    /// Each wake of several clients still open: its change, and the clients it woke, each with
    /// the event of the watch that woke it.
    wakes: BTreeMap<u16, (What, BTreeMap<ClientSlot, usize>)>,
    violations: Vec<Violation>,
}

impl Fold<'_> {
    /// The monitor takes in one change.
    fn wake(&mut self, change: Change) {
        let (woken, id, herds) = self.herds.wake(change.watches, &self.waits);
        self.report(herds);
        if let Some(id) = id {
            self.wakes.insert(id, (change.what, woken));
        }
    }

    /// The wakes the monitor found to be herds, as violations.
    fn report(&mut self, herds: Vec<Herd>) {
        for (id, wake) in herds {
            if let Some((what, clients)) = self.wakes.remove(&id) {
                let violation = herd(self.trace, &what, &clients, usize::from(wake.acquired));
                self.violations.push(violation);
            }
        }
    }
}

/// The violation of the change `what` waking `clients`, of which `acquired` then acquired.
fn herd(
    trace: &Trace,
    what: &What,
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
        "one change ({what}) at {} woke {} waiting clients at once{then}: {}",
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
    use coordination::session::RawState;
    use trace::ServerSession;
    use trace::build::Build;

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
    fn a_watch_event_lost_with_its_connection_wakes_nobody() {
        // mutex-revocation-partition seed 52 was flagged as a herd for this: an expiry fires
        // the watches of c0 and of c2, which is cut off; c2's connection drops before the
        // event arrives, and it never hears it.
        let deleted = ZkEventKind::NodeDeleted;
        let lost = || {
            waiting_three()
                .watch_fired_unreceived(11, deleted, "/lock/a", 20)
                .deleted_watch(12, "/lock/a", 20)
        };
        assert_eq!(check(&lost().trace()), []);
        // Back on the same session, its SetWatches fires the watch again (no zxid): the event
        // that then arrives is not the one the change sent.
        let disconnected = EventKind::RawSession {
            state: RawState::Disconnected,
        };
        let refired = (lost().push(Some(1), disconnected))
            .connected(1, 11)
            .delivered(1, deleted, "/lock/a")
            .trace();
        assert_eq!(check(&refired), []);
        let late = lost().delivered(1, deleted, "/lock/a").trace();
        assert_eq!(
            check(&late).len(),
            1,
            "received on the same connection, later"
        );
        // Fired on the new connection while its connect reply is on the way: it arrives.
        let disconnected = EventKind::RawSession {
            state: RawState::Disconnected,
        };
        let on_the_new_connection = (waiting_three().push(Some(1), disconnected))
            .server_session(11, ServerSession::Reattached)
            .watch_fired_unreceived(11, deleted, "/lock/a", 20)
            .deleted_watch(12, "/lock/a", 20)
            .connected(1, 11)
            .delivered(1, deleted, "/lock/a")
            .trace();
        assert_eq!(check(&on_the_new_connection).len(), 1);
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
