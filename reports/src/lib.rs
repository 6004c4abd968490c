//! Self-contained HTML reports of splitbrain runs.
//!
//! [`render`] turns a trace (from the simulator, the model checker or a real ZooKeeper) and
//! the checkers' verdicts into one HTML file — inline CSS, inline SVG and a little inline
//! JavaScript, no network — that explains the run top to bottom: the verdict, the command
//! that reproduces it, a swimlane timeline (one lane per client and one for the server),
//! the causal story in plain words, the fault schedule, every event (filterable) and the
//! run's metadata. [`render_summary`] makes the index page of a hunt, and [`write_atomic`]
//! writes either to disk.
//!
//! Every string that comes from a trace is escaped (see the `escape` module), and the page's
//! Content-Security-Policy allows no fetch and no script but its own.

mod analysis;
mod clock;
mod describe;
mod escape;
mod page;
mod sections;
mod summary;
mod verdict;
mod write;

use recipe_table::property::Violation;
use trace::{Source, Trace};

pub use summary::{ReportLink, Summary, SummaryRow, render_summary};
pub use write::write_atomic;

use analysis::Run;
use sections::{banner, meta, repro, schedule, story, table, timeline};

/// What a report needs besides the trace and its verdicts.
///
/// The reproduction commands come from the trace's `meta`: a shrunk schedule
/// (`meta.shrunk_from` set) is only reproduced by `replay --from <trace>`, an unshrunk
/// simulator run also by `replay <scenario> --seed N`. Model traces use these keys of
/// `meta.settings`, when present:
/// - `path` (string): the counterexample's action path for `check … --path`.
/// - `unfenced` (bool; or `fenced: false`): adds `--unfenced` to `check`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReportOptions {
    /// The trace file as the user should type it in `splitbrain replay --from <trace>`;
    /// `trace.json` is shown when it is not known.
    pub trace_file: Option<String>,
    /// The command that reruns the run, for a trace of a user's recipe (which splitbrain's
    /// own commands cannot rerun): the test that found it, as `splitbrain::testing` prints it.
    pub rerun: Option<String>,
}

/// Renders one report: `trace`, explained with the `violations` the checkers found in it
/// (the first one is the one the banner, the zoomed timeline and the story are about).
pub fn render(trace: &Trace, violations: &[Violation], options: &ReportOptions) -> String {
    let mut out = String::with_capacity(64 * 1024 + trace.events.len() * 160);
    write_report(&mut out, trace, violations, options).expect("writing to a String cannot fail");
    out
}

fn write_report(
    out: &mut String,
    trace: &Trace,
    violations: &[Violation],
    options: &ReportOptions,
) -> std::fmt::Result {
    let run = Run::new(trace);
    let meta = &trace.meta;
    let verdict = match violations.first() {
        Some(v) => format!("{} violated", v.property),
        None => "no violation".to_owned(),
    };
    let title = format!(
        "{verdict} · {} seed {} · splitbrain",
        meta.scenario, meta.seed
    );
    page::open(
        out,
        &title,
        &[
            ("verdict", "Verdict"),
            ("repro", "Reproduce"),
            ("timeline", "Timeline"),
            ("story", "What happened"),
            ("schedule", "Faults"),
            ("events", "Events"),
            ("metadata", "Metadata"),
        ],
    )?;
    banner::write(out, &run, violations)?;
    repro::write(out, meta, options)?;
    timeline::write(out, &run, violations)?;
    story::write(out, &run, violations)?;
    schedule::write(out, &run)?;
    table::write(out, &run, violations)?;
    meta::write(out, &run)?;
    let source = match meta.source {
        Source::Sim => "simulator",
        Source::Model => "model checker",
        Source::Real => "real ZooKeeper",
    };
    page::close(
        out,
        &format!(
            "splitbrain-reports {} · {source} trace · self-contained: no network, no external files",
            env!("CARGO_PKG_VERSION")
        ),
    )
}
