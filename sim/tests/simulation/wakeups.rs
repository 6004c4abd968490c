//! Wake-ups read off a trace: how many sessions each change woke through their watches,
//! shared by the herd tests of every recipe.

use std::collections::BTreeMap;

use coordination::zk::{EventKind as WatchKind, Request, WatchedEvent, Zxid};
use trace::{EventKind, Trace};

/// For each change (by zxid) that fired watches `fired` accepts, how many it fired: one per
/// session woken. Watches a reconnect's SetWatches fired (no zxid) are not counted.
fn wakeups(trace: &Trace, fired: fn(&WatchedEvent) -> bool) -> BTreeMap<Zxid, usize> {
    let mut woken = BTreeMap::new();
    for event in &trace.events {
        if let EventKind::WatchFired {
            event,
            zxid: Some(zxid),
            ..
        } = &event.kind
            && fired(event)
        {
            *woken.entry(*zxid).or_insert(0) += 1;
        }
    }
    woken
}

/// For each deletion zxid that fired NodeDeleted watches, how many sessions it woke.
pub fn woken_per_deletion(trace: &Trace) -> BTreeMap<Zxid, usize> {
    wakeups(trace, |event| event.kind == WatchKind::NodeDeleted)
}

/// For each change of a semaphore's leases (by zxid), how many sessions its child watch woke.
pub fn lease_wakeups(trace: &Trace) -> BTreeMap<Zxid, usize> {
    wakeups(trace, |event| event.path.name() == "leases")
}

/// For each applied delete of a node whose name contains `name`, in trace order, how many
/// sessions it woke through NodeDeleted watches (0 when it woke none).
pub fn woken_by_each_delete(trace: &Trace, name: &str) -> Vec<usize> {
    let woken = woken_per_deletion(trace);
    (trace.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::OpApplied {
                request: Request::Delete { path, .. },
                zxid: Some(zxid),
                ..
            } if path.name().contains(name) => Some(woken.get(zxid).copied().unwrap_or(0)),
            _ => None,
        })
        .collect()
}
