//! Faults: a bar in the fault row of every lane a fault touches and, for a pause or a crash,
//! a veil over the whole client lane (the client runs nothing meanwhile).

use std::fmt;

use super::client::interval;
use super::layout::Layout;
use super::scale::Scale;
use super::svg::{Hover, Svg, text_width};
use crate::analysis::{FaultSpan, Lane, Run};
use crate::describe;

/// The veils of pauses and crashes, drawn under everything else in their lanes.
pub(crate) fn veils(svg: &mut Svg<'_>, run: &Run, layout: &Layout, scale: &Scale) -> fmt::Result {
    for fault in run
        .faults
        .iter()
        .filter(|f| !f.is_instant() && scale.shows(f.start, f.end))
    {
        for lane in fault.lanes() {
            let Lane::Client(client) = lane else { continue };
            let Some(lane) = layout.lane(lane).filter(|_| fault.stops_client(client)) else {
                continue;
            };
            let (x1, x2) = (scale.x(fault.start), scale.x(fault.end));
            svg.rect(
                (x1, lane.y + 2.0, x2 - x1, lane.height - 4.0),
                "veil",
                Default::default(),
            )?;
        }
    }
    Ok(())
}

/// The fault bars (instant faults as a tick with a label).
pub(crate) fn bars(svg: &mut Svg<'_>, run: &Run, layout: &Layout, scale: &Scale) -> fmt::Result {
    for fault in run.faults.iter().filter(|f| scale.shows(f.start, f.end)) {
        let tip = tip(run, fault);
        let hover = Hover {
            tip: Some(&tip),
            event: Some(fault.start_event),
        };
        for lane in fault.lanes() {
            let Some(lane) = layout.lane(lane) else {
                continue;
            };
            let (y, h) = lane.fault_row();
            let x1 = scale.x(fault.start);
            let class = format!("fault f-{}", fault.short());
            if fault.is_instant() {
                svg.polygon(
                    &[
                        (x1, y),
                        (x1 + 6.0, y + h / 2.0),
                        (x1, y + h),
                        (x1 - 6.0, y + h / 2.0),
                    ],
                    &class,
                    hover,
                )?;
                svg.text((x1 + 9.0, y + 11.0), "mark-label", fault.short())?;
                continue;
            }
            let x2 = scale.x(fault.end);
            svg.rect((x1, y, x2 - x1, h), &class, hover)?;
            let label = format!(
                "{} {}",
                label(fault),
                run.clock.duration(fault.end - fault.start)
            );
            if text_width(&label) + 8.0 < x2 - x1 {
                svg.text((x1 + 4.0, y + 10.5), "in-light", &label)?;
            } else if text_width(fault.short()) + 6.0 < x2 - x1 {
                svg.text((x1 + 3.0, y + 10.5), "in-light", fault.short())?;
            }
        }
    }
    Ok(())
}

/// A fault's bar label: what kind, in words.
fn label(fault: &FaultSpan) -> &'static str {
    match fault.short() {
        "pause" => "GC pause",
        other => other,
    }
}

/// A fault's hover text.
fn tip(run: &Run, fault: &FaultSpan) -> String {
    if fault.is_instant() {
        format!(
            "{} {}",
            run.clock.at(fault.start),
            describe::fault(&fault.fault)
        )
    } else {
        format!(
            "{} · {}",
            describe::fault(&fault.fault),
            interval(run.clock, fault.start, fault.end, fault.open)
        )
    }
}
