//! The password ZooKeeper gives a session, from its id alone, for contenders whose library
//! keeps the password to itself (`zookeeper-async`'s `ZooKeeper`, `zookeeper-client`'s
//! `SessionInfo`): `ZooKeeperServer.generatePasswd` fills sixteen bytes from Java's
//! `java.util.Random` seeded with the id XOR `0xB3415C00` (`superSecret`), and `checkPasswd`
//! compares a reconnecting client's password with it again. So the executor can expire such a
//! contender's session as it expires any client's.

/// ZooKeeper's `ZooKeeperServer.superSecret`.
const SUPER_SECRET: i64 = 0xB341_5C00;

/// The password ZooKeeper gives session `id`, in hex.
pub fn password(id: i64) -> String {
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
