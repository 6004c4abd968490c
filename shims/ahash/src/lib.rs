//! splitbrain's `ahash` 0.7: the one item hashbrown 0.12 takes from it ([`RandomState`], its
//! maps' default hasher builder), with keys a simulation can replay.
//!
//! ahash 0.7 keys every map from the operating system's random source through a raw
//! `getrandom` system call, which madsim cannot see, plus a heap address and a process-wide
//! counter. `zookeeper-client` iterates such maps (the requests it fails at a disconnect,
//! the watches it sets again after one), so their order would differ from run to run of one
//! seed. Here a map made inside a simulation is keyed from the simulation's seeded random
//! source, and one made outside from std's randomly keyed `RandomState`. The hash function
//! is std's SipHash either way: what hashbrown needs is a keyed `BuildHasher`, not ahash's
//! speed.

use std::collections::hash_map::{self, DefaultHasher};
use std::hash::{BuildHasher, Hasher};

/// Builds the hashers of one map, all with the same key.
#[derive(Clone, Debug)]
pub struct RandomState(Keys);

#[derive(Clone, Debug)]
enum Keys {
    /// Drawn from the running simulation's seed.
    Seeded(u64),
    /// std's, from the operating system.
    Real(hash_map::RandomState),
}

impl RandomState {
    /// A builder with a fresh key: from the simulation's random source inside one, from the
    /// operating system's outside.
    pub fn new() -> RandomState {
        RandomState(if madsim::runtime::Handle::try_current().is_ok() {
            Keys::Seeded(madsim::rand::random())
        } else {
            Keys::Real(hash_map::RandomState::new())
        })
    }
}

impl Default for RandomState {
    fn default() -> RandomState {
        RandomState::new()
    }
}

impl BuildHasher for RandomState {
    type Hasher = AHasher;

    fn build_hasher(&self) -> AHasher {
        AHasher(match &self.0 {
            Keys::Seeded(key) => {
                let mut hasher = DefaultHasher::new();
                hasher.write_u64(*key);
                hasher
            }
            Keys::Real(state) => state.build_hasher(),
        })
    }
}

/// The hasher a [`RandomState`] builds.
#[derive(Clone, Debug)]
pub struct AHasher(DefaultHasher);

impl Hasher for AHasher {
    fn finish(&self) -> u64 {
        self.0.finish()
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hashes of 0..8 under a map key made inside a simulation run with `seed`, twice.
    fn hashes_in_run(seed: u64) -> (Vec<u64>, Vec<u64>) {
        madsim::runtime::Runtime::with_seed_and_config(seed, madsim::Config::default()).block_on(
            async {
                let hashes = |state: RandomState| (0..8).map(|i| state.hash_one(i)).collect();
                (hashes(RandomState::new()), hashes(RandomState::new()))
            },
        )
    }

    #[test]
    fn inside_a_simulation_keys_follow_the_seed() {
        let (first, second) = hashes_in_run(7);
        assert_eq!(hashes_in_run(7), (first.clone(), second.clone()));
        assert_ne!(first, second, "each map has a key of its own");
        assert_ne!(hashes_in_run(8).0, first, "another seed, other keys");
    }

    #[test]
    fn outside_a_simulation_each_map_has_a_random_key() {
        assert_ne!(
            RandomState::new().hash_one(1u64),
            RandomState::new().hash_one(1u64)
        );
    }
}
