//! The answer to a connection's first frame, as ZooKeeper's
//! `ZooKeeperServer.processConnectRequest` gives it: a client that has seen a later zxid than
//! the server's is refused (the connection closes with no response); a new session is
//! opened; a session resumed with its password is accepted again, and any other resumption
//! (an expired or closed session, a wrong password) gets the all-zero response before the
//! connection closes.

use coordination::zk::tree::Tree;
use coordination::zk::{SessionId, Zxid};
use jute::session::{ConnectRequest, ConnectResponse};

use crate::sessions::{Limits, Sessions, password};

/// What becomes of a connection after its connect request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Handshake {
    /// Send `response`, then serve the connection's requests for `session`. A resumed
    /// session's watches were dropped with its old connection: the client sets them again
    /// (`setWatches`), and the server closes the old connection.
    Accepted {
        /// The session, new or resumed.
        session: SessionId,
        /// Whether it was resumed (rather than opened).
        resumed: bool,
        /// The connect response.
        response: ConnectResponse,
    },
    /// Send `response` (timeout 0, session 0, a password of zeroes), then close: the session
    /// expired, was closed, or the password is wrong.
    Expired {
        /// The connect response.
        response: ConnectResponse,
    },
    /// Close with no response: the client has seen zxid `seen`, after the server's last.
    Refused {
        /// The last zxid the client saw.
        seen: i64,
    },
}

/// Answers `request`, opening or resuming a session in `sessions`; `tree` gives the last zxid
/// and loses a resumed session's watches.
pub fn connect(
    sessions: &mut Sessions,
    tree: &mut Tree,
    limits: Limits,
    request: &ConnectRequest,
) -> Handshake {
    let seen = request.last_zxid_seen;
    if u64::try_from(seen).is_ok_and(|seen| Zxid(seen) > tree.zxid()) {
        return Handshake::Refused { seen };
    }
    let timeout = limits.negotiate(request.time_out);
    let read_only = request.read_only.map(|_| false);
    let accepted = |session: SessionId, resumed| Handshake::Accepted {
        session,
        resumed,
        response: ConnectResponse {
            protocol_version: 0,
            time_out: timeout,
            session_id: session.0 as i64,
            passwd: password(session),
            read_only,
        },
    };
    if request.session_id == 0 {
        return accepted(sessions.open(timeout), false);
    }
    let session = SessionId(request.session_id as u64);
    if !sessions.admits(session, &request.passwd) {
        return Handshake::Expired {
            response: ConnectResponse::expired(read_only),
        };
    }
    sessions.renew(session, timeout);
    tree.drop_watches(session);
    accepted(session, true)
}
