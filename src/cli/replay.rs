//! `splitbrain replay <scenario> --seed N` reruns one seed; `splitbrain replay --from FILE`
//! reruns the exact scenario, seed and fault schedule a trace records (how a shrunk
//! counterexample is reproduced). Either way the new trace is written and the violations
//! printed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use recipe_table::property::Property;
use splitbrain::files::{write_atomic, write_json};
use splitbrain::run::{self, Outcome as RunOutcome};
use trace::Trace;

use super::{CatalogArgs, Failure, Outcome, find, outcome_json, report_html, violation_line};

/// Arguments of `replay`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The scenario to run (see `splitbrain scenarios`).
    #[arg(required_unless_present = "from", conflicts_with = "from")]
    scenario: Option<String>,
    /// The seed to run.
    #[arg(long, required_unless_present = "from", conflicts_with = "from")]
    seed: Option<u64>,
    /// Rerun the run this trace records, with its exact fault schedule.
    #[arg(long, value_name = "TRACE")]
    from: Option<PathBuf>,
    /// Where to write the trace [default:
    /// splitbrain-out/replay/<scenario>.seed-<N>.trace.json, or <TRACE>.replay.json with
    /// --from].
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Also write the run's HTML report here.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Run the scenario's workload against an unfenced resource (the stale holder's writes
    /// are accepted, so split brains lose updates).
    #[arg(long, conflicts_with = "from")]
    unfenced: bool,
    /// Shrink the fault schedule (seed fixed) to the fewest faults that still violate this
    /// property; the trace records the shrunk schedule and the original.
    #[arg(long, value_name = "PROPERTY", value_parser = parse_property)]
    shrink: Option<Property>,
    /// Print JSON: `{"scenario", "seed", "violations": [{"property", "at", "clients", ..}],
    /// "trace", "report"}`.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    catalog: CatalogArgs,
}

fn parse_property(text: &str) -> Result<Property, String> {
    Property::ALL
        .into_iter()
        .find(|p| p.name() == text)
        .ok_or_else(|| {
            let names: Vec<&str> = Property::ALL.iter().map(|p| p.name()).collect();
            format!("expected one of {}, found `{text}`", names.join(", "))
        })
}

/// Runs the command.
pub fn run(args: Args) -> Outcome {
    let (outcome, default_trace) = match &args.from {
        Some(from) => (rerun_from(from)?, from.with_extension("replay.json")),
        None => {
            let catalog = args.catalog.load()?;
            let name = args.scenario.as_deref().unwrap_or_default();
            let mut scenario = find(&catalog, name)?.clone();
            if args.unfenced {
                scenario.workload.fenced = false;
            }
            let seed = args.seed.unwrap_or_default();
            let outcome = run::run(&scenario, seed).map_err(|e| run_failed(name, seed, &e))?;
            let default = Path::new("splitbrain-out").join("replay").join(format!(
                "{}.seed-{seed}.trace.json",
                scenario_label(name, args.unfenced)
            ));
            (outcome, default)
        }
    };
    let (outcome, shrunk_note) = match args.shrink {
        Some(property) => shrink(outcome, property)?,
        None => (outcome, None),
    };
    let trace_path = args.trace.clone().unwrap_or(default_trace);
    write_json(&trace_path, &outcome.trace).map_err(|e| {
        Failure(format!(
            "{}: cannot write the trace: {e}",
            trace_path.display()
        ))
    })?;
    if let Some(report) = &args.report {
        let html = report_html(&outcome, &trace_path, args.shrink);
        write_atomic(report, html.as_bytes()).map_err(|e| {
            Failure(format!(
                "{}: cannot write the report: {e}",
                report.display()
            ))
        })?;
    }
    print(&args, &outcome, &trace_path, shrunk_note.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

/// The scenario's name in file names, marked when run unfenced.
fn scenario_label(name: &str, unfenced: bool) -> String {
    if unfenced {
        format!("{name}.unfenced")
    } else {
        name.to_owned()
    }
}

fn run_failed(scenario: &str, seed: u64, error: &run::RunError) -> Failure {
    Failure(format!("scenario {scenario}, seed {seed}: the run {error}"))
}

/// Reads a trace file and reruns it (`replay --from`).
pub(super) fn rerun_from(path: &Path) -> Result<RunOutcome, Failure> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure(format!(
            "{file}: expected a readable trace file, found an error: {e}"
        ))
    })?;
    let trace = Trace::from_json(&file, &text)?;
    let outcome = run::rerun(&trace)
        .map_err(|run::NotRerunnable(why)| Failure(format!("{file}: /meta: {why}")))?;
    outcome.map_err(|e| run_failed(&trace.meta.scenario, trace.meta.seed, &e))
}

/// Shrinks the run's schedule for `property`, with a note on what it did.
fn shrink(
    outcome: RunOutcome,
    property: Property,
) -> Result<(RunOutcome, Option<String>), Failure> {
    if !outcome.violates(property) {
        let note = format!("nothing to shrink: the run does not violate {property}");
        return Ok((outcome, Some(note)));
    }
    let scenario = outcome
        .trace
        .meta
        .scenario_spec
        .clone()
        .ok_or_else(|| Failure("the trace does not record its scenario".into()))?;
    let shrunk = run::shrink_run(&scenario, &outcome, property);
    let note = format!(
        "shrunk the fault schedule from {} to {} fault(s) in {} runs, seed held fixed",
        shrunk.original_faults,
        shrunk.outcome.trace.meta.fault_schedule.len(),
        shrunk.runs
    );
    Ok((shrunk.outcome, Some(note)))
}

fn print(
    args: &Args,
    outcome: &RunOutcome,
    trace_path: &Path,
    note: Option<&str>,
) -> Result<(), Failure> {
    let meta = &outcome.trace.meta;
    if args.json {
        let out = outcome_json(outcome, trace_path, args.report.as_deref());
        say!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    say!(
        "{} seed {}: {} fault(s), {} events, {} violation(s)",
        meta.scenario,
        meta.seed,
        meta.fault_schedule.len(),
        outcome.trace.events.len(),
        outcome.violations.len()
    );
    if let Some(note) = note {
        say!("{note}");
    }
    for fault in &meta.fault_schedule {
        say!(
            "  fault at {} ms: {}",
            fault.at_ms,
            serde_json::to_string(&fault.fault)?
        );
    }
    for violation in &outcome.violations {
        say!("  {}", violation_line(violation));
    }
    say!("trace: {}", trace_path.display());
    if let Some(report) = &args.report {
        say!("report: {}", report.display());
    }
    say!(
        "reproduce: splitbrain replay --from {}",
        trace_path.display()
    );
    Ok(())
}
