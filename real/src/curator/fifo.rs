//! Grants in queue order across languages: a mutex grants the lock (a leader latch the
//! leadership) to its nodes in the order of their sequence numbers, and a node's czxid (the
//! fencing token both languages record) grows with its sequence number, since both come from
//! the one parent in zxid order. So in a run without faults and without acquire timeouts,
//! every grant's token must be above every token granted before it (a reentrant grant
//! repeats its holder's token). A read-write lock's read holds are shared: readers queued
//! together are granted together, in any order, so a read grant is checked against the
//! exclusive grants before it only.

use coordination::fencing::Token;
use coordination::ids::ClientSlot;
use coordination::recipes::{Mode, Notice};
use trace::{Event, EventKind};

/// Every grant among `events` (a trace's, in time order) that comes out of queue order, one
/// line each (empty: FIFO holds).
pub fn out_of_order_grants(events: &[Event]) -> Vec<String> {
    let mut last: Option<(Token, ClientSlot)> = None;
    let mut found = Vec::new();
    for event in events {
        let (
            EventKind::Notice {
                notice: Notice::Acquired { token, .. } | Notice::IsLeader { token, .. },
            },
            Some(client),
        ) = (&event.kind, event.client)
        else {
            continue;
        };
        let shared = matches!(
            event.kind,
            EventKind::Notice {
                notice: Notice::Acquired {
                    mode: Mode::Read,
                    ..
                }
            }
        );
        match last {
            Some((before, holder)) if *token < before || (*token == before && holder != client) => {
                found.push(format!(
                    "at {} ns client {} was granted token {} after client {} was granted \
                     token {}",
                    event.t, client.0, token.0, holder.0, before.0
                ));
            }
            _ if shared => {}
            _ => last = Some((*token, client)),
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordination::ids::Owner;

    fn grant(t: u64, client: u16, token: u64) -> Event {
        granted(t, client, token, Mode::Exclusive)
    }

    fn granted(t: u64, client: u16, token: u64, mode: Mode) -> Event {
        Event {
            t,
            client: Some(ClientSlot(client)),
            kind: EventKind::Notice {
                notice: Notice::Acquired {
                    owner: Owner(0),
                    token: Token(token),
                    mode,
                },
            },
        }
    }

    #[test]
    fn grants_in_token_order_pass_and_a_grant_behind_an_earlier_token_is_named() {
        let in_order = [
            grant(1, 0, 5),
            grant(2, 3, 9),
            grant(3, 3, 9),
            grant(4, 1, 12),
        ];
        assert!(out_of_order_grants(&in_order).is_empty());
        let jumped = [grant(1, 0, 5), grant(2, 3, 12), grant(3, 1, 9)];
        let found = out_of_order_grants(&jumped);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("client 1 was granted token 9 after client 3"));
        let shared = [grant(1, 0, 5), grant(2, 4, 5)];
        assert_eq!(out_of_order_grants(&shared).len(), 1);
    }

    #[test]
    fn shared_read_grants_come_in_any_order_but_not_behind_a_later_exclusive_grant() {
        let read = |t, client, token| granted(t, client, token, Mode::Read);
        let write = |t, client, token| granted(t, client, token, Mode::Write);
        let readers_together = [
            write(1, 0, 5),
            read(2, 2, 9),
            read(3, 1, 8),
            write(4, 3, 12),
        ];
        assert!(out_of_order_grants(&readers_together).is_empty());
        let behind_a_writer = [write(1, 0, 12), read(2, 1, 9)];
        assert_eq!(out_of_order_grants(&behind_a_writer).len(), 1);
    }
}
