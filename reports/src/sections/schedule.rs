//! The fault schedule as the run injected it (after shrinking, when it was shrunk).

use std::fmt::{self, Write};

use crate::analysis::Run;
use crate::clock::millis;
use crate::describe;
use crate::escape::Esc;

/// Writes the section.
pub(crate) fn write(out: &mut String, run: &Run) -> fmt::Result {
    let meta = &run.trace.meta;
    let schedule = &meta.fault_schedule;
    out.push_str("<section id=\"schedule\"><h2>Fault schedule");
    if meta.shrunk_from.is_some() {
        out.push_str(" <span class=\"badge\">shrunk</span>");
    }
    out.push_str("</h2>");
    if schedule.is_empty() {
        out.push_str("<p class=\"caption\">No faults were scheduled.</p></section>");
        return Ok(());
    }
    if let Some(original) = &meta.shrunk_from {
        write!(
            out,
            "<p class=\"caption\">Minimized from {} scheduled faults with the seed held fixed: \
             every fault left here is needed for the violation to happen.</p>",
            original.len()
        )?;
    }
    out.push_str(
        "<table class=\"schedule\"><thead><tr><th>at</th><th>fault</th></tr></thead><tbody>",
    );
    for scheduled in schedule {
        write!(
            out,
            "<tr><td class=\"num\">{}</td><td>{}</td></tr>",
            millis(scheduled.at_ms),
            Esc(&describe::fault(&scheduled.fault))
        )?;
    }
    out.push_str("</tbody></table></section>");
    Ok(())
}
