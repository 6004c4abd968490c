//! One request on a node, in jute's terms: translated into the tree's [`Request`], applied,
//! and its outcome shaped into the response record ZooKeeper sends for that op.

use coordination::zk::tree::{Fired, Tree};
use coordination::zk::{OpOk, Request, SessionId};
use jute::codes::ErrorCode;
use jute::requests::CreateRequest;
use jute::responses::{
    Create2Response, CreateResponse, ExistsResponse, GetChildren2Response, GetChildrenResponse,
    GetDataResponse, SetDataResponse, SyncResponse,
};
use jute::{Request as Jute, Response};

use crate::convert;

/// What one request did: its response or error, and the watches it fired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The response, or the error the reply header carries (with no body).
    pub result: Result<Response, ErrorCode>,
    /// The watches it fired, in delivery order.
    pub fired: Vec<Fired>,
}

impl Answer {
    /// An answer that changed nothing.
    pub fn quiet(result: Result<Response, ErrorCode>) -> Answer {
        Answer {
            result,
            fired: Vec::new(),
        }
    }

    /// The same answer, having fired `fired` too.
    pub fn with(mut self, fired: Vec<Fired>) -> Answer {
        self.fired.extend(fired);
        self
    }
}

/// Applies `request` (an op on one node, or `sync`) for `session`; any other op is
/// `Unimplemented`. Invalid paths are `BadArguments`, as ZooKeeper's `validatePath` makes
/// them.
pub fn answer(tree: &mut Tree, session: SessionId, request: &Jute) -> Answer {
    if let Jute::Sync(sync) = request {
        let result = convert::path(&sync.path).map(|_| {
            Response::Sync(SyncResponse {
                path: sync.path.clone(),
            })
        });
        return Answer::quiet(result);
    }
    let translated = match translate(request) {
        Ok(translated) => translated,
        Err(code) => return Answer::quiet(Err(code)),
    };
    let applied = tree.apply(session, &translated);
    let result = (applied.result)
        .map_err(convert::error)
        .and_then(|ok| respond(request, ok, tree));
    Answer {
        result,
        fired: applied.fired,
    }
}

/// The tree's request for a jute request on one node: `Unimplemented` for an op the tree
/// does not serve.
pub fn translate(request: &Jute) -> Result<Request, ErrorCode> {
    let path = convert::path;
    Ok(match request {
        Jute::Create(create) | Jute::Create2(create) | Jute::CreateContainer(create) => {
            translate_create(create)?
        }
        Jute::Delete(delete) => Request::Delete {
            path: path(&delete.path)?,
            version: convert::version(delete.version),
        },
        Jute::SetData(set) => Request::SetData {
            path: path(&set.path)?,
            data: set.data.clone().unwrap_or_default(),
            version: convert::version(set.version),
        },
        Jute::GetData(get) => Request::GetData {
            path: path(&get.path)?,
            watch: get.watch,
        },
        Jute::Exists(exists) => Request::Exists {
            path: path(&exists.path)?,
            watch: exists.watch,
        },
        Jute::GetChildren(list) => Request::GetChildren {
            path: path(&list.path)?,
            watch: list.watch,
        },
        Jute::GetChildren2(list) => Request::GetChildren {
            path: path(&list.path)?,
            watch: list.watch,
        },
        Jute::RemoveWatches(remove) => Request::RemoveWatches {
            path: path(&remove.path)?,
            kind: convert::watcher_kind(remove.watcher_type)?,
        },
        _ => return Err(ErrorCode::Unimplemented),
    })
}

/// A create: an empty ACL is `InvalidAcl` (ACLs are not otherwise checked), and null data is
/// kept as empty data (the tree has no null).
fn translate_create(create: &CreateRequest) -> Result<Request, ErrorCode> {
    let mode = convert::create_mode(create.flags)?;
    let path = convert::path(&create.path)?;
    if create.acl.is_empty() {
        return Err(ErrorCode::InvalidAcl);
    }
    Ok(Request::Create {
        path,
        data: create.data.clone().unwrap_or_default(),
        mode,
    })
}

/// The response record ZooKeeper sends for `request` that the tree answered with `ok`
/// (`tree` after it, for getChildren2's stat); `exists` of a missing node is `NoNode`.
pub fn respond(request: &Jute, ok: OpOk, tree: &Tree) -> Result<Response, ErrorCode> {
    Ok(match (request, ok) {
        (Jute::Create(_), OpOk::Created { path, .. }) => Response::Create(CreateResponse {
            path: path.to_string(),
        }),
        (_, OpOk::Created { path, stat }) => Response::Create2(Create2Response {
            path: path.to_string(),
            stat: convert::stat(&stat),
        }),
        (_, OpOk::Deleted | OpOk::WatchesRemoved) => Response::Empty,
        (_, OpOk::DataSet { stat }) => Response::SetData(SetDataResponse {
            stat: convert::stat(&stat),
        }),
        (_, OpOk::Data { data, stat }) => Response::GetData(GetDataResponse {
            data: Some(data),
            stat: convert::stat(&stat),
        }),
        (_, OpOk::Exists { stat }) => Response::Exists(ExistsResponse {
            stat: convert::stat(&stat.ok_or(ErrorCode::NoNode)?),
        }),
        (Jute::GetChildren2(list), OpOk::Children { names, .. }) => {
            let parent = convert::path(&list.path)
                .ok()
                .and_then(|path| tree.get(&path))
                .ok_or(ErrorCode::NoNode)?;
            Response::GetChildren2(GetChildren2Response {
                children: names,
                stat: convert::stat(&parent.stat),
            })
        }
        (_, OpOk::Children { names, .. }) => {
            Response::GetChildren(GetChildrenResponse { children: names })
        }
    })
}
