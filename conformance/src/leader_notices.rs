//! An election's notices against Curator's listener contract: a participant hears `IsLeader`
//! when it gains leadership and `NotLeader` when it loses it (`LeaderLatchListener.isLeader`
//! and `notLeader` are called on changes of `hasLeadership` only), and a close tells a leader
//! `NotLeader` only in `CloseMode.NOTIFY_LEADER` (`Close { notify: true }`; the default,
//! `SILENT`, says nothing); a `LeaderSelector`'s user gives leadership up itself, returning
//! from `takeLeadership` (`Relinquish`). A `NotLeader` that ends no leadership, or an `IsLeader` to a
//! leader, would make a user's listener step down, or start leading, for nothing.
//!
//! Not one of the properties: the beliefs the properties judge already end at a close, so
//! what a close says cannot change a verdict. A simulated run that breaks it fails, naming the
//! notice, as one that breaks the framework's rules does. A crash starts the client over.

use std::collections::BTreeMap;

use coordination::ids::{ClientSlot, Owner};
use coordination::recipes::{Call, Notice};

use scenarios::fault::Fault;
use trace::{EventKind, Trace};

/// Where one participant stands, as its notices and calls tell it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Standing {
    /// It heard `IsLeader`, and no `NotLeader` or close since.
    leading: bool,
    /// A `Close { notify: true }` ended its leadership: one `NotLeader` is owed.
    told_on_close: bool,
}

/// Checks every participant's `IsLeader` and `NotLeader` in `trace` against the listener
/// contract (see the module doc); the first break, as one line naming the client, the owner
/// and the event, if any.
pub fn check_leader_notices(trace: &Trace) -> Result<(), String> {
    let mut standings: BTreeMap<(ClientSlot, Owner), Standing> = BTreeMap::new();
    for (index, event) in trace.events.iter().enumerate() {
        match (&event.kind, event.client) {
            (
                EventKind::FaultStart {
                    fault: Fault::Crash { client },
                },
                _,
            ) => standings.retain(|(c, _), _| c.0 != *client),
            (EventKind::Call { call }, Some(client)) => match *call {
                Call::Close { owner, notify } => {
                    let standing = standings.entry((client, owner)).or_default();
                    standing.told_on_close = standing.leading && notify;
                    standing.leading = false;
                }
                // A selector's user gives leadership up by returning from `takeLeadership`:
                // nothing is owed.
                Call::Relinquish { owner } => {
                    standings.insert((client, owner), Standing::default());
                }
                _ => {}
            },
            (
                EventKind::Notice {
                    notice:
                        notice @ (Notice::IsLeader { .. }
                        | Notice::NotLeader { .. }
                        | Notice::Closed { .. }),
                },
                Some(client),
            ) => {
                let standing = standings.entry((client, notice.owner())).or_default();
                let broken = match notice {
                    Notice::IsLeader { .. } if standing.leading => Some("leading already"),
                    Notice::IsLeader { .. } => {
                        *standing = Standing {
                            leading: true,
                            told_on_close: false,
                        };
                        None
                    }
                    Notice::NotLeader { .. } if standing.leading => {
                        standing.leading = false;
                        None
                    }
                    Notice::NotLeader { .. } if standing.told_on_close => {
                        standing.told_on_close = false;
                        None
                    }
                    Notice::NotLeader { .. } => Some("not leading (or closed silently)"),
                    Notice::Closed { .. } => {
                        standing.told_on_close = false;
                        None
                    }
                    _ => None,
                };
                if let Some(state) = broken {
                    return Err(format!(
                        "{client} (owner {}) heard {notice:?} (event {index}) while {state}: \
                         Curator's listener hears of changes of leadership only, and a silent \
                         close says nothing",
                        notice.owner().0
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::build::Build;

    const OWNER: Owner = Owner(0);

    fn call(call: Call) -> EventKind {
        EventKind::Call { call }
    }

    fn notice(notice: Notice) -> EventKind {
        EventKind::Notice { notice }
    }

    fn close(notify: bool) -> EventKind {
        call(Call::Close {
            owner: OWNER,
            notify,
        })
    }

    fn is_leader() -> EventKind {
        notice(Notice::IsLeader {
            owner: OWNER,
            token: coordination::fencing::Token(3),
        })
    }

    fn not_leader() -> EventKind {
        notice(Notice::NotLeader { owner: OWNER })
    }

    fn closed() -> EventKind {
        notice(Notice::Closed { owner: OWNER })
    }

    fn check(kinds: Vec<EventKind>) -> Result<(), String> {
        let build = |build: Build, kind| build.push(Some(0), kind);
        check_leader_notices(&kinds.into_iter().fold(Build::new(), build).trace())
    }

    #[test]
    fn changes_and_a_notifying_close_of_a_leader_pass() {
        let start = || call(Call::Start { owner: OWNER });
        let kinds = vec![
            start(),
            is_leader(),
            not_leader(),
            is_leader(),
            close(false),
            closed(),
            start(),
            is_leader(),
            close(true),
            not_leader(),
            closed(),
            start(),
            close(true),
            closed(),
        ];
        assert_eq!(check(kinds), Ok(()));
    }

    #[test]
    fn a_silent_close_that_says_not_leader_is_named() {
        let kinds = vec![is_leader(), close(false), not_leader(), closed()];
        assert_eq!(
            check(kinds),
            Err(
                "c0 (owner 0) heard NotLeader { owner: Owner(0) } (event 2) while not leading \
                 (or closed silently): Curator's listener hears of changes of leadership only, \
                 and a silent close says nothing"
                    .to_owned()
            )
        );
    }

    #[test]
    fn a_not_leader_to_a_follower_or_an_is_leader_to_a_leader_is_named() {
        assert!(check(vec![close(true), not_leader()]).is_err());
        assert!(check(vec![is_leader(), is_leader()]).is_err());
    }
}
