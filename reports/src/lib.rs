//! Self-contained HTML reports of splitbrain runs.
//!
//! [`render`] turns a trace (from the simulator, the model checker or a real ZooKeeper) and
//! the checkers' verdicts into one HTML file — inline CSS, inline SVG and a little inline
//! JavaScript, no network — that explains the run top to bottom: the verdict, the command
//! that reproduces it, a swimlane timeline (one lane per client and one for the server),
//! the causal story in plain words, for a hang who waits for whom at the end, the fault
//! schedule, every event (filterable) and the run's metadata. [`render_summary`] makes the
//! index page of a hunt, and [`write_atomic`] writes either to disk.
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

use recipe_table::property::{Property, Violation, most_severe_first};
use trace::{Source, Trace};

pub use summary::{ReportLink, Summary, SummaryRow, render_summary};
pub use write::write_atomic;

use analysis::Run;
use sections::{banner, meta, repro, schedule, story, table, timeline, waits};

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
    /// The property the report is about whatever the severity of the others: the one a trace
    /// was shrunk for (`replay --shrink`, `hunt`'s shrunk traces).
    pub focus: Option<Property>,
}

/// Renders one report: `trace`, explained with the `violations` the checkers found in it.
/// The banner, the zoomed timeline and the story are about the most severe of them
/// ([`most_severe_first`]: safety, then liveness, then efficiency, in the order given within a
/// class), or about the first of `options.focus` when it names a violated property.
pub fn render(trace: &Trace, violations: &[Violation], options: &ReportOptions) -> String {
    let mut ordered = violations.to_vec();
    most_severe_first(&mut ordered, options.focus);
    let mut out = String::with_capacity(64 * 1024 + trace.events.len() * 160);
    write_report(&mut out, trace, &ordered, options).expect("writing to a String cannot fail");
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
    let mut nav = vec![
        ("verdict", "Verdict"),
        ("repro", "Reproduce"),
        ("timeline", "Timeline"),
        ("story", "What happened"),
    ];
    if waits::shown(violations) {
        nav.push(("waits", "Who waits"));
    }
    nav.extend([
        ("schedule", "Faults"),
        ("events", "Events"),
        ("metadata", "Metadata"),
    ]);
    page::open(out, &title, &nav)?;
    banner::write(out, &run, violations)?;
    repro::write(out, meta, options)?;
    timeline::write(out, &run, violations)?;
    story::write(out, &run, violations)?;
    waits::write(out, &run, violations)?;
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

#[cfg(test)]
mod tests {
    use coordination::ids::ClientSlot;
    use trace::build::Build;

    use super::*;
    use crate::analysis::tests::violation;

    /// The banner of `html`.
    fn banner(html: &str) -> &str {
        let start = html.find("id=\"verdict\"").expect("a banner");
        &html[start..start + html[start..].find("</header>").expect("its end")]
    }

    #[test]
    fn the_banner_names_the_most_severe_violation_and_keeps_the_others() {
        let trace = Build::new().connected(0, 7).acquire(0).trace();
        let herd = Violation {
            clients: vec![ClientSlot(1)],
            ..violation(Property::HerdFree)
        };
        let progress = Violation {
            clients: vec![ClientSlot(0)],
            ..violation(Property::Progress)
        };
        let found = [herd, progress];
        let html = render(&trace, &found, &ReportOptions::default());
        let top = banner(&html);
        assert!(
            top.contains("<span class=\"prop\">progress</span>"),
            "{top}"
        );
        assert!(top.contains("1 more violation in this run"), "{top}");
        assert!(top.contains("<li><b>herd_free</b>"), "{top}");
        assert!(
            html.contains("<section id=\"waits\">"),
            "a hang's report says who waits"
        );
        assert!(html.contains("<a href=\"#waits\">"), "and links to it");

        let about_the_herd = ReportOptions {
            focus: Some(Property::HerdFree),
            ..ReportOptions::default()
        };
        let html = render(&trace, &found, &about_the_herd);
        let top = banner(&html);
        assert!(
            top.contains("<span class=\"prop\">herd_free</span>"),
            "{top}"
        );
        assert!(
            !html.contains("id=\"waits\""),
            "a herd's report has no waits"
        );
    }
}
