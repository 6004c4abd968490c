//! Which session each hold is on, and when each session is alive on the server: what
//! `live_session_exclusion` narrows a belief overlap to. A hold is on the session its client
//! was connected to when the hold began (the client's last `Connected` before it); a session
//! is alive from the server's `Created` until its `Expired` or `Closed`. A session the trace
//! has no server-side record of (a trace without server events) counts as alive throughout,
//! so that nothing is excused without evidence — but for an injected `expire_session`, which
//! ends the client's session where the fault starts: a real ZooKeeper's trace has no server
//! events, and its expiry (a second connection on the session, closed) is a harness action
//! whose end races the clients' own events. The simulator's server records the same expiry
//! at the fault's instant.

use std::collections::BTreeMap;

use lock::coordination::RawState;
use lock::ids::ClientSlot;
use lock::zk::SessionId;

use crate::fault::Fault;
use crate::trace::{EventKind, ServerSession, Trace};

/// The sessions of a trace: whose they are, from when, and how long the server kept them.
#[derive(Clone, Debug, Default)]
pub struct LiveSessions {
    /// Every client's `Connected` events: (event index, client, session), in trace order.
    connected: Vec<(usize, ClientSlot, SessionId)>,
    /// Each session's life on the server: `[created, ended)` in event indices.
    lives: BTreeMap<SessionId, (usize, Option<usize>)>,
    /// The number of events (an open life ends there).
    len: usize,
}

impl LiveSessions {
    /// Reads the sessions off `trace`.
    pub fn of(trace: &Trace) -> LiveSessions {
        let mut sessions = LiveSessions {
            len: trace.events.len(),
            ..LiveSessions::default()
        };
        for (index, event) in trace.events.iter().enumerate() {
            match (&event.kind, event.client) {
                (
                    EventKind::RawSession {
                        state: RawState::Connected { session, .. },
                    },
                    Some(client),
                ) => sessions.connected.push((index, client, *session)),
                (EventKind::ServerSession { session, change }, _) => match change {
                    ServerSession::Created => {
                        sessions.lives.insert(*session, (index, None));
                    }
                    ServerSession::Expired | ServerSession::Closed => {
                        let life = sessions.lives.entry(*session).or_insert((0, None));
                        life.1.get_or_insert(index);
                    }
                    ServerSession::Reattached => {}
                },
                (
                    EventKind::FaultStart {
                        fault: Fault::ExpireSession { client },
                    },
                    _,
                ) => {
                    if let Some(session) = sessions.session_at(ClientSlot(*client), index) {
                        let life = sessions.lives.entry(session).or_insert((0, None));
                        life.1.get_or_insert(index);
                    }
                }
                _ => {}
            }
        }
        sessions
    }

    /// The session `client` was connected to at event `index`, if it had connected by then.
    pub fn session_at(&self, client: ClientSlot, index: usize) -> Option<SessionId> {
        self.connected
            .iter()
            .rev()
            .find(|(at, who, _)| *at <= index && *who == client)
            .map(|(_, _, session)| *session)
    }

    /// The events `[from, to)` during which `session` is alive on the server (the whole trace
    /// for an unknown session, or none).
    pub fn alive(&self, session: Option<SessionId>) -> (usize, usize) {
        match session.and_then(|s| self.lives.get(&s)) {
            Some(&(created, ended)) => (created, ended.unwrap_or(self.len)),
            None => (0, self.len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::fixtures::Build;

    #[test]
    fn a_hold_is_on_its_clients_last_session_and_lives_until_the_server_ends_it() {
        let trace = Build::new()
            .server_session(1, ServerSession::Created)
            .connected(0, 1)
            .server_session(2, ServerSession::Created)
            .connected(1, 2)
            .server_session(1, ServerSession::Expired)
            .connected(0, 3)
            .trace();
        let sessions = LiveSessions::of(&trace);
        assert_eq!(sessions.session_at(ClientSlot(0), 0), None);
        assert_eq!(sessions.session_at(ClientSlot(0), 4), Some(SessionId(1)));
        assert_eq!(sessions.session_at(ClientSlot(0), 5), Some(SessionId(3)));
        assert_eq!(sessions.alive(Some(SessionId(1))), (0, 4));
        assert_eq!(sessions.alive(Some(SessionId(2))), (2, 6));
        assert_eq!(
            sessions.alive(Some(SessionId(3))),
            (0, 6),
            "no server record"
        );
        assert_eq!(sessions.alive(None), (0, 6));
    }

    #[test]
    fn an_injected_expiry_ends_the_session_where_no_server_event_does() {
        let trace = Build::new()
            .connected(0, 1)
            .push(
                None,
                EventKind::FaultStart {
                    fault: Fault::ExpireSession { client: 0 },
                },
            )
            .connected(0, 2)
            .trace();
        let sessions = LiveSessions::of(&trace);
        assert_eq!(sessions.alive(Some(SessionId(1))), (0, 1));
        assert_eq!(sessions.alive(Some(SessionId(2))), (0, 3), "no record");
    }
}
