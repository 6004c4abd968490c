//! Which client each session belongs to, for messages that name a session's client.

use std::collections::BTreeMap;

use coordination::ids::ClientSlot;
use coordination::session::RawState;
use coordination::zk::SessionId;

use trace::{EventKind, Trace};

/// Which client each session belongs to, from the clients' `Connected` events.
pub(super) fn session_owners(trace: &Trace) -> BTreeMap<SessionId, ClientSlot> {
    trace
        .events
        .iter()
        .filter_map(|event| match (&event.kind, event.client) {
            (
                EventKind::RawSession {
                    state: RawState::Connected { session, .. },
                },
                Some(client),
            ) => Some((*session, client)),
            _ => None,
        })
        .collect()
}
