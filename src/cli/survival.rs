//! `splitbrain survival`: how often a ZooKeeper session survives a partition on the
//! simulator, beside what ZooKeeper 3.8's client timing rules predict ([`rules`]).
//!
//! For session timeouts T = 1 s and 4 s and partitions of 0.1·T … 1.5·T, one idle client
//! (holding a lock, so it only pings) is cut off from the server both ways, starting at an
//! instant drawn from the seed within a session timeout, and each seed's run tells whether
//! the session survived (the server never expired it) and how long after the partition's end
//! the client re-attached it. The framework layer's LOST is put off (10 T) so that the
//! ZooKeeper session itself is measured, not Curator's giving up on it. The run is a
//! [`Scenario`] ([`survival_scenario`]) and what it showed is read off its trace as the
//! client and the server recorded it ([`seen`]), so `splitbrain fidelity` runs the same
//! scenario on a real server and reads its trace the same way.
//!
//! The client is splitbrain's simulated one, timed as Java's `ClientCnxn`, or with `--client
//! zookeeper-client` the unmodified `zookeeper-client` crate (`programs::idle_session`, an idle
//! session rather than a lock holder), which a real run can run too: the same client code on
//! both sides.

pub(crate) mod rules;

use std::process::ExitCode;
use std::time::Duration;

use coordination::framework::FrameworkConfig;
use coordination::session::RawState;
use coordination::zk::{Path, SessionId};
use recipe_table::recipes::RecipeKind;
use scenarios::fault::{Fault, Node, ScheduledFault};
use scenarios::rng::SplitMix64;
use scenarios::scenario::{Scenario, ServerSettings, Span, Workload};
use sim::Sim;
use splitbrain::programs::idle_session;
use splitbrain::run::{RunError, guarded};
use splitbrain::sweep;
use trace::{EventKind, ServerSession, Trace};

use super::hunt::progress::Progress;
use super::{Failure, Outcome};

/// The session timeouts measured, in ms.
pub(crate) const TIMEOUTS_MS: [u64; 2] = [1_000, 4_000];

/// The partition lengths, in tenths of T: 0.1·T … 1.5·T.
pub(crate) const TENTHS: std::ops::RangeInclusive<u64> = 1..=15;

/// When the partition may start (ms): after the client holds its lock, within one T.
const EARLIEST_CUT_MS: u64 = 2_000;

/// Which client a survival run measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Client {
    /// splitbrain's own client, holding a lock: in the simulator timed as Java's `ClientCnxn`,
    /// on a real server the real executor's sessions on `zookeeper-client`.
    JavaTimed,
    /// The unmodified `zookeeper-client`, an idle session, on both sides.
    ZookeeperClient,
}

impl Client {
    /// The client as the tables name it.
    pub fn label(self) -> &'static str {
        match self {
            Client::JavaTimed => "splitbrain's (Java-timed)",
            Client::ZookeeperClient => "zookeeper-client",
        }
    }
}

/// Arguments of `survival`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Seeds per partition length.
    #[arg(long, default_value_t = 200)]
    seeds: u64,
    /// The client measured.
    #[arg(long, value_enum, default_value_t = Client::JavaTimed)]
    client: Client,
    /// Worker threads [default: the number of cores].
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
}

/// One run to make: a client, a session timeout, a partition length and a seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Job {
    /// The client.
    pub client: Client,
    /// The session timeout T, in ms.
    pub t_ms: u64,
    /// How long the partition lasts, in ms.
    pub partition_ms: u64,
    /// The seed: when the partition starts, and the simulator's draws.
    pub seed: u64,
}

/// The (T, partition length) pairs of the table, in its order.
pub(crate) fn lengths() -> impl Iterator<Item = (u64, u64)> {
    (TIMEOUTS_MS.iter()).flat_map(|&t_ms| TENTHS.map(move |tenths| (t_ms, t_ms * tenths / 10)))
}

/// What one run showed.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Observation {
    survived: bool,
    stayed_connected: bool,
    /// ms from the partition's end to the re-attachment, if the client re-attached.
    reattach_ms: Option<u64>,
}

/// The runs of one partition length, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Row {
    /// Runs made.
    pub runs: u64,
    /// Runs whose session the server never expired.
    pub survived: u64,
    /// Runs whose client never went Disconnected.
    pub stayed_connected: u64,
    /// Surviving runs whose client re-attached the session after the partition's end.
    pub reattached: u64,
    /// The re-attachment times of those runs, summed (ms).
    pub reattach_ms: u64,
}

impl Row {
    /// The mean re-attachment time (ms), when a run re-attached.
    pub fn mean_reattach_ms(&self) -> Option<u64> {
        self.reattach_ms.checked_div(self.reattached)
    }

    /// Counts one run.
    pub fn add(&mut self, seen: Observation) {
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
    let (seeds, client) = (args.seeds, args.client);
    let jobs: Vec<Job> = lengths()
        .flat_map(|(t_ms, partition_ms)| {
            (0..seeds).map(move |seed| Job {
                client,
                t_ms,
                partition_ms,
                seed,
            })
        })
        .collect();
    let mut progress = Progress::new("survival", jobs.len() as u64, false);
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
    say!("Client: {}.\n", client.label());
    print_table(&rows);
    Ok(ExitCode::SUCCESS)
}

/// Runs one job on the simulator and reads what it showed from the trace.
pub(crate) fn measure(job: &Job) -> Result<Observation, RunError> {
    let scenario = survival_scenario(*job);
    let sim = Sim::from_scenario(&scenario, job.seed, scenario.faults.clone());
    let sim = match job.client {
        Client::JavaTimed => sim,
        Client::ZookeeperClient => sim.recipe_code(idle_session().into()),
    };
    guarded(|| {
        let trace = sim.run().map_err(|e| RunError::Settings(e.to_string()))?;
        Ok(seen(&trace))
    })
}

/// The run of `job`: one client holding a lock (or an idle session) past the horizon, cut
/// off from the server both ways once, at an instant drawn from the seed; the server's tick
/// is T/10.
pub(crate) fn survival_scenario(job: Job) -> Scenario {
    let mut rng = SplitMix64::for_stream(job.seed, &[job.t_ms, job.partition_ms]);
    let at_ms = EARLIEST_CUT_MS + rng.in_range(0, job.t_ms - 1);
    let horizon_ms = at_ms + job.partition_ms + 4 * job.t_ms + 6_000;
    let cut = Fault::Partition {
        a: Node::Client(0),
        b: Node::Server,
        oneway: false,
        for_ms: Some(job.partition_ms),
    };
    Scenario {
        name: "survival".into(),
        description: format!(
            "one idle client cut off from the server for {} ms, T = {} ms",
            job.partition_ms, job.t_ms
        ),
        recipe: match job.client {
            Client::JavaTimed => RecipeKind::Mutex.into(),
            Client::ZookeeperClient => idle_session().recipe().clone(),
        },
        recipe_settings: Default::default(),
        // A path of its own, so that runs made at once on one real server never contend.
        lock_path: Path::new(&format!(
            "/locks/survival-{}-{}-{}",
            job.t_ms, job.partition_ms, job.seed
        ))
        .expect("a valid path"),
        clients: 1,
        workload: Workload {
            acquisitions: 1,
            hold_ms: Span::fixed(horizon_ms),
            think_ms: Span::fixed(0),
            acquire_timeout_ms: None,
            fenced: true,
            stagger_ms: 0,
            reentrant: 1,
        },
        server: ServerSettings::standalone(job.t_ms / 10, job.t_ms, 1_000),
        framework: FrameworkConfig {
            lost_after_percent: 1_000,
            ..FrameworkConfig::default()
        },
        horizon_ms,
        faults: vec![ScheduledFault::at(at_ms, cut)],
        random_faults: Vec::new(),
        seeds: Default::default(),
        properties: Default::default(),
    }
}

/// What a survival run's trace shows, as the client saw it (so that a real run's trace,
/// whose server records only expiries, reads the same): the client's first session
/// survived unless the server expired it (an expiry the trace records) or the client was
/// told so; it re-attached when the client was next connected on it after going
/// Disconnected, timed from the partition's end.
pub(crate) fn seen(trace: &Trace) -> Observation {
    let healed = (trace.events.iter())
        .find(|e| matches!(e.kind, EventKind::FaultEnd { .. }))
        .map_or(u64::MAX, |e| e.t);
    let mut first: Option<SessionId> = None;
    let mut seen = Observation {
        survived: true,
        stayed_connected: true,
        reattach_ms: None,
    };
    for event in &trace.events {
        match &event.kind {
            EventKind::ServerSession {
                session,
                change: ServerSession::Expired,
            } if first == Some(*session) => seen.survived = false,
            EventKind::RawSession {
                state: RawState::Expired,
            } if seen.reattach_ms.is_none() => seen.survived = false,
            EventKind::RawSession {
                state: RawState::Disconnected,
            } => seen.stayed_connected = false,
            EventKind::RawSession {
                state: RawState::Connected { session, .. },
            } => match first {
                None => first = Some(*session),
                Some(first) if first == *session && !seen.stayed_connected => {
                    let after = Duration::from_nanos(event.t.saturating_sub(healed));
                    seen.reattach_ms.get_or_insert(after.as_millis() as u64);
                }
                Some(_) => {}
            },
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
        let sim_reattach =
            (row.mean_reattach_ms()).map_or_else(|| "–".into(), |ms| format!("{ms} ms"));
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
