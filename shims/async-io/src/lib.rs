//! splitbrain's `async-io`: the surface `zookeeper-client` and splitbrain's real executor use
//! ([`Timer`], [`block_on`]), switched at run time.
//!
//! Inside a madsim simulation a [`Timer`] sleeps on the simulated clock, so the client's
//! pings, read timeouts and back-offs follow the seed and stop while its node is paused.
//! Outside one it is async-io 1's timer on the real reactor (a crate cannot wrap another
//! version of itself with the same major version, so the real side is the 1.x line, whose
//! timer and `block_on` have the same API). Every build of this workspace is compiled with
//! `--cfg madsim`, so the switch cannot be a cfg: it is whether a simulation runs on this
//! thread when the timer is made (see `shims/README.md`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_core::Stream;

mod simulated;

pub use reactor::block_on;

/// A timer: a future that fires at an instant, or a stream that fires on a period.
///
/// Made inside a simulation, it runs on the simulated clock; outside, on the real one.
#[derive(Debug)]
pub struct Timer(Clock);

#[derive(Debug)]
enum Clock {
    Real(reactor::Timer),
    Simulated(simulated::Timer),
}

/// Whether a madsim simulation runs on this thread.
fn simulating() -> bool {
    madsim::runtime::Handle::try_current().is_ok()
}

impl Timer {
    /// A timer that never fires.
    pub fn never() -> Timer {
        Timer::on_clock(reactor::Timer::never, simulated::Timer::never)
    }

    /// A timer that fires once, after `duration`.
    pub fn after(duration: Duration) -> Timer {
        Timer::on_clock(
            || reactor::Timer::after(duration),
            || simulated::Timer::after(duration),
        )
    }

    /// A timer that fires once, at `instant`.
    pub fn at(instant: Instant) -> Timer {
        Timer::on_clock(
            || reactor::Timer::at(instant),
            || simulated::Timer::at(instant),
        )
    }

    /// A timer that fires every `period`, the first time one period from now.
    pub fn interval(period: Duration) -> Timer {
        Timer::on_clock(
            || reactor::Timer::interval(period),
            || simulated::Timer::interval(period),
        )
    }

    /// A timer that fires every `period` from `start`.
    pub fn interval_at(start: Instant, period: Duration) -> Timer {
        Timer::on_clock(
            || reactor::Timer::interval_at(start, period),
            || simulated::Timer::interval_at(start, period),
        )
    }

    /// Whether the timer will fire again.
    pub fn will_fire(&self) -> bool {
        match &self.0 {
            Clock::Real(timer) => timer.will_fire(),
            Clock::Simulated(timer) => timer.will_fire(),
        }
    }

    /// Makes the timer fire once, after `duration` (on the clock of the thread now).
    pub fn set_after(&mut self, duration: Duration) {
        *self = Timer::after(duration);
    }

    /// Makes the timer fire once, at `instant`.
    pub fn set_at(&mut self, instant: Instant) {
        *self = Timer::at(instant);
    }

    /// Makes the timer fire every `period`, the first time one period from now.
    pub fn set_interval(&mut self, period: Duration) {
        *self = Timer::interval(period);
    }

    /// Makes the timer fire every `period` from `start`.
    pub fn set_interval_at(&mut self, start: Instant, period: Duration) {
        *self = Timer::interval_at(start, period);
    }

    fn on_clock(
        real: impl FnOnce() -> reactor::Timer,
        simulated: impl FnOnce() -> simulated::Timer,
    ) -> Timer {
        Timer(if simulating() {
            Clock::Simulated(simulated())
        } else {
            Clock::Real(real())
        })
    }
}

impl Future for Timer {
    type Output = Instant;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Instant> {
        match &mut self.get_mut().0 {
            Clock::Real(timer) => Pin::new(timer).poll(cx),
            Clock::Simulated(timer) => timer.poll_fire(cx),
        }
    }
}

impl Stream for Timer {
    type Item = Instant;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Instant>> {
        match &mut self.get_mut().0 {
            Clock::Real(timer) => Pin::new(timer).poll_next(cx),
            Clock::Simulated(timer) => timer.poll_fire(cx).map(Some),
        }
    }
}

#[cfg(test)]
mod tests;
