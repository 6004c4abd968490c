//! Which session each client is on, as its own events tell: the session of its last raw
//! `Connected`, until its framework gives that session up at `Lost`. Both readings of a
//! trace's wake-ups follow it: the server's record ([`super::received`]) to tell whose
//! session a fired watch belongs to, the clients' side (`herd_free`'s real-trace reading) to
//! tell which session a received event came on; `no_time_travel` to tell whose reply a
//! client's is.

use std::collections::BTreeMap;

use coordination::ids::ClientSlot;
use coordination::recipe::SessionEvent;
use coordination::session::RawState;
use coordination::zk::SessionId;

use trace::EventKind;

/// The clients' current sessions.
#[derive(Debug, Default)]
pub(super) struct Sessions {
    current: BTreeMap<ClientSlot, SessionId>,
}

impl Sessions {
    /// Takes in one of `client`'s events: a `Connected` puts the client on its session, a
    /// `Lost` takes it off; any other event changes nothing.
    pub(super) fn observe(&mut self, client: ClientSlot, kind: &EventKind) {
        match kind {
            EventKind::RawSession {
                state: RawState::Connected { session, .. },
            } => {
                self.current.insert(client, *session);
            }
            EventKind::Session {
                event: SessionEvent::Lost { .. },
            } => {
                self.current.remove(&client);
            }
            _ => {}
        }
    }

    /// The session `client` is on.
    pub(super) fn of(&self, client: ClientSlot) -> Option<SessionId> {
        self.current.get(&client).copied()
    }

    /// The client on `session`, if one is.
    pub(super) fn client_on(&self, session: SessionId) -> Option<ClientSlot> {
        (self.current.iter()).find_map(|(client, s)| (*s == session).then_some(*client))
    }
}
