//! The records of a session's life outside its requests' bodies: the connect handshake, the
//! request and reply headers, watcher events, auth, and the watches a client sets again on
//! reconnecting.

use crate::record::record;

/// The length of a session's password.
pub const PASSWORD_LEN: usize = 16;

record! {
    /// A connection's first frame from the client. `ConnectRequest` in `zookeeper.jute`
    /// then, written apart by `ClientCnxn`, the optional `readOnly`.
    ConnectRequest, "connect request" {
        /// 0.
        protocol_version: i32,
        /// The last zxid the client saw.
        last_zxid_seen: i64,
        /// The session timeout asked for, in ms.
        time_out: i32,
        /// 0 for a new session, or the session to resume.
        session_id: i64,
        /// The session's password (16 zero bytes for a new session).
        passwd: Vec<u8>,
        /// Whether the client accepts a read-only server; `None` from an old client (the
        /// server then answers without it).
        read_only: Option<bool>,
    }
}

record! {
    /// The server's answer to a [`ConnectRequest`]. For a session the server does not know
    /// (expired), it is all zeroes (timeout 0, session 0, a password of 16 zero bytes), and
    /// the server closes the connection after it.
    ConnectResponse, "connect response" {
        /// 0.
        protocol_version: i32,
        /// The negotiated session timeout, in ms.
        time_out: i32,
        /// The session's id.
        session_id: i64,
        /// The session's password.
        passwd: Vec<u8>,
        /// Whether the server is read-only; `None` to an old client.
        read_only: Option<bool>,
    }
}

impl ConnectResponse {
    /// What ZooKeeper answers a connect request for a session it does not know (expired, or
    /// asked with a wrong password): all zeroes, with `read_only` as the server answers it.
    pub fn expired(read_only: Option<bool>) -> ConnectResponse {
        ConnectResponse {
            protocol_version: 0,
            time_out: 0,
            session_id: 0,
            passwd: vec![0; PASSWORD_LEN],
            read_only,
        }
    }
}

record! {
    /// The head of every request after the connect request.
    RequestHeader, "request header" {
        /// The request's number, echoed by its reply (or a special xid, see
        /// [`xid`](crate::codes::xid)).
        xid: i32,
        /// The request's [`OpCode`](crate::codes::OpCode).
        op: i32,
    }
}

record! {
    /// The head of every reply after the connect response.
    ReplyHeader, "reply header" {
        /// The request's xid, or a special xid (-1 for a notification).
        xid: i32,
        /// The last zxid the server applied (-1 in a notification).
        zxid: i64,
        /// The [`ErrorCode`](crate::codes::ErrorCode); a reply with an error has no body.
        err: i32,
    }
}

record! {
    /// A watch firing: the body of a notification (xid -1).
    WatcherEvent, "watcher event" {
        /// Its [`EventType`](crate::codes::EventType).
        event_type: i32,
        /// Its [`KeeperState`](crate::codes::KeeperState).
        state: i32,
        /// The node's path.
        path: String,
    }
}

record! {
    /// Credentials added to the session (`addAuthInfo`), with xid -4.
    AuthPacket, "auth packet" {
        /// 0.
        auth_type: i32,
        /// The scheme, e.g. "digest".
        scheme: String,
        /// The credentials.
        auth: Vec<u8>,
    }
}

record! {
    /// The watches a client sets again on reconnecting (xid -8).
    SetWatches, "setWatches request" {
        /// The last zxid the client saw: watches on nodes changed since fire at once.
        relative_zxid: i64,
        /// Paths with data watches.
        data_watches: Vec<String>,
        /// Paths with exist watches.
        exist_watches: Vec<String>,
        /// Paths with child watches.
        child_watches: Vec<String>,
    }
}

record! {
    /// [`SetWatches`] with persistent watches (xid -8).
    SetWatches2, "setWatches2 request" {
        /// The last zxid the client saw.
        relative_zxid: i64,
        /// Paths with data watches.
        data_watches: Vec<String>,
        /// Paths with exist watches.
        exist_watches: Vec<String>,
        /// Paths with child watches.
        child_watches: Vec<String>,
        /// Paths with persistent watches.
        persistent_watches: Vec<String>,
        /// Paths with persistent recursive watches.
        persistent_recursive_watches: Vec<String>,
    }
}
