//! The pause faults under way on one node (a client's or a server's), by fault index:
//! overlapping pauses stop the node until the last of them ends, not the first.

use std::collections::BTreeSet;

/// The pause faults, by index in the schedule, that keep one node stopped now.
#[derive(Debug, Default)]
pub(crate) struct Pauses(BTreeSet<usize>);

impl Pauses {
    /// Pause fault `fault` starts: true when the node ran until now (then pause it).
    pub(crate) fn start(&mut self, fault: usize) -> bool {
        self.0.insert(fault);
        self.0.len() == 1
    }

    /// Pause fault `fault` ends: true when it was one of those stopping the node and no other
    /// is (then resume it).
    pub(crate) fn end(&mut self, fault: usize) -> bool {
        self.0.remove(&fault) && self.0.is_empty()
    }

    /// Every pause ends at once (a crash: the restarted process is a new one).
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }
}
