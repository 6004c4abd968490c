//! `mutual_exclusion_fenced`, computed from the resource accesses in the trace, independently
//! of the resource's own logic: the accepted accesses must form non-interleaved blocks (one
//! holder's read, then its write of the value read plus one) in increasing token order, and
//! the final counter must equal the number of accepted increments — else an update was lost.

use lock::fencing::Token;
use lock::ids::{ClientSlot, Owner};

use crate::property::{Property, Violation};
use crate::trace::{EventKind, Trace};

use super::ms;

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

/// Every out-of-order or interleaved access, and a lost update.
pub fn check(trace: &Trace) -> Vec<Violation> {
    let accesses = accesses(trace);
    let mut violations = Vec::new();
    let mut highest: Option<Access> = None;
    // The open block: the last accepted read with its holder, until a write closes it.
    let mut block: Option<Access> = None;
    for access in &accesses {
        if let Some(top) = highest.filter(|top| access.token < top.token) {
            violations.push(violation(
                trace,
                &[top, *access],
                format!(
                    "{} accessed the resource with token {} after {} had used the higher token \
                     {}",
                    who(access),
                    access.token,
                    who(&top),
                    top.token
                ),
            ));
        }
        highest = highest.max_by_token(*access);
        match (access.read, block) {
            (Some(_), _) => block = Some(*access),
            (None, Some(read)) if same_holder(&read, access) => {
                let read_value = read.read.unwrap_or(0);
                let written = access.written.unwrap_or(0);
                if written != read_value + 1 {
                    violations.push(violation(
                        trace,
                        &[read, *access],
                        format!(
                            "{} read {read_value} and wrote {written}, not an increment",
                            who(access)
                        ),
                    ));
                }
                block = None;
            }
            (None, other) => {
                let mut involved = vec![*access];
                let message = match other {
                    Some(read) => {
                        involved.insert(0, read);
                        format!(
                            "{}'s write with token {} came right after {}'s read with token {}: \
                             their read-write blocks interleaved",
                            who(access),
                            access.token,
                            who(&read),
                            read.token
                        )
                    }
                    None => format!(
                        "{} wrote with token {} without a read of its own just before",
                        who(access),
                        access.token
                    ),
                };
                violations.push(violation(trace, &involved, message));
                block = None;
            }
        }
    }
    violations.extend(lost_update(trace, &accesses));
    violations
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

trait ByToken {
    fn max_by_token(self, access: Access) -> Option<Access>;
}

impl ByToken for Option<Access> {
    fn max_by_token(self, access: Access) -> Option<Access> {
        match self {
            Some(top) if top.token >= access.token => Some(top),
            _ => Some(access),
        }
    }
}

fn same_holder(a: &Access, b: &Access) -> bool {
    (a.client, a.owner, a.token) == (b.client, b.owner, b.token)
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
        message: format!("{message} (at {})", ms(at)),
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
        assert_eq!(check(&trace), []);
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
        assert_eq!(check(&trace), []);
    }

    #[test]
    fn an_unfenced_split_brain_shows_the_lost_update() {
        let trace = Build::new()
            .read(0, 5, true, 0)
            .read(1, 7, true, 0)
            .write(1, 7, true, 1)
            .write(0, 5, true, 1)
            .trace();
        let violations = check(&trace);
        let messages: Vec<&str> = violations.iter().map(|v| v.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "c0 accessed the resource with token 5 after c1 had used the higher token 7 (at \
                 3.000 ms)",
                "c0 wrote with token 5 without a read of its own just before (at 3.000 ms)",
                "the counter ends at 1 but 2 increments were accepted: 1 update was lost (at \
                 3.000 ms)",
            ]
        );
        assert_eq!(violations[2].events, [2, 3]);
        assert_eq!(violations[0].clients, [ClientSlot(0), ClientSlot(1)]);
    }

    #[test]
    fn interleaved_blocks_are_caught_even_in_token_order() {
        let trace = Build::new()
            .read(0, 5, true, 0)
            .read(1, 7, true, 0)
            .write(1, 7, true, 1)
            .trace();
        assert_eq!(check(&trace), []);
        let trace = Build::new()
            .read(0, 5, true, 0)
            .read(1, 7, true, 0)
            .write(0, 5, true, 1)
            .trace();
        assert!(
            check(&trace)[0]
                .message
                .starts_with("c0 accessed the resource with token 5")
        );
        let trace = Build::new()
            .read(0, 5, true, 3)
            .write(0, 5, true, 3)
            .trace();
        let violations = check(&trace);
        assert!(
            violations[0]
                .message
                .starts_with("c0 read 3 and wrote 3, not an increment")
        );
    }
}
