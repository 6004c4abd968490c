//! The frame of a view: lane bands and labels, the time axis and its grid.

use std::fmt;

use super::layout::{Layout, PLOT_W, PLOT_X, TOP, WIDTH};
use super::scale::Scale;
use super::svg::Svg;
use crate::analysis::{Lane, Run};

/// Draws lane bands with their labels, and the axis with a grid line per tick.
pub(crate) fn draw(svg: &mut Svg<'_>, run: &Run, layout: &Layout, scale: &Scale) -> fmt::Result {
    for (i, lane) in layout.lanes.iter().enumerate() {
        let band = if i % 2 == 0 { "band" } else { "band alt" };
        svg.raw(&format!("<g class=\"lane\" data-lane=\"{}\">", lane.lane));
        svg.rect((0.0, lane.y, WIDTH, lane.height), band, Default::default())?;
        let (name, role) = match lane.lane {
            Lane::Client(_) => (lane.lane.to_string(), "client"),
            Lane::Server => ("server".to_owned(), "ZooKeeper"),
        };
        svg.text((14.0, lane.y + 24.0), "lane-name", &name)?;
        svg.text((14.0, lane.y + 38.0), "lane-role", role)?;
        if let Lane::Client(_) = lane.lane {
            let rows = [
                (lane.session_row(), "session"),
                (lane.lock_row(), "lock"),
                (lane.access_row(), "resource"),
            ];
            for ((row, _), label) in rows {
                svg.text((PLOT_X - 6.0, row + 11.0), "row-name", label)?;
            }
        }
        svg.text(
            (PLOT_X - 6.0, lane.fault_row().0 + 10.0),
            "row-name",
            "faults",
        )?;
        svg.raw("</g>");
    }
    let (top, bottom) = layout.span_y();
    let step = scale.step();
    for t in scale.ticks() {
        let x = scale.x(t);
        svg.line((x, top), (x, bottom), "grid")?;
        svg.text((x, TOP - 8.0), "tick", &run.clock.tick(t, step))?;
    }
    svg.line((PLOT_X, TOP - 3.0), (PLOT_X + PLOT_W, TOP - 3.0), "axis")
}
