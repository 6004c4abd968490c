//! The records of `org.apache.zookeeper.data` a client sees: [`Id`], [`Acl`] and [`Stat`].

use crate::codes::perms;
use crate::record::record;

record! {
    /// An identity: a scheme and an id in it (`world:anyone`, `digest:user:hash`, …).
    Id, "id" {
        /// The scheme.
        scheme: String,
        /// The id in the scheme.
        id: String,
    }
}

record! {
    /// An access control entry: permissions granted to an identity.
    Acl, "acl" {
        /// The permissions, bits of [`perms`].
        perms: i32,
        /// Whom they are granted to.
        id: Id,
    }
}

impl Acl {
    /// `ZooDefs.Ids.OPEN_ACL_UNSAFE`: every permission to `world:anyone`.
    pub fn open_unsafe() -> Vec<Acl> {
        vec![Acl {
            perms: perms::ALL,
            id: Id {
                scheme: "world".to_owned(),
                id: "anyone".to_owned(),
            },
        }]
    }
}

record! {
    /// A node's metadata as a client sees it.
    Stat, "stat" {
        /// The zxid that created it.
        czxid: i64,
        /// The zxid that last modified its data.
        mzxid: i64,
        /// When it was created, in ms since the epoch.
        ctime: i64,
        /// When its data was last modified, in ms since the epoch.
        mtime: i64,
        /// Its data's version.
        version: i32,
        /// Its children's version.
        cversion: i32,
        /// Its ACL's version.
        aversion: i32,
        /// The session owning it if ephemeral, 0 otherwise.
        ephemeral_owner: i64,
        /// The length of its data.
        data_length: i32,
        /// How many children it has.
        num_children: i32,
        /// The zxid that last changed its children.
        pzxid: i64,
    }
}
