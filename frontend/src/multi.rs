//! `multi` and `multiRead`, as ZooKeeper 3.8 answers them.
//!
//! A `multi` (creates, deletes, setData and checks) is one transaction of the tree
//! ([`Tree::multi`]): its changes share a zxid, each op sees the ones before it, and the
//! reply has a result per op. If an op fails, nothing is kept and every result is an error:
//! `Ok` for the ops before it, its code for it, `RuntimeInconsistency` for the ops after
//! (the reply header's error is 0 all the same). An op that is not a write or a check, or
//! whose path is invalid, fails with `BadArguments` in its turn.
//!
//! A `multiRead` (getChildren and getData) answers each op on its own: a failed one is an
//! error result and the others are read as usual.

use coordination::zk::tree::{MultiFailure, MultiOp, Tree};
use coordination::zk::{OpOk, SessionId};
use jute::codes::ErrorCode;
use jute::multi::{MultiResponse, MultiResult};
use jute::responses::{Create2Response, CreateResponse, ErrorResponse};
use jute::{Request as Jute, Response};

use crate::convert;
use crate::ops::{self, Answer};

/// Applies `ops` as one `multi` for `session`.
pub fn multi(tree: &mut Tree, session: SessionId, ops: &[Jute]) -> Answer {
    let translated: Vec<Result<MultiOp, ErrorCode>> = ops.iter().map(multi_op).collect();
    let valid: Vec<MultiOp> = translated.iter().map_while(|op| op.clone().ok()).collect();
    if let Some(Err(code)) = translated.get(valid.len()) {
        // ZooKeeper checks the ops in turn: one before the invalid one may fail first.
        let failure = match tree.clone().multi(session, &valid).result {
            Err(failure) => (failure.index, convert::error(failure.error)),
            Ok(_) => (valid.len(), *code),
        };
        return Answer::quiet(Ok(failed(ops.len(), failure)));
    }
    let applied = tree.multi(session, &valid);
    match applied.result {
        Ok(done) => {
            let results = ops.iter().zip(done).map(|(op, done)| match done {
                Some(ok) => result(op, ok, tree),
                None => MultiResult::Check,
            });
            Answer {
                result: Ok(response(results.collect())),
                fired: applied.fired,
            }
        }
        Err(MultiFailure { index, error }) => {
            Answer::quiet(Ok(failed(ops.len(), (index, convert::error(error)))))
        }
    }
}

/// Answers each of `ops` as one `multiRead` for `session`.
pub fn multi_read(tree: &mut Tree, session: SessionId, ops: &[Jute]) -> Answer {
    let mut fired = Vec::new();
    let results = ops.iter().map(|op| {
        if !matches!(op, Jute::GetData(_) | Jute::GetChildren(_)) {
            return error(ErrorCode::BadArguments);
        }
        let answer = ops::answer(tree, session, op);
        fired.extend(answer.fired);
        answer.result.map_or_else(error, into_result)
    });
    let results = results.collect();
    Answer {
        result: Ok(response(results)),
        fired,
    }
}

/// The tree's op for a `multi`'s op.
fn multi_op(op: &Jute) -> Result<MultiOp, ErrorCode> {
    match op {
        Jute::Check(check) => Ok(MultiOp::Check {
            path: convert::path(&check.path)?,
            version: convert::version(check.version),
        }),
        Jute::Create(_)
        | Jute::Create2(_)
        | Jute::CreateContainer(_)
        | Jute::Delete(_)
        | Jute::SetData(_) => ops::translate(op).map(MultiOp::Apply),
        _ => Err(ErrorCode::BadArguments),
    }
}

/// The result of `op`, answered `ok` by the tree. A `create2` in a multi is answered with
/// its path alone, as a `create` is (ZooKeeper 3.8 does so; a `createContainer` gets the
/// path and stat).
fn result(op: &Jute, ok: OpOk, tree: &Tree) -> MultiResult {
    match ops::respond(op, ok, tree) {
        Ok(Response::Create2(Create2Response { path, .. })) if matches!(op, Jute::Create2(_)) => {
            MultiResult::Create(CreateResponse { path })
        }
        response => response.map_or_else(error, into_result),
    }
}

/// A response as a multi's result.
fn into_result(response: Response) -> MultiResult {
    match response {
        Response::Create(record) => MultiResult::Create(record),
        Response::Create2(record) => MultiResult::Create2(record),
        Response::Empty => MultiResult::Delete,
        Response::SetData(record) => MultiResult::SetData(record),
        Response::GetData(record) => MultiResult::GetData(record),
        Response::GetChildren(record) => MultiResult::GetChildren(record),
        _ => error(ErrorCode::BadArguments),
    }
}

/// An error result.
fn error(code: ErrorCode) -> MultiResult {
    MultiResult::Error(ErrorResponse { err: code.into() })
}

/// The results of a failed multi of `count` ops whose op `index` failed with `code`.
fn failed(count: usize, (index, code): (usize, ErrorCode)) -> Response {
    let results = (0..count).map(|i| match i.cmp(&index) {
        std::cmp::Ordering::Less => error(ErrorCode::Ok),
        std::cmp::Ordering::Equal => error(code),
        std::cmp::Ordering::Greater => error(ErrorCode::RuntimeInconsistency),
    });
    response(results.collect())
}

fn response(results: Vec<MultiResult>) -> Response {
    Response::Multi(MultiResponse { results })
}
