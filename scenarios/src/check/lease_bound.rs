//! `lease_bound`: no more leases are believed held at one instant than the semaphore allows.
//! A lease is a hold of mode `lease`, from its `Acquired` until the release call,
//! `Suspended`, `Lost` or a crash (as every hold; see `timeline`). Leases are counted, not
//! holders: an owner holding two leases counts twice.

use lock::recipes::Mode;

use crate::property::{Property, Violation};
use crate::trace::Trace;

use super::timeline::{Interval, Role, Timeline};
use super::{list, when};

/// Every grant that took the believed leases above `max_leases`.
pub fn check(trace: &Trace, max_leases: u32) -> Vec<Violation> {
    let timeline = Timeline::of(trace);
    let len = trace.events.len();
    let leases: Vec<&Interval> = timeline
        .holds
        .iter()
        .filter(|h| h.role == Role::Lock(Mode::Lease))
        .collect();
    let mut violations = Vec::new();
    for grant in &leases {
        let out: Vec<&Interval> = leases
            .iter()
            .copied()
            .filter(|h| h.start <= grant.start && grant.start < h.end_or(len))
            .collect();
        if out.iter().map(|h| h.count).sum::<u32>() > max_leases {
            violations.push(excess(trace, max_leases, grant, &out));
        }
    }
    violations
}

/// The violation of `out` being held at once when `grant` began.
fn excess(trace: &Trace, max_leases: u32, grant: &Interval, out: &[&Interval]) -> Violation {
    let len = trace.events.len();
    let t = |index: usize| trace.events[index.min(len - 1)].t;
    let end = out.iter().map(|h| h.end_or(len)).min().unwrap_or(len);
    let until = (end < len).then(|| t(end));
    let holders: Vec<String> = out
        .iter()
        .map(|h| {
            let leases = match h.count {
                1 => String::new(),
                n => format!("{n} leases, "),
            };
            match h.token {
                Some(token) => format!("{} ({leases}token {token})", h.who.0),
                None => h.who.0.to_string(),
            }
        })
        .collect();
    let mut clients: Vec<_> = out.iter().map(|h| h.who.0).collect();
    clients.dedup();
    let mut events: Vec<usize> = out.iter().map(|h| h.start).collect();
    events.extend((end < len).then_some(end));
    Violation {
        property: Property::LeaseBound,
        at: t(grant.start),
        until,
        clients,
        events,
        message: format!(
            "{} leases were believed held at once at {} where the semaphore allows {max_leases}: {}",
            out.iter().map(|h| h.count).sum::<u32>(),
            when(trace, t(grant.start)),
            list(&holders)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::fixtures::Build;

    #[test]
    fn leases_up_to_the_bound_are_fine_and_one_more_is_reported() {
        let two = Build::new()
            .acquired_as(0, 5, Mode::Lease)
            .acquired_as(1, 6, Mode::Lease)
            .release_as(0, Mode::Lease)
            .acquired_as(2, 7, Mode::Lease)
            .trace();
        assert_eq!(check(&two, 2), []);
        let three = Build::new()
            .acquired_as(0, 5, Mode::Lease)
            .acquired_as(1, 6, Mode::Lease)
            .acquired_as(2, 7, Mode::Lease)
            .release_as(0, Mode::Lease)
            .trace();
        let violations = check(&three, 2);
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
        assert_eq!(check(&trace, 1), []);
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
        let violations = check(&trace, 2);
        assert_eq!(violations.len(), 2);
        assert_eq!(
            violations[0].message,
            "3 leases were believed held at once at 2.000 ms where the semaphore allows 2: c0 \
             (2 leases, token 6), c1 (token 7)"
        );
        assert_eq!(violations[1].events, [2, 3, 4, 5]);
        assert_eq!(check(&trace, 3), []);
    }
}
