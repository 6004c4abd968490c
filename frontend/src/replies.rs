//! A reply as the tree's vocabulary tells it: the other way from [`crate::ops::respond`], for
//! a client's tap (`programs`' recording of what a client library reads), so that its trace
//! has the same `reply` events as splitbrain's own clients'.

use coordination::zk::{OpOk, OpResult, Path, Request, SessionId, Stat, ZkError, Zxid};
use jute::Response;
use jute::codes::ErrorCode;
use jute::data;

/// The result that the reply with error `err` and body `response` gives `request`; `None`
/// when the tree's vocabulary cannot say it (an error the tree has no name for, a plain
/// `create`'s answer, which has no stat).
pub fn result(request: &Request, err: i32, response: &Response) -> Option<OpResult> {
    if err != 0 {
        let error = ErrorCode::try_from(err).ok()?;
        // ZooKeeper answers `exists` of a missing node with NoNode; the tree, with no stat.
        if matches!(request, Request::Exists { .. }) && error == ErrorCode::NoNode {
            return Some(Ok(OpOk::Exists { stat: None }));
        }
        return Some(Err(zk_error(error)?));
    }
    Some(Ok(match (request, response) {
        (Request::Create { .. }, Response::Create2(created)) => OpOk::Created {
            path: Path::new(&created.path).ok()?,
            stat: stat(&created.stat),
        },
        (Request::Delete { .. }, Response::Empty) => OpOk::Deleted,
        (Request::SetData { .. }, Response::SetData(set)) => OpOk::DataSet {
            stat: stat(&set.stat),
        },
        (Request::GetData { .. }, Response::GetData(got)) => OpOk::Data {
            data: got.data.clone().unwrap_or_default(),
            stat: stat(&got.stat),
        },
        (Request::Exists { .. }, Response::Exists(exists)) => OpOk::Exists {
            stat: Some(stat(&exists.stat)),
        },
        (Request::GetChildren { .. }, Response::GetChildren2(listed)) => OpOk::Children {
            names: listed.children.clone(),
            pzxid: Some(Zxid(listed.stat.pzxid as u64)),
        },
        (Request::GetChildren { .. }, Response::GetChildren(listed)) => OpOk::Children {
            names: listed.children.clone(),
            pzxid: None,
        },
        (Request::RemoveWatches { .. }, Response::Empty) => OpOk::WatchesRemoved,
        _ => return None,
    }))
}

/// The tree's error for ZooKeeper's `code`, when it has one ([`crate::convert::error`] the
/// other way).
fn zk_error(code: ErrorCode) -> Option<ZkError> {
    Some(match code {
        ErrorCode::NoNode => ZkError::NoNode,
        ErrorCode::NodeExists => ZkError::NodeExists,
        ErrorCode::BadVersion => ZkError::BadVersion,
        ErrorCode::NotEmpty => ZkError::NotEmpty,
        ErrorCode::NoChildrenForEphemerals => ZkError::NoChildrenForEphemerals,
        ErrorCode::NoWatcher => ZkError::NoWatcher,
        ErrorCode::ConnectionLoss => ZkError::ConnectionLoss,
        ErrorCode::SessionExpired => ZkError::SessionExpired,
        ErrorCode::SessionMoved => ZkError::SessionMoved,
        _ => return None,
    })
}

/// A node's stat as the tree keeps it ([`crate::convert::stat`] the other way; the times and
/// the ACL version, which the tree does not keep, are dropped).
fn stat(stat: &data::Stat) -> Stat {
    Stat {
        czxid: Zxid(stat.czxid as u64),
        mzxid: Zxid(stat.mzxid as u64),
        pzxid: Zxid(stat.pzxid as u64),
        version: stat.version,
        cversion: stat.cversion,
        ephemeral_owner: (stat.ephemeral_owner != 0)
            .then_some(SessionId(stat.ephemeral_owner as u64)),
        num_children: stat.num_children.max(0) as u32,
        data_length: stat.data_length.max(0) as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordination::zk::CreateMode;
    use coordination::zk::tree::Tree;
    use jute::Request as Jute;
    use jute::requests::CreateRequest;

    use crate::convert;
    use crate::ops::respond;

    fn path(text: &str) -> Path {
        Path::new(text).unwrap()
    }

    /// Every answer the tree gives reads back as itself through the jute records ZooKeeper
    /// sends for it.
    #[test]
    fn a_tree_answer_reads_back_through_its_reply() {
        let mut tree = Tree::default();
        let me = SessionId(7);
        let create = Request::Create {
            path: path("/a"),
            data: b"x".to_vec(),
            mode: CreateMode::Ephemeral,
        };
        let created = tree.apply(me, &create).result.unwrap();
        let jute_create = Jute::Create2(CreateRequest {
            path: "/a".into(),
            data: Some(b"x".to_vec()),
            acl: Vec::new(),
            flags: 1,
        });
        let response = respond(&jute_create, created.clone(), &tree).unwrap();
        assert_eq!(result(&create, 0, &response), Some(Ok(created)));
        let exists = Request::Exists {
            path: path("/none"),
            watch: false,
        };
        let missing = ErrorCode::NoNode.into();
        let none = Some(Ok(OpOk::Exists { stat: None }));
        assert_eq!(result(&exists, missing, &Response::Empty), none);
        let delete = Request::Delete {
            path: path("/a"),
            version: Some(3),
        };
        let bad = convert::error(ZkError::BadVersion).into();
        let refused = Some(Err(ZkError::BadVersion));
        assert_eq!(result(&delete, bad, &Response::Empty), refused);
        // No name for it in the tree's vocabulary: not told.
        assert_eq!(
            result(&delete, ErrorCode::NoAuth.into(), &Response::Empty),
            None
        );
    }
}
