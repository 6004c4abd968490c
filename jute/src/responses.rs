//! The responses' records, in `zookeeper.jute`'s field order; [`Response`], any response's
//! body by the op code of its request; and [`Reply`], a reply frame's body.
//!
//! What is on the wire after a [`ReplyHeader`] (the server's `FinalRequestProcessor` writes a
//! body only when it has a response record, and the client's `ClientCnxn.readResponse` reads
//! one only when `err` is 0):
//!
//! - nothing when `err` is not 0. That includes `exists` on a missing node: the server
//!   answers `NoNode` with no body, and the client turns that into a null stat (the exist
//!   watch, if asked for, is left all the same);
//! - nothing for `delete`, `ping`, `closeSession`, `setWatches`, `setWatches2`,
//!   `checkWatches`, `removeWatches` and `auth`;
//! - for `addWatch`, an `ErrorResponse` of 0;
//! - for `multi` and `multiRead`, a [`MultiResponse`] with `err` 0 even when an op failed
//!   (see [`multi`](crate::multi));
//! - for a notification (xid -1), a [`WatcherEvent`];
//! - otherwise the op's response record.

use crate::codes::{OpCode, xid};
use crate::data::{Acl, Stat};
use crate::error::Result;
use crate::frame::framed;
use crate::multi::MultiResponse;
use crate::primitives::Reader;
use crate::record::Record;
use crate::record::record;
use crate::session::{ReplyHeader, WatcherEvent};

record! {
    /// `create`'s answer.
    CreateResponse, "create response" {
        /// The path created (with its sequence number).
        path: String,
    }
}

record! {
    /// `create2`'s, `createContainer`'s and `createTTL`'s answer.
    Create2Response, "create2 response" {
        /// The path created (with its sequence number).
        path: String,
        /// The new node's stat.
        stat: Stat,
    }
}

record! {
    /// `exists`' answer when the node exists.
    ExistsResponse, "exists response" {
        /// The node's stat.
        stat: Stat,
    }
}

record! {
    /// `getData`'s answer.
    GetDataResponse, "getData response" {
        /// The data; null when the node was created with null data.
        data: Option<Vec<u8>>,
        /// The node's stat.
        stat: Stat,
    }
}

record! {
    /// `setData`'s answer, and a lone `check`'s.
    SetDataResponse, "setData response" {
        /// The node's new stat.
        stat: Stat,
    }
}

record! {
    /// `getACL`'s answer.
    GetAclResponse, "getACL response" {
        /// The node's ACL.
        acl: Vec<Acl>,
        /// The node's stat.
        stat: Stat,
    }
}

record! {
    /// `setACL`'s answer.
    SetAclResponse, "setACL response" {
        /// The node's new stat.
        stat: Stat,
    }
}

record! {
    /// `getChildren`'s answer.
    GetChildrenResponse, "getChildren response" {
        /// The children's names (not paths), in no particular order.
        children: Vec<String>,
    }
}

record! {
    /// `getChildren2`'s answer.
    GetChildren2Response, "getChildren2 response" {
        /// The children's names, in no particular order.
        children: Vec<String>,
        /// The parent's stat.
        stat: Stat,
    }
}

record! {
    /// `sync`'s answer.
    SyncResponse, "sync response" {
        /// The path synced.
        path: String,
    }
}

record! {
    /// An error: `addWatch`'s answer (0), and a multi's error result.
    ErrorResponse, "error response" {
        /// The [`ErrorCode`](crate::codes::ErrorCode).
        err: i32,
    }
}

record! {
    /// `getEphemerals`' answer.
    GetEphemeralsResponse, "getEphemerals response" {
        /// The paths of the session's ephemeral nodes under the prefix.
        ephemerals: Vec<String>,
    }
}

record! {
    /// `getAllChildrenNumber`'s answer.
    GetAllChildrenNumberResponse, "getAllChildrenNumber response" {
        /// How many descendants the node has.
        total_number: i32,
    }
}

record! {
    /// Who a session authenticated as, in `whoAmI`'s answer.
    ClientInfo, "client info" {
        /// The scheme.
        auth_scheme: String,
        /// The user.
        user: String,
    }
}

record! {
    /// `whoAmI`'s answer.
    WhoAmIResponse, "whoAmI response" {
        /// The session's identities.
        client_info: Vec<ClientInfo>,
    }
}

/// A response's body, by the op code of the request it answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Response {
    /// No body: an error, or an op whose answer has none.
    Empty,
    /// `create`.
    Create(CreateResponse),
    /// `create2`, `createContainer` and `createTTL`.
    Create2(Create2Response),
    /// `exists` on a node that exists.
    Exists(ExistsResponse),
    /// `getData`.
    GetData(GetDataResponse),
    /// `setData`.
    SetData(SetDataResponse),
    /// `getACL`.
    GetAcl(GetAclResponse),
    /// `setACL`.
    SetAcl(SetAclResponse),
    /// `getChildren`.
    GetChildren(GetChildrenResponse),
    /// `getChildren2`.
    GetChildren2(GetChildren2Response),
    /// `sync`.
    Sync(SyncResponse),
    /// A lone `check`.
    Check(SetDataResponse),
    /// `multi` and `multiRead`.
    Multi(MultiResponse),
    /// `addWatch`.
    AddWatch(ErrorResponse),
    /// `getEphemerals`.
    GetEphemerals(GetEphemeralsResponse),
    /// `getAllChildrenNumber`.
    GetAllChildrenNumber(GetAllChildrenNumberResponse),
    /// `whoAmI`.
    WhoAmI(WhoAmIResponse),
    /// The answer to an op this crate does not read (`reconfig`, `sasl`, …), or whose op is
    /// not known: the bytes as they were.
    Unknown(Vec<u8>),
}

impl Response {
    /// Appends its body to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Response::Empty => {}
            Response::Create(record) => record.encode(out),
            Response::Create2(record) => record.encode(out),
            Response::Exists(record) => record.encode(out),
            Response::GetData(record) => record.encode(out),
            Response::SetData(record) | Response::Check(record) => record.encode(out),
            Response::GetAcl(record) => record.encode(out),
            Response::SetAcl(record) => record.encode(out),
            Response::GetChildren(record) => record.encode(out),
            Response::GetChildren2(record) => record.encode(out),
            Response::Sync(record) => record.encode(out),
            Response::Multi(record) => record.encode(out),
            Response::AddWatch(record) => record.encode(out),
            Response::GetEphemerals(record) => record.encode(out),
            Response::GetAllChildrenNumber(record) => record.encode(out),
            Response::WhoAmI(record) => record.encode(out),
            Response::Unknown(bytes) => out.extend_from_slice(bytes),
        }
    }

    /// Reads the body of a successful answer to a request of op code `op`.
    pub fn decode(op: OpCode, reader: &mut Reader<'_>) -> Result<Response> {
        use OpCode::*;
        Ok(match op {
            Create => Response::Create(Record::decode(reader)?),
            Create2 | CreateContainer | CreateTtl => Response::Create2(Record::decode(reader)?),
            Exists => Response::Exists(Record::decode(reader)?),
            GetData => Response::GetData(Record::decode(reader)?),
            SetData => Response::SetData(Record::decode(reader)?),
            GetAcl => Response::GetAcl(Record::decode(reader)?),
            SetAcl => Response::SetAcl(Record::decode(reader)?),
            GetChildren => Response::GetChildren(Record::decode(reader)?),
            GetChildren2 => Response::GetChildren2(Record::decode(reader)?),
            Sync => Response::Sync(Record::decode(reader)?),
            Check => Response::Check(Record::decode(reader)?),
            Multi | MultiRead => Response::Multi(Record::decode(reader)?),
            AddWatch => Response::AddWatch(Record::decode(reader)?),
            GetEphemerals => Response::GetEphemerals(Record::decode(reader)?),
            GetAllChildrenNumber => Response::GetAllChildrenNumber(Record::decode(reader)?),
            WhoAmI => Response::WhoAmI(Record::decode(reader)?),
            Delete | Ping | CloseSession | SetWatches | SetWatches2 | CheckWatches
            | RemoveWatches | Auth => Response::Empty,
            Notification | Reconfig | Sasl | DeleteContainer | CreateSession | Error => {
                Response::Unknown(reader.rest())
            }
        })
    }
}

/// What follows a reply's header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyBody {
    /// A watch fired (xid -1).
    Notification(WatcherEvent),
    /// The answer to a request.
    Response(Response),
}

/// A reply frame's body: the header, then a notification or a response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The header.
    pub header: ReplyHeader,
    /// What follows it.
    pub body: ReplyBody,
}

impl Reply {
    /// Appends its bytes to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.header.encode(out);
        match &self.body {
            ReplyBody::Notification(event) => event.encode(out),
            ReplyBody::Response(response) => response.encode(out),
        }
    }

    /// Its frame: length, then body.
    pub fn to_frame(&self) -> Vec<u8> {
        framed(|out| self.encode(out))
    }

    /// Reads a reply frame's `body`, answering a request of op code `op` (the oldest the
    /// client has not had answered: ZooKeeper answers in order) or `None` when that is not
    /// known (the body after the header is then kept as it is). A notification needs no op;
    /// a reply with an error has no body. Bytes after the reply are an error.
    pub fn from_bytes(body: &[u8], op: Option<OpCode>) -> Result<Reply> {
        let mut reader = Reader::new(body);
        let header = ReplyHeader::decode(&mut reader)?;
        let body = if header.xid == xid::NOTIFICATION {
            ReplyBody::Notification(WatcherEvent::decode(&mut reader)?)
        } else if header.err != 0 {
            ReplyBody::Response(Response::Empty)
        } else {
            ReplyBody::Response(match op {
                Some(op) => Response::decode(op, &mut reader)?,
                None => Response::Unknown(reader.rest()),
            })
        };
        reader.end().map_err(|e| e.at("reply"))?;
        Ok(Reply { header, body })
    }
}
