//! `splitbrain report <trace.json> [-o FILE]`: renders any trace (simulator, model checker or
//! real ZooKeeper) as a self-contained HTML report, with the verdicts of the run spec it
//! records ([`properties::verdict::violations`], the function every command judges traces
//! with); an older trace without one is checked against the catalog's scenario of its name.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use properties::verdict::{self, VerdictError};
use trace::Trace;

use super::{CatalogArgs, Failure, Outcome, violation_line};

/// Arguments of `report`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The trace to render.
    #[arg(value_name = "TRACE")]
    trace: PathBuf,
    /// Where to write the report [default: the trace's path with `.html`].
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    out: Option<PathBuf>,
    #[command(flatten)]
    catalog: CatalogArgs,
}

/// Runs the command.
pub fn run(args: Args) -> Outcome {
    let file = args.trace.display().to_string();
    let text = std::fs::read_to_string(&args.trace).map_err(|e| {
        Failure(format!(
            "{file}: expected a readable trace file, found an error: {e}"
        ))
    })?;
    let trace = Trace::from_json(&file, &text)?;
    let violations = match verdict::violations(&trace) {
        Ok(violations) => violations,
        Err(VerdictError::NoSpec) => match args.catalog.load()?.get(&trace.meta.scenario) {
            Some(scenario) => verdict::violations_of_scenario(&trace, scenario),
            None => {
                say!(
                    "{file}: the trace records no run spec and the catalog has no scenario \
                     called `{}`: rendering without checking",
                    trace.meta.scenario
                );
                Vec::new()
            }
        },
    };
    let out = args.out.unwrap_or_else(|| default_out(&args.trace));
    let options = reports::ReportOptions {
        trace_file: Some(file),
        rerun: None,
        focus: None,
    };
    let html = reports::render(&trace, &violations, &options);
    reports::write_atomic(&out, &html)
        .map_err(|e| Failure(format!("cannot write the report: {e}")))?;
    for violation in &violations {
        say!("{}", violation_line(violation));
    }
    say!("{}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// `run.trace.json` → `run.trace.html`.
fn default_out(trace: &Path) -> PathBuf {
    trace.with_extension("html")
}
