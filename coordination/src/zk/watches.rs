//! A client's view of the watches it has left on the server, kept so that a reconnecting
//! client can re-register them (ZooKeeper's SetWatches).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::{EventKind, OpOk, OpResult, Path, Request, WatchedEvent, WatcherKind};

/// The watches one session has outstanding, by the kind the server keeps them as.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct WatchSet {
    /// Data watches on existing nodes (get_data, or exists on a node that existed).
    pub data: BTreeSet<Path>,
    /// Watches for the creation of missing nodes (exists on a node that did not exist).
    pub exist: BTreeSet<Path>,
    /// Child watches (get_children).
    pub child: BTreeSet<Path>,
}

impl WatchSet {
    /// True when no watch is outstanding.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty() && self.exist.is_empty() && self.child.is_empty()
    }

    /// Notes the watch a successful (or, for exists, any) reply to `request` left behind.
    pub fn record(&mut self, request: &Request, result: &OpResult) {
        match (request, result) {
            (Request::GetData { path, watch: true }, Ok(_)) => {
                self.data.insert(path.clone());
            }
            (Request::Exists { path, watch: true }, Ok(OpOk::Exists { stat })) => {
                if stat.is_some() {
                    self.data.insert(path.clone());
                } else {
                    self.exist.insert(path.clone());
                }
            }
            (Request::GetChildren { path, watch: true }, Ok(_)) => {
                self.child.insert(path.clone());
            }
            (Request::RemoveWatches { path, kind }, Ok(_)) => {
                if *kind != WatcherKind::Children {
                    self.data.remove(path);
                    self.exist.remove(path);
                }
                if *kind != WatcherKind::Data {
                    self.child.remove(path);
                }
            }
            _ => {}
        }
    }

    /// Forgets the watches that `event` consumed (they are one-shot).
    pub fn consume(&mut self, event: &WatchedEvent) {
        let path = &event.path;
        match event.kind {
            EventKind::NodeCreated | EventKind::NodeDataChanged => {
                self.data.remove(path);
                self.exist.remove(path);
            }
            EventKind::NodeDeleted => {
                self.data.remove(path);
                self.exist.remove(path);
                self.child.remove(path);
            }
            EventKind::NodeChildrenChanged => {
                self.child.remove(path);
            }
        }
    }
}
