//! The real executor's side of the shared recorder and client loop ([`scenarios::record`],
//! [`scenarios::drive`]): one monotonic clock for every event of a run, tokio sleeps, and
//! durations drawn from the run's seed.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use scenarios::drive::Executor;
use scenarios::record::Clock;
use scenarios::rng::SplitMix64;
use scenarios::scenario::Span;

/// The recorder of a real run: events stamped with real nanoseconds since the run started.
pub type Recorder = scenarios::record::Recorder<RealClock>;

/// Real time since the run started, on the process's monotonic clock (every client of a run
/// reads the same one, so the merged trace is in the order things happened).
#[derive(Clone, Copy, Debug)]
pub struct RealClock {
    start: Instant,
    /// `CLOCK_MONOTONIC` at `start`, the clock `Instant` reads on Linux.
    start_monotonic: Duration,
}

impl RealClock {
    /// A clock whose time zero is now.
    pub fn start() -> RealClock {
        let start = Instant::now();
        RealClock {
            start,
            start_monotonic: monotonic_now().saturating_sub(start.elapsed()),
        }
    }

    /// The time since the start of a reading of `CLOCK_MONOTONIC` taken by another process
    /// (Java's `System.nanoTime()` reads it on Linux); zero for a reading before the start.
    pub fn since_start(&self, monotonic: Duration) -> Duration {
        monotonic.saturating_sub(self.start_monotonic)
    }

    /// The instant of time zero.
    pub fn origin(&self) -> Instant {
        self.start
    }
}

impl Clock for RealClock {
    fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
}

/// The time on `CLOCK_MONOTONIC`.
fn monotonic_now() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer; CLOCK_MONOTONIC is
    // always available on Linux.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now);
    }
    let secs = u64::try_from(now.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(now.tv_nsec).unwrap_or(0);
    Duration::new(secs, nanos)
}

/// A real client's workload timers: tokio sleeps, durations drawn from the client's stream
/// of the run's seed (so a seed gives the same hold and think times on every run).
#[derive(Clone, Debug)]
pub struct RealExecutor {
    rng: Arc<Mutex<SplitMix64>>,
}

impl RealExecutor {
    /// Draws from `rng`.
    pub fn new(rng: SplitMix64) -> RealExecutor {
        RealExecutor {
            rng: Arc::new(Mutex::new(rng)),
        }
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
