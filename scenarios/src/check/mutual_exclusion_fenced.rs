//! `mutual_exclusion_fenced`, computed from the resource accesses in the trace, independently
//! of the resource's own logic: the accepted accesses must form non-interleaved blocks (one
//! holder's read, then its write of the value read plus one) in increasing token order, and
//! the final counter must equal the number of accepted increments — else an update was lost.

use std::collections::BTreeMap;

use lock::fencing::Token;
use lock::ids::{ClientSlot, Owner};

use crate::property::{Property, Violation};
use crate::trace::{EventKind, Trace};

use super::when;

/// One accepted access.
#[derive(Clone, Copy, Debug)]
struct Access {
    index: usize,
    client: Option<ClientSlot>,
    owner: Owner,
    token: Token,
    /// `Some(value read)` for a read, `None` for a write.
    read: Option<u64>,
    written: Option<u64>,
}

fn accesses(trace: &Trace) -> Vec<Access> {
    let mut out = Vec::new();
    for (index, event) in trace.events.iter().enumerate() {
        let access = |owner, token, read, written| Access {
            index,
            client: event.client,
            owner,
            token,
            read,
            written,
        };
        match event.kind {
            EventKind::ResourceRead {
                owner,
                token,
                accepted: true,
                value,
            } => out.push(access(owner, token, Some(value.unwrap_or(0)), None)),
            EventKind::ResourceWrite {
                owner,
                token,
                value,
                accepted: true,
            } => out.push(access(owner, token, None, Some(value))),
            _ => {}
        }
    }
    out
}

/// Every out-of-order or interleaved block, every write that is not an increment of its own
/// read, and a lost update, as violations of `property` (`mutual_exclusion_fenced`, or
/// `leader_unique_fenced` for an election: the same check on the leaders' accesses).
pub fn check(trace: &Trace, property: Property) -> Vec<Violation> {
    let mut violations = fenced(trace);
    for violation in &mut violations {
        violation.property = property;
    }
    violations
}

fn fenced(trace: &Trace) -> Vec<Violation> {
    let accesses = accesses(trace);
    let mut violations = Vec::new();
    // What the accesses before the current run say, kept as they go by so that the check is
    // linear in the accesses: the one with the highest token, and each holder's last access
    // and last read.
    let mut top: Option<Access> = None;
    let mut last_access: BTreeMap<Holder, Access> = BTreeMap::new();
    let mut last_read: BTreeMap<Holder, Access> = BTreeMap::new();
    let mut before: Option<Access> = None;
    for run in runs(&accesses) {
        let first = run[0];
        if let Some(top) = top.filter(|top| first.token < top.token) {
            let message = format!(
                "{} accessed the resource with token {} after {} had used the higher token {}",
                who(&first),
                first.token,
                who(&top),
                top.token
            );
            violations.push(violation(trace, &[top, first], message));
        } else if let (Some(own), Some(between)) = (last_access.get(&holder(&first)), before) {
            let message = format!(
                "{}'s read-write block with token {} was interleaved with {}'s access with token {}",
                who(&first),
                first.token,
                who(&between),
                between.token
            );
            violations.push(violation(trace, &[*own, between, first], message));
        }
        let own_read = last_read.get(&holder(&first)).copied();
        violations.extend(increments(trace, run, own_read));
        for access in run {
            if top.is_none_or(|top| (access.token, access.index) > (top.token, top.index)) {
                top = Some(*access);
            }
            last_access.insert(holder(access), *access);
            if access.read.is_some() {
                last_read.insert(holder(access), *access);
            }
            before = Some(*access);
        }
    }
    violations.extend(lost_update(trace, &accesses));
    violations
}

/// The accesses cut into maximal runs of one holder (an owner with one token).
fn runs(accesses: &[Access]) -> Vec<&[Access]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=accesses.len() {
        if i == accesses.len() || !same_holder(&accesses[i - 1], &accesses[i]) {
            if start < i {
                out.push(&accesses[start..i]);
            }
            start = i;
        }
    }
    out
}

/// Within one holder's run (its read possibly before an interleaving, `read`), each write
/// must write its read's value plus one.
fn increments(trace: &Trace, run: &[Access], mut read: Option<Access>) -> Vec<Violation> {
    let mut out = Vec::new();
    for access in run {
        match (access.read, access.written, read) {
            (Some(_), _, _) => read = Some(*access),
            (None, Some(written), Some(r)) => {
                let value = r.read.unwrap_or(0);
                if written != value + 1 {
                    let message = format!(
                        "{} read {value} and wrote {written}, not an increment",
                        who(access)
                    );
                    out.push(violation(trace, &[r, *access], message));
                }
                read = None;
            }
            (None, _, None) => {
                let message = format!(
                    "{} wrote with token {} without reading first",
                    who(access),
                    access.token
                );
                out.push(violation(trace, &[*access], message));
            }
            (None, None, Some(_)) => {}
        }
    }
    out
}

/// The final counter against the number of accepted increments.
fn lost_update(trace: &Trace, accesses: &[Access]) -> Option<Violation> {
    let writes: Vec<Access> = accesses
        .iter()
        .filter(|a| a.written.is_some())
        .copied()
        .collect();
    let last = *writes.last()?;
    let value = last.written.unwrap_or(0);
    let increments = writes.len() as u64;
    (value != increments).then(|| {
        let message = format!(
            "the counter ends at {value} but {increments} increments were accepted: {} update{} \
             lost",
            increments.abs_diff(value),
            if increments.abs_diff(value) == 1 {
                " was"
            } else {
                "s were"
            }
        );
        violation(trace, &writes, message)
    })
}

/// Who made an access: a client's owner holding one token.
type Holder = (Option<ClientSlot>, Owner, Token);

fn holder(access: &Access) -> Holder {
    (access.client, access.owner, access.token)
}

fn same_holder(a: &Access, b: &Access) -> bool {
    holder(a) == holder(b)
}

fn who(access: &Access) -> String {
    access
        .client
        .map_or_else(|| format!("owner {}", access.owner.0), |c| c.to_string())
}

fn violation(trace: &Trace, involved: &[Access], message: String) -> Violation {
    let mut clients: Vec<ClientSlot> = involved.iter().filter_map(|a| a.client).collect();
    clients.sort_unstable();
    clients.dedup();
    let events: Vec<usize> = involved.iter().map(|a| a.index).collect();
    let at = trace.events[*events.last().expect("an access")].t;
    Violation {
        property: Property::MutualExclusionFenced,
        at,
        until: None,
        clients,
        events,
        message: format!("{message} (at {})", when(trace, at)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::fixtures::Build;

    #[test]
    fn serial_increments_in_token_order_pass() {
        let trace = Build::new()
            .read(0, 5, true, 0)
            .write(0, 5, true, 1)
            .read(1, 7, true, 1)
            .write(1, 7, true, 2)
            .read(0, 9, true, 2)
            .trace();
        assert_eq!(check(&trace, Property::MutualExclusionFenced), []);
    }

    #[test]
    fn rejected_stale_accesses_do_not_count() {
        // c0 paused holding token 5; c1 took over with 7; c0's late write was rejected.
        let trace = Build::new()
            .read(0, 5, true, 0)
            .read(1, 7, true, 0)
            .write(0, 5, false, 1)
            .write(1, 7, true, 1)
            .trace();
        assert_eq!(check(&trace, Property::MutualExclusionFenced), []);
    }

    #[test]
    fn an_unfenced_split_brain_shows_the_lost_update() {
        let trace = Build::new()
            .read(0, 5, true, 0)
            .read(1, 7, true, 0)
            .write(1, 7, true, 1)
            .write(0, 5, true, 1)
            .trace();
        let violations = check(&trace, Property::MutualExclusionFenced);
        let messages: Vec<&str> = violations.iter().map(|v| v.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "c0 accessed the resource with token 5 after c1 had used the higher token 7 (at \
                 3.000 ms)",
                "the counter ends at 1 but 2 increments were accepted: 1 update was lost (at \
                 3.000 ms)",
            ]
        );
        assert_eq!(violations[1].events, [2, 3]);
        assert_eq!(violations[0].clients, [ClientSlot(0), ClientSlot(1)]);
    }

    #[test]
    fn interleaved_blocks_and_bad_increments_are_caught() {
        let trace = Build::new()
            .read(1, 7, true, 0)
            .read(0, 5, true, 0)
            .write(1, 7, true, 1)
            .trace();
        let messages: Vec<String> = check(&trace, Property::MutualExclusionFenced)
            .into_iter()
            .map(|v| v.message)
            .collect();
        assert_eq!(
            messages,
            [
                "c0 accessed the resource with token 5 after c1 had used the higher token 7 (at \
                 1.000 ms)",
                "c1's read-write block with token 7 was interleaved with c0's access with token \
                 5 (at 2.000 ms)",
            ]
        );
        let trace = Build::new()
            .read(0, 5, true, 0)
            .read(1, 7, true, 0)
            .write(0, 5, true, 1)
            .trace();
        assert!(
            check(&trace, Property::MutualExclusionFenced)[0]
                .message
                .starts_with("c0 accessed the resource with token 5")
        );
        let trace = Build::new().write(0, 5, true, 1).trace();
        assert!(
            check(&trace, Property::MutualExclusionFenced)[0]
                .message
                .starts_with("c0 wrote with token 5 without reading first")
        );
        let trace = Build::new()
            .read(0, 5, true, 3)
            .write(0, 5, true, 3)
            .trace();
        let violations = check(&trace, Property::MutualExclusionFenced);
        assert!(
            violations[0]
                .message
                .starts_with("c0 read 3 and wrote 3, not an increment")
        );
    }
}
