//! `no_orphans` on a trace: the rule of [`orphaned`] (shared with the model) applied to the
//! tree at the trace's end — read from its last `tree_snapshot` when there is one, else
//! rebuilt from the applied creates and deletes and the ends of sessions — with the sessions
//! that had ended by then.

use std::collections::{BTreeMap, BTreeSet};

use coordination::ids::ClientSlot;
use coordination::zk::{CreateMode, OpOk, Path, Request, SessionId};

use crate::monitor::{TreeNode, orphaned};
use recipe_table::property::{Property, Violation};
use trace::{EventKind, ServerSession, Trace};

use super::owners::session_owners;
use super::{Context, when};

/// A node as the checker knows it: its owner, the event that created it, and whether it is
/// a container.
#[derive(Clone, Copy, Debug)]
struct Node {
    owner: Option<SessionId>,
    created: Option<usize>,
    container: bool,
}

/// The tree at the end of the trace (or its last snapshot), with the index it stands for,
/// and the sessions that had ended by then.
fn final_tree(trace: &Trace) -> (BTreeMap<Path, Node>, usize, BTreeSet<SessionId>) {
    let mut nodes: BTreeMap<Path, Node> = BTreeMap::new();
    let mut created_at: BTreeMap<Path, (usize, bool)> = BTreeMap::new();
    let mut ended = BTreeSet::new();
    let mut snapshot = None;
    for (index, event) in trace.events.iter().enumerate() {
        match &event.kind {
            EventKind::OpApplied {
                request: Request::Create { mode, .. },
                result: Ok(OpOk::Created { path, stat }),
                ..
            } => {
                let container = *mode == CreateMode::Container;
                let node = Node {
                    owner: stat.ephemeral_owner,
                    created: Some(index),
                    container,
                };
                nodes.insert(path.clone(), node);
                created_at.insert(path.clone(), (index, container));
            }
            EventKind::OpApplied {
                request: Request::Delete { path, .. },
                result: Ok(OpOk::Deleted),
                ..
            } => {
                nodes.remove(path);
            }
            EventKind::ServerSession {
                session,
                change: ServerSession::Closed | ServerSession::Expired,
            } => {
                ended.insert(*session);
                nodes.retain(|_, node| node.owner != Some(*session));
            }
            EventKind::TreeSnapshot { nodes: listed } => {
                nodes = listed
                    .iter()
                    .map(|n| {
                        let created = created_at.get(&n.path).copied();
                        let node = Node {
                            owner: n.ephemeral_owner,
                            created: created.map(|(index, _)| index),
                            container: created.is_some_and(|(_, container)| container),
                        };
                        (n.path.clone(), node)
                    })
                    .collect();
                snapshot = Some((nodes.clone(), index, ended.clone()));
            }
            _ => {}
        }
    }
    snapshot.unwrap_or((nodes, trace.events.len().saturating_sub(1), ended))
}

/// Every lock node left without a live owner.
pub fn check(trace: &Trace, cx: &Context) -> Vec<Violation> {
    let (nodes, at_index, ended) = final_tree(trace);
    let owners = session_owners(trace);
    let at = trace.events.get(at_index).map_or(0, |e| e.t);
    let alive = |session| !ended.contains(&session);
    nodes
        .iter()
        .filter(|(path, node)| {
            let view = TreeNode {
                path,
                owner: node.owner,
                container: node.container,
            };
            orphaned(view, &cx.lock_path, alive)
        })
        .map(|(path, node)| {
            let client: Option<ClientSlot> = node.owner.and_then(|s| owners.get(&s).copied());
            let whose = match (node.owner, client) {
                (None, _) => "a persistent node, owned by no session".to_owned(),
                (Some(s), Some(c)) => format!("{c}'s session {s} had ended"),
                (Some(s), None) => format!("its session {s} had ended"),
            };
            let mut events: Vec<usize> = node.created.into_iter().collect();
            events.push(at_index);
            Violation {
                property: Property::NoOrphans,
                at,
                until: None,
                clients: client.into_iter().collect(),
                events,
                message: format!(
                    "lock node {path} was still there at {}: {whose}",
                    when(trace, at)
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::SnapshotNode;
    use trace::build::{Build, path};

    fn cx() -> Context {
        Context {
            lock_path: path("/lock"),
            horizon: 0,
            progress_grace: 0,
            max_leases: 1,
            error_policy: Default::default(),
        }
    }

    const NODE: &str = "/lock/lock-0000000001";

    #[test]
    fn deleted_and_session_bound_nodes_leave_nothing_behind() {
        let trace = Build::new()
            .connected(0, 10)
            .created(10, "/lock", None, 1)
            .created(10, NODE, Some(10), 2)
            .deleted(10, NODE, 3)
            .created(10, "/lock/lock-0000000002", Some(10), 4)
            .server_session(10, ServerSession::Expired)
            .trace();
        assert_eq!(check(&trace, &cx()), []);
    }

    #[test]
    fn nodes_below_the_lock_path_count_and_containers_do_not() {
        let trace = Build::new()
            .connected(0, 10)
            .container(10, "/lock/leases", 1)
            .container(10, "/lock/locks", 2)
            .created(10, "/lock/leases/lease-0000000001", Some(10), 3)
            .created(10, "/lock/locks/lock-0000000001", Some(10), 4)
            .deleted(10, "/lock/locks/lock-0000000001", 5)
            .server_session(10, ServerSession::Closed)
            .push(
                None,
                EventKind::TreeSnapshot {
                    nodes: [
                        "/lock/leases",
                        "/lock/locks",
                        "/lock/leases/lease-0000000001",
                    ]
                    .map(|node| SnapshotNode {
                        path: path(node),
                        ephemeral_owner: None,
                    })
                    .to_vec(),
                },
            )
            .trace();
        let violations = check(&trace, &cx());
        assert_eq!(violations.len(), 1);
        assert!(
            violations[0]
                .message
                .starts_with("lock node /lock/leases/lease-0000000001 was still there")
        );
    }

    #[test]
    fn a_live_sessions_node_is_not_an_orphan() {
        let trace = Build::new().created(10, NODE, Some(10), 2).trace();
        assert_eq!(check(&trace, &cx()), []);
    }

    #[test]
    fn a_persistent_lock_node_is_an_orphan() {
        let trace = Build::new()
            .connected(0, 10)
            .created(10, NODE, None, 2)
            .server_session(10, ServerSession::Closed)
            .trace();
        let violations = check(&trace, &cx());
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].events, [1, 2]);
        assert_eq!(
            violations[0].message,
            "lock node /lock/lock-0000000001 was still there at 2.000 ms: a persistent node, \
             owned by no session"
        );
    }

    #[test]
    fn a_snapshot_showing_an_ended_sessions_node_is_an_orphan() {
        let snapshot = EventKind::TreeSnapshot {
            nodes: vec![
                SnapshotNode {
                    path: path("/lock"),
                    ephemeral_owner: None,
                },
                SnapshotNode {
                    path: path(NODE),
                    ephemeral_owner: Some(SessionId(10)),
                },
            ],
        };
        let trace = Build::new()
            .connected(1, 10)
            .created(10, NODE, Some(10), 2)
            .server_session(10, ServerSession::Expired)
            .push(None, snapshot)
            .trace();
        let violations = check(&trace, &cx());
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].clients, [ClientSlot(1)]);
        assert_eq!(violations[0].events, [1, 3]);
        assert!(
            violations[0]
                .message
                .ends_with("c1's session 0xa had ended")
        );
    }
}
