//! Sessions, twice: as each client believes (raw states and the framework layer's
//! Suspended / Lost / Reconnected) and as the server knows (created, expired, closed). The gap
//! between the two — the server expired a session whose client still thinks it is connected —
//! is where split brains live, so the timeline draws both.

use std::collections::BTreeMap;

use coordination::recipe::SessionEvent;
use coordination::session::RawState;
use coordination::zk::{SessionId, ZkError};
use trace::{EventKind, ServerSession, Trace};

use super::Span;

/// A client's own view of its session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClientView {
    /// Connected to the server.
    Connected,
    /// Disconnected; the session may come back.
    Suspended,
    /// The client gave up on the session; the server may still hold it.
    Lost,
    /// The server told the client its session expired.
    Expired,
}

impl ClientView {
    /// The state's name as the page prints it (and its CSS class).
    pub(crate) fn name(self) -> &'static str {
        match self {
            ClientView::Connected => "connected",
            ClientView::Suspended => "suspended",
            ClientView::Lost => "lost",
            ClientView::Expired => "expired",
        }
    }

    /// The view a client event moves to, if it is a session change.
    fn after(kind: &EventKind) -> Option<ClientView> {
        Some(match kind {
            EventKind::RawSession { state } => match state {
                RawState::Connected { .. } => ClientView::Connected,
                RawState::Disconnected => ClientView::Suspended,
                RawState::Expired => ClientView::Expired,
            },
            EventKind::Session { event } => match event {
                SessionEvent::Suspended => ClientView::Suspended,
                SessionEvent::Lost {
                    server_confirmed: true,
                } => ClientView::Expired,
                SessionEvent::Lost {
                    server_confirmed: false,
                } => ClientView::Lost,
                SessionEvent::Reconnected { .. } => ClientView::Connected,
            },
            _ => return None,
        })
    }
}

/// One server-side session: alive from creation until it expired or was closed, and, after
/// an expiry, how long its client went on believing in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ServerLife {
    /// The session.
    pub session: SessionId,
    /// The client that used it, when the trace says.
    pub client: Option<u16>,
    /// From creation to expiry or close (`open` when it outlived the trace).
    pub alive: Span<()>,
    /// From the server's expiry until the client noticed anything (a change of its connection
    /// state, or a reply saying so): the client's belief outlived the session.
    pub unnoticed: Option<Span<()>>,
}

/// Sessions as clients and the server saw them.
pub(crate) struct Sessions {
    /// Which client used which session.
    pub owner: BTreeMap<SessionId, u16>,
    /// Each client's own view, in time order.
    pub client: BTreeMap<u16, Vec<Span<ClientView>>>,
    /// The server's sessions, in creation order.
    pub server: Vec<ServerLife>,
}

impl Sessions {
    /// Derives both views from `trace`, which ends at `end`.
    pub(crate) fn new(trace: &Trace, end: u64) -> Sessions {
        let owner = owners(trace);
        Sessions {
            client: client_views(trace, end),
            server: server_lives(trace, &owner, end),
            owner,
        }
    }

    /// The server-side lives of `client`'s sessions.
    pub(crate) fn server_of(&self, client: u16) -> impl Iterator<Item = &ServerLife> {
        self.server
            .iter()
            .filter(move |life| life.client == Some(client))
    }
}

/// Session → client, from the clients' `Connected` events and any server event that names
/// its client.
fn owners(trace: &Trace) -> BTreeMap<SessionId, u16> {
    let mut owner = BTreeMap::new();
    for event in &trace.events {
        let Some(client) = event.client else { continue };
        let session = match &event.kind {
            EventKind::RawSession {
                state: RawState::Connected { session, .. },
            }
            | EventKind::OpApplied { session, .. }
            | EventKind::WatchFired { session, .. }
            | EventKind::ServerSession { session, .. } => *session,
            _ => continue,
        };
        owner.entry(session).or_insert(client.0);
    }
    owner
}

/// Each client's view as consecutive spans; repeated states merge.
fn client_views(trace: &Trace, end: u64) -> BTreeMap<u16, Vec<Span<ClientView>>> {
    let mut views: BTreeMap<u16, Vec<Span<ClientView>>> = BTreeMap::new();
    for (index, event) in trace.events.iter().enumerate() {
        let (Some(client), Some(view)) = (event.client, ClientView::after(&event.kind)) else {
            continue;
        };
        let spans = views.entry(client.0).or_default();
        if let Some(last) = spans.last_mut() {
            if last.kind == view {
                continue;
            }
            last.end = event.t;
            last.open = false;
        }
        spans.push(Span {
            start: event.t,
            end,
            open: true,
            kind: view,
            event: index,
        });
    }
    views
}

/// The server's sessions, with the stretch after each expiry during which the client had not
/// yet heard of it.
fn server_lives(trace: &Trace, owner: &BTreeMap<SessionId, u16>, end: u64) -> Vec<ServerLife> {
    let mut lives: Vec<ServerLife> = Vec::new();
    for (index, event) in trace.events.iter().enumerate() {
        match &event.kind {
            EventKind::ServerSession { session, change } => match change {
                ServerSession::Created => lives.push(ServerLife {
                    session: *session,
                    client: owner.get(session).copied(),
                    alive: Span {
                        start: event.t,
                        end,
                        open: true,
                        kind: (),
                        event: index,
                    },
                    unnoticed: None,
                }),
                ServerSession::Reattached => {}
                ServerSession::Expired | ServerSession::Closed => {
                    let Some(life) = lives
                        .iter_mut()
                        .rev()
                        .find(|l| l.session == *session && l.alive.open)
                    else {
                        continue;
                    };
                    life.alive.end = event.t;
                    life.alive.open = false;
                    if *change == ServerSession::Expired {
                        life.unnoticed = Some(Span {
                            start: event.t,
                            end,
                            open: true,
                            kind: (),
                            event: index,
                        });
                    }
                }
            },
            _ => {
                let Some(client) = event.client else { continue };
                if !learns_of_expiry(&event.kind) {
                    continue;
                }
                for life in lives.iter_mut().filter(|l| l.client == Some(client.0)) {
                    if let Some(span) = life.unnoticed.as_mut().filter(|s| s.open) {
                        span.end = event.t;
                        span.open = false;
                    }
                }
            }
        }
    }
    lives
}

/// Client events after which a client no longer believes in a session the server expired:
/// any change of its connection state, or a reply saying so.
fn learns_of_expiry(kind: &EventKind) -> bool {
    match kind {
        EventKind::Reply { result, .. } => *result == Err(ZkError::SessionExpired),
        EventKind::RawSession { .. } | EventKind::Session { .. } => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use coordination::ids::ClientSlot;
    use trace::Event;

    use super::*;
    use crate::analysis::tests::trace_of;

    fn event(t: u64, client: Option<u16>, kind: EventKind) -> Event {
        Event {
            t,
            client: client.map(ClientSlot),
            kind,
        }
    }

    #[test]
    fn an_expiry_the_client_has_not_seen_is_unnoticed_until_its_next_state_change() {
        let session = SessionId(7);
        let connected = RawState::Connected {
            session,
            timeout: Duration::from_secs(6),
        };
        let trace = trace_of(vec![
            event(
                1,
                None,
                EventKind::ServerSession {
                    session,
                    change: ServerSession::Created,
                },
            ),
            event(2, Some(0), EventKind::RawSession { state: connected }),
            event(
                5,
                None,
                EventKind::ServerSession {
                    session,
                    change: ServerSession::Expired,
                },
            ),
            event(
                8,
                Some(0),
                EventKind::Session {
                    event: SessionEvent::Suspended,
                },
            ),
        ]);
        let sessions = Sessions::new(&trace, 10);
        assert_eq!(sessions.owner.get(&session), Some(&0));
        let views: Vec<_> = sessions.client[&0]
            .iter()
            .map(|s| (s.kind, s.start, s.end, s.open))
            .collect();
        assert_eq!(
            views,
            [
                (ClientView::Connected, 2, 8, false),
                (ClientView::Suspended, 8, 10, true)
            ]
        );
        let life = &sessions.server[0];
        assert_eq!((life.alive.start, life.alive.end), (1, 5));
        let unnoticed = life.unnoticed.as_ref().expect("an unnoticed stretch");
        assert_eq!(
            (unnoticed.start, unnoticed.end, unnoticed.open),
            (5, 8, false)
        );
    }
}
