//! The simulator's side of the shared recorder and client loop ([`trace::record`],
//! [`runtime::drive`]): simulated time and madsim's seeded source.

use std::time::Duration;

use madsim::time::{Instant, Sleep};

use crate::time::SimTime;
use runtime::drive::Executor;
use scenarios::scenario::Span;
use trace::record::Clock;

use crate::settings::draw_ms;

/// The recorder of a simulated run: events stamped with simulated nanoseconds.
pub type Recorder = trace::record::Recorder<SimClock>;

/// Simulated time since the run started.
#[derive(Clone, Debug)]
pub struct SimClock {
    start: Instant,
    time: SimTime,
}

impl SimClock {
    /// A clock on the simulation's clock `time` whose time zero is now.
    pub fn start(time: SimTime) -> SimClock {
        SimClock {
            start: time.now(),
            time,
        }
    }
}

impl Clock for SimClock {
    fn elapsed(&self) -> Duration {
        self.time.now().duration_since(self.start)
    }
}

/// A simulated client's workload timers: madsim sleeps, durations drawn from the seed.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimExecutor;

impl Executor for SimExecutor {
    type Sleep = Sleep;

    fn sleep(&self, duration: Duration) -> Sleep {
        madsim::time::sleep(duration)
    }

    fn draw_ms(&self, span: Span) -> Duration {
        draw_ms(span)
    }
}
