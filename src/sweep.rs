//! Running many independent jobs (one simulated run each) on worker threads while handing
//! the results back in job order, so that output is the same whatever the scheduling.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// Runs `job` on every item with `workers` threads and calls `on_result(index, result)` on
/// the calling thread in index order, as soon as every earlier result is in.
pub fn in_order<I, R, J, F>(items: &[I], workers: usize, job: J, mut on_result: F)
where
    I: Sync,
    R: Send,
    J: Fn(&I) -> R + Sync,
    F: FnMut(usize, R),
{
    let next = AtomicUsize::new(0);
    let (send, receive) = mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, items.len().max(1)) {
            let send = send.clone();
            let (next, job) = (&next, &job);
            scope.spawn(move || {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(index) else { break };
                    if send.send((index, job(item))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(send);
        let mut waiting: BTreeMap<usize, R> = BTreeMap::new();
        let mut due = 0;
        for (index, result) in receive {
            waiting.insert(index, result);
            while let Some(result) = waiting.remove(&due) {
                on_result(due, result);
                due += 1;
            }
        }
    });
}

/// One shard `I/N` of a sweep: the seeds with `seed % N == I`. The N shards of a range cover
/// each of its seeds exactly once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard's index, below `count`.
    pub index: u64,
    /// The number of shards.
    pub count: u64,
}

impl Shard {
    /// True when `seed` belongs to this shard.
    pub fn contains(self, seed: u64) -> bool {
        seed % self.count == self.index
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// Parses `I/N` with `I < N`.
    fn from_str(text: &str) -> Result<Shard, String> {
        let expected = || format!("expected a shard I/N with I < N, found {text:?}");
        let (index, count) = text.split_once('/').ok_or_else(expected)?;
        let index: u64 = index.trim().parse().map_err(|_| expected())?;
        let count: u64 = count.trim().parse().map_err(|_| expected())?;
        if index < count {
            Ok(Shard { index, count })
        } else {
            Err(expected())
        }
    }
}

/// The number of worker threads to use: the machine's parallelism.
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order_whatever_the_workers() {
        let items: Vec<u64> = (0..50).collect();
        for workers in [1, 2, 7] {
            let mut seen = Vec::new();
            // Later items finish sooner, so results arrive out of order.
            in_order(
                &items,
                workers,
                |&i| {
                    let mut spin = 0u64;
                    for k in 0..(50 - i) * 1000 {
                        spin = spin.wrapping_add(k);
                    }
                    (i * 2, spin)
                },
                |index, (double, _)| seen.push((index, double)),
            );
            let wanted: Vec<(usize, u64)> = (0..50).map(|i| (i as usize, i * 2)).collect();
            assert_eq!(seen, wanted);
        }
    }

    #[test]
    fn the_shards_of_a_range_cover_each_seed_once() {
        for count in 1..5u64 {
            let shards: Vec<Shard> = (0..count)
                .map(|i| format!("{i}/{count}").parse().unwrap())
                .collect();
            for seed in 17..250 {
                let owners = shards.iter().filter(|s| s.contains(seed)).count();
                assert_eq!(owners, 1, "seed {seed} with {count} shards");
            }
        }
        for bad in ["2/2", "1", "a/2", "1/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn no_items_is_fine() {
        let mut calls = 0;
        in_order(&[] as &[u8], 2, |_| (), |_, ()| calls += 1);
        assert_eq!(calls, 0);
    }
}
