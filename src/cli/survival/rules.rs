//! What a real ZooKeeper 3.8 client is expected to do about a partition, worked out from its
//! timing rules alone (not from the simulator): an idle client with one server in its host
//! list, cut off both ways for `L` ms, on a LAN (round trips taken as zero).
//!
//! - It pings every `readTimeout / 2` (readTimeout = 2T/3) and drops the connection after
//!   `readTimeout` without hearing from the server.
//! - TCP retransmits the ping lost in the partition 200 ms later, then doubling; one that
//!   arrives after the partition reaches the server (also on a connection the client has
//!   given up: the closed socket's kernel keeps retransmitting) and refreshes the session.
//! - After dropping the connection it sleeps 1 s (its host list wrapped) plus a random
//!   0–1000 ms before each attempt; an attempt's SYN is retransmitted after 1 s, then
//!   doubling, and the attempt is abandoned after the connect timeout (T).
//! - The server expires a session at the first tick boundary at or after `T` since it last
//!   heard from the client.
//!
//! The expected share of sessions that survive, and the mean time from the partition's end
//! to re-attachment, are averaged over a grid of the partition's start within the ping
//! interval, the random sleeps, and the phase of the server's ticks.

/// TCP's first retransmission timeout of a segment and of a SYN (Linux), in ms.
const RTO_MS: u64 = 200;
const SYN_RTO_MS: u64 = 1_000;
/// The client's sleep when its host list wraps, and the bound of its random sleep, in ms.
const WRAP_MS: u64 = 1_000;
const RANDOM_MS: u64 = 1_000;
/// Connection attempts followed before giving a case up as lost.
const ATTEMPTS: usize = 4;
/// Grid points of each random quantity.
const PHASES: u64 = 60;
const SLEEPS: u64 = 20;
const TICK_PHASES: u64 = 8;

/// The real client's expected figures for one partition length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Expected {
    /// The share of sessions that survive, in [0, 1].
    pub survival: f64,
    /// The share of sessions whose client never noticed the partition.
    pub stayed_connected: f64,
    /// The mean time (ms) from the partition's end to re-attachment, over the surviving
    /// sessions whose client reconnected; `None` when none did.
    pub reattach_ms: Option<f64>,
}

/// One case's outcome: survived or not, and when the session was re-attached (ms after the
/// partition's end) if the client reconnected.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Case {
    Lost,
    Connected,
    Reattached(u64),
}

/// The expected figures for session timeout `t_ms`, server tick `tick_ms` and a partition of
/// `partition_ms`.
pub fn expected(t_ms: u64, tick_ms: u64, partition_ms: u64) -> Expected {
    let ping = t_ms * 2 / 3 / 2;
    let (mut total, mut survived, mut connected, mut reattached, mut delay) =
        (0.0, 0.0, 0.0, 0.0, 0.0);
    for phase in grid(ping, PHASES) {
        for tick_phase in grid(tick_ms, TICK_PHASES) {
            for first in grid(RANDOM_MS, SLEEPS) {
                for later in grid(RANDOM_MS, SLEEPS) {
                    let timing = Timing {
                        t: t_ms,
                        tick: tick_ms,
                        tick_phase,
                        end: phase + partition_ms,
                    };
                    total += 1.0;
                    match timing.case(first, later) {
                        Case::Lost => {}
                        Case::Connected => {
                            survived += 1.0;
                            connected += 1.0;
                        }
                        Case::Reattached(after) => {
                            survived += 1.0;
                            reattached += 1.0;
                            delay += after as f64;
                        }
                    }
                }
            }
        }
    }
    Expected {
        survival: survived / total,
        stayed_connected: connected / total,
        reattach_ms: (reattached > 0.0).then(|| delay / reattached),
    }
}

/// `points` evenly spaced values in `[0, width)`, at the middles of their cells.
fn grid(width: u64, points: u64) -> impl Iterator<Item = u64> {
    (0..points).map(move |i| (2 * i + 1) * width / (2 * points))
}

/// One case: times in ms from the client's last exchange with the server.
struct Timing {
    t: u64,
    tick: u64,
    tick_phase: u64,
    /// The partition's end (it starts within the ping interval, before the next ping).
    end: u64,
}

impl Timing {
    /// When the server expires a session it last heard from at `last`.
    fn expiry(&self, last: u64) -> u64 {
        let due = last + self.t;
        let ticks = (due.saturating_sub(self.tick_phase)).div_ceil(self.tick);
        self.tick_phase + ticks * self.tick
    }

    /// The first of the transmissions at `sent`, `sent + rto`, `sent + 3 rto`, ... (the
    /// timeout doubling) that is not lost in the partition, if any is before `until`.
    fn delivered(&self, sent: u64, rto: u64, until: u64) -> Option<u64> {
        let mut at = sent;
        let mut wait = rto;
        while at < self.end {
            at += wait;
            wait *= 2;
        }
        (at < until).then_some(at)
    }

    fn case(&self, first_sleep: u64, later_sleep: u64) -> Case {
        let read_timeout = self.t * 2 / 3;
        let ping = read_timeout / 2;
        if ping >= self.end {
            return Case::Connected;
        }
        // The ping lost in the partition, retransmitted until it gets through.
        let retransmitted = self.delivered(ping, RTO_MS, u64::MAX).expect("no deadline");
        if retransmitted < read_timeout {
            return Case::Connected;
        }
        let refreshed = retransmitted < self.expiry(0);
        let mut attempt = read_timeout + WRAP_MS + first_sleep;
        for _ in 0..ATTEMPTS {
            let timeout = attempt + self.t;
            if let Some(arrived) = self.delivered(attempt, SYN_RTO_MS, timeout) {
                let last = if refreshed && retransmitted < arrived {
                    retransmitted
                } else {
                    0
                };
                return if arrived < self.expiry(last) {
                    Case::Reattached(arrived - self.end)
                } else {
                    Case::Lost
                };
            }
            attempt = timeout + WRAP_MS + later_sleep;
        }
        Case::Lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_partitions_are_not_noticed_and_long_ones_cost_the_session() {
        let short = expected(4_000, 200, 400);
        assert_eq!(short.survival, 1.0);
        assert_eq!(short.stayed_connected, 1.0);
        let long = expected(1_000, 100, 1_500);
        assert_eq!(long.survival, 0.0);
    }

    #[test]
    fn at_one_second_a_disconnected_client_survives_only_through_a_retransmitted_ping() {
        // T = 1 s: the client reconnects at least 1.67 s after its last exchange, past T,
        // so a session survives a noticed partition only when the ping retransmitted at
        // 933 ms refreshed it and the random sleep was short.
        let e = expected(1_000, 100, 600);
        assert!(e.stayed_connected == 0.0, "{e:?}");
        assert!(e.survival > 0.1 && e.survival < 0.5, "{e:?}");
    }

    #[test]
    fn the_grid_covers_its_width_evenly() {
        assert_eq!(grid(1_000, 4).collect::<Vec<_>>(), [125, 375, 625, 875]);
    }
}
