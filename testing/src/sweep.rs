//! Running many independent jobs (one simulated run each) on worker threads while handing
//! the results back in job order, so that output is the same whatever the scheduling. Jobs
//! are drawn lazily from an iterator and workers never run more than a small window ahead
//! of the consumer, so a sweep of any length holds at most that window of results.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::{Condvar, Mutex, MutexGuard};

/// How many results per worker may wait for the consumer: finished but not yet handed back
/// in order, or running ahead of the oldest unfinished job. Enough that the workers go on
/// while the consumer writes a kept trace, reruns it and renders its report (tens of
/// milliseconds, runs of a few milliseconds each); few enough that what waits stays small (a
/// hunt's results are a run's violations, and its trace only while a property still wants
/// one: see [`crate::wants`]).
pub const WINDOW_PER_WORKER: usize = 32;

/// What the workers and the consumer share: the jobs not yet started and how far the
/// consumer has got.
struct Queue<T> {
    jobs: T,
    /// The index of the next job to start.
    next: usize,
    /// The index of the next result the consumer waits for.
    due: usize,
    /// Set when a thread unwinds: every other thread stops instead of waiting for it.
    stopped: bool,
}

/// The queue with its lock and the condition workers wait on.
struct Shared<T> {
    queue: Mutex<Queue<T>>,
    advanced: Condvar,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, Queue<T>> {
        self.queue
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Stops the sweep when the thread holding it unwinds, so that no thread waits forever for
/// a result that will never come.
struct StopOnUnwind<'a, T>(&'a Shared<T>);

impl<T> Drop for StopOnUnwind<'_, T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().stopped = true;
            self.0.advanced.notify_all();
        }
    }
}

/// Runs `job` on every item of `jobs` with `workers` threads and calls
/// `on_result(item, result)` on the calling thread in the iterator's order, as soon as every
/// earlier result is in. Items are drawn from the iterator only when a worker is free and
/// fewer than `workers ×` [`WINDOW_PER_WORKER`] results are ahead of the consumer, so memory
/// stays bounded whatever the number of items.
pub fn in_order<T, I, R, J, F>(jobs: T, workers: usize, job: J, mut on_result: F)
where
    T: Iterator<Item = I> + Send,
    I: Send,
    R: Send,
    J: Fn(&I) -> R + Sync,
    F: FnMut(I, R),
{
    let workers = workers.max(1);
    let window = workers * WINDOW_PER_WORKER;
    let shared = Shared {
        queue: Mutex::new(Queue {
            jobs: jobs.fuse(),
            next: 0,
            due: 0,
            stopped: false,
        }),
        advanced: Condvar::new(),
    };
    let (send, receive) = mpsc::channel::<(usize, I, R)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let send = send.clone();
            let (shared, job) = (&shared, &job);
            scope.spawn(move || {
                let _stop = StopOnUnwind(shared);
                while let Some((index, item)) = take(shared, window) {
                    let result = job(&item);
                    if send.send((index, item, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(send);
        let _stop = StopOnUnwind(&shared);
        let mut waiting: BTreeMap<usize, (I, R)> = BTreeMap::new();
        let mut due = 0;
        for (index, item, result) in receive {
            waiting.insert(index, (item, result));
            let before = due;
            while let Some((item, result)) = waiting.remove(&due) {
                on_result(item, result);
                due += 1;
            }
            if due > before {
                shared.lock().due = due;
                shared.advanced.notify_all();
            }
        }
    });
}

/// The next job and its index, once it is within `window` of the consumer; `None` when the
/// jobs are done or the sweep stopped.
fn take<T: Iterator>(shared: &Shared<T>, window: usize) -> Option<(usize, T::Item)> {
    let mut queue = shared.lock();
    while !queue.stopped && queue.next >= queue.due + window {
        queue = shared
            .advanced
            .wait(queue)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
    }
    if queue.stopped {
        return None;
    }
    let item = queue.jobs.next()?;
    let index = queue.next;
    queue.next += 1;
    Some((index, item))
}

/// One shard `I/N` of a sweep: the seeds with `seed % N == I`. The N shards of a range cover
/// each of its seeds exactly once.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(deny_unknown_fields)]
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

    /// How many seeds of `start..end` belong to this shard, counted without visiting them.
    pub fn count_in(self, start: u64, end: u64) -> u64 {
        // Seeds below `x` in this shard: those `s < x` with `s % count == index`.
        let below = |x: u64| x / self.count + u64::from(x % self.count > self.index);
        below(end.max(start)) - below(start)
    }

    /// This shard's seeds of `start..end`, in increasing order, produced as needed.
    pub fn seeds(self, start: u64, end: u64) -> impl Iterator<Item = u64> + Send + use<> {
        let rest = start % self.count;
        let first = if rest <= self.index {
            start.saturating_add(self.index - rest)
        } else {
            start
                .saturating_add(self.count - rest)
                .saturating_add(self.index)
        };
        let step = usize::try_from(self.count).unwrap_or(usize::MAX);
        (first..end.max(first)).step_by(step)
    }

    /// The whole sweep as one shard, `0/1`.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };
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
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    #[test]
    fn results_come_back_in_order_whatever_the_workers() {
        for workers in [1, 2, 7] {
            let mut seen = Vec::new();
            // Later items finish sooner, so results arrive out of order.
            in_order(
                0..50u64,
                workers,
                |&i| {
                    let mut spin = 0u64;
                    for k in 0..(50 - i) * 1000 {
                        spin = spin.wrapping_add(k);
                    }
                    (i * 2, spin)
                },
                |i, (double, _)| seen.push((i, double)),
            );
            let wanted: Vec<(u64, u64)> = (0..50).map(|i| (i, i * 2)).collect();
            assert_eq!(seen, wanted);
        }
    }

    #[test]
    fn workers_never_run_more_than_the_window_ahead_of_the_consumer() {
        for workers in [1, 2, 5] {
            let window = (workers * WINDOW_PER_WORKER) as u64;
            let consumed = AtomicU64::new(0);
            let drawn = AtomicU64::new(0);
            let jobs = (0..20_000u64).inspect(|_| {
                drawn.fetch_add(1, Ordering::SeqCst);
            });
            in_order(
                jobs,
                workers,
                |&i| {
                    // The consumer has handed back every result below `consumed`; this job
                    // and every job drawn must lie within the window above it.
                    let drawn = drawn.load(Ordering::SeqCst);
                    let done = consumed.load(Ordering::SeqCst);
                    assert!(i < done + window, "job {i} started with {done} consumed");
                    assert!(drawn <= done + window, "{drawn} drawn, {done} consumed");
                    i
                },
                |i, r| {
                    assert_eq!(i, r);
                    assert_eq!(consumed.fetch_add(1, Ordering::SeqCst), i);
                },
            );
            assert_eq!(consumed.load(Ordering::SeqCst), 20_000);
        }
    }

    #[test]
    fn a_panicking_job_stops_the_sweep_instead_of_hanging_it() {
        let result = std::panic::catch_unwind(|| {
            in_order(0..1000u64, 3, |&i| assert!(i != 17, "job 17"), |_, ()| {});
        });
        assert!(result.is_err());
    }

    #[test]
    fn shard_counts_match_the_seeds_they_contain() {
        for count in 1..6u64 {
            for index in 0..count {
                let shard = Shard { index, count };
                for (start, end) in [(0, 0), (0, 1), (3, 17), (5, 5), (7, 100), (0, 1000)] {
                    let visited: Vec<u64> = (start..end).filter(|&s| shard.contains(s)).collect();
                    let produced: Vec<u64> = shard.seeds(start, end).collect();
                    assert_eq!(produced, visited, "{index}/{count} {start}..{end}");
                    let counted = shard.count_in(start, end);
                    assert_eq!(
                        counted,
                        visited.len() as u64,
                        "{index}/{count} {start}..{end}"
                    );
                }
            }
        }
        assert_eq!(Shard::WHOLE.count_in(0, 1_000_000), 1_000_000);
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
        in_order(std::iter::empty::<u8>(), 2, |_| (), |_, ()| calls += 1);
        assert_eq!(calls, 0);
    }
}
