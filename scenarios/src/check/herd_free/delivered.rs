//! The changes of a real trace, found from the watch events each client received.
//!
//! ZooKeeper 3.8 sends a watch event without the zxid of its change (3.9 added it,
//! ZOOKEEPER-4655), and a real trace has none of the server's side. So a change is told by
//! what its watchers saw:
//!
//! - A `NodeDeleted` is the deletion of the node generation the client's watch was left on:
//!   the node's czxid in the reply of the `exists` or `getData` that left the watch. Watchers
//!   of one generation were woken by one deletion, however far apart their events arrived. A
//!   `NodeDeleted` whose generation the client never saw (a child watch on the deleted node
//!   itself) is a change of its own.
//! - A `NodeChildrenChanged` cannot be tied to one change: two child watchers of a node may
//!   have been woken by two different creates or deletes under it. Each is a change of its own,
//!   so a herd of child watchers (none of the catalog's recipes makes one: only the semaphore
//!   watches children, and only its internal lock's holder does) is not seen on a real trace.
//!
//! Either way a change found here can only be smaller than the true one: a real trace may miss
//! a herd, never invent one. A change happens at its first watch event; whether a client was
//! waiting is judged there, as the server's record judges it at the change.

use std::collections::BTreeMap;

use lock::coordination::RawState;
use lock::ids::{ClientSlot, OpId};
use lock::recipe::SessionEvent;
use lock::zk::{EventKind as ZkEventKind, OpOk, Path, Request, SessionId, Zxid};

use super::{Change, What};
use crate::monitor::wakes_waiters;
use crate::trace::{EventKind, Trace};

/// The changes of `trace`'s received watch events that may wake waiters, each at the index of
/// its first event.
pub(super) fn changes(trace: &Trace) -> Vec<(usize, Change)> {
    let mut clients = Clients::default();
    let mut found: Vec<(usize, Change)> = Vec::new();
    // Each node generation's deletion already found, by its position in `found`.
    let mut deletions: BTreeMap<(Path, Zxid), usize> = BTreeMap::new();
    for (index, event) in trace.events.iter().enumerate() {
        let Some(client) = event.client else {
            continue;
        };
        let EventKind::WatchDelivered { event: watched } = &event.kind else {
            clients.observe(client, &event.kind);
            continue;
        };
        let Some(session) = clients.sessions.get(&client).copied() else {
            continue;
        };
        if !wakes_waiters(watched.kind) {
            continue;
        }
        let watch = (session, watched.kind, index);
        let node = watched.path.clone();
        let generation = (watched.kind == ZkEventKind::NodeDeleted)
            .then(|| clients.watched.remove(&(client, node.clone())))
            .flatten();
        if let Some(&at) = generation.and_then(|czxid| deletions.get(&(node.clone(), czxid))) {
            found[at].1.watches.push(watch);
            continue;
        }
        if let Some(czxid) = generation {
            deletions.insert((node.clone(), czxid), found.len());
        }
        let what = match watched.kind {
            ZkEventKind::NodeDeleted => What::Deletion(node),
            _ => What::Children(node),
        };
        let watches = vec![watch];
        found.push((index, Change { what, watches }));
    }
    found
}

/// What the clients' own events tell of their sessions and their data watches.
#[derive(Default)]
struct Clients {
    /// Each client's current session, until it gives it up at `Lost`.
    sessions: BTreeMap<ClientSlot, SessionId>,
    /// The node of each `exists` or `getData` with a watch still unanswered.
    asked: BTreeMap<(ClientSlot, OpId), Path>,
    /// The czxid of the node each client's data watch on a path was left on.
    watched: BTreeMap<(ClientSlot, Path), Zxid>,
}

impl Clients {
    /// Takes in one of `client`'s events other than a received watch event.
    fn observe(&mut self, client: ClientSlot, kind: &EventKind) {
        match kind {
            EventKind::RawSession {
                state: RawState::Connected { session, .. },
            } => {
                self.sessions.insert(client, *session);
            }
            EventKind::Session {
                event: SessionEvent::Lost { .. },
            } => {
                self.sessions.remove(&client);
            }
            EventKind::OpSent {
                op,
                request:
                    Request::Exists { path, watch: true } | Request::GetData { path, watch: true },
            } => {
                self.asked.insert((client, *op), path.clone());
            }
            EventKind::Reply { op, result } => {
                let Some(node) = self.asked.remove(&(client, *op)) else {
                    return;
                };
                let stat = match result {
                    Ok(OpOk::Exists { stat: Some(stat) } | OpOk::Data { stat, .. }) => stat,
                    _ => return,
                };
                self.watched.insert((client, node), stat.czxid);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::check;
    use crate::check::fixtures::Build;
    use crate::trace::{Source, Trace};
    use lock::ids::ClientSlot;
    use lock::zk::EventKind as ZkEventKind;

    const DELETED: ZkEventKind = ZkEventKind::NodeDeleted;

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
        let trace = (Build::new().real())
            .connected(1, 11)
            .connected(2, 12)
            .acquire(1)
            .acquire(2)
            .watching(1, 1, "/lock/n", 5)
            .watching(2, 1, "/lock/n", 7)
            .delivered(1, DELETED, "/lock/n")
            .delivered(2, DELETED, "/lock/n")
            .trace();
        assert_eq!(check(&trace), []);
    }

    #[test]
    fn a_deletion_whose_node_the_client_never_saw_and_child_watches_are_changes_of_their_own() {
        let unseen = (Build::new().real())
            .connected(1, 11)
            .connected(2, 12)
            .acquire(1)
            .acquire(2)
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
