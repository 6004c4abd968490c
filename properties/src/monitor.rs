//! Property monitors: each property as an incremental state machine over what the clients and
//! the server do, so that one definition serves every executor. A trace checker folds a
//! monitor over a finished trace ([`crate::check`]); the model keeps the monitor's state in its
//! own state and feeds it the same observations as its transitions happen. A monitor's state
//! is `Clone + Eq + Ord + Hash`, holds no op ids, zxids or tokens (an order will do), and
//! relabels with the clients ([`coordination::relabel`]), so that it splits no model state that the
//! rest of the state does not already tell apart.
//!
//! `no_orphans` needs no history, only the tree at a run's end and which sessions are alive
//! ([`orphaned`]): the model's state holds both, the trace checker rebuilds them.

mod beliefs;
mod fenced;
mod herd;
mod orphans;
mod progress;
mod revokes;

pub use beliefs::{Beliefs, ClientBeliefs, Conflict, Holder, Key, Role};
pub use fenced::{Access, Accessor, Breach, Fenced};
pub use herd::{Herd, Herds, Wake, changes, counts_as_acquired, wakes_waiters};
pub use orphans::{TreeNode, orphaned};
pub use progress::{ClientWaits, Wait, Waits, fault_failure};
pub use revokes::{ClientRevokes, Revokes};

use coordination::driver::Observed;
use coordination::ids::{ClientSlot, Owner};
use coordination::recipe::{Recipe, SessionEvent};
use coordination::recipes::{Call, Notice};
use coordination::session::{RawEvent, RawState};
use coordination::zk::SessionId;

use scenarios::fault::Fault;
use trace::{EventKind, ServerSession};

/// Which connection-state changes oblige a holder to give its hold up: the framework layer's
/// setting (Curator's `ConnectionStateErrorPolicy`), which the monitor checks recipes obey.
pub use coordination::framework::ErrorPolicy;

/// What a monitor is fed: the few kinds of trace event the properties read, on a client
/// where they happen on one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observation {
    /// The user called the recipe.
    Call(ClientSlot, Call),
    /// The recipe told its user something.
    Notice(ClientSlot, Notice),
    /// The client's framework layer changed its connection state.
    Session(ClientSlot, SessionEvent),
    /// The client connected on `session` (raw `Connected`).
    Connected(ClientSlot, SessionId),
    /// The client handled some other input: a reply, a watch event, another raw state.
    Input(ClientSlot),
    /// The server ended a session (expired or closed it).
    SessionEnded(SessionId),
    /// An `expire_session` fault on the client's current session began.
    Expire(ClientSlot),
    /// The client's process crashed.
    Crash(ClientSlot),
    /// The deadline of the acquire of `Owner` on the client passed: its instant plus its
    /// timeout (the simulator's and the real executor's traces, by their times), or the
    /// acquire's timeout timer fired and was handled (the model, which records it as
    /// [`EventKind::DeadlinePassed`]).
    DeadlinePassed(ClientSlot, Owner),
}

impl Observation {
    /// What a monitor sees of trace event `kind` on `client`, if anything.
    pub fn of_event(client: Option<ClientSlot>, kind: &EventKind) -> Option<Observation> {
        Some(match (kind, client) {
            (EventKind::Call { call }, Some(c)) => Observation::Call(c, *call),
            (EventKind::Notice { notice }, Some(c)) => Observation::Notice(c, *notice),
            (EventKind::Session { event }, Some(c)) => Observation::Session(c, *event),
            (EventKind::RawSession { state }, Some(c)) => raw_state(c, *state),
            (EventKind::Reply { .. } | EventKind::WatchDelivered { .. }, Some(c)) => {
                Observation::Input(c)
            }
            (EventKind::DeadlinePassed { owner }, Some(c)) => {
                Observation::DeadlinePassed(c, *owner)
            }
            (EventKind::ServerSession { session, change }, _) => match change {
                ServerSession::Expired | ServerSession::Closed => {
                    Observation::SessionEnded(*session)
                }
                ServerSession::Created | ServerSession::Reattached => return None,
            },
            (EventKind::FaultStart { fault }, _) => match *fault {
                Fault::ExpireSession { client } => Observation::Expire(ClientSlot(client)),
                Fault::Crash { client } => Observation::Crash(ClientSlot(client)),
                _ => return None,
            },
            _ => return None,
        })
    }

    /// What a monitor sees of what `client`'s executor observed: the same as of the trace
    /// event [`trace::client_event`] records for it, without building that event.
    pub fn of_observed<R: Recipe<Call = Call, Notice = Notice>>(
        client: ClientSlot,
        observed: &Observed<'_, R>,
    ) -> Option<Observation> {
        Some(match observed {
            Observed::Call(call) => Observation::Call(client, **call),
            Observed::Notice(notice) => Observation::Notice(client, **notice),
            Observed::Session(event) => Observation::Session(client, *event),
            Observed::Event(RawEvent::State { state }) => raw_state(client, *state),
            Observed::Event(RawEvent::Reply { .. } | RawEvent::Watch { .. }) => {
                Observation::Input(client)
            }
            Observed::OpSent { .. } | Observed::SessionOpened | Observed::SessionClosed => {
                return None;
            }
        })
    }
}

/// What a monitor sees of raw state `state` on `client`.
fn raw_state(client: ClientSlot, state: RawState) -> Observation {
    match state {
        RawState::Connected { session, .. } => Observation::Connected(client, session),
        _ => Observation::Input(client),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordination::ids::{OpId, Owner};
    use coordination::recipes::Mutex;
    use coordination::zk::{EventKind as ZkEventKind, Path, Request, WatchedEvent, ZkError};
    use trace::client_event;

    #[test]
    fn a_monitor_sees_an_observation_as_it_sees_its_trace_event() {
        let client = ClientSlot(1);
        let owner = Owner(0);
        let path = Path::new("/lock").unwrap();
        let call = Call::acquire(owner, None);
        let notice = Notice::Lost { owner };
        let request = Request::GetChildren {
            path: path.clone(),
            watch: false,
        };
        let events = [
            RawEvent::State {
                state: RawState::Connected {
                    session: SessionId(7),
                    timeout: std::time::Duration::from_secs(1),
                },
            },
            RawEvent::State {
                state: RawState::Disconnected,
            },
            RawEvent::Reply {
                op: OpId(3),
                result: Err(ZkError::ConnectionLoss),
            },
            RawEvent::Watch {
                event: WatchedEvent {
                    kind: ZkEventKind::NodeDeleted,
                    path,
                },
            },
        ];
        let mut observations: Vec<Observed<'_, Mutex>> = vec![
            Observed::Call(&call),
            Observed::Notice(&notice),
            Observed::Session(SessionEvent::Suspended),
            Observed::OpSent {
                op: OpId(4),
                request: &request,
            },
            Observed::SessionOpened,
        ];
        observations.extend(events.iter().map(Observed::Event));
        for observed in observations {
            let seen = Observation::of_observed(client, &observed);
            let event = client_event(observed);
            assert_eq!(
                seen,
                event.and_then(|kind| Observation::of_event(Some(client), &kind)),
            );
        }
    }

    #[test]
    fn the_standard_policy_obliges_at_suspended_and_both_at_lost() {
        let lost = SessionEvent::Lost {
            server_confirmed: false,
        };
        assert!(ErrorPolicy::Standard.obliges(SessionEvent::Suspended));
        assert!(!ErrorPolicy::SessionBased.obliges(SessionEvent::Suspended));
        assert!(ErrorPolicy::Standard.obliges(lost) && ErrorPolicy::SessionBased.obliges(lost));
        let reconnected = SessionEvent::Reconnected {
            session_changed: false,
        };
        assert!(!ErrorPolicy::Standard.obliges(reconnected));
    }
}
