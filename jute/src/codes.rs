//! ZooKeeper's numbers: op codes (`ZooDefs.OpCode`), error codes (`KeeperException.Code`),
//! create modes (`CreateMode`), watcher event types and states (`Watcher.Event`), ACL
//! permissions (`ZooDefs.Perms`) and the special xids (`ClientCnxn`).
//!
//! Each kind is an enum with `TryFrom<i32>` (an [`UnknownCode`] for any other number) and
//! `From<_> for i32`. Records keep these numbers as they are on the wire (`i32`), so that a
//! decoder passes on a number it does not know; convert with `try_from` where it matters.

use crate::error::UnknownCode;

/// Declares a fieldless enum of ZooKeeper codes with its conversions from and to `i32`, and
/// `ALL`, every variant in declaration order.
macro_rules! codes {
    ($(#[$meta:meta])* $name:ident, $kind:literal {
        $($(#[$variant_meta:meta])* $variant:ident = $value:literal,)*
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$variant_meta])* $variant = $value,)*
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];
        }

        impl TryFrom<i32> for $name {
            type Error = UnknownCode;

            fn try_from(code: i32) -> Result<$name, UnknownCode> {
                match code {
                    $($value => Ok($name::$variant),)*
                    _ => Err(UnknownCode { kind: $kind, code }),
                }
            }
        }

        impl From<$name> for i32 {
            fn from(code: $name) -> i32 {
                code as i32
            }
        }
    };
}

codes! {
    /// A request's type (`ZooDefs.OpCode`), in a request header and a multi header.
    OpCode, "op code" {
        /// `notification`: never sent as a request.
        Notification = 0,
        /// `create`: a `CreateRequest`, answered by a `CreateResponse`.
        Create = 1,
        /// `delete`.
        Delete = 2,
        /// `exists`.
        Exists = 3,
        /// `getData`.
        GetData = 4,
        /// `setData`.
        SetData = 5,
        /// `getACL`.
        GetAcl = 6,
        /// `setACL`.
        SetAcl = 7,
        /// `getChildren`.
        GetChildren = 8,
        /// `sync`.
        Sync = 9,
        /// `ping`, with xid -2.
        Ping = 11,
        /// `getChildren2`: children and the parent's stat.
        GetChildren2 = 12,
        /// `check`: a version check, in a multi.
        Check = 13,
        /// `multi`: a transaction.
        Multi = 14,
        /// `create2`: a `CreateRequest`, answered by a `Create2Response` (path and stat).
        Create2 = 15,
        /// `reconfig`.
        Reconfig = 16,
        /// `checkWatches`.
        CheckWatches = 17,
        /// `removeWatches`.
        RemoveWatches = 18,
        /// `createContainer`.
        CreateContainer = 19,
        /// `deleteContainer`: the server's own.
        DeleteContainer = 20,
        /// `createTTL`.
        CreateTtl = 21,
        /// `multiRead`: reads in one request, each answered on its own.
        MultiRead = 22,
        /// `auth`, with xid -4.
        Auth = 100,
        /// `setWatches`, with xid -8.
        SetWatches = 101,
        /// `sasl`.
        Sasl = 102,
        /// `getEphemerals`.
        GetEphemerals = 103,
        /// `getAllChildrenNumber`.
        GetAllChildrenNumber = 104,
        /// `setWatches2`, with xid -8: persistent watches too.
        SetWatches2 = 105,
        /// `addWatch`: a persistent (recursive) watch.
        AddWatch = 106,
        /// `whoAmI`.
        WhoAmI = 107,
        /// `createSession`: the server's own.
        CreateSession = -10,
        /// `closeSession`.
        CloseSession = -11,
        /// `error`: the type of a multi's failed result.
        Error = -1,
    }
}

impl OpCode {
    /// Whether the op's request record begins with a path (every request on one node).
    pub fn begins_with_path(self) -> bool {
        use OpCode::*;
        matches!(
            self,
            Create
                | Delete
                | Exists
                | GetData
                | SetData
                | GetAcl
                | SetAcl
                | GetChildren
                | Sync
                | GetChildren2
                | Check
                | Create2
                | CheckWatches
                | RemoveWatches
                | CreateContainer
                | CreateTtl
                | GetEphemerals
                | GetAllChildrenNumber
                | AddWatch
        )
    }
}

codes! {
    /// A reply's error (`KeeperException.Code`), in a reply header, a multi header and an
    /// `ErrorResponse`.
    ErrorCode, "error code" {
        /// Everything is OK.
        Ok = 0,
        /// The bottom of the system errors' range (never sent).
        SystemError = -1,
        /// A runtime inconsistency (a multi's op after the one that failed).
        RuntimeInconsistency = -2,
        /// A data inconsistency.
        DataInconsistency = -3,
        /// The connection was lost.
        ConnectionLoss = -4,
        /// A request could not be read or a reply written.
        MarshallingError = -5,
        /// An unimplemented operation.
        Unimplemented = -6,
        /// An operation timed out.
        OperationTimeout = -7,
        /// Invalid arguments.
        BadArguments = -8,
        /// An unknown session (the server's own).
        UnknownSession = -12,
        /// No quorum of a new configuration.
        NewConfigNoQuorum = -13,
        /// A reconfiguration is in progress.
        ReconfigInProgress = -14,
        /// The bottom of the API errors' range (never sent).
        ApiError = -100,
        /// The node does not exist.
        NoNode = -101,
        /// Not authenticated.
        NoAuth = -102,
        /// A version conflict.
        BadVersion = -103,
        /// Ephemeral nodes may not have children.
        NoChildrenForEphemerals = -108,
        /// The node exists.
        NodeExists = -110,
        /// The node has children.
        NotEmpty = -111,
        /// The session expired.
        SessionExpired = -112,
        /// An invalid callback.
        InvalidCallback = -113,
        /// An invalid ACL.
        InvalidAcl = -114,
        /// Authentication failed.
        AuthFailed = -115,
        /// The session moved to another server.
        SessionMoved = -118,
        /// A write to a read-only server.
        NotReadOnly = -119,
        /// An ephemeral node on a local session.
        EphemeralOnLocalSession = -120,
        /// No such watcher to remove.
        NoWatcher = -121,
        /// The request timed out.
        RequestTimeout = -122,
        /// Reconfiguration is disabled.
        ReconfigDisabled = -123,
        /// The session was closed for want of SASL authentication.
        SessionClosedRequireSaslAuth = -124,
        /// A quota was exceeded.
        QuotaExceeded = -125,
        /// The request was throttled.
        ThrottledOp = -127,
    }
}

codes! {
    /// How a node is created (`CreateMode`): a create request's `flags`.
    CreateMode, "create mode" {
        /// Persistent.
        Persistent = 0,
        /// Ephemeral: deleted with its session.
        Ephemeral = 1,
        /// Persistent, with a sequence number appended to its name.
        PersistentSequential = 2,
        /// Ephemeral, with a sequence number appended to its name.
        EphemeralSequential = 3,
        /// A container: deleted by the server once its last child is.
        Container = 4,
        /// Persistent, deleted when unmodified and childless for its TTL.
        PersistentWithTtl = 5,
        /// Sequential, and deleted when unmodified and childless for its TTL.
        PersistentSequentialWithTtl = 6,
    }
}

impl CreateMode {
    /// Whether the node goes with its session.
    pub fn is_ephemeral(self) -> bool {
        matches!(
            self,
            CreateMode::Ephemeral | CreateMode::EphemeralSequential
        )
    }

    /// Whether the server appends a sequence number to its name.
    pub fn is_sequential(self) -> bool {
        matches!(
            self,
            CreateMode::PersistentSequential
                | CreateMode::EphemeralSequential
                | CreateMode::PersistentSequentialWithTtl
        )
    }
}

codes! {
    /// What a watcher event says happened (`Watcher.Event.EventType`).
    EventType, "event type" {
        /// A change of the session's state.
        None = -1,
        /// The node was created.
        NodeCreated = 1,
        /// The node was deleted.
        NodeDeleted = 2,
        /// The node's data changed.
        NodeDataChanged = 3,
        /// The node's children changed.
        NodeChildrenChanged = 4,
        /// A data watch was removed.
        DataWatchRemoved = 5,
        /// A child watch was removed.
        ChildWatchRemoved = 6,
        /// A persistent watch was removed.
        PersistentWatchRemoved = 7,
    }
}

codes! {
    /// The session's state a watcher event carries (`Watcher.Event.KeeperState`).
    KeeperState, "keeper state" {
        /// Unknown.
        Unknown = -1,
        /// Disconnected.
        Disconnected = 0,
        /// Never used.
        NoSyncConnected = 1,
        /// Connected: what every node event the server sends carries.
        SyncConnected = 3,
        /// Authentication failed.
        AuthFailed = 4,
        /// Connected to a read-only server.
        ConnectedReadOnly = 5,
        /// SASL authenticated.
        SaslAuthenticated = 6,
        /// The session expired.
        Expired = -112,
        /// The client closed its session.
        Closed = 7,
    }
}

/// The xids ZooKeeper reserves (`ClientCnxn`); other requests number theirs from 1 up.
pub mod xid {
    /// A watcher event from the server.
    pub const NOTIFICATION: i32 = -1;
    /// A ping and its reply.
    pub const PING: i32 = -2;
    /// An auth packet and its reply.
    pub const AUTH: i32 = -4;
    /// A set-watches request (on reconnecting) and its reply.
    pub const SET_WATCHES: i32 = -8;
}

/// ACL permissions (`ZooDefs.Perms`): bits of an ACL's `perms`.
pub mod perms {
    /// Read a node's data and list its children.
    pub const READ: i32 = 1;
    /// Set a node's data.
    pub const WRITE: i32 = 2;
    /// Create children.
    pub const CREATE: i32 = 4;
    /// Delete children.
    pub const DELETE: i32 = 8;
    /// Set the ACL.
    pub const ADMIN: i32 = 16;
    /// All of them.
    pub const ALL: i32 = READ | WRITE | CREATE | DELETE | ADMIN;
}
