//! `splitbrain bench --real`'s measurements: our `Mutex`, Curator's `InterProcessMutex` and
//! the naive herd lock contended by N processes, each with its own session, on one real
//! server, and our `LeaderLatch` against Curator's. Every contender is an OS process of its
//! own — ours the hidden `splitbrain bench-client` ([`contender`]), Curator's the JVM program
//! `real/java/CuratorBench.java` — that connects, says `ready`, runs its cycles on `go` with
//! no hold or think time, and prints the time of each call and outcome
//! (`bench::lines`) once done. [`Bench::measure`] turns one run of them into a [`Sample`]: the
//! acquisitions' latencies and wall time, the contenders' CPU time during their cycles
//! (`bench::process`: each process's CPU clock, read at `go` and at `done`), the watch events our
//! sessions delivered, and, for latches, the failovers (a leader's `close` to the next
//! leader's being told).

pub mod contender;
mod lines;
mod process;

use std::time::{Duration, Instant};

use coordination::ids::ClientSlot;
use coordination::zk::Path as ZkPath;
use serde::{Deserialize, Serialize};

use crate::ClientLauncher;
use crate::curator::{Curator, CuratorRecipe};
use lines::{Line, Mark};
use process::Running;

/// How long the contenders may take to connect (JVMs start slowly on a loaded machine).
const READY_WITHIN: Duration = Duration::from_secs(120);
/// How long a run's cycles may take.
const CYCLES_WITHIN: Duration = Duration::from_secs(600);

/// One of our recipes, as a Rust contender runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lock {
    /// `coordination::recipes::Mutex`.
    Mutex,
    /// `coordination::recipes::NaiveHerdMutex`: every waiter watches the one lock node.
    NaiveHerd,
    /// `coordination::recipes::LeaderLatch`.
    LeaderLatch,
}

/// What a Rust contender is told on the first line of its stdin.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ContenderSpec {
    /// The recipe it runs.
    pub lock: Lock,
    /// The server.
    pub connect_string: String,
    /// The session timeout it asks for.
    pub session_timeout_ms: u64,
    /// The lock (or latch) path.
    pub lock_path: ZkPath,
    /// Its slot (part of its nodes' names).
    pub slot: ClientSlot,
    /// Its cycles.
    pub cycles: u32,
}

/// Who contends in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Contestant {
    /// Our `Mutex`.
    OurMutex,
    /// Curator's `InterProcessMutex`.
    CuratorMutex,
    /// Our naive herd lock.
    NaiveHerd,
    /// Our `LeaderLatch`.
    OurLatch,
    /// Curator's `LeaderLatch`.
    CuratorLatch,
}

impl Contestant {
    /// The name tables and errors use.
    pub fn name(self) -> &'static str {
        match self {
            Contestant::OurMutex => "splitbrain Mutex",
            Contestant::CuratorMutex => "Curator InterProcessMutex",
            Contestant::NaiveHerd => "naive herd lock",
            Contestant::OurLatch => "splitbrain LeaderLatch",
            Contestant::CuratorLatch => "Curator LeaderLatch",
        }
    }

    /// Our recipe it runs, or Curator's.
    fn side(self) -> Result<Lock, CuratorRecipe> {
        match self {
            Contestant::OurMutex => Ok(Lock::Mutex),
            Contestant::NaiveHerd => Ok(Lock::NaiveHerd),
            Contestant::OurLatch => Ok(Lock::LeaderLatch),
            Contestant::CuratorMutex => Err(CuratorRecipe::Mutex),
            Contestant::CuratorLatch => Err(CuratorRecipe::LeaderLatch),
        }
    }
}

/// What one run measured.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    /// Cycles of every contender together.
    pub cycles: u64,
    /// From the first call to the end of the last cycle.
    pub wall: Duration,
    /// Each cycle's wait: `acquire` to acquired, or `start` to leader.
    pub latencies: Vec<Duration>,
    /// Each leader's `close` to the next leader's being told (latches only).
    pub failovers: Vec<Duration>,
    /// The contenders' CPU time during their cycles (user and system).
    pub cpu: Duration,
    /// The watch events the contenders' sessions delivered during their cycles (`None`:
    /// Curator's, which keeps them inside).
    pub watched: Option<u64>,
}

/// Where and how runs happen: one server, one session timeout, both kinds of contender.
pub struct Bench<'a> {
    /// The server.
    pub connect_string: String,
    /// Every contender's session timeout.
    pub session_timeout_ms: u64,
    /// Starts our contenders (`splitbrain bench-client`).
    pub launcher: &'a ClientLauncher,
    /// Curator's compiled contender.
    pub curator: &'a Curator,
}

impl Bench<'_> {
    /// Runs `count` contenders of `who` on `lock_path`, `cycles` each, and measures them;
    /// one line saying what failed otherwise (every process is stopped either way).
    pub fn measure(
        &self,
        who: Contestant,
        count: u16,
        cycles: u32,
        lock_path: &ZkPath,
    ) -> Result<Sample, String> {
        let mut running = Vec::new();
        for slot in 0..count {
            let name = format!("{} contender {slot}", who.name());
            running.push(Running::spawn(self.command(who, cycles, lock_path), name)?);
            if let Ok(lock) = who.side() {
                let spec = ContenderSpec {
                    lock,
                    connect_string: self.connect_string.clone(),
                    session_timeout_ms: self.session_timeout_ms,
                    lock_path: lock_path.clone(),
                    slot: ClientSlot(slot),
                    cycles,
                };
                let line = serde_json::to_string(&spec).map_err(|e| e.to_string())?;
                running.last_mut().expect("pushed").tell(&line)?;
            }
        }
        let ready_by = Instant::now() + READY_WITHIN;
        for contender in &mut running {
            expect(contender, ready_by, Line::Ready)?;
        }
        let mut cpu_before = Vec::new();
        for contender in &mut running {
            cpu_before.push(contender.cpu_time()?);
            contender.tell("go")?;
        }
        let done_by = Instant::now() + CYCLES_WITHIN;
        let mut reports = Vec::new();
        for (contender, before) in running.iter_mut().zip(cpu_before) {
            let mut report = read_report(contender, done_by)?;
            report.cpu = contender.cpu_time()?.saturating_sub(before);
            reports.push(report);
        }
        Ok(Sample::of(&reports))
    }

    /// The command line of `who`'s contender.
    fn command(&self, who: Contestant, cycles: u32, lock_path: &ZkPath) -> std::process::Command {
        match who.side() {
            // The spec comes on stdin.
            Ok(_) => self.launcher.command(),
            Err(recipe) => self.curator.bench_command(
                recipe,
                &self.connect_string,
                self.session_timeout_ms,
                lock_path,
                cycles,
            ),
        }
    }
}

/// Reads the contender's next line and checks it is `wanted`.
fn expect(contender: &mut Running, deadline: Instant, wanted: Line) -> Result<(), String> {
    match contender.next_line(deadline)? {
        (_, line) if line == wanted => Ok(()),
        (_, other) => Err(format!("expected {wanted:?} first, found {other:?}")),
    }
}

/// What one contender printed after its cycles.
#[derive(Debug, Default)]
struct Report {
    marks: Vec<(Duration, Mark)>,
    watched: Option<u64>,
    done: Duration,
    cpu: Duration,
}

/// Reads the contender's lines up to `done`.
fn read_report(contender: &mut Running, deadline: Instant) -> Result<Report, String> {
    let mut report = Report::default();
    loop {
        match contender.next_line(deadline)? {
            (at, Line::Mark(mark)) => report.marks.push((at, mark)),
            (_, Line::Watched(count)) => report.watched = Some(count),
            (at, Line::Done) => {
                report.done = at;
                return Ok(report);
            }
            (_, Line::Ready) => return Err("said `ready` twice".into()),
        }
    }
}

impl Sample {
    /// The sample of a run whose contenders reported `reports`.
    fn of(reports: &[Report]) -> Sample {
        let mut sample = Sample {
            watched: Some(0),
            ..Sample::default()
        };
        let mut all = Vec::new();
        for report in reports {
            let mut called = None;
            for &(at, mark) in &report.marks {
                match mark {
                    Mark::Acquire | Mark::Start => called = Some(at),
                    Mark::Acquired | Mark::Leader => {
                        sample.cycles += 1;
                        if let Some(called) = called.take() {
                            sample.latencies.push(at.saturating_sub(called));
                        }
                    }
                    Mark::Released | Mark::Close | Mark::Closed => {}
                }
                all.push((at, mark));
            }
            sample.cpu += report.cpu;
            sample.watched = sample.watched.zip(report.watched).map(|(a, b)| a + b);
        }
        all.sort();
        let first = all.first().map_or(Duration::ZERO, |&(at, _)| at);
        let last = reports.iter().map(|r| r.done).max().unwrap_or(first);
        sample.wall = last.saturating_sub(first);
        let mut closed = None;
        for (at, mark) in all {
            match mark {
                Mark::Close => closed = Some(at),
                Mark::Leader => {
                    if let Some(closed) = closed.take() {
                        sample.failovers.push(at.saturating_sub(closed));
                    }
                }
                _ => {}
            }
        }
        sample
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    #[test]
    fn a_sample_pairs_calls_with_outcomes_and_closes_with_the_next_leader() {
        let leader = Report {
            marks: vec![
                (at(10), Mark::Start),
                (at(12), Mark::Leader),
                (at(20), Mark::Close),
                (at(21), Mark::Closed),
            ],
            watched: Some(0),
            done: at(21),
            cpu: at(5),
        };
        let follower = Report {
            marks: vec![(at(11), Mark::Start), (at(24), Mark::Leader)],
            watched: Some(1),
            done: at(30),
            cpu: at(7),
        };
        let sample = Sample::of(&[leader, follower]);
        assert_eq!(sample.cycles, 2);
        assert_eq!(sample.latencies, vec![at(2), at(13)]);
        assert_eq!(sample.failovers, vec![at(4)]);
        assert_eq!(sample.wall, at(20));
        assert_eq!(sample.cpu, at(12));
        assert_eq!(sample.watched, Some(1));
        let curator = Report {
            marks: vec![(at(1), Mark::Acquire), (at(3), Mark::Acquired)],
            watched: None,
            done: at(4),
            cpu: at(1),
        };
        assert_eq!(Sample::of(&[curator]).watched, None);
    }
}
