//! What the leader elections (LeaderLatch, LeaderSelector) share under the simulator: the
//! GC-pause split brain of a leader.

use recipe_table::property::Property;
use scenarios::fault::{Fault, ScheduledFault};
use scenarios::scenario::Scenario;
use trace::{EventKind, Trace};

use crate::query::{at, clients_of, is_rejected_write, leaderships, on, violations};

/// Client 0, the first leader, paused at 300 ms for 2.5 s: past its session timeout.
pub fn leader_pause() -> Vec<ScheduledFault> {
    vec![at(
        300,
        Fault::Pause {
            client: 0,
            for_ms: 2_500,
        },
    )]
}

/// `trace`, a run of `scenario` with two participants under [`leader_pause`]: c0 led, then
/// c1 with a higher token while c0 still believed it led, and the resource rejected c0's
/// write with its old token. Two leaders by belief, never two fenced.
pub fn assert_the_paused_leader_is_fenced_off(scenario: &Scenario, trace: &Trace) {
    let leaders = leaderships(trace);
    assert_eq!(clients_of(&leaders), [0, 1]);
    let (old, new) = (leaders[0].1, leaders[1].1);
    assert!(new > old);
    let stale = trace.events.iter().find(|e| {
        on(e, 0) && matches!(e.kind, EventKind::ResourceWrite { token, .. } if token == old)
    });
    assert!(
        stale.is_some_and(is_rejected_write),
        "the paused leader's write is rejected: {stale:?}"
    );
    assert!(violations(scenario, trace, Property::LeaderUniqueBelief) >= 1);
    assert_eq!(violations(scenario, trace, Property::LeaderUniqueFenced), 0);
}
