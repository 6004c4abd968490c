//! The violation window: the stretch of the run a violation's explanation needs.

use coordination::ids::ClientSlot;
use recipe_table::property::Violation;

use super::{Lane, Run};

/// The interval `[from, to]` that explains `violation`: the violation itself, the events it
/// names, its clients' lock spans that touch it, and the faults on those clients that touch
/// those spans — padded a little on both sides and kept inside the run.
pub(crate) fn window(run: &Run, violation: &Violation) -> (u64, u64) {
    let involved = |client: u16| violation.clients.contains(&ClientSlot(client));
    let until = violation.until.unwrap_or(violation.at).max(violation.at);
    let named = violation
        .events
        .iter()
        .filter_map(|&i| run.trace.events.get(i))
        .map(|e| e.t);
    let (mut from, mut to) =
        named.fold((violation.at, until), |(lo, hi), t| (lo.min(t), hi.max(t)));
    for span in run
        .locks
        .iter()
        .filter(|l| involved(l.client) && l.start <= until && l.end >= violation.at)
    {
        from = from.min(span.start);
        to = to.max(span.end);
    }
    let (held_from, held_to) = (from, to);
    for fault in run.faults.iter().filter(|f| {
        f.start <= held_to
            && f.end >= held_from
            && f.lanes()
                .iter()
                .any(|lane| matches!(lane, Lane::Client(c) if involved(*c)))
    }) {
        from = from.min(fault.start);
        to = to.max(fault.end);
    }
    let pad = ((to - from) / 12).max(1);
    (from.saturating_sub(pad), (to + pad).min(run.end))
}
