//! A task's deadlines with one madsim timer each. madsim's `Sleep` adds a timer every time it
//! is polled while pending, and a timer cannot be cancelled: a task that waits on a sleep in
//! a `select!` loop adds one timer per wake-up, and each stale timer wakes the task again
//! when it fires. An [`Alarm`] remembers which deadlines it has already armed for its task,
//! so waiting again for the same deadline adds nothing.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use madsim::time::{Instant, Sleep};

use crate::time::SimTime;

/// The shortest sleep madsim's `sleep_until` makes.
const MIN_SLEEP: Duration = Duration::from_millis(1);

/// The deadlines one task has armed a timer for. Use one `Alarm` per task: the timer wakes
/// the task that polled first.
#[derive(Debug)]
pub struct Alarm {
    /// In time order (usually a few).
    armed: Vec<Instant>,
    time: SimTime,
    /// The sleep each arming resets and polls once (making a fresh one per arming cost two
    /// shared-pointer clones and drops and a clock read more).
    sleep: Sleep,
}

impl Alarm {
    /// An alarm with nothing armed, on the simulation's clock `time`.
    pub fn new(time: SimTime) -> Alarm {
        Alarm {
            armed: Vec::new(),
            sleep: time.sleep_until(time.now()),
            time,
        }
    }

    /// Completes at `deadline`; never, for `None`.
    pub fn until(&mut self, deadline: Option<Instant>) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(move |cx| self.poll_until(deadline, cx))
    }

    fn poll_until(&mut self, deadline: Option<Instant>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(deadline) = deadline else {
            return Poll::Pending;
        };
        let now = self.time.now();
        if deadline <= now {
            return Poll::Ready(());
        }
        self.arm(deadline, now, cx.waker());
        Poll::Pending
    }

    /// Arms a timer that wakes `waker`'s task at `deadline` (later than `now`), unless one is
    /// armed for that deadline already.
    pub fn arm(&mut self, deadline: Instant, now: Instant, waker: &Waker) {
        // Timers before now have fired (those at now fire in this instant's round).
        let fired = self.armed.partition_point(|armed| *armed < now);
        self.armed.drain(..fired);
        if let Err(at) = self.armed.binary_search(&deadline) {
            self.armed.insert(at, deadline);
            // Polling a pending sleep once registers its timer with the task's waker. madsim's
            // `sleep_until` makes a sleep last at least 1 ms; `reset` does not, so that floor
            // is kept here.
            let mut sleep = Pin::new(&mut self.sleep);
            sleep.as_mut().reset(deadline.max(now + MIN_SLEEP));
            let _ = sleep.poll(&mut Context::from_waker(waker));
        }
    }
}
