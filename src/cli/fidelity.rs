//! `splitbrain fidelity`: the simulator measured against a real ZooKeeper, the same
//! scenarios run on both and set side by side ([`survival`]: sessions across partitions,
//! [`handover`]: from a holder's expiry to the next holder, [`verdicts`]: the catalog's
//! verdicts). The real side runs on servers started from Debian's `zookeeper` package
//! (127.0.0.1, free ports, stopped when done): standalone servers, and local ensembles for the
//! ensemble scenarios' verdicts. `--scenario` measures only the named scenarios' verdicts. It
//! writes `fidelity.json` and `fidelity.md` (atomically) and prints where; progress goes to
//! stderr.

mod budget;
mod handover;
mod survival;
mod verdicts;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use real::local::{NOT_INSTALLED, Settings};
use real::target::Target;
use serde::Serialize;
use splitbrain::files::{write_atomic, write_json};

use super::bench::results::{Machine, commit};
use super::{CatalogArgs, Failure, Outcome};

/// Arguments of `fidelity`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A short run: one real run per survival row at T = 1 s only, one per verdict, only
    /// the fault-free scenarios' verdicts, 20 simulator seeds per row.
    #[arg(long)]
    quick: bool,
    /// Real runs per survival row and per hand-over [default: 10; 1 with --quick].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
    runs: Option<u64>,
    /// Real runs per catalog scenario [default: 3; 1 with --quick].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
    verdict_runs: Option<u64>,
    /// Simulator seeds per row [default: 200; 20 with --quick].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    seeds: Option<u64>,
    /// Real runs made at once (each an idle client process of its own); for the verdicts,
    /// the ZooKeeper servers (JVMs) at once, at most 3: a scenario's run counts each server
    /// it starts, so an ensemble of 3 runs alone.
    #[arg(long, value_name = "N", default_value_t = 15)]
    parallel: usize,
    /// Measure only the verdicts of this catalog scenario (repeatable), whatever its faults,
    /// even with --quick; the survival rows and the hand-over are then not measured
    /// [default: every scenario of the compared recipes].
    #[arg(long = "scenario", value_name = "NAME")]
    scenarios: Vec<String>,
    /// Where to write fidelity.json and fidelity.md.
    #[arg(long, value_name = "DIR", default_value = "splitbrain-out/fidelity")]
    out: PathBuf,
    #[command(flatten)]
    catalog: CatalogArgs,
}

/// How much to run, resolved from the arguments.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Plan {
    /// Whether this is a `--quick` run.
    pub quick: bool,
    /// Real runs per survival row and of the hand-over.
    pub runs: u64,
    /// Real runs per catalog scenario.
    pub verdict_runs: u64,
    /// Simulator seeds per row.
    pub seeds: u64,
    /// Real runs made at once.
    pub parallel: usize,
}

/// Everything the command measured: what `fidelity.json` holds.
#[derive(Debug, Serialize)]
struct Measured {
    /// The commit measured, as `git describe --always --dirty` says it.
    commit: String,
    /// The machine it was measured on.
    machine: Machine,
    plan: Plan,
    /// The scenarios named with `--scenario` (empty: every compared one).
    scenarios: Vec<String>,
    /// `/proc/loadavg` before and after (the machine is shared: timings are noisy).
    load_before: String,
    load_after: String,
    seconds: u64,
    /// Empty with `--scenario`.
    survival: Vec<survival::SurvivalRow>,
    /// `None` with `--scenario`.
    handover: Option<handover::Handover>,
    verdicts: Vec<verdicts::VerdictRow>,
}

/// Runs the command.
pub fn run(args: Args) -> Outcome {
    if !real::local::installed() {
        return Err(Failure(format!("fidelity: {NOT_INSTALLED}")));
    }
    let plan = Plan {
        quick: args.quick,
        runs: args.runs.unwrap_or(if args.quick { 1 } else { 10 }),
        verdict_runs: args.verdict_runs.unwrap_or(if args.quick { 1 } else { 3 }),
        seeds: args.seeds.unwrap_or(if args.quick { 20 } else { 200 }),
        parallel: args.parallel.max(1),
    };
    let catalog = args.catalog.load()?;
    let scenarios = verdicts::chosen(&catalog, &plan, &args.scenarios)?;
    let launcher = super::real::client_launcher()?;
    let launchers = survival::Launchers {
        recipes: launcher.clone(),
        programs: super::real::program_launcher()?,
    };
    let started = Instant::now();
    let load_before = load();
    let (survival, handover) = match args.scenarios.is_empty() {
        true => (
            survival::measure(&plan, &launchers)?,
            Some(handover::measure(&plan, &launcher)?),
        ),
        false => (Vec::new(), None),
    };
    let verdicts = verdicts::measure(&plan, &scenarios, &launcher)?;
    let measured = Measured {
        commit: commit(),
        machine: Machine::this(),
        plan,
        scenarios: args.scenarios,
        load_before,
        load_after: load(),
        seconds: started.elapsed().as_secs(),
        survival,
        handover,
        verdicts,
    };
    let json = args.out.join("fidelity.json");
    let md = args.out.join("fidelity.md");
    let cannot = |path: &PathBuf, e: std::io::Error| {
        Failure(format!("{}: cannot write it: {e}", path.display()))
    };
    write_json(&json, &measured).map_err(|e| cannot(&json, e))?;
    write_atomic(&md, markdown(&measured).as_bytes()).map_err(|e| cannot(&md, e))?;
    say!("wrote {} and {}", json.display(), md.display());
    Ok(ExitCode::SUCCESS)
}

/// The tables of `measured`, as Markdown.
fn markdown(measured: &Measured) -> String {
    let plan = &measured.plan;
    let machine = &measured.machine;
    let mut run = (if plan.quick { "--quick" } else { "default run" }).to_owned();
    if !measured.scenarios.is_empty() {
        run.push_str(&format!(
            ", verdicts of {} only",
            measured.scenarios.join(", ")
        ));
    }
    let mut text = format!(
        "`splitbrain fidelity` at {} on {} ({} cores, {:.0} GiB).\n\n\
         Measured in {} s ({}), load average {} before, {} after (1, 5, 15 min).\n\n",
        measured.commit,
        machine.cpu,
        machine.cores,
        machine.memory_gib,
        measured.seconds,
        run,
        measured.load_before,
        measured.load_after
    );
    if let Some(handover) = &measured.handover {
        text.push_str(&survival::markdown(&measured.survival, plan));
        text.push('\n');
        text.push_str(&handover::markdown(handover));
        text.push('\n');
    }
    text.push_str(&verdicts::markdown(&measured.verdicts, plan));
    text
}

/// The first three fields of `/proc/loadavg`, or `?`.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "?".into())
}

/// The settings of a standalone server with tick `tick_ms`: ZooKeeper's own session bounds
/// (2–20 ticks), as the simulated server has them.
fn standalone_settings(tick_ms: u64) -> Settings {
    Settings {
        tick_time: std::time::Duration::from_millis(tick_ms),
        max_session_timeout: None,
        ..Settings::default()
    }
}

/// Starts a local standalone server with tick `tick_ms`.
fn start_server(tick_ms: u64) -> Result<Target, Failure> {
    Ok(Target::start_local(1, standalone_settings(tick_ms))?)
}

/// Says on stderr how far a section is, every `every` items and at the end.
fn progress(section: &str, done: usize, total: usize, every: usize) {
    if done.is_multiple_of(every.max(1)) || done == total {
        eprintln!("fidelity: {section}: {done}/{total}");
    }
}
