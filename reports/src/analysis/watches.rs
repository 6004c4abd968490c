//! The watches each client still has outstanding at the end of the trace, as the client saw
//! them: left by the reply to an `exists`, `get_data` or `get_children` with `watch`, consumed
//! by the event they fire (ZooKeeper's own rules, [`WatchSet`]), removed by `remove_watches`,
//! and gone with the session they were left on (a new session, or the client told that its
//! session expired). Only the clients' side is read, so real traces have them too.

use std::collections::BTreeMap;

use coordination::ids::OpId;
use coordination::session::RawState;
use coordination::zk::watches::WatchSet;
use coordination::zk::{Path, Request, SessionId};
use trace::{EventKind, Trace};

/// What a watch waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WatchKind {
    /// A change of an existing node (`get_data`, or `exists` on a node that existed).
    Data,
    /// The creation of a missing node (`exists` on a node that did not exist).
    Exist,
    /// A change of a node's children (`get_children`).
    Child,
    /// A data or exists watch the server listed for the client's session at the horizon (a
    /// real trace's `watch_snapshot`, which does not say which of the two it is).
    Listed,
}

/// One outstanding watch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Watch {
    /// The client that left it.
    pub client: u16,
    /// What it waits for.
    pub kind: WatchKind,
    /// The watched node.
    pub path: Path,
    /// When the reply that left it arrived.
    pub t: u64,
    /// That reply's event.
    pub event: usize,
}

/// One client's watches as the trace goes.
#[derive(Default)]
struct Client {
    /// The session the client last connected on (its watches were left on it).
    session: Option<SessionId>,
    /// Its outstanding watches.
    set: WatchSet,
    /// The watching requests sent and not yet answered.
    sent: BTreeMap<OpId, Request>,
    /// The latest reply to a data request (`get_data`, `exists`) on each path: `(t, event)`.
    data_left: BTreeMap<Path, (u64, usize)>,
    /// The latest reply to a `get_children` on each path.
    child_left: BTreeMap<Path, (u64, usize)>,
}

impl Client {
    /// Forgets every watch: its session is gone.
    fn forget(&mut self) {
        self.set = WatchSet::default();
        self.sent.clear();
    }
}

/// The watches outstanding at the end of `trace`, by client, then kind and path.
pub(crate) fn outstanding(trace: &Trace) -> Vec<Watch> {
    let mut clients: BTreeMap<u16, Client> = BTreeMap::new();
    for (index, event) in trace.events.iter().enumerate() {
        let Some(slot) = event.client else { continue };
        let client = clients.entry(slot.0).or_default();
        match &event.kind {
            EventKind::RawSession {
                state: RawState::Connected { session, .. },
            } => {
                if client.session != Some(*session) {
                    client.forget();
                }
                client.session = Some(*session);
            }
            EventKind::RawSession {
                state: RawState::Expired,
            } => client.forget(),
            EventKind::OpSent { op, request } if watching(request) => {
                client.sent.insert(*op, request.clone());
            }
            EventKind::Reply { op, result } => {
                let Some(request) = client.sent.remove(op) else {
                    continue;
                };
                client.set.record(&request, result);
                let left = match request {
                    Request::GetData { .. } | Request::Exists { .. } => &mut client.data_left,
                    Request::GetChildren { .. } => &mut client.child_left,
                    _ => continue,
                };
                left.insert(request.path().clone(), (event.t, index));
            }
            EventKind::WatchDelivered { event } => client.set.consume(event),
            _ => {}
        }
    }
    let mut watches = Vec::new();
    for (number, client) in &clients {
        let kinds = [
            (WatchKind::Data, &client.set.data, &client.data_left),
            (WatchKind::Exist, &client.set.exist, &client.data_left),
            (WatchKind::Child, &client.set.child, &client.child_left),
        ];
        for (kind, paths, left) in kinds {
            for path in paths {
                let Some(&(t, event)) = left.get(path) else {
                    continue;
                };
                watches.push(Watch {
                    client: *number,
                    kind,
                    path: path.clone(),
                    t,
                    event,
                });
            }
        }
    }
    watches
}

/// The watches the server listed at the horizon (the last `watch_snapshot` of `trace`) on the
/// sessions that `current` names a client for, by session then path; `None` when the trace
/// has no such listing.
pub(crate) fn listed(
    trace: &Trace,
    current: impl Fn(SessionId) -> Option<u16>,
) -> Option<Vec<Watch>> {
    let (index, t, watches) =
        (trace.events.iter().enumerate().rev()).find_map(|(i, e)| match &e.kind {
            EventKind::WatchSnapshot { watches } => Some((i, e.t, watches)),
            _ => None,
        })?;
    let of_clients = watches.iter().filter_map(|w| {
        Some(Watch {
            client: current(w.session)?,
            kind: WatchKind::Listed,
            path: w.path.clone(),
            t,
            event: index,
        })
    });
    Some(of_clients.collect())
}

/// Whether `request` may leave or remove a watch.
fn watching(request: &Request) -> bool {
    match request {
        Request::GetData { watch, .. }
        | Request::Exists { watch, .. }
        | Request::GetChildren { watch, .. } => *watch,
        Request::RemoveWatches { .. } => true,
        Request::Create { .. } | Request::Delete { .. } | Request::SetData { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use coordination::zk::EventKind as Fired;
    use trace::build::{Build, path};

    use super::*;

    #[test]
    fn a_watch_is_outstanding_until_its_event_arrives_or_its_session_goes() {
        let trace = Build::new()
            .connected(0, 7)
            .connected(1, 8)
            .connected(2, 9)
            .watching(0, 1, "/l/a", 3)
            .listing(1, 1, "/l", 4)
            .watching(2, 1, "/l/b", 5)
            .delivered(2, Fired::NodeDeleted, "/l/b")
            .connected(1, 10)
            .trace();
        let watches = outstanding(&trace);
        let found: Vec<_> = (watches.iter())
            .map(|w| (w.client, w.kind, w.path.as_str(), w.event))
            .collect();
        assert_eq!(found, [(0, WatchKind::Data, "/l/a", 4)]);
        assert_eq!(watches[0].path, path("/l/a"));
    }
}
