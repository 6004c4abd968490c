//! ZooKeeper's vocabulary (paths, create modes, `Stat`, errors, watched events, requests and
//! replies) and [`tree`], the one pure data tree that every executor applies requests to.

mod path;
pub mod tree;
pub mod watches;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::relabel::{ClientMap, Relabel};

pub use path::{Path, PathError, SEQUENCE_DIGITS, sequence_suffix};

/// A ZooKeeper session id, as the server hands it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(pub u64);

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:x}", self.0)
    }
}

/// A ZooKeeper transaction id: every change to the tree gets the next one.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Zxid(pub u64);

/// How a node is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CreateMode {
    /// Lives until deleted.
    Persistent,
    /// Persistent, with a sequential suffix appended to the name.
    PersistentSequential,
    /// Deleted when its owner's session ends.
    Ephemeral,
    /// Ephemeral, with a sequential suffix appended to the name.
    EphemeralSequential,
    /// Persistent, reaped by the server's periodic sweep once it has had children and has none.
    Container,
}

impl CreateMode {
    /// True for modes whose node belongs to the creating session.
    pub fn is_ephemeral(self) -> bool {
        matches!(
            self,
            CreateMode::Ephemeral | CreateMode::EphemeralSequential
        )
    }

    /// True for modes that append a sequence number to the name.
    pub fn is_sequential(self) -> bool {
        matches!(
            self,
            CreateMode::PersistentSequential | CreateMode::EphemeralSequential
        )
    }
}

/// A node's metadata. No wall-clock times: they would make traces depend on the run.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    Relabel,
)]
pub struct Stat {
    /// The zxid of the create.
    pub czxid: Zxid,
    /// The zxid of the last data change (the create, at first).
    pub mzxid: Zxid,
    /// The zxid of the last change to the children.
    pub pzxid: Zxid,
    /// Number of data changes.
    pub version: i32,
    /// Number of changes to the children (creates and deletes).
    pub cversion: i32,
    /// The owning session of an ephemeral node.
    pub ephemeral_owner: Option<SessionId>,
    /// Number of children.
    pub num_children: u32,
    /// Length of the data in bytes.
    pub data_length: u32,
}

/// The errors recipes must handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZkError {
    /// The node (or, for a create, its parent) does not exist.
    NoNode,
    /// A node with that path exists already.
    NodeExists,
    /// The expected version did not match.
    BadVersion,
    /// The node has children.
    NotEmpty,
    /// Ephemeral nodes cannot have children.
    NoChildrenForEphemerals,
    /// No watch of that kind was registered (remove_watches).
    NoWatcher,
    /// The connection dropped before the reply arrived: the request may or may not have been
    /// applied.
    ConnectionLoss,
    /// The session has expired (or was closed).
    SessionExpired,
    /// The session has moved to another server since the request was sent: the leader
    /// refused a write its old server forwarded (ZooKeeper's `SESSIONMOVED`).
    SessionMoved,
}

impl fmt::Display for ZkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            ZkError::NoNode => "no node",
            ZkError::NodeExists => "node exists",
            ZkError::BadVersion => "bad version",
            ZkError::NotEmpty => "directory not empty",
            ZkError::NoChildrenForEphemerals => "ephemerals cannot have children",
            ZkError::NoWatcher => "no watcher",
            ZkError::ConnectionLoss => "connection loss",
            ZkError::SessionExpired => "session expired",
            ZkError::SessionMoved => "session moved",
        };
        f.write_str(text)
    }
}

impl std::error::Error for ZkError {}

/// What a watch reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// The watched node was created.
    NodeCreated,
    /// The watched node was deleted.
    NodeDeleted,
    /// The watched node's data changed.
    NodeDataChanged,
    /// A child of the watched node was created or deleted.
    NodeChildrenChanged,
}

/// A fired watch, as the client receives it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Relabel)]
pub struct WatchedEvent {
    /// What happened.
    pub kind: EventKind,
    /// The watched path.
    pub path: Path,
}

/// Which watches `remove_watches` removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WatcherKind {
    /// Watches set by get_data and exists.
    Data,
    /// Watches set by get_children.
    Children,
    /// Both.
    Any,
}

/// One request on a session.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Create a node; replies [`OpOk::Created`] with the actual path (sequential suffix
    /// included).
    Create {
        /// The path (the prefix, for sequential modes).
        path: Path,
        /// The node's data.
        data: Vec<u8>,
        /// How to create it.
        mode: CreateMode,
    },
    /// Delete a node; `version: None` deletes whatever its version.
    Delete {
        /// The node.
        path: Path,
        /// The expected version.
        version: Option<i32>,
    },
    /// Replace a node's data.
    SetData {
        /// The node.
        path: Path,
        /// The new data.
        data: Vec<u8>,
        /// The expected version.
        version: Option<i32>,
    },
    /// Read a node; with `watch`, a one-shot data watch (only if the node exists).
    GetData {
        /// The node.
        path: Path,
        /// Leave a watch.
        watch: bool,
    },
    /// Stat a node; with `watch`, a one-shot watch whether or not it exists.
    Exists {
        /// The node.
        path: Path,
        /// Leave a watch.
        watch: bool,
    },
    /// List a node's children; with `watch`, a one-shot child watch (only if the node exists).
    GetChildren {
        /// The node.
        path: Path,
        /// Leave a watch.
        watch: bool,
    },
    /// Remove this session's watches on a path.
    RemoveWatches {
        /// The node.
        path: Path,
        /// Which watches.
        kind: WatcherKind,
    },
}

impl Request {
    /// Creates of `dir` and each of its ancestors below the root as containers, the root's
    /// child first: Curator's `ZKPaths.mkdirs` for `creatingParentContainersIfNeeded`. The
    /// usual answer is `NodeExists`; callers drop the replies.
    pub fn make_containers(dir: &Path) -> impl Iterator<Item = Request> + use<> {
        (dir.ancestors().into_iter().chain([dir.clone()])).map(|path| Request::Create {
            path,
            data: Vec::new(),
            mode: CreateMode::Container,
        })
    }

    /// The path the request is about.
    pub fn path(&self) -> &Path {
        match self {
            Request::Create { path, .. }
            | Request::Delete { path, .. }
            | Request::SetData { path, .. }
            | Request::GetData { path, .. }
            | Request::Exists { path, .. }
            | Request::GetChildren { path, .. }
            | Request::RemoveWatches { path, .. } => path,
        }
    }

    /// The path the request is about, to rewrite it.
    fn path_mut(&mut self) -> &mut Path {
        match self {
            Request::Create { path, .. }
            | Request::Delete { path, .. }
            | Request::SetData { path, .. }
            | Request::GetData { path, .. }
            | Request::Exists { path, .. }
            | Request::GetChildren { path, .. }
            | Request::RemoveWatches { path, .. } => path,
        }
    }

    /// True for requests that change the tree (and so get a zxid when they succeed).
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            Request::Create { .. } | Request::Delete { .. } | Request::SetData { .. }
        )
    }
}

/// A successful reply.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "ok", rename_all = "snake_case")]
pub enum OpOk {
    /// The node was created at `path`.
    Created {
        /// The actual path, with any sequential suffix.
        path: Path,
        /// The new node's stat.
        stat: Stat,
    },
    /// The node was deleted.
    Deleted,
    /// The data was replaced.
    DataSet {
        /// The node's new stat.
        stat: Stat,
    },
    /// The node's data.
    Data {
        /// The data.
        data: Vec<u8>,
        /// The node's stat.
        stat: Stat,
    },
    /// The node's stat, or `None` when it does not exist.
    Exists {
        /// The stat, if the node exists.
        stat: Option<Stat>,
    },
    /// The children's names, in no particular order.
    Children {
        /// Child names (not paths).
        names: Vec<String>,
        /// The zxid of the last create or delete among the children (the parent's pzxid, as
        /// ZooKeeper's `getChildren2` returns it), where the backend reports it: the simulated
        /// and the real server do, the model leaves it out (a zxid in a reply would tell apart
        /// states that behave alike). A real trace's `herd_free` reads it to tell which change
        /// a child watch left by the listing was woken by.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pzxid: Option<Zxid>,
    },
    /// The watches were removed.
    WatchesRemoved,
}

/// The outcome of one request.
pub type OpResult = Result<OpOk, ZkError>;

impl Relabel for Request {
    fn relabel(&self, map: &ClientMap) -> Self {
        let mut request = self.clone();
        let path = request.path_mut();
        *path = path.relabel(map);
        request
    }
}

impl Relabel for OpOk {
    /// Children come back in the tree's listing order ([`tree::in_listing_order`]).
    fn relabel(&self, map: &ClientMap) -> Self {
        match self {
            OpOk::Created { path, stat } => OpOk::Created {
                path: path.relabel(map),
                stat: stat.relabel(map),
            },
            OpOk::DataSet { stat } => OpOk::DataSet {
                stat: stat.relabel(map),
            },
            OpOk::Data { data, stat } => OpOk::Data {
                data: data.clone(),
                stat: stat.relabel(map),
            },
            OpOk::Exists { stat } => OpOk::Exists {
                stat: stat.relabel(map),
            },
            OpOk::Children { names, pzxid } => {
                let mut names = names.relabel(map);
                tree::in_listing_order(&mut names);
                OpOk::Children {
                    names,
                    pzxid: *pzxid,
                }
            }
            OpOk::Deleted | OpOk::WatchesRemoved => self.clone(),
        }
    }
}
