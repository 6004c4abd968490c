//! A timer on madsim's simulated clock, with async-io's semantics: it fires once the clock
//! has reached its instant, yields that instant, and an interval then re-arms one period
//! later (catching up in a burst when polled late).
//!
//! `std::time::Instant` inside a simulation is simulated time (madsim overrides
//! `clock_gettime`), so instants the client computes with `Instant::now()` mean the same
//! thing here.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use madsim::time::Sleep;

/// A one-shot or periodic timer on the simulated clock.
#[derive(Debug)]
pub struct Timer {
    /// When it fires next, or `None` when it never will.
    when: Option<Instant>,
    /// Its period; `Duration::MAX` for a one-shot timer.
    period: Duration,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Timer {
    pub fn never() -> Timer {
        Timer {
            when: None,
            period: Duration::MAX,
            sleep: None,
        }
    }

    pub fn after(duration: Duration) -> Timer {
        Instant::now()
            .checked_add(duration)
            .map_or_else(Timer::never, Timer::at)
    }

    pub fn at(instant: Instant) -> Timer {
        Timer::interval_at(instant, Duration::MAX)
    }

    pub fn interval(period: Duration) -> Timer {
        Instant::now()
            .checked_add(period)
            .map_or_else(Timer::never, |start| Timer::interval_at(start, period))
    }

    pub fn interval_at(start: Instant, period: Duration) -> Timer {
        Timer {
            when: Some(start),
            period,
            sleep: None,
        }
    }

    pub fn will_fire(&self) -> bool {
        self.when.is_some()
    }

    /// Fires at `when` (returning it) and re-arms, or registers the waker.
    pub fn poll_fire(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        let Some(when) = self.when else {
            return Poll::Pending;
        };
        if Instant::now() < when {
            let sleep = self
                .sleep
                .get_or_insert_with(|| Box::pin(madsim::time::sleep_until(when)));
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
        }
        self.sleep = None;
        self.when = when.checked_add(self.period);
        Poll::Ready(when)
    }
}
