//! What the simulator reads from the scenario's settings types: the server's timeouts and
//! the workload's drawn durations.

use std::time::Duration;

use madsim::rand::Rng;
use scenarios::scenario::{ServerSettings, Span};

/// ZooKeeper's tickTime.
pub fn tick(server: &ServerSettings) -> Duration {
    Duration::from_millis(server.tick_ms)
}

/// The session timeout the server grants for a request of `asked`: within [2, 20] ticks.
pub fn negotiate(server: &ServerSettings, asked: Duration) -> Duration {
    asked.clamp(tick(server) * 2, tick(server) * 20)
}

/// The session timeout clients ask for.
pub fn asked_timeout(server: &ServerSettings) -> Duration {
    Duration::from_millis(server.session_timeout_ms)
}

/// A duration of `span` milliseconds, drawn from the run's seeded RNG.
pub fn draw_ms(span: Span) -> Duration {
    let ms = madsim::rand::thread_rng().gen_range(span.min..=span.max.max(span.min));
    Duration::from_millis(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_is_clamped_to_2_to_20_ticks() {
        let server = ServerSettings::standalone(100, 0, 1);
        let ms = Duration::from_millis;
        assert_eq!(negotiate(&server, ms(50)), ms(200));
        assert_eq!(negotiate(&server, ms(1_500)), ms(1_500));
        assert_eq!(negotiate(&server, ms(60_000)), ms(2_000));
    }
}
