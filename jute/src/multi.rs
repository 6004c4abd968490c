//! The bodies of `multi` and `multiRead` (`MultiOperationRecord` and `MultiResponse`): each
//! op or result follows a [`MultiHeader`], and a header with `done` set ends the list.
//!
//! In a request, each header has the op's code, `done` false and `err` -1, then the op's
//! request record; the end is `{-1, true, -1}`. In a response, each header has the result's
//! type, `done` false and `err` (the error for an error result, 0 otherwise), then the
//! result's record; the end is `{-1, true, -1}` again. A multi that fails answers with an
//! error result for every op, with a reply header `err` of 0: `Ok` (0) for the ops before the
//! failing one, its error for it, and `RuntimeInconsistency` (-2) for the ops after.

use crate::codes::OpCode;
use crate::error::{Error, ErrorKind, Result};
use crate::primitives::Reader;
use crate::record::Record;
use crate::record::record;
use crate::requests::Request;
use crate::responses::{
    Create2Response, CreateResponse, ErrorResponse, GetChildrenResponse, GetDataResponse,
    SetDataResponse,
};

record! {
    /// The head of each op or result of a multi, and of its end.
    MultiHeader, "multi header" {
        /// The op's code or the result's type; -1 at the end.
        op_type: i32,
        /// True at the end.
        done: bool,
        /// -1 in a request; in a response, the error of an error result, 0 otherwise.
        err: i32,
    }
}

/// The end of the ops or results.
const END: MultiHeader = MultiHeader {
    op_type: -1,
    done: true,
    err: -1,
};

/// Reads headers and what follows each until the end, naming each failure by its index.
fn read_until_done<T>(
    reader: &mut Reader<'_>,
    mut read: impl FnMut(MultiHeader, &mut Reader<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    let mut items = Vec::new();
    loop {
        let index = items.len();
        let mut item = || -> Result<Option<T>> {
            let header = MultiHeader::decode(reader)?;
            match header.done {
                true => Ok(None),
                false => read(header, reader).map(Some),
            }
        };
        match item().map_err(|e| e.at(format!("[{index}]")))? {
            Some(item) => items.push(item),
            None => return Ok(items),
        }
    }
}

/// The ops of a `multi` or a `multiRead`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MultiRequest {
    /// The ops, in order: creates, deletes, setData and checks in a `multi`, getChildren
    /// and getData in a `multiRead`.
    pub ops: Vec<Request>,
}

impl Record for MultiRequest {
    const NAME: &'static str = "multi request";

    fn encode(&self, out: &mut Vec<u8>) {
        for op in &self.ops {
            let op_type = op.op();
            MultiHeader {
                op_type,
                done: false,
                err: -1,
            }
            .encode(out);
            op.encode(out);
        }
        END.encode(out);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<MultiRequest> {
        let ops = read_until_done(reader, |header, reader| {
            let code = header.op_type;
            match OpCode::try_from(code) {
                Ok(
                    OpCode::Create
                    | OpCode::Create2
                    | OpCode::CreateContainer
                    | OpCode::CreateTtl
                    | OpCode::Delete
                    | OpCode::SetData
                    | OpCode::Check
                    | OpCode::GetChildren
                    | OpCode::GetData,
                ) => Request::decode(code, reader),
                _ => Err(Error::new(ErrorKind::NotMultiOp { code })),
            }
        });
        Ok(MultiRequest {
            ops: ops.map_err(|e| e.at(Self::NAME))?,
        })
    }
}

/// One result of a multi.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MultiResult {
    /// A `create`'s path.
    Create(CreateResponse),
    /// A `create2`'s, `createContainer`'s or `createTTL`'s path and stat.
    Create2(Create2Response),
    /// A `delete`.
    Delete,
    /// A `setData`'s new stat.
    SetData(SetDataResponse),
    /// A `check`.
    Check,
    /// A `getChildren`'s children (in a `multiRead`).
    GetChildren(GetChildrenResponse),
    /// A `getData`'s data and stat (in a `multiRead`).
    GetData(GetDataResponse),
    /// An op that failed, or one that was rolled back (`Ok`) or not tried
    /// (`RuntimeInconsistency`) because another failed.
    Error(ErrorResponse),
}

impl MultiResult {
    /// Its type in its header.
    fn op_type(&self) -> OpCode {
        match self {
            MultiResult::Create(_) => OpCode::Create,
            MultiResult::Create2(_) => OpCode::Create2,
            MultiResult::Delete => OpCode::Delete,
            MultiResult::SetData(_) => OpCode::SetData,
            MultiResult::Check => OpCode::Check,
            MultiResult::GetChildren(_) => OpCode::GetChildren,
            MultiResult::GetData(_) => OpCode::GetData,
            MultiResult::Error(_) => OpCode::Error,
        }
    }

    /// Appends its header and record to `out`.
    fn encode(&self, out: &mut Vec<u8>) {
        let err = match self {
            MultiResult::Error(error) => error.err,
            _ => 0,
        };
        let op_type = self.op_type().into();
        MultiHeader {
            op_type,
            done: false,
            err,
        }
        .encode(out);
        match self {
            MultiResult::Create(record) => record.encode(out),
            MultiResult::Create2(record) => record.encode(out),
            MultiResult::SetData(record) => record.encode(out),
            MultiResult::GetChildren(record) => record.encode(out),
            MultiResult::GetData(record) => record.encode(out),
            MultiResult::Error(record) => record.encode(out),
            MultiResult::Delete | MultiResult::Check => {}
        }
    }

    /// Reads the record of a result of type `code` (its header's `err` is not read: the
    /// error result's record repeats it, and ZooKeeper reads that).
    fn decode(code: i32, reader: &mut Reader<'_>) -> Result<MultiResult> {
        Ok(match OpCode::try_from(code) {
            Ok(OpCode::Create) => MultiResult::Create(CreateResponse::decode(reader)?),
            Ok(OpCode::Create2) => MultiResult::Create2(Create2Response::decode(reader)?),
            Ok(OpCode::Delete) => MultiResult::Delete,
            Ok(OpCode::SetData) => MultiResult::SetData(SetDataResponse::decode(reader)?),
            Ok(OpCode::Check) => MultiResult::Check,
            Ok(OpCode::GetChildren) => {
                MultiResult::GetChildren(GetChildrenResponse::decode(reader)?)
            }
            Ok(OpCode::GetData) => MultiResult::GetData(GetDataResponse::decode(reader)?),
            Ok(OpCode::Error) => MultiResult::Error(ErrorResponse::decode(reader)?),
            _ => return Err(Error::new(ErrorKind::NotMultiResult { code })),
        })
    }
}

/// The results of a `multi` or `multiRead`, one per op.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MultiResponse {
    /// The results, in the ops' order.
    pub results: Vec<MultiResult>,
}

impl Record for MultiResponse {
    const NAME: &'static str = "multi response";

    fn encode(&self, out: &mut Vec<u8>) {
        for result in &self.results {
            result.encode(out);
        }
        END.encode(out);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<MultiResponse> {
        let results = read_until_done(reader, |header, reader| {
            MultiResult::decode(header.op_type, reader)
        });
        Ok(MultiResponse {
            results: results.map_err(|e| e.at(Self::NAME))?,
        })
    }
}
