//! A run's view of the real server outside its clients: a session opened within a deadline
//! (the probe that tells an unreachable address at once), and the end-of-run snapshot of the
//! lock path's subtree, which the simulator takes of its whole tree.
//!
//! A real server reports a container's `ephemeralOwner` as 0, as it does a persistent
//! node's, and a real trace has no server-side creates that would say which nodes are
//! containers; so the containers the recipe keeps its nodes in (its row's `directories` in
//! the recipe table) are left out of the snapshot, as `no_orphans` leaves out the containers
//! it sees created in a simulated trace. A user's program has no row: the containers left out
//! of its snapshot are those its clients asked to create ([`containers_created`]).

use std::time::Duration;

use coordination::ids::OpId;
use coordination::session::{Connector, Coordination, RawEvent, RawState};
use coordination::zk::{CreateMode, OpOk, OpResult, Path, Request, ZkError};
use recipe_table::recipes::{RecipeDef, RecipeKind, Testable, Visitor};
use trace::{Event, EventKind, SnapshotNode};

use crate::session::{RealConnector, RealSession};

/// A session of `connector`, once connected; fails with one line naming the address when no
/// server accepts it within `within`.
pub async fn connect_within(
    connector: &RealConnector,
    within: Duration,
) -> Result<RealSession, String> {
    let session = connector.connect().await;
    let first = tokio::time::timeout(within, session.next_event()).await;
    if let Ok(Some(RawEvent::State {
        state: RawState::Connected { .. },
    })) = first
    {
        return Ok(session);
    }
    let why = session.last_error();
    session.close().await;
    Err(format!(
        "{}: no ZooKeeper server answered within {} ms{}",
        connector.connect_string(),
        within.as_millis(),
        why.map(|why| format!(" (last error: {why})"))
            .unwrap_or_default()
    ))
}

/// The [`EventKind::TreeSnapshot`] of `root` (a lock path) and every node below it but
/// `containers`, read through `session` (whose stream must be at rest: nothing but these
/// requests' replies matter).
pub async fn snapshot(
    session: &RealSession,
    containers: &[Path],
    root: &Path,
) -> Result<EventKind, String> {
    let mut requests = Requests { session, next: 0 };
    let mut nodes = Vec::new();
    let mut pending = vec![root.clone()];
    while let Some(path) = pending.pop() {
        let exists = Request::Exists {
            path: path.clone(),
            watch: false,
        };
        let Some(stat) = (match requests.send(exists).await? {
            Ok(OpOk::Exists { stat }) => stat,
            other => return Err(format!("{path}: expected a stat, found {other:?}")),
        }) else {
            continue;
        };
        let list = Request::GetChildren {
            path: path.clone(),
            watch: false,
        };
        match requests.send(list).await? {
            Ok(OpOk::Children { names, .. }) => {
                for name in names {
                    pending.push(
                        path.child(&name)
                            .map_err(|e| format!("{path}/{name}: {e}"))?,
                    );
                }
            }
            // Gone since its stat (an ephemeral of a session that was still closing).
            Err(ZkError::NoNode) => continue,
            other => return Err(format!("{path}: expected its children, found {other:?}")),
        }
        if !containers.contains(&path) {
            nodes.push(SnapshotNode {
                path,
                ephemeral_owner: stat.ephemeral_owner,
            });
        }
    }
    nodes.sort();
    Ok(EventKind::TreeSnapshot { nodes })
}

/// The containers `recipe` keeps its nodes in below `lock_path`.
pub fn directories(recipe: RecipeKind, lock_path: &Path) -> Vec<Path> {
    recipe.visit(Directories(lock_path))
}

/// The containers the clients of `events` asked the server to create (a program's own, which
/// no row of the recipe table names).
pub fn containers_created(events: &[Event]) -> Vec<Path> {
    let mut containers: Vec<Path> = events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::OpSent {
                request:
                    Request::Create {
                        path,
                        mode: CreateMode::Container,
                        ..
                    },
                ..
            } => Some(path.clone()),
            _ => None,
        })
        .collect();
    containers.sort();
    containers.dedup();
    containers
}

/// The containers a recipe keeps its nodes in below a lock path.
struct Directories<'a>(&'a Path);

impl Visitor for Directories<'_> {
    type Output = Vec<Path>;

    fn visit<R: Testable>(self, def: &'static RecipeDef<R>) -> Vec<Path> {
        (def.directories)(self.0)
    }
}

/// Requests on one session, one at a time.
struct Requests<'a> {
    session: &'a RealSession,
    next: u32,
}

impl Requests<'_> {
    /// Sends `request` and waits for its reply (other events are passed over); an error only
    /// when the session ends first.
    async fn send(&mut self, request: Request) -> Result<OpResult, String> {
        let op = OpId(self.next);
        self.next += 1;
        let path = request.path().clone();
        self.session.submit(op, request).await;
        loop {
            match self.session.next_event().await {
                Some(RawEvent::Reply { op: got, result }) if got == op => return Ok(result),
                Some(_) => {}
                None => return Err(format!("{path}: the session ended before the reply")),
            }
        }
    }
}
