//! The swimlane timeline: one lane per client and one for the server, drawn as inline SVG
//! twice — zoomed to the first violation's window, and the whole run (a button switches).

mod client;
mod faults;
mod frame;
mod layout;
mod overlap;
mod scale;
mod server;
mod svg;

use std::fmt::{self, Write};

use recipe_table::property::Violation;

use crate::analysis::{self, Lane, Run};
use layout::{Layout, PLOT_W, PLOT_X, WIDTH};
use scale::Scale;
use svg::Svg;

pub(crate) use client::access_words;

/// Hatch patterns the views share (ids are document-wide).
const DEFS: &str = concat!(
    "<svg class=\"defs\" width=\"0\" height=\"0\" aria-hidden=\"true\"><defs>",
    "<pattern id=\"hatch-red\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" ",
    "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fee2e2\"/>",
    "<rect width=\"3\" height=\"6\" fill=\"#dc2626\"/></pattern>",
    "<pattern id=\"hatch-grey\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" ",
    "patternTransform=\"rotate(45)\"><rect width=\"2\" height=\"8\" fill=\"#64748b\"/>",
    "</pattern></defs></svg>"
);

/// Writes the timeline section.
pub(crate) fn write(out: &mut String, run: &Run, violations: &[Violation]) -> fmt::Result {
    let layout = Layout::new(run);
    let window = violations.first().map(|v| analysis::window(run, v));
    out.push_str("<section id=\"timeline\"><div class=\"section-head\"><h2>Timeline</h2>");
    if window.is_some() {
        out.push_str(concat!(
            "<div class=\"views\" role=\"group\" aria-label=\"Zoom\">",
            "<button type=\"button\" class=\"on\" data-view=\"window\">Violation window</button>",
            "<button type=\"button\" data-view=\"whole\">Whole run</button></div>"
        ));
    }
    out.push_str("</div>");
    out.push_str(DEFS);
    if let Some((from, to)) = window {
        let scale = Scale::new(from, to, PLOT_X, PLOT_W);
        write!(
            out,
            "<p class=\"caption\" data-for=\"window\">Zoomed to {} → {} of a {} run. \
             Hover any bar or mark for details; click it to find its event in the table.</p>",
            run.clock.at(from),
            run.clock.at(to),
            run.clock.duration(run.end)
        )?;
        view(out, run, violations, &layout, &scale, "window", None)?;
    }
    let whole = Scale::new(0, run.end, PLOT_X, PLOT_W);
    view(out, run, violations, &layout, &whole, "whole", window)?;
    out.push_str(LEGEND);
    out.push_str("</section>");
    Ok(())
}

/// One view: the lanes over `scale`; the whole-run view (`zoomed` set) outlines the zoomed
/// window and starts hidden.
fn view(
    out: &mut String,
    run: &Run,
    violations: &[Violation],
    layout: &Layout,
    scale: &Scale,
    name: &str,
    zoomed: Option<(u64, u64)>,
) -> fmt::Result {
    let hidden = if zoomed.is_some() { " hidden" } else { "" };
    write!(
        out,
        "<div class=\"view\" data-view=\"{name}\"{hidden}><svg class=\"timeline\" viewBox=\"0 0 {WIDTH} {h:.0}\" \
         role=\"img\" aria-label=\"Timeline, {name}\">",
        h = layout.height
    )?;
    let mut svg = Svg::new(out);
    frame::draw(&mut svg, run, layout, scale)?;
    overlap::bands(&mut svg, layout, violations, scale)?;
    faults::veils(&mut svg, run, layout, scale)?;
    for lane in &layout.lanes {
        if let Lane::Client(client) = lane.lane {
            client::draw(&mut svg, run, client, lane, scale)?;
        }
    }
    server::draw(&mut svg, run, layout, scale)?;
    faults::bars(&mut svg, run, layout, scale)?;
    if let Some((from, to)) = zoomed {
        let (top, bottom) = layout.span_y();
        let (x1, x2) = (scale.x(from), scale.x(to));
        svg.rect(
            (x1, top - 2.0, x2 - x1, bottom - top + 4.0),
            "window-mark",
            Default::default(),
        )?;
    }
    overlap::labels(&mut svg, run, layout, violations, scale)?;
    out.push_str("</svg></div>");
    Ok(())
}

/// What the colours and shapes mean.
const LEGEND: &str = concat!(
    "<ul class=\"legend\">",
    "<li><svg viewBox=\"0 0 18 10\"><rect class=\"ss connected\" width=\"18\" height=\"10\"/></svg>connected</li>",
    "<li><svg viewBox=\"0 0 18 10\"><rect class=\"ss suspended\" width=\"18\" height=\"10\"/></svg>suspended</li>",
    "<li><svg viewBox=\"0 0 18 10\"><rect class=\"ss lost\" width=\"18\" height=\"10\"/></svg>lost (client gave up)</li>",
    "<li><svg viewBox=\"0 0 18 10\"><rect class=\"ss expired\" width=\"18\" height=\"10\"/></svg>expired</li>",
    "<li><svg viewBox=\"0 0 18 10\"><rect class=\"unnoticed\" width=\"18\" height=\"10\"/></svg>expired on the server, client unaware</li>",
    "<li><svg viewBox=\"0 0 18 10\"><rect class=\"wait\" x=\"1\" y=\"2\" width=\"16\" height=\"6\"/></svg>waiting</li>",
    "<li><svg viewBox=\"0 0 18 10\"><rect class=\"hold k0\" width=\"18\" height=\"10\"/></svg>holding (token)</li>",
    "<li><svg viewBox=\"0 0 18 10\"><rect class=\"zombie\" width=\"18\" height=\"10\"/></svg>holding, session already expired</li>",
    "<li><svg viewBox=\"0 0 18 12\"><circle class=\"acc ok\" cx=\"9\" cy=\"6\" r=\"4.5\"/></svg>read ",
    "<svg viewBox=\"0 0 18 12\"><polygon class=\"acc ok\" points=\"9,1 14,6 9,11 4,6\"/></svg>write accepted</li>",
    "<li><svg viewBox=\"0 0 18 12\"><polygon class=\"acc rejected\" points=\"9,1 14,6 9,11 4,6\"/></svg>rejected (stale token)</li>",
    "<li><svg viewBox=\"0 0 18 12\"><polygon class=\"acc lost\" points=\"9,1 14,6 9,11 4,6\"/></svg>accepted, update lost</li>",
    "<li><svg viewBox=\"0 0 18 10\"><rect class=\"fault f-pause\" width=\"18\" height=\"10\"/></svg>fault</li>",
    "<li><svg viewBox=\"0 0 18 10\"><rect class=\"overlap-fill edge-box\" width=\"18\" height=\"10\"/></svg>violation</li>",
    "</ul>"
);
