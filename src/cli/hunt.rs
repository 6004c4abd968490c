//! `splitbrain hunt`: sweeps seeds over the catalog in parallel, checks every run, keeps the
//! traces of the first violating seeds, and tells whether each scenario's expectations are
//! met (exit 0 only when all are).

pub mod merge;
pub(crate) mod progress;
mod shard;
pub(crate) mod summary;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use recipe_table::property::{Expectation, Property};
use scenarios::scenario::{Scenario, SeedRange};
use splitbrain::files::{write_atomic, write_json};
use splitbrain::run::{self, Outcome as RunOutcome};
use splitbrain::sweep::{self, Shard};
use splitbrain::wants::{KeptRun, TraceWants};

use super::{CatalogArgs, Failure, Outcome, UNMET, find};
use progress::Progress;
use summary::{Setup, Summary, Sweep, Tally};

/// How many violating seeds per scenario and property keep their trace, unless
/// `--all-reports`.
const KEPT_PER_PROPERTY: usize = 3;

/// The name of the JSON summary `hunt` and `merge` write in their output directory.
pub const SUMMARY_FILE: &str = "summary.json";

/// Arguments of `hunt`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Hunt only these scenarios (repeatable) [default: the whole catalog].
    #[arg(long = "scenario", value_name = "NAME")]
    scenarios: Vec<String>,
    /// The seeds to run, `A..B` (B excluded) [default: each scenario's own range, 0..200].
    #[arg(long, value_name = "A..B")]
    seeds: Option<SeedRange>,
    /// Where to write summary.json, index.html and the traces and HTML reports of violating
    /// seeds.
    #[arg(long, value_name = "DIR", default_value = "splitbrain-out")]
    out: PathBuf,
    /// Run only shard I of N: the seeds with seed % N == I.
    #[arg(long, value_name = "I/N", conflicts_with = "shards")]
    shard: Option<Shard>,
    /// Run one of N shards, its index taken from JOB_COMPLETION_INDEX (set by a Kubernetes
    /// Indexed Job) [default: SPLITBRAIN_SHARDS].
    #[arg(long, value_name = "N")]
    shards: Option<u64>,
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
    let shard = shard::resolve(args.shard, args.shards, |name| std::env::var(name).ok())?;
    let scenarios = selected(&args)?;
    let codes = (scenarios.iter())
        .map(|(scenario, _)| {
            run::table_code(scenario)
                .map_err(|e| Failure(format!("scenario `{}`: {e}", scenario.name)))
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    let part = shard.unwrap_or(Shard::WHOLE);
    let total: u64 = scenarios
        .iter()
        .map(|(_, range)| part.count_in(range.start, range.end))
        .sum();
    let mut progress = Progress::new("hunt", total, args.json);
    let started = Instant::now();
    let setup = Setup {
        shard,
        unfenced: args.unfenced,
        all_reports: args.all_reports,
        out: args.out.display().to_string(),
    };
    let mut sweep = Sweep::new(&scenarios, setup);
    let mut write_error = None;
    // Set when a kept run cannot be written: no further seed is started.
    let stopping = AtomicBool::new(false);
    let workers = args.jobs.unwrap_or_else(sweep::default_workers);
    let wants: Vec<TraceWants> = (scenarios.iter())
        .map(|(scenario, _)| TraceWants::new(&run::checked_properties(scenario)))
        .collect();
    sweep::in_order(
        jobs(&scenarios, part).take_while(|_| !stopping.load(Ordering::SeqCst)),
        workers,
        |&(index, seed)| KeptRun::run(&codes[index], &scenarios[index].0, seed, &wants[index]),
        |(index, seed), result| {
            let scenario = &scenarios[index].0;
            let tally = &mut sweep.scenarios[index];
            match result {
                Ok(judged) => {
                    let all = args.all_reports;
                    let keep = tally.record(seed, judged.violations(), all, KEPT_PER_PROPERTY);
                    if !all {
                        (tally.settled(judged.violations(), KEPT_PER_PROPERTY))
                            .for_each(|p| wants[index].settle(p));
                    }
                    let wanted = keep.filter(|_| write_error.is_none());
                    if let (Some(violated), Some(outcome)) = (wanted, judged.outcome()) {
                        let kept = keep_trace(&args.out, scenario, tally, &violated, outcome);
                        write_error = kept.err();
                        stopping.store(write_error.is_some(), Ordering::SeqCst);
                    }
                }
                Err(error) => {
                    progress.println(format!("{} seed {seed}: {error}", scenario.name));
                    tally.fail(seed, &error);
                }
            }
            progress.inc();
        },
    );
    progress.finish();
    if let Some(error) = write_error {
        return Err(error);
    }
    finish(
        &args.out,
        args.json,
        sweep.summary(started.elapsed().as_secs_f64()),
    )
}

/// The scenarios to hunt, with the command line's overrides, and the seeds of each.
fn selected(args: &Args) -> Result<Vec<(Scenario, SeedRange)>, Failure> {
    let catalog = args.catalog.load()?;
    let scenarios: Vec<Scenario> = if args.scenarios.is_empty() {
        catalog.scenarios().to_vec()
    } else {
        let found: Result<Vec<_>, Failure> = args
            .scenarios
            .iter()
            .map(|name| find(&catalog, name).cloned())
            .collect();
        found?
    };
    Ok(scenarios
        .into_iter()
        .map(|mut scenario| {
            scenario.workload.fenced &= !args.unfenced;
            let range = args.seeds.unwrap_or(scenario.seeds);
            (scenario, range)
        })
        .collect())
}

/// Every (scenario index, seed) of `shard` to run, in output order, produced as needed.
fn jobs(
    scenarios: &[(Scenario, SeedRange)],
    shard: Shard,
) -> impl Iterator<Item = (usize, u64)> + Send + '_ {
    scenarios
        .iter()
        .enumerate()
        .flat_map(move |(index, (_, range))| {
            let seeds = shard.seeds(range.start, range.end);
            seeds.map(move |seed| (index, seed))
        })
}

/// Writes summary.json and index.html to `out`, prints the summary, and says whether every
/// expectation was met.
fn finish(out: &Path, json: bool, mut summary: Summary) -> Outcome {
    let title = summary.title();
    write_index(out, title, &mut summary)?;
    let file = out.join(SUMMARY_FILE);
    write_json(&file, &summary).map_err(|e| Failure(format!("{}: {e}", file.display())))?;
    if json {
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

/// Writes `index.html`, the summary page titled `title`, to `out`, and names it in `summary`.
pub(crate) fn write_index(out: &Path, title: String, summary: &mut Summary) -> Result<(), Failure> {
    let index = out.join("index.html");
    write_atomic(&index, summary.html(out, title).as_bytes())
        .map_err(|e| Failure(format!("{}: {e}", index.display())))?;
    summary.summary_report = Some(index.display().to_string());
    Ok(())
}

/// Writes a violating run's trace and report, then, for each unexpected violation of a
/// scenario with randomized faults, the trace and report of its shrunk schedule.
fn keep_trace(
    out: &Path,
    scenario: &Scenario,
    tally: &mut Tally,
    violated: &[Property],
    outcome: RunOutcome,
) -> Result<(), Failure> {
    let seed = outcome.trace.meta.seed;
    let dir = out.join(&scenario.name);
    let stem = dir.join(format!("seed-{seed}"));
    let (trace, report) = write_run(&stem, &outcome, None)?;
    tally.kept(seed, (&trace, &report), violated, None);
    if scenario.random_faults.is_empty() {
        return Ok(());
    }
    for property in run::checked_properties(scenario) {
        if outcome.violates(property) && scenario.expectation(property) == Expectation::Holds {
            let shrunk = run::shrink_run(scenario, &outcome, property);
            let stem = dir.join(format!("seed-{seed}.{property}.shrunk"));
            let (trace, report) = write_run(&stem, &shrunk.outcome, Some(property))?;
            tally.kept(seed, (&trace, &report), violated, Some(property));
        }
    }
    Ok(())
}

/// Reads the trace just written at `path` back and reruns it as `replay --from` does: a kept
/// trace must reproduce its run event for event (its scenario as run, seed and schedule are
/// all it has), or the hunt fails saying from which event on it does not.
fn check_rerun(path: &Path, outcome: &RunOutcome) -> Result<(), Failure> {
    let rerun = super::replay::rerun_from(path)?;
    let (kept, again) = (&outcome.trace.events, &rerun.trace.events);
    let differs = (kept.iter().zip(again)).position(|(a, b)| a != b);
    match differs.or((kept.len() != again.len()).then(|| kept.len().min(again.len()))) {
        None => Ok(()),
        Some(event) => Err(Failure(format!(
            "{}: rerunning this trace (`splitbrain replay --from`) gives another run from event \
             {event} on: the trace does not record everything its run depends on",
            path.display()
        ))),
    }
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
    check_rerun(&trace, outcome)?;
    let html = super::report_html(outcome, &trace, property);
    write_atomic(&report, html.as_bytes())
        .map_err(|e| Failure(format!("{}: {e}", report.display())))?;
    Ok((trace, report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use scenarios::catalog::Catalog;

    #[test]
    fn a_kept_trace_must_rerun_to_its_own_events() {
        let catalog = Catalog::builtin().expect("the catalog");
        let scenario = catalog
            .get("mutex-listing-out-of-retries")
            .expect("in the catalog");
        let outcome = run::run(scenario, 0).expect("runs");
        let dir = std::env::temp_dir().join(format!("splitbrain-rerun-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let path = dir.join("seed-0.trace.json");
        write_json(&path, &outcome.trace).expect("written");
        assert!(
            check_rerun(&path, &outcome).is_ok(),
            "the run as kept reruns"
        );
        let mut other = outcome.clone();
        other.trace.events.truncate(10);
        let Failure(error) = check_rerun(&path, &other).expect_err("a shorter run differs");
        assert!(error.contains("from event 10 on"), "{error}");
        let mut other = outcome;
        other.trace.events[3].t += 1;
        let Failure(error) = check_rerun(&path, &other).expect_err("a changed event differs");
        assert!(error.contains("from event 3 on"), "{error}");
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}
