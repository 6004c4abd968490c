//! The session of a `zookeeper-async` contender, which the crate keeps to itself (its
//! `ZooKeeper` has no accessor for the session's id or password: `src/zookeeper.rs:53`): the
//! id is the ephemeral owner of a node the contender creates and deletes again (the crate's
//! public `create2`), and the password is the one ZooKeeper derives from the id
//! (`ZooKeeperServer.generatePasswd`: sixteen bytes of Java's `java.util.Random` seeded with
//! the id XOR `0xB3415C00`, which `checkPasswd` compares a reconnecting client's password
//! with), so that the executor can expire the session as it expires any client's.

use zookeeper_async::{Acl, CreateMode, ZkError, ZooKeeper, ZooKeeperExt};

/// ZooKeeper's `ZooKeeperServer.superSecret`.
const SUPER_SECRET: i64 = 0xB341_5C00;

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

/// The password ZooKeeper gives session `id`, in hex.
pub(super) fn password(id: i64) -> String {
    let mut random = JavaRandom::new(id ^ SUPER_SECRET);
    let mut hex = String::with_capacity(32);
    for _ in 0..4 {
        for byte in random.next_int().to_le_bytes() {
            hex.push_str(&format!("{byte:02x}"));
        }
    }
    hex
}

/// `java.util.Random`'s linear congruential generator, as far as `nextBytes` uses it.
struct JavaRandom(i64);

impl JavaRandom {
    const MULTIPLIER: i64 = 0x5_DEEC_E66D;
    const MASK: i64 = (1 << 48) - 1;

    fn new(seed: i64) -> JavaRandom {
        JavaRandom((seed ^ Self::MULTIPLIER) & Self::MASK)
    }

    /// `nextInt()`; `nextBytes` takes each int's bytes low byte first.
    fn next_int(&mut self) -> i32 {
        self.0 = (self.0.wrapping_mul(Self::MULTIPLIER).wrapping_add(0xB)) & Self::MASK;
        // The top 32 of the 48 bits, as Java's `(int) (seed >>> 16)`.
        (self.0 >> 16) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::password;

    #[test]
    fn the_password_is_the_one_zookeeper_gave_a_kazoo_session() {
        // A session Kazoo 2.11 reported with its password (client_id) against ZooKeeper 3.8:
        // the exchange of book/src/reference/contender-protocol.md.
        assert_eq!(
            password(72_058_962_432_425_985),
            "eabc719ab801996802273491f598d351"
        );
    }
}
