//! The real executor's side of the shared recorder and client loop ([`trace::record`],
//! [`runtime::drive`]): one monotonic clock for every event of a run, tokio sleeps, and
//! durations drawn from the run's seed.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use coordination::ids::ClientSlot;
use runtime::drive::Executor;
use scenarios::rng::SplitMix64;
use scenarios::scenario::Span;
use trace::record::Clock;

/// The recorder of a real run: events stamped with real nanoseconds since the run started.
pub type Recorder = trace::record::Recorder<RealClock>;

/// Real time since the run started, on the system's monotonic clock (every client process of
/// a run reads the same one from the same time zero, so the merged trace is in the order
/// things happened).
#[derive(Clone, Copy, Debug)]
pub struct RealClock {
    start: Instant,
    /// Time zero on `CLOCK_MONOTONIC`, read once: two reports stamped alike by another
    /// process keep one time (and their order), which a reading per conversion would not.
    origin_ns: u64,
}

impl RealClock {
    /// A clock whose time zero is now.
    pub fn start() -> RealClock {
        RealClock {
            start: Instant::now(),
            origin_ns: monotonic_ns(),
        }
    }

    /// Time zero in nanoseconds of the system's `CLOCK_MONOTONIC`, which every process of
    /// the machine reads alike: what a client process is given to share this clock
    /// ([`RealClock::from_monotonic_ns`]).
    pub fn origin_monotonic_ns(&self) -> u64 {
        self.origin_ns
    }

    /// Time zero in nanoseconds since the Unix epoch, on the wall clock (for a server's log,
    /// stamped in epoch milliseconds).
    pub fn origin_epoch_ns(&self) -> u64 {
        let since = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        now.saturating_sub(since)
    }

    /// The time since time zero of a reading of `CLOCK_MONOTONIC` taken by another process
    /// (Java's `System.nanoTime()` reads it on Linux); zero for a reading before time zero.
    pub fn since_start(&self, monotonic: Duration) -> Duration {
        monotonic.saturating_sub(Duration::from_nanos(self.origin_monotonic_ns()))
    }

    /// The clock whose time zero is `origin` nanoseconds of `CLOCK_MONOTONIC` (Rust's
    /// `Instant` reads that clock on Linux, so both processes stamp alike).
    pub fn from_monotonic_ns(origin: u64) -> RealClock {
        let since = Duration::from_nanos(monotonic_ns().saturating_sub(origin));
        let now = Instant::now();
        RealClock {
            start: now.checked_sub(since).unwrap_or(now),
            origin_ns: origin,
        }
    }
}

impl Clock for RealClock {
    fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
}

/// Now, in nanoseconds of `CLOCK_MONOTONIC`.
pub(crate) fn monotonic_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    let secs = u64::try_from(now.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(now.tv_nsec).unwrap_or(0);
    secs * 1_000_000_000 + nanos
}

/// A real client's workload timers: tokio sleeps, durations drawn from the client's stream
/// of the run's seed (so a seed gives the same hold and think times on every run).
#[derive(Clone, Debug)]
pub struct RealExecutor {
    rng: Arc<Mutex<SplitMix64>>,
}

/// The stream of the run's seed that real clients draw from (the scenario's faults use
/// stream 1), split by client and by process of the client.
const CLIENT_STREAM: u64 = 2;

impl RealExecutor {
    /// Draws from `rng`.
    pub fn new(rng: SplitMix64) -> RealExecutor {
        RealExecutor {
            rng: Arc::new(Mutex::new(rng)),
        }
    }

    /// Draws from the stream of `seed` of the client on `slot` in its process after
    /// `restarts` restarts: a client's process, or a contender in its place, draws the same
    /// hold and think times.
    pub fn for_client(seed: u64, slot: ClientSlot, restarts: u32) -> RealExecutor {
        let stream = [CLIENT_STREAM, u64::from(slot.0), u64::from(restarts)];
        RealExecutor::new(SplitMix64::for_stream(seed, &stream))
    }

    /// The next 32 random bits (the framework layer's protection-id nonce).
    pub fn next_u32(&self) -> u32 {
        (self.rng.lock().expect("rng lock").next_u64() >> 32) as u32
    }
}

impl Executor for RealExecutor {
    type Sleep = tokio::time::Sleep;

    fn sleep(&self, duration: Duration) -> tokio::time::Sleep {
        tokio::time::sleep(duration)
    }

    fn draw_ms(&self, span: Span) -> Duration {
        let ms = (self.rng.lock().expect("rng lock")).in_range(span.min, span.max);
        Duration::from_millis(ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_converts_to_one_time_however_often_it_is_read() {
        let clock = RealClock::start();
        let stamp = Duration::from_nanos(monotonic_ns());
        let first = clock.since_start(stamp);
        assert!((0..1_000).all(|_| clock.since_start(stamp) == first));
        let shared = RealClock::from_monotonic_ns(clock.origin_monotonic_ns());
        assert_eq!(
            shared.since_start(stamp),
            first,
            "a client process's clock agrees"
        );
    }
}
