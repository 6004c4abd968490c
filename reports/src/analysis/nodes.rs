//! The lives of ephemeral nodes (lock nodes) on the server: created by one session, ended
//! by a delete or by that session's expiry or close.

use coordination::zk::{OpOk, Path, Request, SessionId, Zxid};
use trace::{EventKind, ServerSession, Trace};

use super::Sessions;

/// How an ephemeral node's life ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeEnd {
    /// It outlived the trace.
    Open,
    /// A client deleted it.
    Deleted,
    /// Its session expired.
    Expired,
    /// Its session was closed.
    Closed,
}

/// One ephemeral node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NodeLife {
    /// Its path.
    pub path: Path,
    /// The owning session.
    pub session: SessionId,
    /// The owning session's client, when known.
    pub client: Option<u16>,
    /// Its czxid (the fencing token of a lock node).
    pub czxid: Zxid,
    /// When it was created.
    pub start: u64,
    /// When it went (the trace's end when it outlived the trace).
    pub end: u64,
    /// How it went.
    pub ended: NodeEnd,
    /// The create's `op_applied` event.
    pub start_event: usize,
    /// The event that ended it.
    pub end_event: Option<usize>,
}

/// The ephemeral nodes of `trace`, which ends at `end`, in creation order.
pub(crate) fn lives(trace: &Trace, sessions: &Sessions, end: u64) -> Vec<NodeLife> {
    let mut lives: Vec<NodeLife> = Vec::new();
    let finish = |life: &mut NodeLife, ended, t, event| {
        life.ended = ended;
        life.end = t;
        life.end_event = Some(event);
    };
    for (index, event) in trace.events.iter().enumerate() {
        match &event.kind {
            EventKind::OpApplied {
                result: Ok(OpOk::Created { path, stat }),
                ..
            } => {
                let Some(session) = stat.ephemeral_owner else {
                    continue;
                };
                lives.push(NodeLife {
                    path: path.clone(),
                    session,
                    client: sessions.owner.get(&session).copied(),
                    czxid: stat.czxid,
                    start: event.t,
                    end,
                    ended: NodeEnd::Open,
                    start_event: index,
                    end_event: None,
                });
            }
            EventKind::OpApplied {
                request: Request::Delete { path, .. },
                result: Ok(OpOk::Deleted),
                ..
            } => {
                if let Some(life) = lives
                    .iter_mut()
                    .find(|l| l.ended == NodeEnd::Open && l.path == *path)
                {
                    finish(life, NodeEnd::Deleted, event.t, index);
                }
            }
            EventKind::ServerSession { session, change } => {
                let ended = match change {
                    ServerSession::Expired => NodeEnd::Expired,
                    ServerSession::Closed => NodeEnd::Closed,
                    ServerSession::Created | ServerSession::Reattached => continue,
                };
                for life in lives
                    .iter_mut()
                    .filter(|l| l.ended == NodeEnd::Open && l.session == *session)
                {
                    finish(life, ended, event.t, index);
                }
            }
            _ => {}
        }
    }
    lives
}
