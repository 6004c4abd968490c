//! Minimization: delta debugging (Zeller and Hildebrandt's ddmin) over a run's concrete fault
//! schedule, the seed held fixed by the caller's oracle. The result still violates and is
//! 1-minimal: dropping any single remaining fault makes the violation go away. [`simplify`]
//! then shortens the remaining faults ([`shorter`]) as long as the violation stays.

use std::collections::BTreeMap;

use crate::fault::{Fault, ScheduledFault};

/// A shrunk schedule and how many runs of the oracle it took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shrunk<T> {
    /// The smallest schedule found that still violates.
    pub schedule: Vec<T>,
    /// Oracle calls made (cached repeats not counted).
    pub runs: usize,
}

/// Shrinks `schedule`, for which `still_violates` holds, to a 1-minimal subsequence for which
/// it still holds (items keep their order). If `still_violates(schedule)` does not hold, the
/// schedule comes back unchanged.
pub fn shrink<T: Clone>(schedule: &[T], mut still_violates: impl FnMut(&[T]) -> bool) -> Shrunk<T> {
    let mut cache: BTreeMap<Vec<usize>, bool> = BTreeMap::new();
    let mut runs = 0;
    let mut test = |indices: &[usize]| -> bool {
        if let Some(&known) = cache.get(indices) {
            return known;
        }
        runs += 1;
        let items: Vec<T> = indices.iter().map(|&i| schedule[i].clone()).collect();
        let verdict = still_violates(&items);
        cache.insert(indices.to_vec(), verdict);
        verdict
    };
    let all: Vec<usize> = (0..schedule.len()).collect();
    let current = if !test(&all) {
        all
    } else if test(&[]) {
        Vec::new()
    } else {
        ddmin(all, &mut test)
    };
    Shrunk {
        schedule: current.iter().map(|&i| schedule[i].clone()).collect(),
        runs,
    }
}

/// Greedily replaces items of `schedule` by simpler ones from `simpler` (tried in order) while
/// `still_violates` holds; an item is simplified again until none of its candidates works.
pub fn simplify<T: Clone>(
    schedule: &[T],
    simpler: impl Fn(&T) -> Vec<T>,
    mut still_violates: impl FnMut(&[T]) -> bool,
) -> Shrunk<T> {
    let mut current = schedule.to_vec();
    let mut runs = 0;
    for index in 0..current.len() {
        'item: loop {
            for candidate in simpler(&current[index]) {
                let mut trial = current.clone();
                trial[index] = candidate;
                runs += 1;
                if still_violates(&trial) {
                    current = trial;
                    continue 'item;
                }
            }
            break;
        }
    }
    Shrunk {
        schedule: current,
        runs,
    }
}

/// Shorter versions of a fault that lasts (half, then three quarters of its duration), for
/// [`simplify`]; none for instantaneous faults or at 1 ms.
pub fn shorter(scheduled: &ScheduledFault) -> Vec<ScheduledFault> {
    let Some(duration) = scheduled.fault.duration_ms().filter(|d| *d > 1) else {
        return Vec::new();
    };
    let mut lengths = vec![duration / 2, duration - duration / 4];
    lengths.dedup();
    lengths
        .into_iter()
        .filter(|d| *d < duration)
        .map(|d| {
            let mut fault = scheduled.fault.clone();
            match &mut fault {
                Fault::Pause { for_ms, .. }
                | Fault::PauseServer {
                    pause_ms: for_ms, ..
                } => {
                    *for_ms = d;
                }
                Fault::Partition { for_ms, .. }
                | Fault::Isolate { for_ms, .. }
                | Fault::IsolateFromPeers { for_ms, .. }
                | Fault::LagServer { for_ms, .. }
                | Fault::SplitServers { for_ms, .. }
                | Fault::SlowServerLinks { for_ms, .. }
                | Fault::CutFromServer { for_ms, .. }
                | Fault::Delay { for_ms, .. }
                | Fault::Drop { for_ms, .. } => *for_ms = Some(d),
                Fault::RestartServer { down_ms } | Fault::CrashServer { down_ms, .. } => {
                    *down_ms = d;
                }
                Fault::Heal | Fault::ExpireSession { .. } | Fault::Crash { .. } => {}
            }
            ScheduledFault {
                fault,
                ..scheduled.clone()
            }
        })
        .collect()
}

/// The ddmin loop over index sets; `current` violates on entry and on exit.
fn ddmin(mut current: Vec<usize>, test: &mut impl FnMut(&[usize]) -> bool) -> Vec<usize> {
    let mut granularity = 2;
    while current.len() >= 2 {
        let chunks = split(&current, granularity);
        if let Some(chunk) = chunks.iter().find(|chunk| test(chunk)) {
            current = chunk.clone();
            granularity = 2;
            continue;
        }
        let complements: Vec<Vec<usize>> = (0..chunks.len())
            .map(|skip| {
                let kept = chunks.iter().enumerate().filter(|(i, _)| *i != skip);
                kept.flat_map(|(_, chunk)| chunk.iter().copied()).collect()
            })
            .collect();
        if let Some(complement) = complements.into_iter().find(|c| test(c)) {
            current = complement;
            granularity = (granularity - 1).max(2);
            continue;
        }
        if granularity >= current.len() {
            break;
        }
        granularity = (granularity * 2).min(current.len());
    }
    current
}

/// `items` in `n` contiguous chunks of near-equal size.
fn split(items: &[usize], n: usize) -> Vec<Vec<usize>> {
    let n = n.min(items.len()).max(1);
    (0..n)
        .map(|k| items[k * items.len() / n..(k + 1) * items.len() / n].to_vec())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_exactly_the_items_the_violation_needs() {
        let schedule: Vec<u32> = (0..20).collect();
        let shrunk = shrink(&schedule, |s| s.contains(&3) && s.contains(&17));
        assert_eq!(shrunk.schedule, [3, 17]);
        assert!(shrunk.runs < 60, "{} runs", shrunk.runs);
    }

    #[test]
    fn keeps_the_order_of_the_schedule() {
        let schedule = ["pause", "heal", "partition", "expire"];
        let needed = |s: &[&str]| {
            let pause = s.iter().position(|f| *f == "pause");
            let expire = s.iter().position(|f| *f == "expire");
            matches!((pause, expire), (Some(p), Some(e)) if p < e)
        };
        assert_eq!(shrink(&schedule, needed).schedule, ["pause", "expire"]);
    }

    #[test]
    fn a_violation_without_faults_shrinks_to_nothing() {
        let shrunk = shrink(&[1, 2, 3], |_| true);
        assert_eq!(shrunk.schedule, Vec::<i32>::new());
        assert_eq!(shrunk.runs, 2);
    }

    #[test]
    fn a_schedule_that_does_not_violate_comes_back_unchanged() {
        let shrunk = shrink(&[1, 2, 3], |_| false);
        assert_eq!(shrunk.schedule, [1, 2, 3]);
        assert_eq!(shrunk.runs, 1);
    }

    #[test]
    fn simplify_shortens_items_while_the_violation_stays() {
        // Violates while the pause lasts at least 300 ms.
        let pause = ScheduledFault::at(
            10,
            Fault::Pause {
                client: 0,
                for_ms: 2_000,
            },
        );
        let restart = ScheduledFault::at(20, Fault::Crash { client: 0 });
        let long_enough = |s: &[ScheduledFault]| matches!(s[0].fault, Fault::Pause { for_ms, .. } if for_ms >= 300);
        let simplified = simplify(&[pause, restart.clone()], shorter, long_enough);
        let Fault::Pause { for_ms, .. } = simplified.schedule[0].fault else {
            panic!()
        };
        assert!((300..600).contains(&for_ms), "{for_ms}");
        assert_eq!(simplified.schedule[1], restart);
        assert!(shorter(&restart).is_empty());
    }

    #[test]
    fn a_restart_s_downtime_shrinks_like_a_duration() {
        let restart = ScheduledFault::at(20, Fault::RestartServer { down_ms: 2_000 });
        let downs: Vec<Fault> = shorter(&restart).into_iter().map(|s| s.fault).collect();
        assert_eq!(
            downs,
            [1_000, 1_500].map(|down_ms| Fault::RestartServer { down_ms })
        );
    }

    #[test]
    fn the_result_is_one_minimal() {
        // Violates when at least two of the even items are in.
        let schedule: Vec<u32> = (0..12).collect();
        let oracle = |s: &[u32]| s.iter().filter(|x| *x % 2 == 0).count() >= 2;
        let shrunk = shrink(&schedule, oracle).schedule;
        assert_eq!(shrunk.len(), 2);
        for drop in 0..shrunk.len() {
            let mut fewer = shrunk.clone();
            fewer.remove(drop);
            assert!(!oracle(&fewer));
        }
    }
}
