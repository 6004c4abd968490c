//! Which of the server's fired watches reached their client, in a simulated trace: a watch
//! event sent on a connection that dies first never arrives. `herd_free` counts only the
//! wake-ups that arrived, `no_time_travel` only what a session was told.

use std::collections::BTreeMap;

use coordination::ids::ClientSlot;
use coordination::recipe::SessionEvent;
use coordination::session::RawState;
use coordination::zk::{EventKind as ZkEventKind, Path};
use trace::{EventKind, ServerSession, Trace};

use super::client_sessions::Sessions;

/// The fired watches (those with a zxid) whose event reached the client of their session: the
/// index of each one's `WatchFired`, with that of the client's `WatchDelivered`. Each
/// connection delivers in order, so a client's watch event is the first fired for its
/// session, of the same kind on the same node, not yet received. One still unreceived when
/// the client's connection drops, when the server takes a new connection to the session, or
/// when the client gives the session up, was sent on a connection that is gone and never
/// arrives. (One fired after the server took the new connection arrives after the client
/// records it connected: a `Connected` of the client's own forgets nothing.)
pub(super) fn received(trace: &Trace) -> BTreeMap<usize, usize> {
    let mut sessions = Sessions::default();
    let mut pending: BTreeMap<ClientSlot, Vec<(ZkEventKind, &Path, usize)>> = BTreeMap::new();
    let mut received = BTreeMap::new();
    for (index, event) in trace.events.iter().enumerate() {
        if let Some(client) = event.client {
            sessions.observe(client, &event.kind);
        }
        match (&event.kind, event.client) {
            (
                EventKind::WatchFired {
                    session,
                    event: watched,
                    zxid: Some(_),
                },
                _,
            ) => {
                if let Some(client) = sessions.client_on(*session) {
                    let fired = (watched.kind, &watched.path, index);
                    pending.entry(client).or_default().push(fired);
                }
            }
            (EventKind::WatchDelivered { event: watched }, Some(client)) => {
                let queue = pending.entry(client).or_default();
                let first = (queue.iter())
                    .position(|(kind, node, _)| *kind == watched.kind && **node == watched.path);
                if let Some(at) = first {
                    received.insert(queue[at].2, index);
                    queue.drain(..=at);
                }
            }
            (
                EventKind::RawSession {
                    state: RawState::Disconnected | RawState::Expired,
                }
                | EventKind::Session {
                    event: SessionEvent::Lost { .. },
                },
                Some(client),
            ) => {
                pending.remove(&client);
            }
            (
                EventKind::ServerSession {
                    session,
                    change: ServerSession::Reattached,
                },
                _,
            ) => {
                if let Some(client) = sessions.client_on(*session) {
                    pending.remove(&client);
                }
            }
            _ => {}
        }
    }
    received
}
