//! `mutual_exclusion_fenced`, computed from the resource accesses in the trace, independently
//! of the resource's own logic: the [`Fenced`] monitor (the model keeps the same one) judges
//! each accepted access, and the final counter must equal the number of accepted increments —
//! else an update was lost.

use std::collections::BTreeMap;

use coordination::fencing::Token;

use crate::monitor::{Access, Accessor, Breach, Fenced};
use recipe_table::property::{Property, Violation};
use trace::{EventKind, Trace};

use super::when;

/// Every out-of-order or interleaved block, every write that is not an increment of its own
/// read, and a lost update, as violations of `property` (`mutual_exclusion_fenced`, or
/// `leader_unique_fenced` for an election: the same check on the leaders' accesses).
pub fn check(trace: &Trace, property: Property) -> Vec<Violation> {
    let mut fenced = Fenced::default();
    let mut violations = Vec::new();
    // Event bookkeeping for the messages: each accessor's last access and last read, the
    // latest accessor of each token, and every accepted write.
    let mut last_access: BTreeMap<Accessor, usize> = BTreeMap::new();
    let mut of_token: BTreeMap<Token, Accessor> = BTreeMap::new();
    let mut last_read: BTreeMap<Accessor, usize> = BTreeMap::new();
    let mut writes = Vec::new();
    for (index, event) in trace.events.iter().enumerate() {
        let (who, access) = match event.kind {
            EventKind::ResourceRead {
                owner,
                token,
                accepted: true,
                value,
            } => (
                (event.client, owner, token),
                Access::Read(value.unwrap_or(0)),
            ),
            EventKind::ResourceWrite {
                owner,
                token,
                value,
                accepted: true,
            } => ((event.client, owner, token), Access::Write(value)),
            _ => continue,
        };
        if let Some(breach) = fenced.observe(who, access) {
            let (involved, message) = match (breach, access) {
                (Breach::OutOfOrder { top }, _) => (
                    vec![last_access[&of_token[&top]], index],
                    format!(
                        "{} accessed the resource with token {} after {} had used the higher \
                         token {}",
                        name(who),
                        who.2,
                        name(of_token[&top]),
                        top
                    ),
                ),
                (Breach::Interleaved { between }, _) => (
                    vec![last_access[&who], last_access[&between], index],
                    format!(
                        "{}'s read-write block with token {} was interleaved with {}'s access \
                         with token {}",
                        name(who),
                        who.2,
                        name(between),
                        between.2
                    ),
                ),
                (Breach::NotIncrement { read }, Access::Write(written)) => (
                    vec![last_read[&who], index],
                    format!(
                        "{} read {read} and wrote {written}, not an increment",
                        name(who)
                    ),
                ),
                (_, _) => (
                    vec![index],
                    format!(
                        "{} wrote with token {} without reading first",
                        name(who),
                        who.2
                    ),
                ),
            };
            violations.push(violation(trace, property, involved, message));
        }
        last_access.insert(who, index);
        of_token.insert(who.2, who);
        match access {
            Access::Read(_) => {
                last_read.insert(who, index);
            }
            Access::Write(_) => writes.push(index),
        }
    }
    if let Some((value, increments)) = fenced.lost_update() {
        let lost = increments.abs_diff(value);
        let message = format!(
            "the counter ends at {value} but {increments} increments were accepted: {lost} \
             update{} lost",
            if lost == 1 { " was" } else { "s were" }
        );
        violations.push(violation(trace, property, writes, message));
    }
    violations
}

/// An accessor for messages: its client, or its owner when the trace names no client.
fn name((client, owner, _): Accessor) -> String {
    client.map_or_else(|| format!("owner {}", owner.0), |c| c.to_string())
}

fn violation(trace: &Trace, property: Property, events: Vec<usize>, message: String) -> Violation {
    let involved = events.iter().filter_map(|&i| trace.events[i].client);
    let mut clients: Vec<_> = involved.collect();
    clients.sort_unstable();
    clients.dedup();
    let at = trace.events[*events.last().expect("an access")].t;
    Violation {
        property,
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
    use coordination::ids::ClientSlot;
    use trace::build::Build;

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
