//! The full event table, filterable by client (and by text) in the page. Rows are terse —
//! optional end tags are left out, and row `n` is found as the table body's `n`th row rather
//! than by an id — so that a long run stays a small file.

use std::collections::BTreeSet;
use std::fmt::{self, Write};

use recipe_table::property::Violation;
use trace::{Event, EventKind, ServerSession};

use crate::analysis::{Lane, Run};
use crate::describe;
use crate::escape::Esc;

/// Writes the section.
pub(crate) fn write(out: &mut String, run: &Run, violations: &[Violation]) -> fmt::Result {
    let hot: BTreeSet<usize> = violations
        .iter()
        .flat_map(|v| v.events.iter().copied())
        .collect();
    write!(
        out,
        "<section id=\"events\"><h2>All events <span class=\"count\">{}</span></h2>\
         <div class=\"filters\" role=\"group\" aria-label=\"Filter events\"><span>Show</span>",
        run.trace.events.len()
    )?;
    for lane in &run.lanes {
        let (key, colour) = match lane {
            Lane::Client(c) => (c.to_string(), format!("k{}", c % 8)),
            Lane::Server => ("s".to_owned(), "srv".to_owned()),
        };
        write!(
            out,
            "<label class=\"chip {colour}\"><input type=\"checkbox\" data-client=\"{key}\" checked>{lane}</label>"
        )?;
    }
    if !hot.is_empty() {
        out.push_str("<label class=\"chip\"><input type=\"checkbox\" id=\"only-hot\">only the violation's events</label>");
    }
    out.push_str(concat!(
        "<input type=\"search\" id=\"grep\" placeholder=\"filter text (path, token, kind…)\" ",
        "aria-label=\"Filter events by text\"><span class=\"shown\" id=\"shown\"></span></div>",
        "<div class=\"table-wrap\"><table class=\"events\"><thead><tr><th>#</th><th>time</th>",
        "<th>where</th><th>kind</th><th>what</th></tr></thead><tbody>"
    ));
    for (index, event) in run.trace.events.iter().enumerate() {
        let mut class = String::new();
        if notable(event) {
            class.push('x');
        }
        if hot.contains(&index) {
            class.push_str(if class.is_empty() { "h" } else { " h" });
        }
        write!(out, "<tr data-c=\"{}\"", clients(run, index, event))?;
        if !class.is_empty() {
            write!(out, " class=\"{class}\"")?;
        }
        let place = event
            .client
            .map_or_else(|| "server".to_owned(), |c| c.to_string());
        write!(
            out,
            "><td>{index}<td>{}<td>{place}<td>{}<td>{}",
            Esc(&run.clock.precise(event.t)),
            describe::kind_name(&event.kind),
            Esc(&describe::event(run, event))
        )?;
    }
    out.push_str("</tbody></table></div></section>");
    Ok(())
}

/// The filter keys of an event's row: its client, `s` for the server, and for a fault every
/// lane it touches.
fn clients(run: &Run, index: usize, event: &Event) -> String {
    let key = |lane: Lane| match lane {
        Lane::Client(c) => c.to_string(),
        Lane::Server => "s".to_owned(),
    };
    let fault = run
        .faults
        .iter()
        .find(|f| f.start_event == index || f.end_event == Some(index));
    if let Some(fault) = fault {
        let keys: Vec<String> = fault.lanes().into_iter().map(key).collect();
        return keys.join(" ");
    }
    key(event.client.map_or(Lane::Server, |c| Lane::Client(c.0)))
}

/// Events a reader scans for: lock notices and calls, session changes, faults, resource
/// accesses and expiries.
fn notable(event: &Event) -> bool {
    matches!(
        event.kind,
        EventKind::Notice { .. }
            | EventKind::Call { .. }
            | EventKind::Session { .. }
            | EventKind::FaultStart { .. }
            | EventKind::FaultEnd { .. }
            | EventKind::ResourceRead { .. }
            | EventKind::ResourceWrite { .. }
            | EventKind::ServerSession {
                change: ServerSession::Expired,
                ..
            }
    )
}
