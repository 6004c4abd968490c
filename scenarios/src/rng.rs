//! A tiny deterministic random source (SplitMix64) for drawing a scenario's randomized faults
//! and workload times from a seed. It never reads the clock or the OS: the same seed gives the
//! same draws on every machine, in every process.

/// SplitMix64: one `u64` of state, a full-period 2^64 sequence, good enough statistics for
/// drawing test parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A source seeded with `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// A source for one named stream of a run: different `stream`s of one seed draw
    /// independent-looking sequences.
    pub fn for_stream(seed: u64, stream: &[u64]) -> SplitMix64 {
        let mut rng = SplitMix64::new(seed);
        for &part in stream {
            rng.state ^= part;
            rng.next_u64();
        }
        rng
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `[min, max]` (both included); `min` when `max < min`.
    pub fn in_range(&mut self, min: u64, max: u64) -> u64 {
        if max <= min {
            return min;
        }
        let width = max - min;
        if width == u64::MAX {
            return self.next_u64();
        }
        // Rejection sampling keeps the draw unbiased.
        let span = width + 1;
        let zone = u64::MAX - (u64::MAX % span);
        loop {
            let draw = self.next_u64();
            if draw < zone {
                return min + draw % span;
            }
        }
    }

    /// An index below `len` (which must not be 0).
    pub fn index(&mut self, len: usize) -> usize {
        self.in_range(0, len as u64 - 1) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_draws_the_same_sequence() {
        let a: Vec<u64> = (0..5)
            .scan(SplitMix64::new(7), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..5)
            .scan(SplitMix64::new(7), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(SplitMix64::new(7).next_u64(), SplitMix64::new(8).next_u64());
    }

    #[test]
    fn splitmix_matches_its_reference_output() {
        // First outputs of the reference SplitMix64 for seed 0.
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn ranges_stay_inside_their_bounds_and_reach_both_ends() {
        let mut rng = SplitMix64::new(3);
        let draws: Vec<u64> = (0..200).map(|_| rng.in_range(10, 13)).collect();
        assert!(draws.iter().all(|d| (10..=13).contains(d)));
        assert!(draws.contains(&10) && draws.contains(&13));
        assert_eq!(rng.in_range(5, 5), 5);
        assert_eq!(rng.in_range(9, 2), 9);
    }

    #[test]
    fn streams_of_one_seed_differ() {
        let a = SplitMix64::for_stream(1, &[0, 1]).next_u64();
        let b = SplitMix64::for_stream(1, &[0, 2]).next_u64();
        assert_ne!(a, b);
    }
}
