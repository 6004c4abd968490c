//! Who waits on what at the end of the trace: each waiting client's outstanding watches
//! (those it left since it began waiting) and the nodes behind them — the watched node and
//! the session that created it, or the children of a watched directory — and what every
//! client is doing then. The report's "Who waits for whom" chains are walked over these.
//!
//! The nodes at the end are the server's (the ephemeral nodes' lives) in a simulated or model
//! trace; a real trace has no server side but the tree it read at the end of the run (its
//! last `tree_snapshot`), which names each ephemeral node's session but not when it was made.
//! A client whose requests the trace does not record (a library's contender) waits on the
//! watches the server listed for its session at the horizon, when a real run read them (its
//! last `watch_snapshot`).

use coordination::session::RawState;
use coordination::zk::{Path, SessionId};
use trace::EventKind;

use super::{LockSpan, NodeEnd, NodeLife, Run, Watch, WatchKind};

/// An ephemeral node at the end of the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NodeRef<'a> {
    /// Its path.
    pub path: &'a Path,
    /// The session that owns it.
    pub session: SessionId,
    /// That session's client, when the trace says.
    pub client: Option<u16>,
    /// When it was created, when the trace shows it (not in a real trace).
    pub created: Option<u64>,
}

/// What one outstanding watch waits on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    /// The watched node, there at the end of the trace.
    Node(NodeRef<'a>),
    /// The watched node went before the end, and no event of it reached the waiter.
    Gone(&'a NodeLife),
    /// No ephemeral node at the watched path is in the trace (a watch for a creation, or a
    /// persistent node).
    Unknown,
    /// A real trace: no ephemeral node at the watched path is in the tree read at the end.
    NotInSnapshot,
    /// A real trace without a tree read at the end: nothing tells the nodes.
    Unseen,
    /// The ephemeral children of the watched node at the end, in creation (or path) order.
    Children(Vec<NodeRef<'a>>),
}

/// One outstanding watch of a waiter and what it waits on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WaitOn<'a> {
    /// The watch.
    pub watch: &'a Watch,
    /// What it waits on.
    pub target: Target<'a>,
}

/// What a client is doing at the end of the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Doing<'a> {
    /// Waiting since `span` began, on its outstanding watches left since then.
    Waits {
        /// The open wait.
        span: &'a LockSpan,
        /// What it waits on (empty when it left no watch that is still outstanding).
        on: Vec<WaitOn<'a>>,
    },
    /// Holding (an open hold span).
    Holds(&'a LockSpan),
    /// Neither.
    Idle,
}

impl Run<'_> {
    /// The clients still waiting at the end of the trace, in order.
    pub(crate) fn waiting_at_end(&self) -> Vec<u16> {
        let mut clients: Vec<u16> = (self.locks.iter())
            .filter(|l| l.open && !l.is_hold())
            .map(|l| l.client)
            .collect();
        clients.sort_unstable();
        clients.dedup();
        clients
    }

    /// What `client` is doing at the end of the trace: a wait before a hold (a client that
    /// holds a lease and waits for another is stuck on the wait).
    pub(crate) fn doing_at_end(&self, client: u16) -> Doing<'_> {
        let open = |hold: bool| {
            self.locks_of(client)
                .find(|l| l.open && l.is_hold() == hold)
        };
        if let Some(span) = open(false) {
            let watches = match &self.listed {
                Some(listed) if !self.sends_requests(client) => listed,
                _ => &self.watches,
            };
            let on = (watches.iter())
                .filter(|w| w.client == client && w.event >= span.start_event)
                .map(|watch| WaitOn {
                    watch,
                    target: self.target(watch),
                })
                .collect();
            return Doing::Waits { span, on };
        }
        open(true).map_or(Doing::Idle, Doing::Holds)
    }

    /// Whether the trace records any request `client` sent.
    pub(crate) fn sends_requests(&self, client: u16) -> bool {
        (self.trace.events.iter()).any(|e| {
            e.client.map(|c| c.0) == Some(client) && matches!(e.kind, EventKind::OpSent { .. })
        })
    }

    /// The session `client` last connected on.
    pub(crate) fn session_at_end(&self, client: u16) -> Option<SessionId> {
        (self.trace.events.iter().rev()).find_map(|e| match e.kind {
            EventKind::RawSession {
                state: RawState::Connected { session, .. },
            } if e.client.map(|c| c.0) == Some(client) => Some(session),
            _ => None,
        })
    }

    /// The ephemeral nodes at the end of the trace: the server's, in creation order, when the
    /// trace records the server's side; else those of the tree read at the end, in path order
    /// (`None` when none was read).
    pub(crate) fn nodes_at_end(&self) -> Option<Vec<NodeRef<'_>>> {
        if self.server_side {
            let open = self.nodes.iter().filter(|n| n.ended == NodeEnd::Open);
            return Some(
                open.map(|n| NodeRef {
                    path: &n.path,
                    session: n.session,
                    client: n.client,
                    created: Some(n.start),
                })
                .collect(),
            );
        }
        let snapshot = (self.trace.events.iter().rev()).find_map(|e| match &e.kind {
            EventKind::TreeSnapshot { nodes } => Some(nodes),
            _ => None,
        })?;
        let ephemeral = snapshot.iter().filter_map(|n| {
            let session = n.ephemeral_owner?;
            Some(NodeRef {
                path: &n.path,
                session,
                client: self.sessions.owner.get(&session).copied(),
                created: None,
            })
        });
        Some(ephemeral.collect())
    }

    /// What `watch` waits on, at the end of the trace.
    fn target(&self, watch: &Watch) -> Target<'_> {
        let Some(nodes) = self.nodes_at_end() else {
            return Target::Unseen;
        };
        if watch.kind == WatchKind::Child {
            let children = (nodes.into_iter())
                .filter(|n| n.path.parent().as_ref() == Some(&watch.path))
                .collect();
            return Target::Children(children);
        }
        if let Some(node) = nodes.into_iter().find(|n| *n.path == watch.path) {
            return Target::Node(node);
        }
        if !self.server_side {
            return Target::NotInSnapshot;
        }
        match self.nodes.iter().rev().find(|n| n.path == watch.path) {
            Some(node) if node.end >= watch.t => Target::Gone(node),
            _ => Target::Unknown,
        }
    }
}
