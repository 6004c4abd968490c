//! When a run's faults had all healed: the instant from which `progress` (and
//! `revocation_answered` with it) counts the grace it allows.

use scenarios::fault::Fault;
use trace::{Event, EventKind};

/// The index of the event after which no fault is in force any more (the last fault's end,
/// or the last instantaneous fault), `Some(0)` when there were no faults, `None` when a fault
/// is still in force at the end of the trace.
pub(super) fn healed_at(events: &[Event]) -> Option<usize> {
    let mut open: Vec<&Fault> = Vec::new();
    let mut last = 0;
    for (index, event) in events.iter().enumerate() {
        match &event.kind {
            EventKind::FaultStart { fault } => {
                last = index;
                match fault {
                    Fault::Heal => open
                        .retain(|f| matches!(f, Fault::Pause { .. } | Fault::PauseServer { .. })),
                    Fault::ExpireSession { .. }
                    | Fault::Crash { .. }
                    | Fault::RestartServer { .. }
                    | Fault::CrashServer { .. } => {}
                    other => open.push(other),
                }
            }
            EventKind::FaultEnd { fault } => {
                last = index;
                if let Some(at) = open.iter().position(|f| *f == fault) {
                    open.remove(at);
                }
            }
            _ => {}
        }
    }
    open.is_empty().then_some(last)
}
