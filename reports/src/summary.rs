//! The summary page of a hunt: one row per scenario and property, with counts, whether the
//! expectation was met, and links to the reports of the violating seeds.

use std::fmt::{self, Write};

use recipe_table::property::{Expectation, Property};

use crate::escape::Esc;
use crate::page;

/// A hunt's results, as the CLI hands them over.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// The page heading, e.g. `hunt · seeds 0..200 · shard 1/2`.
    pub title: String,
    /// One row per scenario and property, in the order to show them.
    pub rows: Vec<SummaryRow>,
}

/// One scenario × property of a hunt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryRow {
    /// The scenario's name.
    pub scenario: String,
    /// The property.
    pub property: Property,
    /// What the scenario expects of it.
    pub expectation: Expectation,
    /// Seeds run.
    pub seeds_run: u64,
    /// Seeds that violated it.
    pub seeds_violating: u64,
    /// The first violating seed.
    pub first_violating_seed: Option<u64>,
    /// Whether the expectation was met.
    pub met: bool,
    /// Reports written for violating seeds.
    pub reports: Vec<ReportLink>,
}

/// A link to one report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportLink {
    /// The seed the report is about.
    pub seed: u64,
    /// Where the report is, relative to the summary page.
    pub href: String,
}

/// Renders the hunt summary as one self-contained HTML page.
pub fn render_summary(summary: &Summary) -> String {
    let mut out = String::with_capacity(16 * 1024 + summary.rows.len() * 400);
    write_page(&mut out, summary).expect("writing to a String cannot fail");
    out
}

fn write_page(out: &mut String, summary: &Summary) -> fmt::Result {
    let unmet = summary.rows.iter().filter(|r| !r.met).count();
    page::open(
        out,
        &summary.title,
        &[("verdict", "Verdict"), ("results", "Results")],
    )?;
    let (class, kicker, headline) = if unmet == 0 {
        (
            "ok",
            "ALL EXPECTATIONS MET",
            "Every scenario behaved as expected".to_owned(),
        )
    } else {
        (
            "bad",
            "EXPECTATIONS NOT MET",
            format!("{unmet} of {} expectations not met", summary.rows.len()),
        )
    };
    write!(
        out,
        "<header id=\"verdict\" class=\"verdict {class}\"><div class=\"kicker\">{kicker}</div>\
         <h1>{}</h1><p class=\"when\">{}</p></header>",
        Esc(&headline),
        Esc(&summary.title)
    )?;
    out.push_str(concat!(
        "<section id=\"results\"><h2>Results</h2><table class=\"summary\"><thead><tr>",
        "<th>scenario</th><th>property</th><th>expected</th><th>seeds run</th>",
        "<th>violating</th><th>first violating seed</th><th>met</th><th>reports</th>",
        "</tr></thead><tbody>"
    ));
    for row in &summary.rows {
        write_row(out, row)?;
    }
    out.push_str("</tbody></table></section>");
    page::close(out, "splitbrain hunt summary · self-contained, no network")
}

fn write_row(out: &mut String, row: &SummaryRow) -> fmt::Result {
    let expected = match row.expectation {
        Expectation::Holds => "holds",
        Expectation::Violated => "violated",
        Expectation::Unchecked => "unchecked",
    };
    let first = row
        .first_violating_seed
        .map(|s| s.to_string())
        .unwrap_or_else(|| "—".to_owned());
    let (class, met) = if row.met {
        ("met", "✓")
    } else {
        ("unmet", "✗")
    };
    write!(
        out,
        "<tr class=\"{class}\"><td>{}</td><td class=\"num\">{}</td><td>{expected}</td>\
         <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{first}</td>\
         <td class=\"verdict-cell\">{met}</td><td>",
        Esc(&row.scenario),
        row.property,
        row.seeds_run,
        row.seeds_violating
    )?;
    for (i, link) in row.reports.iter().enumerate() {
        let sep = if i == 0 { "" } else { " · " };
        write!(
            out,
            "{sep}<a href=\"{}\">seed {}</a>",
            Esc(&relative(&link.href)),
            link.seed
        )?;
    }
    out.push_str("</td></tr>");
    Ok(())
}

/// `href` as a relative reference: anything that could parse as a URL scheme
/// (`javascript:…`) is made a path with `./`.
fn relative(href: &str) -> String {
    let before_slash = href.split('/').next().unwrap_or_default();
    if before_slash.contains(':') {
        format!("./{href}")
    } else {
        href.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(met: bool, href: &str) -> SummaryRow {
        SummaryRow {
            scenario: "gc-pause-split-brain".to_owned(),
            property: Property::MutualExclusionBelief,
            expectation: Expectation::Violated,
            seeds_run: 200,
            seeds_violating: 37,
            first_violating_seed: Some(4),
            met,
            reports: vec![ReportLink {
                seed: 4,
                href: href.to_owned(),
            }],
        }
    }

    #[test]
    fn rows_show_counts_verdicts_and_links() {
        let html = render_summary(&Summary {
            title: "hunt · seeds 0..200".to_owned(),
            rows: vec![row(true, "gc-pause-split-brain/seed-4.html")],
        });
        assert!(html.contains("ALL EXPECTATIONS MET"));
        assert!(html.contains("<td>gc-pause-split-brain</td>"));
        assert!(html.contains("mutual_exclusion_belief"));
        assert!(html.contains("<td class=\"num\">37</td>"));
        assert!(html.contains("<a href=\"gc-pause-split-brain/seed-4.html\">seed 4</a>"));
    }

    #[test]
    fn an_unmet_row_turns_the_verdict_and_schemes_are_defused() {
        let html = render_summary(&Summary {
            title: "hunt".to_owned(),
            rows: vec![row(true, "a.html"), row(false, "javascript:alert(1)")],
        });
        assert!(html.contains("1 of 2 expectations not met"));
        assert!(html.contains("href=\"./javascript:alert(1)\""));
    }
}
