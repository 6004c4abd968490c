//! `splitbrain real-matrix MATRIX.json`: sweeps each row of a matrix file (a library, a
//! scenario, seeds; see [`file`]) on a real ZooKeeper, as `real SCENARIO --seeds A..B` with the
//! library's flags does, each row into `<out>/<library>/<scenario>/`, and writes the findings
//! (see [`findings`]): `findings.json`, and `findings.md`, the page the book's findings table
//! is a copy of. Every row is checked before any server starts. It exits 0 when every row was
//! swept and judged, 1 when some row could not be (every run failed), and 2 on bad input or
//! Ctrl-C (the findings of the rows made are written first).

pub mod file;
pub mod findings;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use splitbrain::files::{write_atomic, write_json};

use super::{ServerArgs, sweep};
use crate::cli::bench::results::{Machine, commit};
use crate::cli::{CatalogArgs, Failure, Outcome, UNMET};
use file::Common;
use findings::{Finding, Findings};

/// Arguments of `real-matrix`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("server").required(true).args(["connect", "start_local"])))]
pub struct Args {
    /// The matrix file: its libraries, each the flags of `splitbrain real` that run it, and its
    /// rows, each a library, a scenario (a catalog name or a scenario file) and seeds `A..B`.
    matrix: PathBuf,
    #[command(flatten)]
    server: ServerArgs,
    /// Where to write findings.md, findings.json, and each row's sweep (summary, index page,
    /// the first violating runs' traces and reports) in `<library>/<scenario>/`.
    #[arg(long, value_name = "DIR", default_value = "splitbrain-out/real-matrix")]
    out: PathBuf,
    /// Print the findings as JSON, with no progress bars.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    catalog: CatalogArgs,
}

/// Runs the command.
pub fn run(args: Args) -> Outcome {
    let mut flags = args.server.flags();
    let mut command = format!("splitbrain real-matrix {}", args.matrix.display());
    for word in flags
        .iter()
        .chain(["--out".into(), args.out.display().to_string()].iter())
    {
        command.push(' ');
        command.push_str(word);
    }
    if let Some(dir) = &args.catalog.catalog {
        flags.extend(["--catalog".to_owned(), dir.display().to_string()]);
    }
    let common = Common {
        flags,
        out: args.out.clone(),
        json: args.json,
    };
    let matrix = file::load(&args.matrix, &common)?;
    let (commit, started) = (commit(), Instant::now());
    let mut rows = Vec::new();
    let mut interrupted = false;
    for row in matrix.rows {
        let scenario = &row.scenario;
        if !args.json {
            say!("{} · {} · seeds {}", row.library, scenario.name, row.seeds);
        }
        let swept = sweep::sweep(&row.args, scenario, row.plan);
        interrupted = matches!(&swept, Ok(swept) if swept.interrupted);
        let swept = swept.as_ref().map_err(|Failure(error)| error.clone());
        let recipe = scenario.recipe.to_string();
        let name = scenario.name.clone();
        let finding = Finding::of(&row.library, recipe, name, row.flags, row.seeds, swept);
        if !args.json {
            say!("  {}", finding.line());
        }
        rows.push(finding);
        if interrupted {
            break;
        }
    }
    let findings = Findings {
        command,
        description: matrix.description,
        commit,
        machine: Machine::this(),
        target: args.server.target(),
        seconds: started.elapsed().as_secs(),
        libraries: matrix.libraries,
        rows,
    };
    let (json, page) = (args.out.join("findings.json"), args.out.join("findings.md"));
    let cannot = |path: &PathBuf, e: std::io::Error| {
        Failure(format!("{}: cannot write it: {e}", path.display()))
    };
    write_json(&json, &findings).map_err(|e| cannot(&json, e))?;
    write_atomic(&page, findings.markdown().as_bytes()).map_err(|e| cannot(&page, e))?;
    if args.json {
        say!("{}", serde_json::to_string_pretty(&findings)?);
    } else {
        say!("wrote {} and {}", page.display(), json.display());
    }
    if interrupted {
        return Err(Failure(format!(
            "the matrix was interrupted (Ctrl-C); the findings of the rows made: {}",
            page.display()
        )));
    }
    let broken = findings.rows.iter().any(|row| row.error.is_some());
    Ok(if broken {
        ExitCode::from(UNMET)
    } else {
        ExitCode::SUCCESS
    })
}
