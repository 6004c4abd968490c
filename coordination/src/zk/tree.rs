//! The pure ZooKeeper data tree: nodes with their `Stat`, the zxid counter, sequential names,
//! ephemerals by session and the server's one-shot watch registrations. No time, no I/O:
//! the in-memory `Coordination`, the simulated server and the model's abstract server all
//! apply requests to this one implementation.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::watches::WatchSet;
use super::{
    CreateMode, EventKind, OpOk, OpResult, Path, Request, SessionId, Stat, WatchedEvent,
    WatcherKind, ZkError, Zxid,
};
use crate::relabel::Relabel;

/// One node.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Relabel)]
pub struct Node {
    /// The node's data.
    #[relabel(skip)]
    pub data: Vec<u8>,
    /// The node's metadata.
    pub stat: Stat,
    /// Created with [`CreateMode::Container`].
    pub container: bool,
    children: BTreeSet<String>,
}

impl Node {
    /// The children's names, sorted by name.
    pub fn children(&self) -> impl Iterator<Item = &str> {
        self.children.iter().map(String::as_str)
    }
}

/// Puts children's `names` in the order this tree lists them: reverse name order. ZooKeeper
/// lists children from a hash set, so their order is unspecified; a fixed order that is not
/// the sequence order makes a recipe that forgets to sort them wrong everywhere (the
/// simulator shuffles them with the seed). A listing relabelled for the model's symmetry
/// ([`OpOk`]'s `Relabel`) is put back in the same order, so relabelling a
/// listing with the identity map changes nothing.
pub fn in_listing_order(names: &mut [String]) {
    names.sort_unstable_by(|a, b| b.cmp(a));
}

/// A watch that fired: `event` is to be delivered to `session`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Fired {
    /// Whose watch it was.
    pub session: SessionId,
    /// What it reports.
    pub event: WatchedEvent,
}

/// The result of applying one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The reply to the requester.
    pub result: OpResult,
    /// Watches the request fired, in delivery order (by path event, then session).
    pub fired: Vec<Fired>,
    /// The zxid the request got, if it changed the tree.
    pub zxid: Option<Zxid>,
}

/// One op of a [`Tree::multi`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MultiOp {
    /// A request: a create, delete or setData in ZooKeeper's multi (a read is applied as a
    /// read, and a failed one fails the transaction).
    Apply(Request),
    /// Fails the transaction unless the node exists with this version (`None`: any version).
    Check {
        /// The node.
        path: Path,
        /// The version expected.
        version: Option<i32>,
    },
}

/// Why a [`Tree::multi`] failed: the first op that did, and its error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MultiFailure {
    /// The op's index.
    pub index: usize,
    /// Its error.
    pub error: ZkError,
}

/// The result of applying a transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultiApplied {
    /// Each op's reply (`None` for a check), or the op that failed.
    pub result: Result<Vec<Option<OpOk>>, MultiFailure>,
    /// Watches the transaction fired, in delivery order (none if it failed).
    pub fired: Vec<Fired>,
    /// The zxid all its changes got, if it changed the tree.
    pub zxid: Option<Zxid>,
}

/// The data tree. `Clone + Eq + Ord + Hash` so that a model checker can keep it in its states.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Relabel)]
pub struct Tree {
    zxid: Zxid,
    nodes: BTreeMap<Path, Node>,
    data_watches: BTreeMap<Path, BTreeSet<SessionId>>,
    child_watches: BTreeMap<Path, BTreeSet<SessionId>>,
}

impl Default for Tree {
    fn default() -> Self {
        Tree::new()
    }
}

impl Tree {
    /// A tree holding only the root, at zxid 0.
    pub fn new() -> Tree {
        let mut nodes = BTreeMap::new();
        nodes.insert(
            Path::root(),
            Node {
                data: Vec::new(),
                stat: Stat::default(),
                container: false,
                children: BTreeSet::new(),
            },
        );
        Tree {
            zxid: Zxid(0),
            nodes,
            data_watches: BTreeMap::new(),
            child_watches: BTreeMap::new(),
        }
    }

    /// The zxid of the last change.
    pub fn zxid(&self) -> Zxid {
        self.zxid
    }

    /// The node at `path`.
    pub fn get(&self, path: &Path) -> Option<&Node> {
        self.nodes.get(path)
    }

    /// Every node but the root, in path order.
    pub fn nodes(&self) -> impl Iterator<Item = (&Path, &Node)> {
        self.nodes.iter().filter(|(path, _)| !path.is_root())
    }

    /// Applies `request` on behalf of `session` (whose liveness is the caller's concern).
    pub fn apply(&mut self, session: SessionId, request: &Request) -> Applied {
        let mut fired = Vec::new();
        let before = self.zxid;
        let result = self.apply_at(session, request, self.following(), &mut fired);
        let zxid = (self.zxid != before).then_some(self.zxid);
        Applied {
            result,
            fired,
            zxid,
        }
    }

    /// Applies `ops` on behalf of `session` as one transaction (ZooKeeper's `multi`): each
    /// op sees the changes of the ops before it, every change gets the same zxid, and if one
    /// op fails none is kept and no watch fires.
    pub fn multi(&mut self, session: SessionId, ops: &[MultiOp]) -> MultiApplied {
        let before = self.clone();
        let zxid = self.following();
        let mut fired = Vec::new();
        let mut results = Vec::with_capacity(ops.len());
        for (index, op) in ops.iter().enumerate() {
            let result = match op {
                MultiOp::Apply(request) => {
                    self.apply_at(session, request, zxid, &mut fired).map(Some)
                }
                MultiOp::Check { path, version } => self
                    .nodes
                    .get(path)
                    .ok_or(ZkError::NoNode)
                    .and_then(|node| check_version(node, *version))
                    .map(|()| None),
            };
            match result {
                Ok(done) => results.push(done),
                Err(error) => {
                    *self = before;
                    return MultiApplied {
                        result: Err(MultiFailure { index, error }),
                        fired: Vec::new(),
                        zxid: None,
                    };
                }
            }
        }
        MultiApplied {
            result: Ok(results),
            fired,
            zxid: (self.zxid != before.zxid).then_some(self.zxid),
        }
    }

    /// The zxid the next change gets.
    fn following(&self) -> Zxid {
        Zxid(self.zxid.0 + 1)
    }

    /// Applies `request`, giving any change it makes `zxid`.
    fn apply_at(
        &mut self,
        session: SessionId,
        request: &Request,
        zxid: Zxid,
        fired: &mut Vec<Fired>,
    ) -> OpResult {
        match request {
            Request::Create { path, data, mode } => {
                self.create(session, path, data, *mode, zxid, fired)
            }
            Request::Delete { path, version } => self.delete(path, *version, zxid, fired),
            Request::SetData {
                path,
                data,
                version,
            } => self.set_data(path, data, *version, zxid, fired),
            Request::GetData { path, watch } => self.get_data(session, path, *watch),
            Request::Exists { path, watch } => Ok(self.exists(session, path, *watch)),
            Request::GetChildren { path, watch } => self.get_children(session, path, *watch),
            Request::RemoveWatches { path, kind } => self.remove_watches(session, path, *kind),
        }
    }

    /// Ends `session` (close or expiry): drops all its watches, then deletes all its
    /// ephemerals in one zxid. Returns the watches of other sessions that fired.
    pub fn end_session(&mut self, session: SessionId) -> Vec<Fired> {
        self.drop_watches(session);
        let owned: Vec<Path> = self
            .nodes
            .iter()
            .filter(|(_, node)| node.stat.ephemeral_owner == Some(session))
            .map(|(path, _)| path.clone())
            .collect();
        let mut fired = Vec::new();
        if owned.is_empty() {
            return fired;
        }
        let zxid = self.next_zxid();
        for path in owned {
            self.remove_node(&path, zxid, &mut fired);
        }
        fired
    }

    /// Drops every watch `session` has registered (its connection closed: a reconnecting
    /// client re-registers the ones it still wants with [`Tree::set_watches`]).
    pub fn drop_watches(&mut self, session: SessionId) {
        for table in [&mut self.data_watches, &mut self.child_watches] {
            for sessions in table.values_mut() {
                sessions.remove(&session);
            }
            table.retain(|_, sessions| !sessions.is_empty());
        }
    }

    /// The paths of `session`'s ephemeral nodes.
    pub fn ephemerals_of(&self, session: SessionId) -> Vec<Path> {
        self.nodes()
            .filter(|(_, node)| node.stat.ephemeral_owner == Some(session))
            .map(|(path, _)| path.clone())
            .collect()
    }

    /// Re-registers a reconnecting session's watches (ZooKeeper's SetWatches): a watch whose
    /// node changed after `last_zxid` fires at once, the others are registered again.
    pub fn set_watches(
        &mut self,
        session: SessionId,
        last_zxid: Zxid,
        watches: &WatchSet,
    ) -> Vec<Fired> {
        let mut fired = Vec::new();
        let mut fire = |kind, path: &Path| {
            fired.push(Fired {
                session,
                event: WatchedEvent {
                    kind,
                    path: path.clone(),
                },
            })
        };
        for path in &watches.data {
            match self.nodes.get(path) {
                None => fire(EventKind::NodeDeleted, path),
                Some(node) if node.stat.mzxid > last_zxid => fire(EventKind::NodeDataChanged, path),
                Some(_) => register(&mut self.data_watches, path, session),
            }
        }
        for path in &watches.exist {
            if self.nodes.contains_key(path) {
                fire(EventKind::NodeCreated, path);
            } else {
                register(&mut self.data_watches, path, session);
            }
        }
        for path in &watches.child {
            match self.nodes.get(path) {
                None => fire(EventKind::NodeDeleted, path),
                Some(node) if node.stat.pzxid > last_zxid => {
                    fire(EventKind::NodeChildrenChanged, path)
                }
                Some(_) => register(&mut self.child_watches, path, session),
            }
        }
        fired
    }

    /// The containers the server's next sweep deletes: those that have had children
    /// (`cversion > 0`) and have none left (ZooKeeper's `ContainerManager`), in path order.
    pub fn reapable(&self) -> impl Iterator<Item = &Path> {
        (self.nodes.iter())
            .filter(|(_, n)| n.container && n.children.is_empty() && n.stat.cversion > 0)
            .map(|(path, _)| path)
    }

    /// Deletes every container that has had children and has none left (the server's
    /// periodic sweep, [`Tree::reapable`]), each in its own zxid, firing watches as a delete
    /// does.
    pub fn reap_containers(&mut self) -> Vec<Fired> {
        let empty: Vec<Path> = self.reapable().cloned().collect();
        let mut fired = Vec::new();
        for path in empty {
            let zxid = self.next_zxid();
            self.remove_node(&path, zxid, &mut fired);
        }
        fired
    }

    fn next_zxid(&mut self) -> Zxid {
        self.zxid.0 += 1;
        self.zxid
    }

    fn create(
        &mut self,
        session: SessionId,
        path: &Path,
        data: &[u8],
        mode: CreateMode,
        zxid: Zxid,
        fired: &mut Vec<Fired>,
    ) -> OpResult {
        let parent_path = path.parent().ok_or(ZkError::NodeExists)?;
        let parent = self.nodes.get(&parent_path).ok_or(ZkError::NoNode)?;
        if parent.stat.ephemeral_owner.is_some() {
            return Err(ZkError::NoChildrenForEphemerals);
        }
        let path = if mode.is_sequential() {
            let name = format!("{}{:010}", path.name(), parent.stat.cversion);
            parent_path.child(&name).map_err(|_| ZkError::NoNode)?
        } else {
            path.clone()
        };
        if self.nodes.contains_key(&path) {
            return Err(ZkError::NodeExists);
        }
        self.zxid = zxid;
        let stat = Stat {
            czxid: zxid,
            mzxid: zxid,
            pzxid: zxid,
            version: 0,
            cversion: 0,
            ephemeral_owner: mode.is_ephemeral().then_some(session),
            num_children: 0,
            data_length: data.len() as u32,
        };
        let parent = self.nodes.get_mut(&parent_path).expect("checked above");
        parent.children.insert(path.name().to_owned());
        parent.stat.cversion += 1;
        parent.stat.pzxid = zxid;
        parent.stat.num_children += 1;
        self.nodes.insert(
            path.clone(),
            Node {
                data: data.to_vec(),
                stat,
                container: mode == CreateMode::Container,
                children: BTreeSet::new(),
            },
        );
        trigger(
            &mut self.data_watches,
            &path,
            EventKind::NodeCreated,
            &[],
            fired,
        );
        trigger(
            &mut self.child_watches,
            &parent_path,
            EventKind::NodeChildrenChanged,
            &[],
            fired,
        );
        Ok(OpOk::Created { path, stat })
    }

    fn delete(
        &mut self,
        path: &Path,
        version: Option<i32>,
        zxid: Zxid,
        fired: &mut Vec<Fired>,
    ) -> OpResult {
        if path.is_root() {
            return Err(ZkError::BadVersion);
        }
        let node = self.nodes.get(path).ok_or(ZkError::NoNode)?;
        check_version(node, version)?;
        if !node.children.is_empty() {
            return Err(ZkError::NotEmpty);
        }
        self.zxid = zxid;
        self.remove_node(path, zxid, fired);
        Ok(OpOk::Deleted)
    }

    /// Removes a childless node at `zxid`, updating its parent and firing watches.
    fn remove_node(&mut self, path: &Path, zxid: Zxid, fired: &mut Vec<Fired>) {
        self.nodes.remove(path);
        let parent_path = path.parent().expect("the root is never removed");
        if let Some(parent) = self.nodes.get_mut(&parent_path) {
            // ZooKeeper bumps the parent's cversion on child creates only (a delete touches
            // its pzxid): the next sequence number follows the last create, not the delete.
            parent.children.remove(path.name());
            parent.stat.pzxid = zxid;
            parent.stat.num_children -= 1;
        }
        let notified = trigger(
            &mut self.data_watches,
            path,
            EventKind::NodeDeleted,
            &[],
            fired,
        );
        trigger(
            &mut self.child_watches,
            path,
            EventKind::NodeDeleted,
            &notified,
            fired,
        );
        trigger(
            &mut self.child_watches,
            &parent_path,
            EventKind::NodeChildrenChanged,
            &[],
            fired,
        );
    }

    fn set_data(
        &mut self,
        path: &Path,
        data: &[u8],
        version: Option<i32>,
        zxid: Zxid,
        fired: &mut Vec<Fired>,
    ) -> OpResult {
        check_version(self.nodes.get(path).ok_or(ZkError::NoNode)?, version)?;
        self.zxid = zxid;
        let node = self.nodes.get_mut(path).expect("checked above");
        node.data = data.to_vec();
        node.stat.version += 1;
        node.stat.mzxid = zxid;
        node.stat.data_length = data.len() as u32;
        let stat = node.stat;
        trigger(
            &mut self.data_watches,
            path,
            EventKind::NodeDataChanged,
            &[],
            fired,
        );
        Ok(OpOk::DataSet { stat })
    }

    fn get_data(&mut self, session: SessionId, path: &Path, watch: bool) -> OpResult {
        let node = self.nodes.get(path).ok_or(ZkError::NoNode)?;
        let reply = OpOk::Data {
            data: node.data.clone(),
            stat: node.stat,
        };
        if watch {
            register(&mut self.data_watches, path, session);
        }
        Ok(reply)
    }

    fn exists(&mut self, session: SessionId, path: &Path, watch: bool) -> OpOk {
        if watch {
            register(&mut self.data_watches, path, session);
        }
        OpOk::Exists {
            stat: self.nodes.get(path).map(|node| node.stat),
        }
    }

    fn get_children(&mut self, session: SessionId, path: &Path, watch: bool) -> OpResult {
        let node = self.nodes.get(path).ok_or(ZkError::NoNode)?;
        let mut names: Vec<String> = node.children.iter().cloned().collect();
        in_listing_order(&mut names);
        if watch {
            register(&mut self.child_watches, path, session);
        }
        Ok(OpOk::Children { names, pzxid: None })
    }

    fn remove_watches(&mut self, session: SessionId, path: &Path, kind: WatcherKind) -> OpResult {
        let mut removed = false;
        if kind != WatcherKind::Children {
            removed |= unregister(&mut self.data_watches, path, session);
        }
        if kind != WatcherKind::Data {
            removed |= unregister(&mut self.child_watches, path, session);
        }
        if removed {
            Ok(OpOk::WatchesRemoved)
        } else {
            Err(ZkError::NoWatcher)
        }
    }
}

fn check_version(node: &Node, version: Option<i32>) -> Result<(), ZkError> {
    match version {
        Some(expected) if expected != node.stat.version => Err(ZkError::BadVersion),
        _ => Ok(()),
    }
}

fn register(table: &mut BTreeMap<Path, BTreeSet<SessionId>>, path: &Path, session: SessionId) {
    table.entry(path.clone()).or_default().insert(session);
}

fn unregister(
    table: &mut BTreeMap<Path, BTreeSet<SessionId>>,
    path: &Path,
    session: SessionId,
) -> bool {
    let Some(sessions) = table.get_mut(path) else {
        return false;
    };
    let removed = sessions.remove(&session);
    if sessions.is_empty() {
        table.remove(path);
    }
    removed
}

/// Fires (and removes) the one-shot watches on `path`, skipping sessions in `skip` (a
/// session watching a deleted node for data and children hears of it once). Returns the
/// sessions notified.
fn trigger(
    table: &mut BTreeMap<Path, BTreeSet<SessionId>>,
    path: &Path,
    kind: EventKind,
    skip: &[SessionId],
    fired: &mut Vec<Fired>,
) -> Vec<SessionId> {
    let sessions = table.remove(path).unwrap_or_default();
    let notified: Vec<SessionId> = sessions
        .into_iter()
        .filter(|session| !skip.contains(session))
        .collect();
    for &session in &notified {
        fired.push(Fired {
            session,
            event: WatchedEvent {
                kind,
                path: path.clone(),
            },
        });
    }
    notified
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: SessionId = SessionId(1);
    const B: SessionId = SessionId(2);

    fn p(text: &str) -> Path {
        Path::new(text).unwrap()
    }

    fn create(tree: &mut Tree, session: SessionId, path: &str, mode: CreateMode) -> Applied {
        tree.apply(
            session,
            &Request::Create {
                path: p(path),
                data: vec![],
                mode,
            },
        )
    }

    fn created_path(applied: &Applied) -> String {
        match &applied.result {
            Ok(OpOk::Created { path, .. }) => path.to_string(),
            other => panic!("expected Created, got {other:?}"),
        }
    }

    #[test]
    fn sequential_names_come_from_the_parent_cversion() {
        let mut tree = Tree::new();
        create(&mut tree, A, "/locks", CreateMode::Persistent);
        let first = create(
            &mut tree,
            A,
            "/locks/lock-",
            CreateMode::EphemeralSequential,
        );
        assert_eq!(created_path(&first), "/locks/lock-0000000000");
        let delete = Request::Delete {
            path: p("/locks/lock-0000000000"),
            version: None,
        };
        assert_eq!(tree.apply(A, &delete).result, Ok(OpOk::Deleted));
        let second = create(
            &mut tree,
            B,
            "/locks/lock-",
            CreateMode::EphemeralSequential,
        );
        assert_eq!(
            created_path(&second),
            "/locks/lock-0000000001",
            "a delete does not bump the parent's cversion"
        );
        let parent = tree.get(&p("/locks")).unwrap();
        assert_eq!(parent.stat.cversion, 2, "two creates");
        assert_eq!(
            parent.stat.pzxid,
            Zxid(4),
            "the last change of the children"
        );
    }

    #[test]
    fn children_are_not_listed_in_sequence_order() {
        let mut tree = Tree::new();
        create(&mut tree, A, "/locks", CreateMode::Persistent);
        for _ in 0..3 {
            create(
                &mut tree,
                A,
                "/locks/lock-",
                CreateMode::EphemeralSequential,
            );
        }
        let list = Request::GetChildren {
            path: p("/locks"),
            watch: false,
        };
        let Ok(OpOk::Children { names, .. }) = tree.apply(A, &list).result else {
            panic!("children listed")
        };
        assert_eq!(
            names,
            ["lock-0000000002", "lock-0000000001", "lock-0000000000"],
            "a recipe must sort them itself"
        );
    }

    #[test]
    fn zxid_increases_with_every_write_and_stats_follow() {
        let mut tree = Tree::new();
        let applied = create(&mut tree, A, "/a", CreateMode::Persistent);
        assert_eq!(applied.zxid, Some(Zxid(1)));
        let set = Request::SetData {
            path: p("/a"),
            data: b"x".to_vec(),
            version: Some(0),
        };
        let Ok(OpOk::DataSet { stat }) = tree.apply(A, &set).result else {
            panic!()
        };
        assert_eq!(
            (stat.czxid, stat.mzxid, stat.version),
            (Zxid(1), Zxid(2), 1)
        );
        assert_eq!(tree.apply(A, &set).result, Err(ZkError::BadVersion));
        let read = tree.apply(
            A,
            &Request::GetData {
                path: p("/a"),
                watch: false,
            },
        );
        assert_eq!(read.zxid, None);
        assert_eq!(tree.zxid(), Zxid(2));
    }

    #[test]
    fn create_errors() {
        let mut tree = Tree::new();
        assert_eq!(
            create(&mut tree, A, "/a/b", CreateMode::Persistent).result,
            Err(ZkError::NoNode)
        );
        create(&mut tree, A, "/e", CreateMode::Ephemeral);
        assert_eq!(
            create(&mut tree, A, "/e", CreateMode::Ephemeral).result,
            Err(ZkError::NodeExists)
        );
        assert_eq!(
            create(&mut tree, A, "/e/c", CreateMode::Persistent).result,
            Err(ZkError::NoChildrenForEphemerals)
        );
        create(&mut tree, A, "/d", CreateMode::Persistent);
        create(&mut tree, A, "/d/c", CreateMode::Persistent);
        let delete = Request::Delete {
            path: p("/d"),
            version: None,
        };
        assert_eq!(tree.apply(A, &delete).result, Err(ZkError::NotEmpty));
    }

    #[test]
    fn ending_a_session_deletes_its_ephemerals_in_one_zxid_and_drops_its_watches() {
        let mut tree = Tree::new();
        create(&mut tree, A, "/l", CreateMode::Persistent);
        create(&mut tree, A, "/l/a1", CreateMode::Ephemeral);
        create(&mut tree, A, "/l/a2", CreateMode::Ephemeral);
        create(&mut tree, B, "/l/b", CreateMode::Ephemeral);
        let watch_b = Request::GetData {
            path: p("/l/b"),
            watch: true,
        };
        tree.apply(A, &watch_b);
        let watch_a1 = Request::Exists {
            path: p("/l/a1"),
            watch: true,
        };
        tree.apply(B, &watch_a1);
        let before = tree.zxid();
        let fired = tree.end_session(A);
        assert_eq!(tree.zxid(), Zxid(before.0 + 1));
        assert_eq!(tree.ephemerals_of(A), Vec::<Path>::new());
        assert_eq!(tree.ephemerals_of(B), vec![p("/l/b")]);
        assert_eq!(
            fired,
            vec![Fired {
                session: B,
                event: WatchedEvent {
                    kind: EventKind::NodeDeleted,
                    path: p("/l/a1")
                }
            }]
        );
        assert!(
            tree.end_session(B).is_empty(),
            "A's watch on /l/b was dropped"
        );
    }

    #[test]
    fn watches_are_one_shot_and_deleted_nodes_notify_once() {
        let mut tree = Tree::new();
        create(&mut tree, A, "/n", CreateMode::Persistent);
        for request in [
            Request::GetData {
                path: p("/n"),
                watch: true,
            },
            Request::GetChildren {
                path: p("/n"),
                watch: true,
            },
        ] {
            tree.apply(B, &request);
        }
        let delete = Request::Delete {
            path: p("/n"),
            version: None,
        };
        let applied = tree.apply(A, &delete);
        assert_eq!(applied.fired.len(), 1);
        create(&mut tree, A, "/n", CreateMode::Persistent);
        assert!(
            tree.apply(A, &delete).fired.is_empty(),
            "watch was consumed"
        );
    }

    #[test]
    fn get_data_on_a_missing_node_sets_no_watch_but_exists_does() {
        let mut tree = Tree::new();
        let get = Request::GetData {
            path: p("/x"),
            watch: true,
        };
        assert_eq!(tree.apply(B, &get).result, Err(ZkError::NoNode));
        let exists = Request::Exists {
            path: p("/y"),
            watch: true,
        };
        tree.apply(B, &exists);
        assert!(
            create(&mut tree, A, "/x", CreateMode::Persistent)
                .fired
                .is_empty()
        );
        let fired = create(&mut tree, A, "/y", CreateMode::Persistent).fired;
        assert_eq!(fired[0].event.kind, EventKind::NodeCreated);
    }

    #[test]
    fn set_watches_fires_what_changed_since_the_last_zxid() {
        let mut tree = Tree::new();
        create(&mut tree, A, "/same", CreateMode::Persistent);
        create(&mut tree, A, "/gone", CreateMode::Persistent);
        let last_seen = tree.zxid();
        let delete = Request::Delete {
            path: p("/gone"),
            version: None,
        };
        tree.apply(A, &delete);
        create(&mut tree, A, "/born", CreateMode::Persistent);
        let mut watches = WatchSet::default();
        watches.data.insert(p("/same"));
        watches.data.insert(p("/gone"));
        watches.exist.insert(p("/born"));
        watches.exist.insert(p("/unborn"));
        let fired = tree.set_watches(B, last_seen, &watches);
        let kinds: Vec<_> = fired
            .iter()
            .map(|f| (f.event.path.to_string(), f.event.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("/gone".to_owned(), EventKind::NodeDeleted),
                ("/born".to_owned(), EventKind::NodeCreated)
            ]
        );
        let set = Request::SetData {
            path: p("/same"),
            data: vec![1],
            version: None,
        };
        assert_eq!(
            tree.apply(A, &set).fired.len(),
            1,
            "re-registered watch fires"
        );
    }

    #[test]
    fn dropped_watches_do_not_fire_and_ephemerals_stay() {
        let mut tree = Tree::new();
        create(&mut tree, A, "/mine", CreateMode::Ephemeral);
        create(&mut tree, B, "/theirs", CreateMode::Persistent);
        let watch = Request::GetData {
            path: p("/theirs"),
            watch: true,
        };
        tree.apply(A, &watch);
        tree.apply(B, &watch);
        tree.drop_watches(A);
        let set = Request::SetData {
            path: p("/theirs"),
            data: vec![1],
            version: None,
        };
        let fired = tree.apply(B, &set).fired;
        assert_eq!(fired.len(), 1);
        assert_eq!(fired[0].session, B, "only B's watch is left");
        assert!(tree.get(&p("/mine")).is_some(), "the session goes on");
    }

    #[test]
    fn containers_are_reaped_only_after_having_had_children() {
        let mut tree = Tree::new();
        create(&mut tree, A, "/c", CreateMode::Container);
        assert_eq!(tree.reapable().count(), 0);
        assert!(tree.reap_containers().is_empty());
        assert!(tree.get(&p("/c")).is_some(), "never had children");
        create(&mut tree, A, "/c/x", CreateMode::Ephemeral);
        tree.reap_containers();
        assert!(tree.get(&p("/c")).is_some(), "has a child");
        tree.end_session(A);
        assert!(
            tree.get(&p("/c")).is_some(),
            "not reaped the instant it empties"
        );
        assert_eq!(tree.reapable().collect::<Vec<_>>(), [&p("/c")]);
        tree.reap_containers();
        assert!(tree.get(&p("/c")).is_none());
    }

    #[test]
    fn a_multi_is_one_zxid_or_nothing() {
        let mut tree = Tree::new();
        create(&mut tree, A, "/m", CreateMode::Persistent);
        let watch = Request::GetChildren {
            path: p("/m"),
            watch: true,
        };
        tree.apply(B, &watch);
        let make = |path: &str| {
            MultiOp::Apply(Request::Create {
                path: p(path),
                data: vec![],
                mode: CreateMode::Persistent,
            })
        };
        let check = |version| MultiOp::Check {
            path: p("/m/a"),
            version,
        };
        let failed = tree.multi(A, &[make("/m/x"), check(None)]);
        assert_eq!(
            failed.result,
            Err(MultiFailure {
                index: 1,
                error: ZkError::NoNode
            })
        );
        assert_eq!((failed.fired, failed.zxid), (vec![], None));
        assert!(tree.get(&p("/m/x")).is_none(), "rolled back");
        let applied = tree.multi(A, &[make("/m/a"), check(Some(0)), make("/m/a/b")]);
        let Ok(results) = applied.result else {
            panic!("applied")
        };
        assert_eq!(results.len(), 3);
        assert_eq!(results[1], None, "a check has no reply");
        assert_eq!(applied.zxid, Some(Zxid(2)));
        let stat = tree.get(&p("/m/a/b")).unwrap().stat;
        assert_eq!(stat.czxid, Zxid(2), "one zxid for every change");
        assert_eq!(applied.fired.len(), 1, "B's child watch");
        let stale = tree.multi(A, &[check(Some(1))]);
        assert!(matches!(
            stale.result,
            Err(MultiFailure {
                error: ZkError::BadVersion,
                ..
            })
        ));
    }

    #[test]
    fn remove_watches() {
        let mut tree = Tree::new();
        create(&mut tree, A, "/w", CreateMode::Persistent);
        let remove = Request::RemoveWatches {
            path: p("/w"),
            kind: WatcherKind::Any,
        };
        assert_eq!(tree.apply(B, &remove).result, Err(ZkError::NoWatcher));
        let watch = Request::Exists {
            path: p("/w"),
            watch: true,
        };
        tree.apply(B, &watch);
        assert_eq!(tree.apply(B, &remove).result, Ok(OpOk::WatchesRemoved));
    }
}
