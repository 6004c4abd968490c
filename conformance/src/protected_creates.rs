//! Protected creates against Curator's protected mode: not a property of a recipe but of
//! splitbrain's own framework layer, so a trace that breaks it is a bug of splitbrain's, and
//! a simulated run that shows one fails (as [`super::check_framework_states`]).
//!
//! A protected create whose answer was lost lists its parent for a node carrying its
//! protection id. Curator 5's `ProtectedMode.validateFoundNode` deletes a found ephemeral node
//! only when the session changed since the attempt that made it; a node of the current
//! session is adopted, so the create keeps the place in the queue that node holds. The check:
//! no client deletes a node that carries one of its protection ids and is owned by its current
//! session, and then creates with that protection id again. (A create that failed to the
//! recipe deletes its node of the current session too, in the background, but never creates
//! again.)
//!
//! Reads the server's `op_applied` events for each node's owner, so it serves simulated runs,
//! whose traces record the server's side. A crash starts the client over.

use std::collections::BTreeMap;

use coordination::ids::{ClientSlot, ProtectionId};
use coordination::session::RawState;
use coordination::zk::{OpOk, Path, Request, SessionId};

use scenarios::fault::Fault;
use trace::{EventKind, Trace};

/// Checks that every protected create in `trace` adopts its own node of the current session
/// (see the module doc); the first break, as one line naming the client, the node and the
/// events, if any.
pub fn check_protected_creates(trace: &Trace) -> Result<(), String> {
    let mut owners: BTreeMap<&Path, SessionId> = BTreeMap::new();
    let mut sessions: BTreeMap<ClientSlot, SessionId> = BTreeMap::new();
    let mut discarded: BTreeMap<ProtectionId, (usize, &Path)> = BTreeMap::new();
    for (index, event) in trace.events.iter().enumerate() {
        match (&event.kind, event.client) {
            (
                EventKind::OpApplied {
                    session,
                    request: Request::Create { mode, .. },
                    result: Ok(OpOk::Created { path, .. }),
                    ..
                },
                _,
            ) if mode.is_ephemeral() => {
                owners.insert(path, *session);
            }
            (
                EventKind::RawSession {
                    state: RawState::Connected { session, .. },
                },
                Some(client),
            ) => {
                sessions.insert(client, *session);
            }
            (
                EventKind::FaultStart {
                    fault: Fault::Crash { client },
                },
                _,
            ) => {
                let client = ClientSlot(*client);
                sessions.remove(&client);
                discarded.retain(|protection, _| protection.client != client);
            }
            (
                EventKind::OpSent {
                    request: Request::Delete { path, .. },
                    ..
                },
                Some(client),
            ) => {
                let current = sessions.get(&client);
                if current.is_some()
                    && owners.get(path) == current
                    && let Some(protection) = protection_of(path, client)
                {
                    discarded.insert(protection, (index, path));
                }
            }
            // Only a create after such a delete can break the rule.
            (
                EventKind::OpSent {
                    request: Request::Create { path: create, .. },
                    ..
                },
                Some(client),
            ) if !discarded.is_empty() => {
                let again = protection_of(create, client).and_then(|p| discarded.get(&p));
                if let Some((deleted, path)) = again {
                    return Err(format!(
                        "{client} deleted its own node {path} of its current session \
                         (event {deleted}) and created it again (event {index}): \
                         Curator's protected mode adopts a node of the current session, \
                         and the create keeps its place"
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The protection id of `client`'s that the last name of `path` carries, if any.
fn protection_of(path: &Path, client: ClientSlot) -> Option<ProtectionId> {
    ProtectionId::parse_prefix(path.name()).filter(|protection| protection.client == client)
}

#[cfg(test)]
mod tests {
    use coordination::ids::OpId;
    use coordination::zk::{CreateMode, Stat};
    use std::time::Duration;

    use super::*;
    use trace::build::Build;

    const NODE: &str = "/lock/_c_00000007-0000-00000001-lock-0000000003";
    const PREFIX: &str = "/lock/_c_00000007-0000-00000001-lock-";

    fn path(text: &str) -> Path {
        Path::new(text).expect("a valid path")
    }

    fn connected(session: u64) -> EventKind {
        EventKind::RawSession {
            state: RawState::Connected {
                session: SessionId(session),
                timeout: Duration::from_secs(1),
            },
        }
    }

    fn create() -> Request {
        Request::Create {
            path: path(PREFIX),
            data: Vec::new(),
            mode: CreateMode::EphemeralSequential,
        }
    }

    fn sent(op: u32, request: Request) -> EventKind {
        EventKind::OpSent {
            op: OpId(op),
            request,
        }
    }

    /// Client 0 on session `made_by` creates its node (the server applies it), is on
    /// session `now` when it finds the node, deletes it and creates again.
    fn found_deleted_and_made_again(made_by: u64, now: u64) -> Trace {
        let applied = EventKind::OpApplied {
            session: SessionId(made_by),
            op: OpId(1),
            request: create(),
            result: Ok(OpOk::Created {
                path: path(NODE),
                stat: Stat::default(),
            }),
            zxid: None,
            read_from: None,
        };
        let delete = Request::Delete {
            path: path(NODE),
            version: None,
        };
        Build::new()
            .push(Some(0), connected(made_by))
            .push(Some(0), sent(1, create()))
            .push(None, applied)
            .push(Some(0), connected(now))
            .push(Some(0), sent(2, delete))
            .push(Some(0), sent(3, create()))
            .trace()
    }

    #[test]
    fn a_node_of_an_older_session_may_be_deleted_and_made_again() {
        assert_eq!(
            check_protected_creates(&found_deleted_and_made_again(1, 2)),
            Ok(())
        );
    }

    #[test]
    fn a_node_of_the_current_session_deleted_and_made_again_is_named() {
        let error = check_protected_creates(&found_deleted_and_made_again(1, 1)).unwrap_err();
        assert_eq!(
            error,
            format!(
                "c0 deleted its own node {NODE} of its current session (event 4) and created \
                 it again (event 5): Curator's protected mode adopts a node of the current \
                 session, and the create keeps its place"
            )
        );
    }
}
