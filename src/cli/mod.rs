//! What the commands share: the catalog option, errors and exit codes, printing verdicts.

/// `println!` that never panics: see [`say`].
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cli::say(format_args!($($arg)*))
    };
}

pub mod bench;
pub mod check;
pub mod fidelity;
pub mod hunt;
pub mod real;
pub mod recipes;
#[cfg(test)]
mod reference;
pub mod replay;
pub mod report;
pub mod scenarios;
pub mod survival;

use std::path::PathBuf;
use std::process::ExitCode;

use ::scenarios::catalog::Catalog;
use ::scenarios::scenario::Scenario;
use recipe_table::property::Violation;

/// Exit code of a command that ran but found an expectation unmet.
pub const UNMET: u8 = 1;
/// Exit code of bad input: a malformed file, an unknown name, a run that could not start.
pub const BAD_INPUT: u8 = 2;

/// This program, to start again as a child (client processes, contenders, bench children).
/// On Linux, `/proc/self/exe`: it names the image this process runs even once a rebuild has
/// replaced the file, so a sweep or matrix that runs for an hour keeps starting the binary it
/// began with (the path `current_exe` gives then names a deleted file, or the new build).
pub fn this_executable() -> std::io::Result<PathBuf> {
    let own_image = PathBuf::from("/proc/self/exe");
    if own_image.exists() {
        return Ok(own_image);
    }
    std::env::current_exe()
}

/// Prints one line to stdout. A closed stdout (`splitbrain hunt | head`) drops the rest of
/// the output quietly instead of panicking.
pub fn say(text: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}

/// A command's failure: one line for the user.
#[derive(Debug)]
pub struct Failure(pub String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(error: E) -> Failure {
        Failure(error.to_string())
    }
}

/// What a command returns: its exit code, or a failure to print.
pub type Outcome = Result<ExitCode, Failure>;

/// Prints a failure and turns the result into the process's exit code.
pub fn finish(result: Outcome) -> ExitCode {
    result.unwrap_or_else(|Failure(message)| {
        eprintln!("splitbrain: {message}");
        ExitCode::from(BAD_INPUT)
    })
}

/// `--catalog DIR`, for every command that reads scenarios.
#[derive(clap::Args, Clone, Debug)]
pub struct CatalogArgs {
    /// Read the scenarios from the *.json files of DIR instead of the built-in catalog.
    #[arg(long, value_name = "DIR")]
    pub catalog: Option<PathBuf>,
}

impl CatalogArgs {
    /// The catalog to use.
    pub fn load(&self) -> Result<Catalog, Failure> {
        let catalog = match &self.catalog {
            Some(dir) => Catalog::load_dir(dir)?,
            None => Catalog::builtin()?,
        };
        Ok(catalog)
    }
}

/// The scenario called `name`, or a one-line error listing the catalog.
pub fn find<'a>(catalog: &'a Catalog, name: &str) -> Result<&'a Scenario, Failure> {
    catalog.get(name).ok_or_else(|| {
        Failure(format!(
            "expected a scenario of the catalog ({}), found `{name}`",
            catalog.names().join(", ")
        ))
    })
}

/// The HTML report of a run whose trace is at `trace` (violations of `first` shown first).
pub fn report_html(
    outcome: &splitbrain::run::Outcome,
    trace: &std::path::Path,
    first: Option<recipe_table::property::Property>,
) -> String {
    let options = reports::ReportOptions {
        trace_file: Some(trace.display().to_string()),
        rerun: None,
        focus: first,
    };
    reports::render(&outcome.trace, &outcome.violations, &options)
}

/// A checked run as `replay --json` prints it: its scenario, seed, violations, files and
/// fault schedule.
pub fn outcome_json(
    outcome: &splitbrain::run::Outcome,
    trace: &std::path::Path,
    report: Option<&std::path::Path>,
) -> serde_json::Value {
    let meta = &outcome.trace.meta;
    let violations: Vec<_> = (outcome.violations.iter())
        .map(|v| {
            serde_json::json!({
                "property": v.property,
                "at": v.at,
                "until": v.until,
                "clients": v.clients,
                "events": v.events,
                "message": v.message,
            })
        })
        .collect();
    serde_json::json!({
        "scenario": meta.scenario,
        "seed": meta.seed,
        "violations": violations,
        "trace": trace.display().to_string(),
        "report": report.map(|r| r.display().to_string()),
        "fault_schedule": meta.fault_schedule,
        "shrunk_from": meta.shrunk_from,
    })
}

/// A violation as one line: `property at 1.234 ms [c0, c1]: sentence`.
pub fn violation_line(violation: &Violation) -> String {
    let clients: Vec<String> = violation.clients.iter().map(ToString::to_string).collect();
    let at = violation.at;
    format!(
        "{} at {}.{:03} ms [{}]: {}",
        violation.property,
        at / 1_000_000,
        (at / 1_000) % 1_000,
        clients.join(", "),
        violation.message
    )
}
