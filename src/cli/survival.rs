//! `splitbrain survival`: how often a ZooKeeper session survives a partition on the
//! simulator, beside what ZooKeeper 3.8's client timing rules predict ([`rules`]).
//!
//! For session timeouts T = 1 s and 4 s and partitions of 0.1·T … 1.5·T, one idle client
//! (holding a lock, so it only pings) is cut off from the server both ways, starting at an
//! instant drawn from the seed within a session timeout, and each seed's run tells whether
//! the session survived (the server never expired it) and how long after the partition's end
//! the client re-attached it. The framework layer's LOST is put off (10 T) so that the
//! ZooKeeper session itself is measured, not Curator's giving up on it.

mod rules;

use std::process::ExitCode;
use std::time::Duration;

use lock::coordination::RawState;
use lock::framework::FrameworkConfig;
use scenarios::fault::{Fault, Node, ScheduledFault};
use scenarios::rng::SplitMix64;
use scenarios::scenario::{ServerSettings, Span, Workload};
use scenarios::trace::{EventKind, ServerSession, Trace};
use sim::Sim;
use splitbrain::run::{RunError, guarded};
use splitbrain::sweep;

use super::hunt::progress::Progress;
use super::{Failure, Outcome};

/// The session timeouts measured, in ms.
const TIMEOUTS_MS: [u64; 2] = [1_000, 4_000];

/// The partition lengths, in tenths of T: 0.1·T … 1.5·T.
const TENTHS: std::ops::RangeInclusive<u64> = 1..=15;

/// When the partition may start (ms): after the client holds its lock, within one T.
const EARLIEST_CUT_MS: u64 = 2_000;

/// Arguments of `survival`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Seeds per partition length.
    #[arg(long, default_value_t = 200)]
    seeds: u64,
    /// Worker threads [default: the number of cores].
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
}

/// One run to make: a session timeout, a partition length and a seed.
#[derive(Clone, Copy, Debug)]
struct Job {
    t_ms: u64,
    partition_ms: u64,
    seed: u64,
}

/// What one run showed.
#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    survived: bool,
    stayed_connected: bool,
    /// ms from the partition's end to the re-attachment, if the client re-attached.
    reattach_ms: Option<u64>,
}

/// The runs of one partition length, summed.
#[derive(Clone, Copy, Debug, Default)]
struct Row {
    runs: u64,
    survived: u64,
    stayed_connected: u64,
    reattached: u64,
    reattach_ms: u64,
}

impl Row {
    fn add(&mut self, seen: Seen) {
        self.runs += 1;
        self.survived += u64::from(seen.survived);
        self.stayed_connected += u64::from(seen.stayed_connected);
        if let (true, Some(ms)) = (seen.survived, seen.reattach_ms) {
            self.reattached += 1;
            self.reattach_ms += ms;
        }
    }
}

/// Runs the command.
pub fn run(args: Args) -> Outcome {
    if args.seeds == 0 {
        return Err(Failure("--seeds: expected at least 1 seed, found 0".into()));
    }
    let seeds = args.seeds;
    let jobs: Vec<Job> = (TIMEOUTS_MS.iter())
        .flat_map(|&t_ms| TENTHS.map(move |tenths| (t_ms, t_ms * tenths / 10)))
        .flat_map(|(t_ms, partition_ms)| {
            (0..seeds).map(move |seed| Job {
                t_ms,
                partition_ms,
                seed,
            })
        })
        .collect();
    let mut progress = Progress::new(jobs.len() as u64, false);
    let workers = args.jobs.unwrap_or_else(sweep::default_workers);
    let mut rows: Vec<(Job, Row)> = Vec::new();
    let mut failed = None;
    sweep::in_order(jobs.into_iter(), workers, measure, |job, seen| {
        progress.inc();
        match seen {
            Ok(seen) => match rows.last_mut() {
                Some((last, row))
                    if (last.t_ms, last.partition_ms) == (job.t_ms, job.partition_ms) =>
                {
                    row.add(seen)
                }
                _ => {
                    let mut row = Row::default();
                    row.add(seen);
                    rows.push((job, row));
                }
            },
            Err(error) => {
                failed = failed
                    .take()
                    .or(Some(format!("seed {}: {error}", job.seed)))
            }
        }
    });
    progress.finish();
    if let Some(error) = failed {
        return Err(Failure(error));
    }
    print_table(&rows);
    Ok(ExitCode::SUCCESS)
}

/// Runs one job and reads what it showed from the trace.
fn measure(job: &Job) -> Result<Seen, RunError> {
    let sim = survival_run(*job);
    guarded(|| {
        let trace = sim.run().map_err(|e| RunError::Settings(e.to_string()))?;
        Ok(seen(&trace))
    })
}

/// The run of `job`: one client holding a lock past the horizon, cut off once.
fn survival_run(job: Job) -> Sim {
    let mut rng = SplitMix64::for_stream(job.seed, &[job.t_ms, job.partition_ms]);
    let at_ms = EARLIEST_CUT_MS + rng.in_range(0, job.t_ms - 1);
    let horizon_ms = at_ms + job.partition_ms + 4 * job.t_ms + 6_000;
    let server = ServerSettings {
        tick_ms: job.t_ms / 10,
        session_timeout_ms: job.t_ms,
        container_sweep_ms: 1_000,
    };
    let workload = Workload {
        acquisitions: 1,
        hold_ms: Span::fixed(horizon_ms),
        think_ms: Span::fixed(0),
        acquire_timeout_ms: None,
        fenced: true,
        stagger_ms: 0,
        reentrant: 1,
    };
    let cut = Fault::Partition {
        a: Node::Client(0),
        b: Node::Server,
        oneway: false,
        for_ms: Some(job.partition_ms),
    };
    Sim::new("survival")
        .seed(job.seed)
        .clients(1)
        .server(server)
        .workload(workload)
        .framework(FrameworkConfig {
            lost_after_percent: 1_000,
            ..FrameworkConfig::default()
        })
        .faults(vec![ScheduledFault { at_ms, fault: cut }])
        .horizon_ms(horizon_ms)
}

/// What a survival run's trace shows.
fn seen(trace: &Trace) -> Seen {
    let healed = (trace.events.iter())
        .find(|e| matches!(e.kind, EventKind::FaultEnd { .. }))
        .map_or(u64::MAX, |e| e.t);
    let mut seen = Seen {
        survived: true,
        stayed_connected: true,
        reattach_ms: None,
    };
    for event in &trace.events {
        match &event.kind {
            EventKind::ServerSession {
                change: ServerSession::Expired,
                ..
            } => seen.survived = false,
            EventKind::RawSession {
                state: RawState::Disconnected,
            } => seen.stayed_connected = false,
            EventKind::ServerSession {
                change: ServerSession::Reattached,
                ..
            } if seen.reattach_ms.is_none() => {
                let after = Duration::from_nanos(event.t.saturating_sub(healed));
                seen.reattach_ms = Some(after.as_millis() as u64);
            }
            _ => {}
        }
    }
    seen
}

/// Prints the table, one row per (T, partition length), as Markdown.
fn print_table(rows: &[(Job, Row)]) {
    say!(
        "| T | partition | survived (sim) | survived (ZooKeeper 3.8 rules) | never noticed (sim / rules) | re-attached after the partition's end, mean (sim / rules) |"
    );
    say!("| --- | --- | --- | --- | --- | --- |");
    for (job, row) in rows {
        let expected = rules::expected(job.t_ms, job.t_ms / 10, job.partition_ms);
        let share = |n: u64| 100.0 * n as f64 / row.runs as f64;
        let sim_reattach = (row.reattach_ms.checked_div(row.reattached))
            .map_or_else(|| "–".into(), |ms| format!("{ms} ms"));
        let rules_reattach = expected
            .reattach_ms
            .map_or_else(|| "–".into(), |ms| format!("{ms:.0} ms"));
        say!(
            "| {} s | {} ms ({:.1} T) | {:.0} % | {:.0} % | {:.0} % / {:.0} % | {sim_reattach} / {rules_reattach} |",
            job.t_ms / 1_000,
            job.partition_ms,
            job.partition_ms as f64 / job.t_ms as f64,
            share(row.survived),
            100.0 * expected.survival,
            share(row.stayed_connected),
            100.0 * expected.stayed_connected,
        );
    }
}
