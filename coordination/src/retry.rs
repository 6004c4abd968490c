//! Curator's retry policies (`org.apache.curator.RetryPolicy`): how often, and after how long a
//! sleep, the framework layer tries an operation again after it failed with `ConnectionLoss`
//! or `SessionExpired` (what Curator's `RetryLoop` counts as retriable), and when it gives up.
//!
//! Pure, like the framework: a sleep is drawn from a number the caller passes in (the
//! framework derives it from its seeded nonce), so the simulator's sleeps come from the run's
//! seed while the model, which fires timers at any point, sees only the retry count.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Which Curator retry policy the framework runs (a scenario's `framework.retry`,
/// `check --retry-policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "kebab-case", deny_unknown_fields)]
pub enum RetryPolicy {
    /// `ExponentialBackoffRetry(base_sleep_ms, max_retries)`: at most `max_retries` retries;
    /// retry `n` (from 0) sleeps `base_sleep_ms` times a random whole number drawn from
    /// `1..2^(n+1)` (Curator: `base * max(1, random.nextInt(1 << (n + 1)))`).
    ExponentialBackoff {
        /// The base sleep.
        base_sleep_ms: u32,
        /// Retries before the operation fails (Curator caps it at 29).
        max_retries: u32,
    },
    /// `RetryNTimes(n, sleep_ms)`: at most `n` retries, each after `sleep_ms`; `n = 0` never
    /// retries.
    NTimes {
        /// Retries before the operation fails.
        n: u32,
        /// The sleep before each retry.
        sleep_ms: u32,
    },
    /// `RetryForever(sleep_ms)`: never gives up.
    Forever {
        /// The sleep before each retry.
        sleep_ms: u32,
    },
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy::DEFAULT
    }
}

impl RetryPolicy {
    /// The default, `ExponentialBackoffRetry(1000, 3)`: the setup Curator's own examples and
    /// most deployments use.
    pub const DEFAULT: RetryPolicy = RetryPolicy::ExponentialBackoff {
        base_sleep_ms: 1000,
        max_retries: 3,
    };

    /// The policy names scenario files and `check --retry-policy` use.
    pub const NAMES: [&'static str; 3] = ["exponential-backoff", "n-times", "forever"];

    /// The most retries `ExponentialBackoffRetry` accepts (`MAX_RETRIES_LIMIT`).
    pub const MAX_EXPONENTIAL_RETRIES: u32 = 29;

    /// The policy called `name` (one of [`RetryPolicy::NAMES`]) with `retries` and `sleep_ms`
    /// (`retries` is ignored by `forever`); `None` for an unknown name.
    pub fn named(name: &str, retries: u32, sleep_ms: u32) -> Option<RetryPolicy> {
        match name {
            "exponential-backoff" => Some(RetryPolicy::ExponentialBackoff {
                base_sleep_ms: sleep_ms,
                max_retries: retries,
            }),
            "n-times" => Some(RetryPolicy::NTimes {
                n: retries,
                sleep_ms,
            }),
            "forever" => Some(RetryPolicy::Forever { sleep_ms }),
            _ => None,
        }
    }

    /// The policy's name in [`RetryPolicy::NAMES`].
    pub fn name(self) -> &'static str {
        match self {
            RetryPolicy::ExponentialBackoff { .. } => Self::NAMES[0],
            RetryPolicy::NTimes { .. } => Self::NAMES[1],
            RetryPolicy::Forever { .. } => Self::NAMES[2],
        }
    }

    /// The retry limit (`None`: unbounded) and the base sleep, as `check` flags give them.
    pub fn limit_and_sleep_ms(self) -> (Option<u32>, u32) {
        match self {
            RetryPolicy::ExponentialBackoff {
                base_sleep_ms,
                max_retries,
            } => (Some(max_retries), base_sleep_ms),
            RetryPolicy::NTimes { n, sleep_ms } => (Some(n), sleep_ms),
            RetryPolicy::Forever { sleep_ms } => (None, sleep_ms),
        }
    }

    /// True when every setting is the default (scenario files and traces leave it out).
    pub fn is_default(policy: &RetryPolicy) -> bool {
        *policy == RetryPolicy::default()
    }

    /// Whether an operation that has been retried `retries` times may be retried once more
    /// (Curator's `allowRetry(retryCount, ..)`).
    pub fn allows(self, retries: u32) -> bool {
        match self.limit_and_sleep_ms().0 {
            Some(limit) => retries < limit,
            None => true,
        }
    }

    /// The sleep before retry number `retries` (from 0), drawn with `draw` (any number; the
    /// same draw gives the same sleep).
    pub fn sleep(self, retries: u32, draw: u64) -> Duration {
        let ms = match self {
            RetryPolicy::ExponentialBackoff { base_sleep_ms, .. } => {
                let range = 1u64 << (retries.min(Self::MAX_EXPONENTIAL_RETRIES) + 1);
                u64::from(base_sleep_ms) * (draw % range).max(1)
            }
            RetryPolicy::NTimes { sleep_ms, .. } | RetryPolicy::Forever { sleep_ms } => {
                u64::from(sleep_ms)
            }
        };
        Duration::from_millis(ms)
    }
}

/// A well-mixed number from `seed` and `parts` (splitmix64's finalizer over each part), so
/// that each operation's each retry draws its own sleep from the client's seeded nonce.
pub fn draw(seed: u32, parts: [u32; 2]) -> u64 {
    let mut x = u64::from(seed);
    for part in parts {
        x = mix(x ^ u64::from(part).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    }
    x
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_backoff_allows_max_retries_and_sleeps_within_curators_range() {
        let policy = RetryPolicy::default();
        assert!(policy.allows(0) && policy.allows(2));
        assert!(!policy.allows(3));
        for retries in 0..3 {
            let sleeps: Vec<u64> = (0..200u32)
                .map(|i| policy.sleep(retries, draw(7, [i, retries])).as_millis() as u64)
                .collect();
            let most = (1u64 << (retries + 1)) - 1;
            assert!(sleeps.iter().all(|ms| (1..=most).contains(&(ms / 1000))));
            assert!(sleeps.iter().all(|ms| ms % 1000 == 0));
            // Every multiple of the base in the range is drawn.
            for multiple in 1..=most {
                assert!(sleeps.contains(&(multiple * 1000)), "{retries}: {multiple}");
            }
        }
    }

    #[test]
    fn n_times_and_forever() {
        let never = RetryPolicy::NTimes { n: 0, sleep_ms: 5 };
        assert!(!never.allows(0));
        let forever = RetryPolicy::Forever { sleep_ms: 250 };
        assert!(forever.allows(u32::MAX));
        assert_eq!(forever.sleep(9, 1), Duration::from_millis(250));
    }

    #[test]
    fn names_round_trip() {
        for name in RetryPolicy::NAMES {
            let policy = RetryPolicy::named(name, 2, 10).expect("a known name");
            assert_eq!(policy.name(), name);
            let json = serde_json::to_value(policy).unwrap();
            assert_eq!(json["policy"], name);
        }
        assert_eq!(RetryPolicy::named("sometimes", 1, 1), None);
    }
}
