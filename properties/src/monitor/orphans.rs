//! `no_orphans`' one rule, which the trace checker and the model both apply to the tree at the
//! end of a run: a lock node — any node below the lock path but the containers a recipe
//! creates to hold its nodes, such as `semaphore-mutex`'s `locks` and `leases` — that no live
//! session owns is an orphan: a persistent one, or an ephemeral one whose session has ended
//! (closed or expired). Every executor closes a client's session once its workload is done,
//! so at the end of a run where every workload is done this means no lock node at all.
//!
//! Unlike the other properties it needs no monitor over events: what it reads is the tree and
//! which sessions are alive, which the model's state holds already (a monitor's copy would
//! only duplicate it) and the trace checker rebuilds from a trace or reads from its last
//! snapshot. Each passes its own view of a node to [`orphaned`].

use coordination::zk::{Path, SessionId};

/// What `no_orphans` reads of one node of the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeNode<'a> {
    /// Where it is.
    pub path: &'a Path,
    /// The session that owns it if it is ephemeral; `None` for a persistent node.
    pub owner: Option<SessionId>,
    /// Whether it is a container (created to hold other nodes, removed by the server once
    /// empty).
    pub container: bool,
}

/// Whether `node` is an orphan: a lock node of the lock at `lock_path` that no session the
/// server still holds (`alive`) owns.
pub fn orphaned(node: TreeNode<'_>, lock_path: &Path, alive: impl Fn(SessionId) -> bool) -> bool {
    !node.container && !node.owner.is_some_and(alive) && node.path.ancestors().contains(lock_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(text: &str) -> Path {
        Path::new(text).unwrap()
    }

    fn judge(node: &str, owner: Option<u64>, container: bool) -> bool {
        let node = TreeNode {
            path: &path(node),
            owner: owner.map(SessionId),
            container,
        };
        orphaned(node, &path("/lock"), |session| session == SessionId(1))
    }

    #[test]
    fn a_lock_node_no_live_session_owns_is_an_orphan() {
        assert!(judge("/lock/lock-0000000001", None, false));
        assert!(judge("/lock/lock-0000000001", Some(2), false));
        assert!(judge("/lock/leases/lease-0000000001", Some(2), false));
    }

    #[test]
    fn live_sessions_nodes_containers_and_other_paths_are_not() {
        assert!(!judge("/lock/lock-0000000001", Some(1), false));
        assert!(!judge("/lock/leases", None, true));
        assert!(!judge("/lock", None, false));
        assert!(!judge("/other/node", None, false));
    }
}
