//! Session survival against partition length, on the simulator and on a real server: the
//! survival table's scenario ([`crate::cli::survival::survival_scenario`]) with the same
//! lengths and T, read off both traces by the same function
//! ([`crate::cli::survival::seen`]). One local server per T (tick T/10, as the simulated
//! one) serves every real run of that T; the rows' runs are made in parallel (each an idle
//! client process of its own behind its own blackholing proxy).
//!
//! Each row is measured with two clients ([`Client`]): splitbrain's own (Java-timed in the
//! simulator, `zookeeper-client` under the real executor's sessions on a real server), and the
//! unmodified `zookeeper-client` on both sides (`programs::idle_session`), so that what the
//! simulator's server and network do is measured with the same client code on both sides.

use std::collections::BTreeMap;

use real::ClientLauncher;
use real::target::Target;
use serde::Serialize;
use splitbrain::sweep;

use super::{Plan, progress, start_server};
use crate::cli::Failure;
use crate::cli::survival::{
    Client, Job, Row, lengths, measure as measure_sim, rules, seen, survival_scenario,
};
use splitbrain::compare::{differs, share};

/// One row: a client, a session timeout and a partition length, on both.
#[derive(Debug, Serialize)]
pub struct SurvivalRow {
    /// The client measured.
    pub client: Client,
    /// The session timeout T, ms.
    pub t_ms: u64,
    /// The partition's length, ms.
    pub partition_ms: u64,
    /// The simulator's runs.
    pub sim: Row,
    /// The real server's runs.
    pub real: Row,
    /// Real runs that failed (not counted in `real`), with the first one's reason.
    pub real_failed: u64,
    /// Why the first real run failed, if one did.
    pub real_failure: Option<String>,
    /// The share ZooKeeper 3.8's timing rules predict for the Java client.
    pub rules_survival: f64,
    /// Whether the real survival count is unlikely under the simulator's share.
    pub differs: bool,
}

/// A row's key: the client, T and the partition's length.
type Key = (Client, u64, u64);

/// The rows measured: every row of the survival table with each client; T = 1 s only when
/// quick.
fn rows(plan: &Plan) -> Vec<Key> {
    [Client::JavaTimed, Client::ZookeeperClient]
        .into_iter()
        .flat_map(|client| lengths().map(move |(t_ms, length)| (client, t_ms, length)))
        .filter(|&(_, t_ms, _)| !plan.quick || t_ms == 1_000)
        .collect()
}

/// How a real run's client processes are started: splitbrain's own clients, and its programs.
pub struct Launchers {
    /// `splitbrain real-client`.
    pub recipes: ClientLauncher,
    /// `splitbrain real-program-client`.
    pub programs: ClientLauncher,
}

/// Measures every row on the simulator and on real servers.
pub fn measure(plan: &Plan, launchers: &Launchers) -> Result<Vec<SurvivalRow>, Failure> {
    let rows = rows(plan);
    let mut table: BTreeMap<Key, SurvivalRow> = (rows.iter())
        .map(|&(client, t_ms, partition_ms)| {
            let expected = rules::expected(t_ms, t_ms / 10, partition_ms);
            let row = SurvivalRow {
                client,
                t_ms,
                partition_ms,
                sim: Row::default(),
                real: Row::default(),
                real_failed: 0,
                real_failure: None,
                rules_survival: expected.survival,
                differs: false,
            };
            ((client, t_ms, partition_ms), row)
        })
        .collect();
    let sim_jobs = job_list(&rows, plan.seeds);
    let total = sim_jobs.len();
    let mut done = 0;
    let mut failed = None;
    sweep::in_order(
        sim_jobs.into_iter(),
        sweep::default_workers(),
        measure_sim,
        |job, seen| {
            done += 1;
            progress("survival, simulator", done, total, total / 4);
            match seen {
                Ok(seen) => table.get_mut(&key(&job)).expect("a row").sim.add(seen),
                Err(e) => {
                    failed = failed
                        .take()
                        .or(Some(format!("survival seed {}: {e}", job.seed)))
                }
            }
        },
    );
    if let Some(failed) = failed {
        return Err(Failure(failed));
    }
    let mut servers = BTreeMap::new();
    for &(_, t_ms, _) in &rows {
        if let std::collections::btree_map::Entry::Vacant(entry) = servers.entry(t_ms) {
            entry.insert(start_server(t_ms / 10)?);
        }
    }
    let real_jobs = job_list(&rows, plan.runs);
    let total = real_jobs.len();
    let mut done = 0;
    let run_real = |job: &Job| run_real(job, &servers, launchers);
    sweep::in_order(
        real_jobs.into_iter(),
        plan.parallel,
        run_real,
        |job, seen| {
            done += 1;
            progress("survival, real server", done, total, rows.len());
            let row = table.get_mut(&key(&job)).expect("a row");
            match seen {
                Ok(seen) => row.real.add(seen),
                Err(why) => {
                    eprintln!("fidelity: survival run failed: {why}");
                    row.real_failed += 1;
                    row.real_failure.get_or_insert(why);
                }
            }
        },
    );
    servers.values().for_each(Target::stop);
    let mut table: Vec<SurvivalRow> = table.into_values().collect();
    for row in &mut table {
        row.differs = differs(
            row.real.survived,
            row.real.runs,
            row.sim.survived,
            row.sim.runs,
        );
    }
    Ok(table)
}

/// The key of `job`'s row.
fn key(job: &Job) -> Key {
    (job.client, job.t_ms, job.partition_ms)
}

/// `runs` jobs (seeds 0..runs) of every row, the first seed of every row first, so that
/// parallel runs cover every row at once.
fn job_list(rows: &[Key], runs: u64) -> Vec<Job> {
    (0..runs)
        .flat_map(|seed| {
            rows.iter().map(move |&(client, t_ms, partition_ms)| Job {
                client,
                t_ms,
                partition_ms,
                seed,
            })
        })
        .collect()
}

/// One real run of `job` on the server of its T.
fn run_real(
    job: &Job,
    servers: &BTreeMap<u64, Target>,
    launchers: &Launchers,
) -> Result<crate::cli::survival::Observation, String> {
    let scenario = survival_scenario(*job);
    let target = &servers[&job.t_ms];
    let trace = match job.client {
        Client::JavaTimed => real::run(&scenario, job.seed, target, &launchers.recipes),
        Client::ZookeeperClient => {
            real::run_program(&scenario, job.seed, target, &launchers.programs)
        }
    };
    let trace = trace.map_err(|f| {
        format!(
            "{}, T {} ms, partition {} ms, seed {}: {}",
            job.client.label(),
            job.t_ms,
            job.partition_ms,
            job.seed,
            f.message
        )
    })?;
    Ok(seen(&trace))
}

/// The table, as Markdown.
pub fn markdown(rows: &[SurvivalRow], plan: &Plan) -> String {
    let mut text = format!(
        "Session survival across a partition of one idle client (both ways, at a seeded \
         instant): {} simulator seeds and {} real run(s) per row; re-attached: mean ms from \
         the partition's end to the client's next Connected on the same session. Client: \
         splitbrain's own (Java-timed in the simulator; the real executor's sessions on \
         `zookeeper-client` on a real server), or the unmodified `zookeeper-client` on both \
         sides (an idle session).\n\n",
        plan.seeds, plan.runs
    );
    text.push_str(
        "| client | T | partition | survived (sim) | survived (real) | rules (Java client) | never noticed (sim / real) | re-attached, mean (sim / real) | differs |\n",
    );
    text.push_str("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for row in rows {
        let mean = |r: &Row| {
            r.mean_reattach_ms()
                .map_or_else(|| "–".into(), |ms| format!("{ms} ms"))
        };
        let failed = match row.real_failed {
            0 => String::new(),
            n => format!(" ({n} failed)"),
        };
        text.push_str(&format!(
            "| {} | {} s | {} ms ({:.1} T) | {} | {}{failed} | {:.0} % | {} / {} | {} / {} | {} |\n",
            row.client.label(),
            row.t_ms / 1_000,
            row.partition_ms,
            row.partition_ms as f64 / row.t_ms as f64,
            share(row.sim.survived, row.sim.runs),
            share(row.real.survived, row.real.runs),
            100.0 * row.rules_survival,
            share(row.sim.stayed_connected, row.sim.runs),
            share(row.real.stayed_connected, row.real.runs),
            mean(&row.sim),
            mean(&row.real),
            if row.differs { "**yes**" } else { "no" },
        ));
    }
    text
}
