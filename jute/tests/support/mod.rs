//! Sample values shared by the tests.

use jute::data::{Acl, Id, Stat};

/// A stat whose fields all differ, so a swapped field shows.
pub fn stat() -> Stat {
    Stat {
        czxid: 0x0102_0304_0506_0708,
        mzxid: 2,
        ctime: 1_700_000_000_000,
        mtime: -4,
        version: 5,
        cversion: -6,
        aversion: 7,
        ephemeral_owner: 0x7fff_ffff_ffff_ffff,
        data_length: 9,
        num_children: 10,
        pzxid: -11,
    }
}

/// Two ACL entries, one with empty strings.
pub fn acl() -> Vec<Acl> {
    let mut acl = Acl::open_unsafe();
    acl.push(Acl {
        perms: 0,
        id: Id {
            scheme: String::new(),
            id: String::new(),
        },
    });
    acl
}
