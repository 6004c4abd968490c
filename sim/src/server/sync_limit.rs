//! The leader's check that a follower keeps up (ZooKeeper 3.8's `SyncLimitCheck`, one per
//! `LearnerHandler`): at each ping, every tick/2, the leader closes its connection to a
//! follower that has left a proposal unacknowledged for syncLimit × tick or more.
//!
//! Like ZooKeeper's, it follows two proposals at most, each with when it was sent: the
//! *current* one, the oldest the follower had not acknowledged when it was taken, and the
//! *next*, the newest sent since. The current one's acknowledgement makes the next one current
//! (so the proposals between them go unwatched: the check measures the age of a proposal sent
//! no earlier than the oldest unacknowledged one); the next one's acknowledgement, arriving
//! first, forgets it. The check starts once the follower has acknowledged the leader's log
//! (ZooKeeper's `NEWLEADER` acknowledgement): proposals sent before are not watched.

use std::time::Duration;

use madsim::time::Instant;

/// One follower's check: the proposals it watches, by log position, with when each was sent.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SyncLimitCheck {
    current: Option<(usize, Instant)>,
    next: Option<(usize, Instant)>,
}

impl SyncLimitCheck {
    /// The proposal at log position `at` was sent to the follower `now`.
    pub(super) fn proposed(&mut self, at: usize, now: Instant) {
        if self.current.is_none() {
            self.current = Some((at, now));
        } else {
            self.next = Some((at, now));
        }
    }

    /// The follower acknowledged its log up to `logged` entries, so the proposal at position
    /// `logged - 1` (each proposal is acknowledged on its own, in order).
    pub(super) fn acked(&mut self, logged: usize) {
        let at = logged.checked_sub(1);
        if self.current.map(|(p, _)| p) == at {
            self.current = self.next.take();
        } else if self.next.map(|(p, _)| p) == at {
            self.next = None;
        }
    }

    /// Whether the watched proposal has gone unacknowledged for `limit` or more by `now`:
    /// then the leader drops the follower.
    pub(super) fn overdue(&self, now: Instant, limit: Duration) -> bool {
        self.current
            .is_some_and(|(_, sent)| now.duration_since(sent) >= limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Duration = Duration::from_millis(2_000);

    fn at(start: Instant, ms: u64) -> Instant {
        start + Duration::from_millis(ms)
    }

    /// Runs `test` on simulated time, with a fresh check and the instant it starts at.
    fn with_check(test: impl FnOnce(SyncLimitCheck, Instant)) {
        madsim::runtime::Runtime::new()
            .block_on(async { test(SyncLimitCheck::default(), Instant::now()) });
    }

    #[test]
    fn a_proposal_unacknowledged_for_the_limit_is_overdue() {
        with_check(|mut check, start| {
            assert!(!check.overdue(at(start, 5_000), LIMIT), "nothing sent");
            check.proposed(0, start);
            assert!(!check.overdue(at(start, 1_999), LIMIT));
            assert!(check.overdue(at(start, 2_000), LIMIT));
            check.acked(1);
            assert!(!check.overdue(at(start, 9_000), LIMIT), "acknowledged");
        });
    }

    #[test]
    fn the_next_proposal_watched_is_the_newest_sent() {
        with_check(|mut check, start| {
            check.proposed(0, start);
            check.proposed(1, at(start, 100));
            check.proposed(2, at(start, 500));
            check.acked(1);
            // Position 1 goes unwatched: the check now times position 2, sent at 500 ms.
            assert!(!check.overdue(at(start, 2_400), LIMIT));
            assert!(check.overdue(at(start, 2_500), LIMIT));
            check.acked(2);
            check.acked(3);
            assert!(!check.overdue(at(start, 9_000), LIMIT), "all acknowledged");
        });
    }

    #[test]
    fn the_next_proposal_acknowledged_first_is_forgotten() {
        with_check(|mut check, start| {
            check.proposed(4, start);
            check.proposed(5, at(start, 100));
            check.acked(6);
            check.acked(5);
            assert!(
                !check.overdue(at(start, 9_000), LIMIT),
                "nothing left watched"
            );
        });
    }
}
