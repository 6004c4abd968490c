//! The requests' records, in `zookeeper.jute`'s field order, and [`Request`]: any request's
//! body by its op code. A request frame's body is a [`RequestHeader`] then the request's
//! record ([`RequestMessage`]); `ping`, `closeSession` and `whoAmI` have no record.

use crate::codes::OpCode;
use crate::data::Acl;
use crate::error::Result;
use crate::multi::MultiRequest;
use crate::primitives::{Field, Reader};
use crate::record::Record;
use crate::record::record;
use crate::session::{AuthPacket, RequestHeader, SetWatches, SetWatches2};

record! {
    /// `create`, `create2` and `createContainer`.
    CreateRequest, "create request" {
        /// The path asked for (a sequential node's prefix).
        path: String,
        /// The data; null is allowed.
        data: Option<Vec<u8>>,
        /// The node's ACL.
        acl: Vec<Acl>,
        /// The [`CreateMode`](crate::codes::CreateMode).
        flags: i32,
    }
}

record! {
    /// `createTTL`.
    CreateTtlRequest, "createTTL request" {
        /// The path asked for.
        path: String,
        /// The data; null is allowed.
        data: Option<Vec<u8>>,
        /// The node's ACL.
        acl: Vec<Acl>,
        /// The [`CreateMode`](crate::codes::CreateMode), one with a TTL.
        flags: i32,
        /// The TTL, in ms.
        ttl: i64,
    }
}

record! {
    /// `delete`.
    DeleteRequest, "delete request" {
        /// The node.
        path: String,
        /// The version expected, -1 for any.
        version: i32,
    }
}

record! {
    /// `exists`.
    ExistsRequest, "exists request" {
        /// The node.
        path: String,
        /// Whether to leave an exist watch (also when the node does not exist).
        watch: bool,
    }
}

record! {
    /// `getData`.
    GetDataRequest, "getData request" {
        /// The node.
        path: String,
        /// Whether to leave a data watch.
        watch: bool,
    }
}

record! {
    /// `setData`.
    SetDataRequest, "setData request" {
        /// The node.
        path: String,
        /// The new data; null is allowed.
        data: Option<Vec<u8>>,
        /// The version expected, -1 for any.
        version: i32,
    }
}

record! {
    /// `getACL`.
    GetAclRequest, "getACL request" {
        /// The node.
        path: String,
    }
}

record! {
    /// `setACL`.
    SetAclRequest, "setACL request" {
        /// The node.
        path: String,
        /// The new ACL.
        acl: Vec<Acl>,
        /// The ACL version expected, -1 for any.
        version: i32,
    }
}

record! {
    /// `getChildren`.
    GetChildrenRequest, "getChildren request" {
        /// The node.
        path: String,
        /// Whether to leave a child watch.
        watch: bool,
    }
}

record! {
    /// `sync`.
    SyncRequest, "sync request" {
        /// The node.
        path: String,
    }
}

record! {
    /// `getChildren2`.
    GetChildren2Request, "getChildren2 request" {
        /// The node.
        path: String,
        /// Whether to leave a child watch.
        watch: bool,
    }
}

record! {
    /// `check`: in a multi, fails it unless the node's version is `version`.
    CheckVersionRequest, "check request" {
        /// The node.
        path: String,
        /// The version expected.
        version: i32,
    }
}

record! {
    /// `addWatch`.
    AddWatchRequest, "addWatch request" {
        /// The node.
        path: String,
        /// 0 persistent, 1 persistent recursive (`AddWatchMode`).
        mode: i32,
    }
}

record! {
    /// `checkWatches`.
    CheckWatchesRequest, "checkWatches request" {
        /// The node.
        path: String,
        /// 1 children, 2 data, 3 any (`WatcherType`).
        watcher_type: i32,
    }
}

record! {
    /// `removeWatches`.
    RemoveWatchesRequest, "removeWatches request" {
        /// The node.
        path: String,
        /// 1 children, 2 data, 3 any (`WatcherType`).
        watcher_type: i32,
    }
}

record! {
    /// `getEphemerals`.
    GetEphemeralsRequest, "getEphemerals request" {
        /// Only the session's ephemeral nodes under this prefix ("/" for all).
        prefix_path: String,
    }
}

record! {
    /// `getAllChildrenNumber`.
    GetAllChildrenNumberRequest, "getAllChildrenNumber request" {
        /// The node.
        path: String,
    }
}

/// Declares [`Request`]: a variant per op code (named as [`OpCode`]'s), bodiless or with its
/// record, and `Unknown` for the rest.
macro_rules! requests {
    (
        bodiless { $($(#[$bare_meta:meta])* $bare:ident,)* }
        records { $($(#[$meta:meta])* $variant:ident($record:ty),)* }
    ) => {
        /// A request's body, by its op code.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum Request {
            $($(#[$bare_meta])* $bare,)*
            $($(#[$meta])* $variant($record),)*
            /// A request of an op this crate does not read (`reconfig`, `sasl`, …) or does
            /// not know: its op code and body, as they were.
            Unknown {
                /// The op code.
                op: i32,
                /// The body after the header.
                body: Vec<u8>,
            },
        }

        impl Request {
            /// Its op code.
            pub fn op(&self) -> i32 {
                match self {
                    $(Request::$bare => OpCode::$bare.into(),)*
                    $(Request::$variant(_) => OpCode::$variant.into(),)*
                    Request::Unknown { op, .. } => *op,
                }
            }

            /// Appends its body (without the header) to `out`.
            pub fn encode(&self, out: &mut Vec<u8>) {
                match self {
                    $(Request::$bare => {})*
                    $(Request::$variant(record) => record.encode(out),)*
                    Request::Unknown { body, .. } => out.extend_from_slice(body),
                }
            }

            /// Reads the body of a request of op code `op`: the rest of `reader` for an op
            /// it does not read.
            pub fn decode(op: i32, reader: &mut Reader<'_>) -> Result<Request> {
                match OpCode::try_from(op) {
                    $(Ok(OpCode::$bare) => Ok(Request::$bare),)*
                    $(Ok(OpCode::$variant) => <$record>::decode(reader).map(Request::$variant),)*
                    _ => Ok(Request::Unknown { op, body: reader.rest() }),
                }
            }
        }
    };
}

requests! {
    bodiless {
        /// `ping` (xid -2).
        Ping,
        /// `closeSession`.
        CloseSession,
        /// `whoAmI`.
        WhoAmI,
    }
    records {
        /// `create`: answered by a path.
        Create(CreateRequest),
        /// `create2`: answered by a path and a stat.
        Create2(CreateRequest),
        /// `createContainer`.
        CreateContainer(CreateRequest),
        /// `createTTL`.
        CreateTtl(CreateTtlRequest),
        /// `delete`.
        Delete(DeleteRequest),
        /// `exists`.
        Exists(ExistsRequest),
        /// `getData`.
        GetData(GetDataRequest),
        /// `setData`.
        SetData(SetDataRequest),
        /// `getACL`.
        GetAcl(GetAclRequest),
        /// `setACL`.
        SetAcl(SetAclRequest),
        /// `getChildren`.
        GetChildren(GetChildrenRequest),
        /// `sync`.
        Sync(SyncRequest),
        /// `getChildren2`.
        GetChildren2(GetChildren2Request),
        /// `check`.
        Check(CheckVersionRequest),
        /// `multi`.
        Multi(MultiRequest),
        /// `multiRead`.
        MultiRead(MultiRequest),
        /// `checkWatches`.
        CheckWatches(CheckWatchesRequest),
        /// `removeWatches`.
        RemoveWatches(RemoveWatchesRequest),
        /// `addWatch`.
        AddWatch(AddWatchRequest),
        /// `setWatches` (xid -8).
        SetWatches(SetWatches),
        /// `setWatches2` (xid -8).
        SetWatches2(SetWatches2),
        /// `getEphemerals`.
        GetEphemerals(GetEphemeralsRequest),
        /// `getAllChildrenNumber`.
        GetAllChildrenNumber(GetAllChildrenNumberRequest),
        /// `auth` (xid -4).
        Auth(AuthPacket),
    }
}

/// A request frame's body: the header (its op code is the request's) and the request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestMessage {
    /// The request's xid.
    pub xid: i32,
    /// The request.
    pub request: Request,
}

impl Record for RequestMessage {
    const NAME: &'static str = "request";

    fn encode(&self, out: &mut Vec<u8>) {
        let op = self.request.op();
        RequestHeader { xid: self.xid, op }.encode(out);
        self.request.encode(out);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<RequestMessage> {
        let RequestHeader { xid, op } = RequestHeader::decode(reader)?;
        let request = Request::decode(op, reader)?;
        Ok(RequestMessage { xid, request })
    }
}

/// The header of the request in `body` (a request frame's body) and the path its record
/// begins with, if its op's record begins with one: what a proxy needs to recognise a
/// request, without reading the rest.
pub fn peek_path(body: &[u8]) -> Result<(RequestHeader, Option<String>)> {
    let mut reader = Reader::new(body);
    let header = RequestHeader::decode(&mut reader)?;
    let op = OpCode::try_from(header.op).ok();
    let path = match op.filter(|op| op.begins_with_path()) {
        Some(_) => Some(String::read(&mut reader).map_err(|e| e.at("path"))?),
        None => None,
    };
    Ok((header, path))
}
