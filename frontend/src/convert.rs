//! Between jute's records and the tree's vocabulary: paths, versions, create modes, stats,
//! errors and watch events.

use coordination::zk::tree::Fired;
use coordination::zk::{CreateMode, EventKind, Path, Stat, WatchedEvent, WatcherKind, ZkError};
use jute::codes::{self, ErrorCode, EventType, KeeperState, xid};
use jute::data;
use jute::session::{ReplyHeader, WatcherEvent};
use jute::{Reply, ReplyBody};

use crate::server::Delivery;

/// A client's path: `BadArguments` unless it is a valid absolute path.
pub fn path(text: &str) -> Result<Path, ErrorCode> {
    Path::new(text).map_err(|_| ErrorCode::BadArguments)
}

/// A request's expected version: -1 is any.
pub fn version(version: i32) -> Option<i32> {
    (version != -1).then_some(version)
}

/// The tree's create mode for a create request's `flags`. The flags decide it, not the op
/// (`createContainer` with other flags creates what they say, as ZooKeeper does); TTL modes
/// are `Unimplemented` (ZooKeeper's answer while extended types are off, its default).
pub fn create_mode(flags: i32) -> Result<CreateMode, ErrorCode> {
    use codes::CreateMode as Flags;
    match Flags::try_from(flags) {
        Ok(Flags::Persistent) => Ok(CreateMode::Persistent),
        Ok(Flags::Ephemeral) => Ok(CreateMode::Ephemeral),
        Ok(Flags::PersistentSequential) => Ok(CreateMode::PersistentSequential),
        Ok(Flags::EphemeralSequential) => Ok(CreateMode::EphemeralSequential),
        Ok(Flags::Container) => Ok(CreateMode::Container),
        Ok(Flags::PersistentWithTtl | Flags::PersistentSequentialWithTtl) => {
            Err(ErrorCode::Unimplemented)
        }
        Err(_) => Err(ErrorCode::BadArguments),
    }
}

/// The watches a `removeWatches` request's `watcher_type` names (1 children, 2 data, 3 any).
pub fn watcher_kind(watcher_type: i32) -> Result<WatcherKind, ErrorCode> {
    match watcher_type {
        1 => Ok(WatcherKind::Children),
        2 => Ok(WatcherKind::Data),
        3 => Ok(WatcherKind::Any),
        _ => Err(ErrorCode::BadArguments),
    }
}

/// ZooKeeper's code for a tree error.
pub fn error(error: ZkError) -> ErrorCode {
    match error {
        ZkError::NoNode => ErrorCode::NoNode,
        ZkError::NodeExists => ErrorCode::NodeExists,
        ZkError::BadVersion => ErrorCode::BadVersion,
        ZkError::NotEmpty => ErrorCode::NotEmpty,
        ZkError::NoChildrenForEphemerals => ErrorCode::NoChildrenForEphemerals,
        ZkError::NoWatcher => ErrorCode::NoWatcher,
        ZkError::ConnectionLoss => ErrorCode::ConnectionLoss,
        ZkError::SessionExpired => ErrorCode::SessionExpired,
        ZkError::SessionMoved => ErrorCode::SessionMoved,
    }
}

/// A node's stat as a client reads it. The tree keeps no wall-clock times (`ctime` and
/// `mtime` are 0) and no ACL changes (`aversion` is 0).
pub fn stat(stat: &Stat) -> data::Stat {
    data::Stat {
        czxid: stat.czxid.0 as i64,
        mzxid: stat.mzxid.0 as i64,
        ctime: 0,
        mtime: 0,
        version: stat.version,
        cversion: stat.cversion,
        aversion: 0,
        ephemeral_owner: stat.ephemeral_owner.map_or(0, |owner| owner.0 as i64),
        data_length: stat.data_length as i32,
        num_children: stat.num_children as i32,
        pzxid: stat.pzxid.0 as i64,
    }
}

/// The notification (xid -1, zxid -1) of a fired watch, to its session.
pub fn notification(fired: Fired) -> Delivery {
    let Fired { session, event } = fired;
    let WatchedEvent { kind, path } = event;
    let event_type = match kind {
        EventKind::NodeCreated => EventType::NodeCreated,
        EventKind::NodeDeleted => EventType::NodeDeleted,
        EventKind::NodeDataChanged => EventType::NodeDataChanged,
        EventKind::NodeChildrenChanged => EventType::NodeChildrenChanged,
    };
    let header = ReplyHeader {
        xid: xid::NOTIFICATION,
        zxid: -1,
        err: 0,
    };
    let event = WatcherEvent {
        event_type: event_type.into(),
        state: KeeperState::SyncConnected.into(),
        path: path.to_string(),
    };
    Delivery {
        session,
        reply: Reply {
            header,
            body: ReplyBody::Notification(event),
        },
    }
}
