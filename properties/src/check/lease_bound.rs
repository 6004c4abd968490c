//! `lease_bound`: no more leases are believed held at one instant than the semaphore allows.
//! Who believes they hold a lease is the [`Beliefs`] monitor's to say (the model checks its
//! [`Beliefs::leases`] too): a lease is a hold of mode `lease`, from its `Acquired` until its
//! release call, `Lost`, a crash or (under the standard error policy) `Suspended`. Leases are
//! counted, not holders: an owner holding two leases counts twice.

use std::collections::BTreeMap;

use coordination::fencing::Token;
use coordination::recipes::Mode;

use crate::monitor::{Beliefs, ErrorPolicy, Key, Observation, Role};
use recipe_table::property::{Property, Violation};
use trace::Trace;

use super::tokens::Tokens;
use super::{list, when};

/// One holder's leases as messages tell them: how many, since which event (a change in their
/// number begins a new stretch), with the latest grant's token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Leases {
    key: Key,
    count: u32,
    start: usize,
    token: Option<Token>,
}

/// Every instant at which the believed leases rose above `max_leases` (a grant, or a
/// suspended lease believed again), read by folding the [`Beliefs`] monitor under `policy`.
pub fn check(trace: &Trace, max_leases: u32, policy: ErrorPolicy) -> Vec<Violation> {
    let mut beliefs = Beliefs::new(policy);
    let mut tokens = Tokens::default();
    let mut held: BTreeMap<Key, Leases> = BTreeMap::new();
    // Excesses under way: the event that began each, and the leases out then.
    let mut open: Vec<(usize, Vec<Leases>)> = Vec::new();
    let mut found: Vec<(usize, Violation)> = Vec::new();
    for (index, event) in trace.events.iter().enumerate() {
        let Some(seen) = Observation::of_event(event.client, &event.kind) else {
            continue;
        };
        beliefs.observe(seen);
        tokens.observe(seen);
        let now: BTreeMap<Key, u32> = (beliefs.believed())
            .filter(|(_, role)| *role == lease_role())
            .map(|key| (key, beliefs.count(&key)))
            .collect();
        held.retain(|key, leases| now.get(key) == Some(&leases.count));
        let mut began = false;
        for (key, count) in now {
            held.entry(key).or_insert_with(|| {
                began = true;
                Leases {
                    key,
                    count,
                    start: index,
                    token: tokens.get(&key),
                }
            });
        }
        open.retain(|(grant, out)| {
            let ended = out
                .iter()
                .any(|leases| held.get(&leases.key) != Some(leases));
            if ended {
                found.push((*grant, excess(trace, max_leases, *grant, out, Some(index))));
            }
            !ended
        });
        if began && beliefs.leases() > max_leases {
            let mut out: Vec<Leases> = held.values().copied().collect();
            out.sort_by_key(|leases| leases.start);
            open.push((index, out));
        }
    }
    for (grant, out) in open {
        found.push((grant, excess(trace, max_leases, grant, &out, None)));
    }
    found.sort_by_key(|(grant, _)| *grant);
    found.into_iter().map(|(_, violation)| violation).collect()
}

/// The role of a lease.
fn lease_role() -> Role {
    Role::Lock(Mode::Lease)
}

/// The violation of `out` being held at once from event `grant` until event `end` (`None`:
/// to the end of the trace).
fn excess(
    trace: &Trace,
    max_leases: u32,
    grant: usize,
    out: &[Leases],
    end: Option<usize>,
) -> Violation {
    let t = |index: usize| trace.events[index].t;
    let holders: Vec<String> = out
        .iter()
        .map(|h| {
            let leases = match h.count {
                1 => String::new(),
                n => format!("{n} leases, "),
            };
            match h.token {
                Some(token) => format!("{} ({leases}token {token})", h.key.0.0),
                None => h.key.0.0.to_string(),
            }
        })
        .collect();
    let mut clients: Vec<_> = out.iter().map(|h| h.key.0.0).collect();
    clients.dedup();
    let mut events: Vec<usize> = out.iter().map(|h| h.start).collect();
    events.extend(end);
    Violation {
        property: Property::LeaseBound,
        at: t(grant),
        until: end.map(t),
        clients,
        events,
        message: format!(
            "{} leases were believed held at once at {} where the semaphore allows {max_leases}: {}",
            out.iter().map(|h| h.count).sum::<u32>(),
            when(trace, t(grant)),
            list(&holders)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace::build::Build;

    const STANDARD: ErrorPolicy = ErrorPolicy::Standard;

    #[test]
    fn leases_up_to_the_bound_are_fine_and_one_more_is_reported() {
        let two = Build::new()
            .acquired_as(0, 5, Mode::Lease)
            .acquired_as(1, 6, Mode::Lease)
            .release_as(0, Mode::Lease)
            .acquired_as(2, 7, Mode::Lease)
            .trace();
        assert_eq!(check(&two, 2, STANDARD), []);
        let three = Build::new()
            .acquired_as(0, 5, Mode::Lease)
            .acquired_as(1, 6, Mode::Lease)
            .acquired_as(2, 7, Mode::Lease)
            .release_as(0, Mode::Lease)
            .trace();
        let violations = check(&three, 2, STANDARD);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].events, [0, 1, 2, 3]);
        assert_eq!(
            violations[0].message,
            "3 leases were believed held at once at 2.000 ms where the semaphore allows 2: c0 \
             (token 5), c1 (token 6), c2 (token 7)"
        );
    }

    #[test]
    fn a_suspended_lease_is_not_believed_held() {
        let trace = Build::new()
            .acquired_as(0, 5, Mode::Lease)
            .suspended(0)
            .acquired_as(1, 6, Mode::Lease)
            .trace();
        assert_eq!(check(&trace, 1, STANDARD), []);
    }

    #[test]
    fn under_the_session_based_policy_a_suspended_lease_still_counts() {
        let trace = Build::new()
            .acquired_as(0, 5, Mode::Lease)
            .suspended(0)
            .acquired_as(1, 6, Mode::Lease)
            .trace();
        let violations = check(&trace, 1, ErrorPolicy::SessionBased);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].events, [0, 2]);
    }

    #[test]
    fn an_owner_holding_two_leases_counts_twice() {
        let trace = Build::new()
            .acquired_as(0, 5, Mode::Lease)
            .acquired_as(0, 6, Mode::Lease)
            .acquired_as(1, 7, Mode::Lease)
            .release_as(0, Mode::Lease)
            .acquired_as(2, 8, Mode::Lease)
            .release_as(0, Mode::Lease)
            .trace();
        let violations = check(&trace, 2, STANDARD);
        assert_eq!(violations.len(), 2);
        assert_eq!(
            violations[0].message,
            "3 leases were believed held at once at 2.000 ms where the semaphore allows 2: c0 \
             (2 leases, token 6), c1 (token 7)"
        );
        assert_eq!(violations[1].events, [2, 3, 4, 5]);
        assert_eq!(check(&trace, 3, STANDARD), []);
    }
}
