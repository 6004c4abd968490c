//! `no_time_travel`: a session never reads state older than what it has already been told of.
//! ZooKeeper promises a client a single system image: whichever server its session moves to,
//! it never sees an older view of the tree. A session is told of a state by the reply to a
//! request (a write's zxid, or the zxid a read's server had applied, which the reply header
//! carries) and by a watch event (the zxid of the change that fired it). A read is older than
//! what its session was told when its server had applied less than that.
//!
//! Only a read answered by a server of an ensemble records how far its server had applied
//! (a standalone server answers every read from its latest state), so only simulated ensemble
//! traces are judged; a session's replies and watch events count from the instant its client
//! received them (a watch event from the server's record of the change, matched to what
//! arrived, as `herd_free` matches them). A read counts only if its answer arrived: one a
//! server applied after its client's connection was gone (a paused server answering on
//! resume) reached nobody, and its client's `ConnectionLoss` or `SessionExpired` for it is not
//! the server's answer.

use std::collections::BTreeMap;

use coordination::ids::{ClientSlot, OpId};
use coordination::zk::{Path, SessionId, ZkError, Zxid};
use recipe_table::property::{Property, Violation};
use trace::{EventKind, ReadFrom, Trace};

use super::client_sessions::Sessions;
use super::received::received;
use super::when;

/// Every read answered from state older than what its session had been told of.
pub fn check(trace: &Trace) -> Vec<Violation> {
    let told_by_watch: BTreeMap<usize, Zxid> = (received(trace).into_iter())
        .filter_map(|(fired, delivered)| match &trace.events[fired].kind {
            EventKind::WatchFired { zxid, .. } => zxid.map(|zxid| (delivered, zxid)),
            _ => None,
        })
        .collect();
    let mut sessions = Sessions::default();
    // The zxid each applied request's reply will tell its session, and for a read older than
    // what the session had been told then, its violation, until the reply arrives.
    let mut replies: BTreeMap<(SessionId, OpId), (Zxid, Option<Violation>)> = BTreeMap::new();
    // The newest zxid each session was told of, with the event that told it.
    let mut told: BTreeMap<SessionId, Told> = BTreeMap::new();
    let mut violations = Vec::new();
    for (index, event) in trace.events.iter().enumerate() {
        if let Some(client) = event.client {
            sessions.observe(client, &event.kind);
        }
        let mut tell = |session: SessionId, zxid: Zxid| {
            let newest = told.entry(session).or_insert(Told { zxid, at: index });
            if zxid > newest.zxid {
                *newest = Told { zxid, at: index };
            }
        };
        match (&event.kind, event.client) {
            (
                EventKind::OpApplied {
                    session,
                    op,
                    request,
                    zxid,
                    read_from,
                    ..
                },
                _,
            ) => {
                let stale = (read_from.as_ref())
                    .zip(told.get(session).copied())
                    .filter(|(read, told)| read.zxid < told.zxid)
                    .map(|(read, told)| {
                        let client = sessions.client_on(*session);
                        let read = (index, *session, request.path(), *read);
                        time_travel(trace, read, client, told)
                    });
                if let Some(zxid) = read_from.map(|read| read.zxid).or(*zxid) {
                    replies.insert((*session, *op), (zxid, stale));
                }
            }
            (EventKind::Reply { op, result }, Some(client)) => {
                let answered = !matches!(
                    result,
                    Err(ZkError::ConnectionLoss | ZkError::SessionExpired)
                );
                if answered
                    && let Some(session) = sessions.of(client)
                    && let Some((zxid, stale)) = replies.remove(&(session, *op))
                {
                    violations.extend(stale);
                    tell(session, zxid);
                }
            }
            (EventKind::WatchDelivered { .. }, Some(client)) => {
                if let (Some(session), Some(&zxid)) =
                    (sessions.of(client), told_by_watch.get(&index))
                {
                    tell(session, zxid);
                }
            }
            _ => {}
        }
    }
    violations
}

/// The newest zxid a session was told of, and the index of the event that told it.
#[derive(Clone, Copy)]
struct Told {
    zxid: Zxid,
    at: usize,
}

/// The violation of the read at event `index` of `session` on `path`, answered as `read`,
/// older than what `told` the session (whose client is `client`, if it is still on it).
fn time_travel(
    trace: &Trace,
    (index, session, path, read): (usize, SessionId, &Path, ReadFrom),
    client: Option<ClientSlot>,
    told: Told,
) -> Violation {
    let t = trace.events[index].t;
    Violation {
        property: Property::NoTimeTravel,
        at: t,
        until: None,
        clients: client.into_iter().collect(),
        events: vec![told.at, index],
        message: format!(
            "at {}, session {session} read {path} from server {}, which had applied up to zxid \
             {}, after it had been told of zxid {} at {}: an older view than it had seen",
            when(trace, t),
            read.server,
            read.zxid.0,
            told.zxid.0,
            when(trace, trace.events[told.at].t),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordination::zk::EventKind as ZkEventKind;
    use trace::build::Build;

    const LOCK: &str = "/lock";
    const HOLDER: &str = "/lock/a";

    /// c0 on session 10 and c1 on session 11, c1 told of the holder's deletion (zxid 7) by
    /// its watch.
    fn told_by_watch() -> Build {
        Build::new()
            .connected(0, 10)
            .connected(1, 11)
            .at_ms(5)
            .deleted_watch(11, HOLDER, 7)
            .delivered(1, ZkEventKind::NodeDeleted, HOLDER)
    }

    #[test]
    fn a_read_older_than_a_watch_event_its_session_received_is_time_travel() {
        let trace = told_by_watch()
            .at_ms(9)
            .read_from((1, 11, 3), LOCK, 2, 6)
            .trace();
        let violations = check(&trace);
        assert_eq!(violations.len(), 1, "{violations:?}");
        let violation = &violations[0];
        assert_eq!(violation.clients, [ClientSlot(1)]);
        let [told, read] = violation.events[..] else {
            panic!("{violation:?}");
        };
        assert!(matches!(
            trace.events[told].kind,
            EventKind::WatchDelivered { .. }
        ));
        assert!(matches!(
            trace.events[read].kind,
            EventKind::OpApplied { .. }
        ));
        assert_eq!(violation.at, trace.events[read].t);
        assert!(
            violation.message.contains("server 2")
                && violation.message.contains("zxid 6")
                && violation.message.contains("zxid 7"),
            "{}",
            violation.message
        );
    }

    #[test]
    fn a_read_older_than_a_reply_its_session_received_is_time_travel() {
        let trace = Build::new()
            .connected(0, 10)
            .read_from((0, 10, 1), LOCK, 1, 9)
            .read_from((0, 10, 2), LOCK, 0, 8)
            .trace();
        assert_eq!(check(&trace).len(), 1);
    }

    #[test]
    fn reads_as_new_as_what_the_session_was_told_are_not() {
        let trace = told_by_watch()
            .read_from((1, 11, 3), LOCK, 2, 7)
            .read_from((1, 11, 4), LOCK, 0, 8)
            .trace();
        assert_eq!(check(&trace), []);
    }

    #[test]
    fn another_session_may_read_older_state_than_one_was_told_of() {
        let trace = told_by_watch().read_from((0, 10, 3), LOCK, 2, 6).trace();
        assert_eq!(check(&trace), []);
    }

    #[test]
    fn a_watch_event_that_never_arrived_told_nothing() {
        let trace = Build::new()
            .connected(1, 11)
            .watch_fired_unreceived(11, ZkEventKind::NodeDeleted, HOLDER, 7)
            .read_from((1, 11, 3), LOCK, 2, 6)
            .trace();
        assert_eq!(check(&trace), []);
    }

    #[test]
    fn a_read_whose_answer_never_arrived_read_nothing() {
        // Applied by a server resumed after the client gave the connection up, or applied and
        // then lost with the connection: either way the client never read it.
        for lost_first in [true, false] {
            let trace = told_by_watch()
                .read_unanswered((1, 11, 3), LOCK, (2, 6), lost_first)
                .trace();
            assert_eq!(check(&trace), [], "lost first: {lost_first}");
        }
    }

    #[test]
    fn a_session_is_judged_by_what_it_was_told_not_what_its_client_was() {
        // c1 was told of zxid 7 on session 11, gave it up and reads older state on session 12.
        let trace = told_by_watch()
            .session_lost(1)
            .connected(1, 12)
            .read_from((1, 12, 1), LOCK, 2, 6)
            .trace();
        assert_eq!(check(&trace), []);
    }
}
