//! The changes of a real trace, found from the watch events each client received.
//!
//! ZooKeeper 3.8 sends a watch event without the zxid of its change (3.9 added it,
//! ZOOKEEPER-4655), and a real trace has none of the server's side. So a change is told by the
//! version of the node each watcher's watch was left on, which the reply of the request that
//! left it carries:
//!
//! - A `NodeDeleted` is the deletion of the node generation the client's data watch was left
//!   on: the node's czxid in the reply of the `exists` or `getData` that left it.
//! - A `NodeChildrenChanged` is the first create or delete among the children after the
//!   listing that left the child watch: the parent's pzxid in that listing's reply (the last
//!   such change before it). Two watchers whose listings saw the same pzxid saw no change
//!   between them, so the next change wakes both.
//!
//! Watchers of one version were woken by one change, however far apart their events arrived.
//! An event whose version the client never saw (a `NodeDeleted` of a node it watched only as a
//! parent, or a listing that told no pzxid) is a change of its own. A change found here is
//! never larger than the true one: a real trace may miss a herd, never invent one. A change
//! happens at its first watch event; whether a client was waiting is judged there, as the
//! server's record judges it at the change.

use std::collections::BTreeMap;

use coordination::ids::{ClientSlot, OpId};
use coordination::zk::{EventKind as ZkEventKind, OpOk, Path, Request, Zxid};

use super::{Change, What};
use crate::check::client_sessions::Sessions;
use crate::monitor::wakes_waiters;
use trace::{EventKind, Trace};

/// Which of a node's watches: its data (and existence), or its children.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Table {
    /// Left by `exists` or `getData`; a `NodeDeleted` fires it.
    Data,
    /// Left by `getChildren`; a `NodeChildrenChanged` fires it.
    Children,
}

impl Table {
    /// The watch an event of `kind` that wakes waiters fires.
    fn fired_by(kind: ZkEventKind) -> Table {
        match kind {
            ZkEventKind::NodeDeleted => Table::Data,
            _ => Table::Children,
        }
    }
}

/// The changes of `trace`'s received watch events that may wake waiters, each at the index of
/// its first event.
pub(super) fn changes(trace: &Trace) -> Vec<(usize, Change)> {
    let mut clients = Clients::default();
    let mut found: Vec<(usize, Change)> = Vec::new();
    // Each change already found, by the node, the watch and the version it was left on, with
    // its position in `found`.
    let mut known: BTreeMap<(Path, Table, Zxid), usize> = BTreeMap::new();
    for (index, event) in trace.events.iter().enumerate() {
        let Some(client) = event.client else {
            continue;
        };
        let EventKind::WatchDelivered { event: watched } = &event.kind else {
            clients.observe(client, &event.kind);
            continue;
        };
        let Some(session) = clients.sessions.of(client) else {
            continue;
        };
        if !wakes_waiters(watched.kind) {
            continue;
        }
        let watch = (session, watched.kind, index);
        let node = watched.path.clone();
        let table = Table::fired_by(watched.kind);
        let version = clients.fired(client, &node, table);
        let key = version.map(|version| (node.clone(), table, version));
        if let Some(&at) = key.as_ref().and_then(|key| known.get(key)) {
            found[at].1.watches.push(watch);
            continue;
        }
        if let Some(key) = key {
            known.insert(key, found.len());
        }
        let what = match table {
            Table::Data => What::Deletion(node),
            Table::Children => What::Children(node),
        };
        let watches = vec![watch];
        found.push((index, Change { what, watches }));
    }
    found
}

/// What the clients' own events tell of their sessions and their watches.
#[derive(Default)]
struct Clients {
    /// Each client's current session, until it gives it up at `Lost`.
    sessions: Sessions,
    /// The node and watch of each request that leaves a watch, still unanswered.
    asked: BTreeMap<(ClientSlot, OpId), (Path, Table)>,
    /// The version each client's watch on a node was left on: the czxid of the node for a
    /// data watch, the pzxid of its children for a child watch.
    watched: BTreeMap<(ClientSlot, Path, Table), Zxid>,
}

impl Clients {
    /// Takes in one of `client`'s events other than a received watch event.
    fn observe(&mut self, client: ClientSlot, kind: &EventKind) {
        self.sessions.observe(client, kind);
        match kind {
            EventKind::OpSent { op, request } => {
                let table = match request {
                    Request::Exists { watch: true, .. } | Request::GetData { watch: true, .. } => {
                        Table::Data
                    }
                    Request::GetChildren { watch: true, .. } => Table::Children,
                    _ => return,
                };
                let node = request.path().clone();
                self.asked.insert((client, *op), (node, table));
            }
            EventKind::Reply { op, result } => {
                let Some((node, table)) = self.asked.remove(&(client, *op)) else {
                    return;
                };
                let version = match result {
                    Ok(OpOk::Exists { stat: Some(stat) } | OpOk::Data { stat, .. }) => stat.czxid,
                    Ok(OpOk::Children {
                        pzxid: Some(pzxid), ..
                    }) => *pzxid,
                    _ => return,
                };
                self.watched.insert((client, node, table), version);
            }
            _ => {}
        }
    }

    /// The version `client`'s watch of `table` on `node` was left on, as an event fires it;
    /// a deletion fires the node's child watch too.
    fn fired(&mut self, client: ClientSlot, node: &Path, table: Table) -> Option<Zxid> {
        if table == Table::Data {
            self.watched
                .remove(&(client, node.clone(), Table::Children));
        }
        self.watched.remove(&(client, node.clone(), table))
    }
}

#[cfg(test)]
mod tests {
    use super::super::check;
    use coordination::ids::ClientSlot;
    use coordination::zk::EventKind as ZkEventKind;
    use trace::build::Build;
    use trace::{Source, Trace};

    const DELETED: ZkEventKind = ZkEventKind::NodeDeleted;

    /// A real run: c1 and c2 connected on sessions 11 and 12, both asking.
    fn two_asking() -> Build {
        (Build::new().real())
            .connected(1, 11)
            .connected(2, 12)
            .acquire(1)
            .acquire(2)
    }

    /// A real run: c0 holds, c1 and c2 wait, both watching c0's node (created at zxid 5), and
    /// c0 releases.
    fn both_watching_one_node() -> Build {
        (Build::new().real())
            .connected(0, 10)
            .connected(1, 11)
            .connected(2, 12)
            .acquire(0)
            .acquired(0, 5)
            .acquire(1)
            .watching(1, 1, "/lock/a", 5)
            .acquire(2)
            .watching(2, 1, "/lock/a", 5)
            .release(0)
    }

    #[test]
    fn one_deletion_received_by_two_waiters_is_a_herd_however_far_apart() {
        let together = (both_watching_one_node())
            .delivered(1, DELETED, "/lock/a")
            .delivered(2, DELETED, "/lock/a")
            .acquired(1, 6)
            .trace();
        let violations = check(&together);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].clients, [ClientSlot(1), ClientSlot(2)]);
        assert_eq!(
            violations[0].message,
            "one change (the deletion of /lock/a) at 12.000 ms woke 2 waiting clients at \
             once: c1, c2"
        );
        let apart = (both_watching_one_node())
            .delivered(1, DELETED, "/lock/a")
            .acquired(1, 6)
            .delivered(2, DELETED, "/lock/a")
            .trace();
        assert_eq!(check(&apart).len(), 1, "c1 acquired before c2 heard it");
    }

    #[test]
    fn deletions_of_two_generations_of_one_path_are_two_changes() {
        // The naive lock's fixed node: c2's watch is on the node c1 made after c0's went.
        let trace = two_asking()
            .watching(1, 1, "/lock/n", 5)
            .watching(2, 1, "/lock/n", 7)
            .delivered(1, DELETED, "/lock/n")
            .delivered(2, DELETED, "/lock/n")
            .trace();
        assert_eq!(check(&trace), []);
    }

    #[test]
    fn child_watchers_whose_listings_saw_one_version_are_woken_by_one_change() {
        let children = ZkEventKind::NodeChildrenChanged;
        let listed = |pzxid_of_c2| {
            two_asking()
                .listing(1, 1, "/leases", 7)
                .listing(2, 1, "/leases", pzxid_of_c2)
                .delivered(1, children, "/leases")
                .delivered(2, children, "/leases")
                .trace()
        };
        let herds = check(&listed(7));
        assert_eq!(herds.len(), 1);
        assert!(
            herds[0]
                .message
                .starts_with("one change (among the children of /leases)"),
            "{}",
            herds[0].message
        );
        assert_eq!(check(&listed(8)), [], "a change came between the listings");
    }

    #[test]
    fn a_deletion_whose_node_the_client_never_saw_and_child_watches_are_changes_of_their_own() {
        let unseen = two_asking()
            .delivered(1, DELETED, "/lock/a")
            .delivered(2, DELETED, "/lock/a")
            .trace();
        assert_eq!(check(&unseen), []);
        let children = ZkEventKind::NodeChildrenChanged;
        let listed = (both_watching_one_node())
            .delivered(1, children, "/lock")
            .delivered(2, children, "/lock")
            .trace();
        assert_eq!(check(&listed), []);
    }

    #[test]
    fn a_client_that_is_not_waiting_or_gave_its_session_up_is_not_woken() {
        let timed_out = (both_watching_one_node())
            .timed_out(2)
            .delivered(1, DELETED, "/lock/a")
            .delivered(2, DELETED, "/lock/a")
            .trace();
        assert_eq!(check(&timed_out), []);
        let lost = (both_watching_one_node())
            .session_lost(2)
            .delivered(1, DELETED, "/lock/a")
            .delivered(2, DELETED, "/lock/a")
            .trace();
        assert_eq!(check(&lost), []);
    }

    /// A real run of `mutex-acquire-timeout` against ZooKeeper 3.8 (`splitbrain real
    /// mutex-acquire-timeout --start-local`, seed 0): c1 times out with its watch left on c0's
    /// node and asks again behind c2, and c0's release then wakes both. Read as the server's
    /// record, which a real trace does not have, it shows no herd.
    #[test]
    fn a_real_runs_herd_is_found_from_what_its_clients_received() {
        let file = "fixtures/real-mutex-acquire-timeout.trace.json";
        let text = include_str!("../../../fixtures/real-mutex-acquire-timeout.trace.json");
        let mut trace = Trace::from_json(file, text).unwrap();
        assert_eq!(trace.meta.source, Source::Real);
        let herds = check(&trace);
        let [herd] = &herds[..] else {
            panic!("one herd: {herds:#?}");
        };
        assert_eq!(herd.clients, [ClientSlot(1), ClientSlot(2)]);
        assert!(
            (herd.message).starts_with(
                "one change (the deletion of /locks/mutex-acquire-timeout/_c_c3f2827a-0000-\
                 00000002-lock-0000000000) at 677.534 ms woke 2 waiting clients"
            ),
            "{}",
            herd.message
        );
        trace.meta.source = Source::Sim;
        assert_eq!(check(&trace), []);
    }
}
