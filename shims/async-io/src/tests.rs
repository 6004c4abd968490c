use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use futures_core::Stream;

use super::*;

/// Runs `body` inside a madsim simulation with seed 1.
fn simulated<T: Send + 'static>(body: impl Future<Output = T> + Send + 'static) -> T {
    madsim::runtime::Runtime::with_seed_and_config(1, madsim::Config::default()).block_on(body)
}

#[test]
fn inside_a_simulation_a_timer_fires_on_the_simulated_clock_at_its_instant() {
    let (clock, fired_after) = simulated(async {
        let start = Instant::now();
        let timer = Timer::after(Duration::from_secs(3600));
        let clock = format!("{timer:?}");
        let fired = timer.await;
        (clock, fired - start)
    });
    assert!(clock.starts_with("Timer(Simulated("), "{clock}");
    assert_eq!(fired_after, Duration::from_secs(3600));
}

#[test]
fn a_simulated_interval_fires_once_a_period_and_never_never_fires() {
    let ticks = simulated(async {
        let start = Instant::now();
        let mut interval = pin!(Timer::interval(Duration::from_millis(300)));
        let mut ticks = Vec::new();
        for _ in 0..3 {
            let at = std::future::poll_fn(|cx| interval.as_mut().poll_next(cx)).await;
            ticks.push(at.expect("an interval never ends") - start);
        }
        let mut never = pin!(Timer::never());
        let poll = never.as_mut().poll(&mut Context::from_waker(Waker::noop()));
        assert!(poll.is_pending() && !never.will_fire());
        ticks
    });
    let ms = |ms| Duration::from_millis(ms);
    assert_eq!(ticks, [ms(300), ms(600), ms(900)]);
}

#[test]
fn outside_a_simulation_a_timer_is_the_real_reactors() {
    let timer = Timer::after(Duration::from_millis(1));
    assert!(format!("{timer:?}").starts_with("Timer(Real("));
    let start = Instant::now();
    let fired = block_on(timer);
    assert!(fired >= start);
    assert!(matches!(
        pin!(Timer::never()).poll(&mut Context::from_waker(Waker::noop())),
        Poll::Pending
    ));
}
