//! The session of a `zookeeper-async` contender, which the crate keeps to itself (its
//! `ZooKeeper` has no accessor for the session's id or password: `src/zookeeper.rs:53`): the
//! id is the ephemeral owner of a node the contender creates and deletes again (the crate's
//! public `create2`), and the password is the one ZooKeeper derives from the id
//! ([`crate::contender::password`]).

use zookeeper_async::{Acl, CreateMode, ZkError, ZooKeeper, ZooKeeperExt};

/// The id of the session `zk` is connected on now: the ephemeral owner of a node created (and
/// deleted again) under `<lock_path>-sessions`, a container.
pub(super) async fn current(zk: &ZooKeeper, lock_path: &str) -> Result<i64, ZkError> {
    let dir = format!("{lock_path}-sessions");
    zk.ensure_path_with_leaf_mode(&dir, CreateMode::Container)
        .await?;
    let (probe, stat) = zk
        .create2(
            &format!("{dir}/s-"),
            Vec::new(),
            Acl::open_unsafe().clone(),
            CreateMode::EphemeralSequential,
        )
        .await?;
    match zk.delete(&probe, None).await {
        Ok(()) | Err(ZkError::NoNode) => Ok(stat.ephemeral_owner),
        Err(e) => Err(e),
    }
}
