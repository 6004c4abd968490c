//! `splitbrain hunt`: sweeps seeds over the catalog in parallel, checks every run, keeps the
//! traces of the first violating seeds, and tells whether each scenario's expectations are
//! met (exit 0 only when all are).

mod summary;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use scenarios::property::{Expectation, Property};
use scenarios::scenario::{Scenario, SeedRange};
use splitbrain::files::{write_atomic, write_json};
use splitbrain::run::{self, Outcome as RunOutcome};
use splitbrain::sweep::{self, Shard};

use super::{CatalogArgs, Failure, Outcome, UNMET, find};
use summary::{Summary, Sweep, Tally};

/// How many violating seeds per scenario and property keep their trace, unless
/// `--all-reports`.
const KEPT_PER_PROPERTY: usize = 3;

/// Arguments of `hunt`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Hunt only these scenarios (repeatable) [default: the whole catalog].
    #[arg(long = "scenario", value_name = "NAME")]
    scenarios: Vec<String>,
    /// The seeds to run, `A..B` (B excluded) [default: each scenario's own range, 0..200].
    #[arg(long, value_name = "A..B")]
    seeds: Option<SeedRange>,
    /// Where to write the traces and HTML reports of violating seeds, and index.html.
    #[arg(long, value_name = "DIR", default_value = "splitbrain-out")]
    out: PathBuf,
    /// Run only shard I of N: the seeds with seed % N == I.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    /// Keep the trace and report of every violating seed, not only the first 3 per
    /// property.
    #[arg(long)]
    all_reports: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Run every workload against an unfenced resource (split brains then lose updates,
    /// and those seeds' schedules are shrunk where fencing was expected to hold).
    #[arg(long)]
    unfenced: bool,
    /// Worker threads [default: the number of cores].
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    #[command(flatten)]
    catalog: CatalogArgs,
}

/// Runs the command.
pub fn run(args: Args) -> Outcome {
    let scenarios = selected(&args)?;
    let jobs = jobs(&args, &scenarios);
    let bar = progress_bar(jobs.len() as u64, args.json);
    let started = Instant::now();
    let mut sweep = Sweep::new(&scenarios);
    let mut write_error = None;
    let workers = args.jobs.unwrap_or_else(sweep::default_workers);
    sweep::in_order(
        &jobs,
        workers,
        |&(index, seed)| run::run(&scenarios[index], seed),
        |job, result| {
            let (index, seed) = jobs[job];
            let tally = &mut sweep.scenarios[index];
            match result {
                Ok(outcome) => {
                    let keep = tally.record(seed, &outcome, args.all_reports, KEPT_PER_PROPERTY);
                    if keep && write_error.is_none() {
                        write_error = keep_trace(&args, &scenarios[index], tally, outcome).err();
                    }
                }
                Err(error) => {
                    bar.println(format!("{} seed {seed}: {error}", scenarios[index].name));
                    tally.fail(seed, &error);
                }
            }
            bar.inc(1);
        },
    );
    bar.finish_and_clear();
    if let Some(error) = write_error {
        return Err(error);
    }
    report(&args, sweep.summary(started.elapsed().as_secs_f64()))
}

/// The scenarios to hunt, with the command line's overrides.
fn selected(args: &Args) -> Result<Vec<Scenario>, Failure> {
    let catalog = args.catalog.load()?;
    let mut scenarios: Vec<Scenario> = if args.scenarios.is_empty() {
        catalog.scenarios().to_vec()
    } else {
        let found: Result<Vec<_>, Failure> = args
            .scenarios
            .iter()
            .map(|name| find(&catalog, name).cloned())
            .collect();
        found?
    };
    for scenario in &mut scenarios {
        scenario.workload.fenced &= !args.unfenced;
    }
    Ok(scenarios)
}

/// Every (scenario index, seed) to run, in output order.
fn jobs(args: &Args, scenarios: &[Scenario]) -> Vec<(usize, u64)> {
    scenarios
        .iter()
        .enumerate()
        .flat_map(|(index, scenario)| {
            let range = args.seeds.unwrap_or(scenario.seeds);
            range.iter().map(move |seed| (index, seed))
        })
        .filter(|(_, seed)| args.shard.is_none_or(|shard| shard.contains(*seed)))
        .collect()
}

/// Writes index.html, prints the summary, and says whether every expectation was met.
fn report(args: &Args, mut summary: Summary) -> Outcome {
    let index = args.out.join("index.html");
    let title = match args.shard {
        Some(shard) => format!("hunt · shard {}/{}", shard.index, shard.count),
        None => "hunt".to_owned(),
    };
    write_atomic(&index, summary.html(title, &args.out).as_bytes())
        .map_err(|e| Failure(format!("{}: {e}", index.display())))?;
    summary.summary_report = Some(index.display().to_string());
    if args.json {
        say!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        say!("{}", summary.table().trim_end());
    }
    Ok(if summary.all_met {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(UNMET)
    })
}

fn progress_bar(len: u64, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    let style = ProgressStyle::with_template("{bar:40} {pos}/{len} runs, {per_sec}, eta {eta}")
        .expect("a valid template");
    bar.set_style(style);
    bar
}

/// Writes a violating run's trace and report, then, for each unexpected violation of a
/// scenario with randomized faults, the trace and report of its shrunk schedule.
fn keep_trace(
    args: &Args,
    scenario: &Scenario,
    tally: &mut Tally,
    outcome: RunOutcome,
) -> Result<(), Failure> {
    let seed = outcome.trace.meta.seed;
    let dir = args.out.join(&scenario.name);
    let stem = dir.join(format!("seed-{seed}"));
    let (trace, report) = write_run(&stem, &outcome, None)?;
    tally.kept(seed, &trace, &report, None);
    if scenario.random_faults.is_empty() {
        return Ok(());
    }
    for property in run::checked_properties(scenario) {
        if outcome.violates(property) && scenario.expectation(property) == Expectation::Holds {
            let shrunk = run::shrink_run(scenario, &outcome, property);
            let stem = dir.join(format!("seed-{seed}.{property}.shrunk"));
            let (trace, report) = write_run(&stem, &shrunk.outcome, Some(property))?;
            tally.kept(seed, &trace, &report, Some(property));
        }
    }
    Ok(())
}

/// Writes `<stem>.trace.json` and `<stem>.report.html` (about `property` first, if given).
fn write_run(
    stem: &Path,
    outcome: &RunOutcome,
    property: Option<Property>,
) -> Result<(PathBuf, PathBuf), Failure> {
    let with = |ext: &str| {
        let mut name = stem.as_os_str().to_owned();
        name.push(ext);
        PathBuf::from(name)
    };
    let (trace, report) = (with(".trace.json"), with(".report.html"));
    write_json(&trace, &outcome.trace).map_err(|e| Failure(format!("{}: {e}", trace.display())))?;
    let html = super::report_html(outcome, &trace, property);
    write_atomic(&report, html.as_bytes())
        .map_err(|e| Failure(format!("{}: {e}", report.display())))?;
    Ok((trace, report))
}
