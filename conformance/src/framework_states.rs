//! The framework layer's connection states against its client's raw session, as Curator's
//! `ConnectionStateManager` relates them: not a property of a recipe (no recipe can change
//! them) but of splitbrain's own framework layer, so a trace that breaks them is a bug of
//! splitbrain's, and a run that shows one fails.
//!
//! - A client whose framework is SUSPENDED on a session and whose raw client connects again
//!   hears RECONNECTED next, saying whether the session changed — not LOST by its own timer
//!   later, nor a changed session when it re-attached the same one.
//! - A client whose framework is connected or SUSPENDED and whose raw client hears from the
//!   server that the session expired hears LOST next, confirmed by the server.
//!
//! A crash starts the client over.

use coordination::recipe::SessionEvent;
use coordination::session::RawState;
use coordination::zk::SessionId;

use scenarios::fault::Fault;
use trace::{EventKind, Trace};

/// The framework's state as its session events and the raw states before them tell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framework {
    /// Before a first connection, or after LOST.
    Connecting,
    Connected,
    /// SUSPENDED on this session.
    Suspended(SessionId),
}

/// One client's reading.
#[derive(Clone, Copy, Debug)]
struct Client {
    framework: Framework,
    /// The raw client's latest session.
    raw: Option<SessionId>,
    /// The session event the framework owes, and the index of the raw event that asked it.
    owed: Option<(SessionEvent, usize)>,
}

impl Client {
    const START: Client = Client {
        framework: Framework::Connecting,
        raw: None,
        owed: None,
    };

    fn on_raw(&mut self, state: RawState, index: usize) {
        match (state, self.framework) {
            (RawState::Connected { session, .. }, Framework::Suspended(old)) => {
                let session_changed = session != old;
                self.owed = Some((SessionEvent::Reconnected { session_changed }, index));
            }
            (RawState::Connected { .. }, Framework::Connecting) if self.raw.is_none() => {
                self.framework = Framework::Connected;
            }
            (RawState::Expired, Framework::Connected | Framework::Suspended(_)) => {
                let server_confirmed = true;
                self.owed = Some((SessionEvent::Lost { server_confirmed }, index));
            }
            _ => {}
        }
        if let RawState::Connected { session, .. } = state {
            self.raw = Some(session);
        }
    }

    /// The framework's `event`; the owed event it should have been, if it was not.
    fn on_session(&mut self, event: SessionEvent) -> Option<(SessionEvent, usize)> {
        let owed = self.owed.take().filter(|&(owed, _)| owed != event);
        self.framework = match (event, self.raw) {
            (SessionEvent::Suspended, Some(session)) => Framework::Suspended(session),
            (SessionEvent::Reconnected { .. }, Some(_)) => Framework::Connected,
            (SessionEvent::Lost { .. }, _) => Framework::Connecting,
            (_, None) => self.framework,
        };
        owed
    }
}

/// Checks that every client's framework states follow its raw session in `trace` (see the
/// module doc); the first break, as one line naming the client and the events, if any.
pub fn check_framework_states(trace: &Trace) -> Result<(), String> {
    let mut clients: Vec<Client> = Vec::new();
    for (index, event) in trace.events.iter().enumerate() {
        match (&event.kind, event.client) {
            (
                EventKind::FaultStart {
                    fault: Fault::Crash { client },
                },
                _,
            ) => *reading(&mut clients, *client) = Client::START,
            (EventKind::RawSession { state }, Some(slot)) => {
                reading(&mut clients, slot.0).on_raw(*state, index)
            }
            (EventKind::Session { event: session }, Some(slot)) => {
                if let Some((owed, asked)) = reading(&mut clients, slot.0).on_session(*session) {
                    return Err(format!(
                        "{slot}'s framework layer said {session:?} (event {index}) where its raw \
                         session's change (event {asked}) asks for {owed:?} next, as Curator's \
                         ConnectionStateManager does"
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Client `slot`'s reading, made at the start when first seen.
fn reading(clients: &mut Vec<Client>, slot: u16) -> &mut Client {
    let slot = usize::from(slot);
    if clients.len() <= slot {
        clients.resize(slot + 1, Client::START);
    }
    &mut clients[slot]
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use trace::build::Build;

    fn raw(state: RawState) -> EventKind {
        EventKind::RawSession { state }
    }

    fn connected(session: u64) -> EventKind {
        raw(RawState::Connected {
            session: SessionId(session),
            timeout: Duration::from_secs(1),
        })
    }

    fn session(event: SessionEvent) -> EventKind {
        EventKind::Session { event }
    }

    /// Client 0's events, 1 ms apart.
    fn trace(kinds: Vec<EventKind>) -> Trace {
        let build = |build: Build, kind| build.push(Some(0), kind);
        kinds.into_iter().fold(Build::new(), build).trace()
    }

    const SUSPENDED: SessionEvent = SessionEvent::Suspended;
    const SAME: SessionEvent = SessionEvent::Reconnected {
        session_changed: false,
    };
    const NEW: SessionEvent = SessionEvent::Reconnected {
        session_changed: true,
    };
    const TIMED_OUT: SessionEvent = SessionEvent::Lost {
        server_confirmed: false,
    };
    const EXPIRED: SessionEvent = SessionEvent::Lost {
        server_confirmed: true,
    };

    #[test]
    fn a_framework_that_follows_its_raw_session_passes() {
        let disconnected = || raw(RawState::Disconnected);
        let kinds = vec![
            connected(1),
            disconnected(),
            session(SUSPENDED),
            connected(1),
            session(SAME),
            disconnected(),
            session(SUSPENDED),
            session(TIMED_OUT),
            connected(2),
            session(NEW),
            disconnected(),
            session(SUSPENDED),
            raw(RawState::Expired),
            session(EXPIRED),
            connected(3),
            session(NEW),
        ];
        assert_eq!(check_framework_states(&trace(kinds)), Ok(()));
    }

    #[test]
    fn a_re_attachment_or_an_expiry_the_framework_misses_is_named() {
        let suspended = || {
            vec![
                connected(1),
                raw(RawState::Disconnected),
                session(SUSPENDED),
            ]
        };
        let missed = [suspended(), vec![connected(1), session(TIMED_OUT)]].concat();
        let error = check_framework_states(&trace(missed)).unwrap_err();
        assert_eq!(
            error,
            "c0's framework layer said Lost { server_confirmed: false } (event 4) where its raw \
             session's change (event 3) asks for Reconnected { session_changed: false } next, \
             as Curator's ConnectionStateManager does"
        );
        let changed = [suspended(), vec![connected(1), session(NEW)]].concat();
        assert!(check_framework_states(&trace(changed)).is_err());
        let expiry = [
            suspended(),
            vec![raw(RawState::Expired), session(TIMED_OUT)],
        ]
        .concat();
        assert!(check_framework_states(&trace(expiry)).is_err());
    }

    #[test]
    fn a_crash_starts_the_client_over() {
        let crash = EventKind::FaultStart {
            fault: Fault::Crash { client: 0 },
        };
        let kinds = vec![
            connected(1),
            raw(RawState::Disconnected),
            session(SUSPENDED),
            crash,
            connected(2),
        ];
        assert_eq!(check_framework_states(&trace(kinds)), Ok(()));
    }
}
