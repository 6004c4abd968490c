//! `splitbrain real SCENARIO --seeds A..B`: one real run per seed, each under its seed's fault
//! schedule (what `real SCENARIO --seed S` runs, and records in the trace), tallied as `hunt`
//! tallies seeds: per property, the violating runs out of the runs and the first violating
//! seed. The traces and reports of the first `--keep` violating runs of each property are
//! kept, and nothing of the other runs, so that a sweep's disk use does not grow with its
//! length. A seed whose schedule the real executor refuses (a `drop` or `delay` drawn,
//! restarts that overlap) is not run but counted and named; a run that fails for the harness's
//! reasons (a server that would not start, a client process that died) is counted and named as
//! a failed run, and the sweep goes on, unless every run fails. Ctrl-C stops the sweep after
//! the runs under way, and the summary of those made is still written.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use ::scenarios::scenario::{Scenario, SeedRange};
use serde::Serialize;
use splitbrain::files::write_json;
use splitbrain::sweep;

use super::{Args, contenders, refusal, run_once, with_seed, write_outputs};
use crate::cli::hunt::progress::Progress;
use crate::cli::hunt::summary::{FAILURES_LISTED, Failed, Setup, Summary, Sweep, Tally};
use crate::cli::hunt::{SUMMARY_FILE, write_index};
use crate::cli::{Failure, Outcome, UNMET};

/// A sweep's summary: `hunt`'s, of one scenario over the seeds that ran, and the seeds whose
/// schedules were refused.
#[derive(Debug, Serialize)]
pub(crate) struct RealSweep {
    /// The tallies, as `hunt` writes them.
    #[serde(flatten)]
    pub(crate) summary: Summary,
    /// The seeds whose schedules the real executor refused, all counted.
    pub(crate) seeds_refused: u64,
    /// The first [`FAILURES_LISTED`] of them, in seed order, each with why.
    pub(crate) refusals: Vec<Failed>,
    /// True when Ctrl-C stopped the sweep before its last seed.
    pub(crate) interrupted: bool,
}

impl RealSweep {
    /// The one scenario's tally.
    pub(crate) fn tally(&self) -> &Tally {
        &self.summary.scenarios[0]
    }

    /// Why the sweep cannot be judged, if it cannot: Ctrl-C stopped it, or every run failed.
    pub(crate) fn broken(&self) -> Option<String> {
        let tally = self.tally();
        let summary = self.summary.summary_report.as_deref().unwrap_or("?");
        if self.interrupted {
            return Some(format!(
                "{}: the sweep was interrupted (Ctrl-C) after {} run(s) (summary: {summary})",
                tally.name, tally.seeds_run
            ));
        }
        let first = tally.failures.first()?;
        (tally.runs_failed == tally.seeds_run).then(|| {
            format!(
                "{}: every run of the sweep failed (summary: {summary}); seed {}: {}",
                tally.name, first.seed, first.error
            )
        })
    }

    /// The summary for people: `hunt`'s table, then the refused seeds.
    pub(crate) fn table(&self) -> String {
        let mut table = self.summary.table();
        let name = &self.tally().name;
        for refused in &self.refusals {
            table.push_str(&format!(
                "{name}  seed {} refused: {}\n",
                refused.seed, refused.error
            ));
        }
        let unlisted = self.seeds_refused - self.refusals.len() as u64;
        if unlisted > 0 {
            table.push_str(&format!("{name}  and {unlisted} more refused seeds\n"));
        }
        table
    }
}

/// Seeds refused, counted, the first [`FAILURES_LISTED`] with why.
#[derive(Default)]
pub(crate) struct Refused {
    count: u64,
    listed: Vec<Failed>,
}

impl Refused {
    fn add(&mut self, seed: u64, error: String) {
        self.count += 1;
        if self.listed.len() < FAILURES_LISTED {
            self.listed.push(Failed { seed, error });
        }
    }
}

/// Runs the sweep, prints its summary (a table, or JSON with `--json`) and says whether the
/// scenario's expectations were met over its runs.
pub fn run(args: &Args, scenario: &Scenario, seeds: SeedRange) -> Outcome {
    let swept = sweep(args, scenario, plan(args, scenario, seeds)?)?;
    if let Some(broken) = swept.broken() {
        return Err(Failure(broken));
    }
    if args.json {
        say!("{}", serde_json::to_string_pretty(&swept)?);
    } else {
        say!("{}", swept.table().trim_end());
    }
    Ok(if swept.summary.all_met {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(UNMET)
    })
}

/// The seeds of a sweep: those to run, and those refused.
pub(crate) struct Plan {
    seeds: SeedRange,
    runnable: Vec<u64>,
    refused: Refused,
}

/// Which seeds of `seeds` can run as `args` say (see [`super::refusal`]); one line naming the
/// first seed's refusal when none can.
pub(crate) fn plan(args: &Args, scenario: &Scenario, seeds: SeedRange) -> Result<Plan, Failure> {
    let mut runnable = Vec::new();
    let mut refused = Refused::default();
    for seed in seeds.iter() {
        match refusal(args, scenario, seed) {
            None => runnable.push(seed),
            Some(why) => refused.add(seed, why),
        }
    }
    match refused.listed.first() {
        Some(first) if runnable.is_empty() => Err(Failure(format!(
            "every seed of {seeds} is refused; seed {}: {}",
            first.seed, first.error
        ))),
        _ => Ok(Plan {
            seeds,
            runnable,
            refused,
        }),
    }
}

/// Runs `scenario` once per runnable seed of `plan` as `args` say (a progress bar on stderr
/// unless `--json`), keeps the first violating runs' traces and reports in `args.out`, and
/// writes summary.json and index.html there. A sweep that Ctrl-C stopped or whose every run
/// failed is still summarized ([`RealSweep::broken`] says so).
pub(crate) fn sweep(args: &Args, scenario: &Scenario, plan: Plan) -> Result<RealSweep, Failure> {
    let Plan {
        seeds,
        runnable,
        refused,
    } = plan;
    let prepared = contenders(args, scenario)?;
    let contenders = prepared
        .as_ref()
        .map(|(library, at)| (library.as_ref(), *at));
    let mut progress = Progress::new("real", runnable.len() as u64, args.json);
    let started = Instant::now();
    let setup = Setup {
        shard: None,
        unfenced: false,
        all_reports: false,
        out: args.out.display().to_string(),
    };
    let mut tallies = Sweep::new(&[(scenario.clone(), seeds)], setup);
    let tally = &mut tallies.scenarios[0];
    let interrupted = AtomicBool::new(false);
    // Set at Ctrl-C or when a kept run cannot be written: no further seed is started.
    let stopping = AtomicBool::new(false);
    let mut write_error = None;
    let jobs = (runnable.iter().copied()).take_while(|_| !stopping.load(Ordering::SeqCst));
    sweep::in_order(
        jobs,
        usize::from(args.jobs),
        |&seed| {
            let run = run_once(&with_seed(args, seed), scenario, 1, contenders);
            run.map(|(outcome, _)| outcome)
        },
        |seed, result| {
            match result {
                Ok(outcome) => {
                    let keep = tally.record(seed, &outcome.violations, false, args.keep);
                    if let (Some(violated), None) = (keep, &write_error) {
                        match write_outputs(&with_seed(args, seed), scenario, 1, &outcome) {
                            Ok((trace, report)) => {
                                tally.kept(seed, (&trace, &report), &violated, None)
                            }
                            Err(error) => {
                                stopping.store(true, Ordering::SeqCst);
                                write_error = Some(error);
                            }
                        }
                    }
                }
                Err(Failure(error)) => {
                    if error.contains(real::INTERRUPTED) {
                        interrupted.store(true, Ordering::SeqCst);
                        stopping.store(true, Ordering::SeqCst);
                    }
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
    let mut summary = tallies.summary(started.elapsed().as_secs_f64());
    write_index(&args.out, format!("real · {}", scenario.name), &mut summary)?;
    let swept = RealSweep {
        summary,
        seeds_refused: refused.count,
        refusals: refused.listed,
        interrupted: interrupted.into_inner(),
    };
    let file = args.out.join(SUMMARY_FILE);
    write_json(&file, &swept).map_err(|e| Failure(format!("{}: {e}", file.display())))?;
    Ok(swept)
}
