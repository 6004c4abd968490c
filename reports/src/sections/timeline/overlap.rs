//! The violations over the lanes: a tinted band across every lane for an interval (two
//! clients holding at once), a line for an instant, each labelled above the axis.

use std::fmt;

use recipe_table::property::Violation;

use super::layout::{FLAG_ROWS, Layout, PLOT_W, PLOT_X};
use super::scale::Scale;
use super::svg::{Hover, Svg, text_width};
use crate::analysis::Run;
use crate::verdict;

/// The tinted bands, drawn under the lane content.
pub(crate) fn bands(
    svg: &mut Svg<'_>,
    layout: &Layout,
    violations: &[Violation],
    scale: &Scale,
) -> fmt::Result {
    let (top, bottom) = layout.span_y();
    for (i, violation) in violations.iter().enumerate() {
        let Some(until) = violation.until.filter(|&u| u > violation.at) else {
            continue;
        };
        if !scale.shows(violation.at, until) {
            continue;
        }
        let (x1, x2) = (scale.x(violation.at), scale.x(until));
        svg.raw(&format!("<g class=\"overlap\" data-violation=\"{i}\">"));
        svg.rect(
            (x1, top, x2 - x1, bottom - top),
            "overlap-fill",
            Default::default(),
        )?;
        svg.raw("</g>");
    }
    Ok(())
}

/// The edges and labels, drawn over everything. Flags go in the first of the two flag rows
/// where they collide with none placed before them (the first violation first); where
/// neither has room, a bare `⚠` is tried, then the flag is left out (the edges stay).
pub(crate) fn labels(
    svg: &mut Svg<'_>,
    run: &Run,
    layout: &Layout,
    violations: &[Violation],
    scale: &Scale,
) -> fmt::Result {
    let (_, bottom) = layout.span_y();
    let mut placed: Vec<(usize, f64, f64)> = Vec::new();
    for (i, violation) in violations.iter().enumerate() {
        let until = violation.until.unwrap_or(violation.at).max(violation.at);
        if !scale.shows(violation.at, until) {
            continue;
        }
        let (x1, x2) = (scale.x(violation.at), scale.x(until));
        svg.raw(&format!(
            "<g class=\"violation-mark\" data-violation=\"{i}\">"
        ));
        svg.line((x1, FLAG_ROWS[0]), (x1, bottom), "edge")?;
        if x2 > x1 {
            svg.line((x2, FLAG_ROWS[0]), (x2, bottom), "edge")?;
        }
        let full = verdict::label(violation, run.clock);
        let spot = [full.as_str(), "⚠"].into_iter().find_map(|label| {
            let width = text_width(label) + 12.0;
            let x = ((x1 + x2) / 2.0 - width / 2.0).clamp(PLOT_X, PLOT_X + PLOT_W - width);
            let free = |row: usize| {
                placed
                    .iter()
                    .all(|&(r, a, b)| r != row || x + width + 4.0 <= a || b + 4.0 <= x)
            };
            (0..FLAG_ROWS.len())
                .find(|&row| free(row))
                .map(|row| (label, row, x, width))
        });
        if let Some((label, row, x, width)) = spot {
            placed.push((row, x, x + width));
            let tip = format!("{} · {}", violation.property, violation.message);
            let y = FLAG_ROWS[row];
            let hover = Hover {
                tip: Some(&tip),
                event: violation.events.first().copied(),
            };
            svg.rect((x, y, width, 17.0), "flag", hover)?;
            svg.text((x + 6.0, y + 12.5), "flag-text", label)?;
        }
        svg.raw("</g>");
    }
    Ok(())
}
