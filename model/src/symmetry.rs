//! Symmetry reduction: clients are interchangeable, so a state and the same state with the
//! clients permuted are explored once. The representative sorts the clients and rewrites
//! every client identity accordingly — slots, session ids, protection ids inside node
//! names, node owners, watch tables, queued requests and events — through
//! [`lock::relabel::Relabel`].
//!
//! Clients are sorted by a key that does not depend on their current numbering: each
//! client's state with itself renamed to slot 0 and every other client to one placeholder.
//! Clients whose keys tie keep their order (sound, if not always canonical).

use lock::ids::ClientSlot;
use lock::relabel::{ClientMap, Relabel};
use stateright::Representative;

use lock::recipe::Recipe;

use scenarios::monitor::{ClientBeliefs, ClientWaits};
use scenarios::workload::Workload;

use crate::state::{Link, Peer, State, session_id};

/// The slot every other client becomes in a client's sort key.
const PLACEHOLDER: ClientSlot = ClientSlot(u16::MAX - 1);

impl<R: Recipe + Relabel> Representative for State<R> {
    fn representative(&self) -> Self {
        let order = self.canonical_order();
        if order.iter().enumerate().all(|(new, &old)| new == old) {
            return self.clone();
        }
        let clients = self.peers.len();
        let mut position = vec![0; clients];
        for (new, &old) in order.iter().enumerate() {
            position[old] = new;
        }
        let map = client_map(clients, self.max_incarnation(), |slot| {
            ClientSlot(position[slot] as u16)
        });
        State {
            tree: self.tree.relabel(&map),
            live: self.live.relabel(&map),
            peers: order
                .iter()
                .map(|&old| self.peers[old].relabel(&map))
                .collect(),
            resource: self.resource.clone(),
            used: self.used,
            wakes: self.wakes.clone(),
            herd: self.herd,
            beliefs: self.beliefs.relabel(&map),
            waits: self.waits.relabel(&map),
        }
    }
}

impl<R: Recipe + Relabel> State<R> {
    /// The clients' old slots in canonical order: sorted by a cheap summary first, and
    /// clients whose summaries tie by their whole state seen from themselves.
    fn canonical_order(&self) -> Vec<usize> {
        let clients = self.peers.len();
        let summaries: Vec<Summary> = (self.peers.iter().enumerate())
            .map(|(slot, peer)| summary(peer, self, ClientSlot(slot as u16)))
            .collect();
        let mut order: Vec<usize> = (0..clients).collect();
        order.sort_by(|&a, &b| summaries[a].cmp(&summaries[b]));
        let mut start = 0;
        while start < clients {
            let mut end = start + 1;
            while end < clients && summaries[order[end]] == summaries[order[start]] {
                end += 1;
            }
            if end - start > 1 && std::env::var_os("SB_NOTIE").is_none() {
                let keys: Vec<(Peer<R>, usize)> = order[start..end]
                    .iter()
                    .map(|&slot| (self.seen_from(slot), slot))
                    .collect();
                let mut keyed = keys;
                keyed.sort();
                for (offset, (_, slot)) in keyed.into_iter().enumerate() {
                    order[start + offset] = slot;
                }
            }
            start = end;
        }
        order
    }

    /// Client `focus` with itself renamed to slot 0 and every other client to one
    /// placeholder: a key that does not depend on how the clients are numbered.
    fn seen_from(&self, focus: usize) -> Peer<R> {
        let map = client_map(self.peers.len(), self.max_incarnation(), |slot| {
            if slot == focus {
                ClientSlot(0)
            } else {
                PLACEHOLDER
            }
        });
        self.peers[focus].relabel(&map)
    }

    fn max_incarnation(&self) -> u8 {
        self.peers
            .iter()
            .map(|peer| peer.incarnation)
            .max()
            .unwrap_or(0)
    }
}

/// What can be told about a client without looking at identities; its class first, so that
/// sorting keeps every client among the slots of its class.
type Summary = (
    u8,
    Workload,
    ClientBeliefs,
    ClientWaits,
    u8,
    u8,
    usize,
    Option<(Link, usize, usize)>,
    usize,
);

fn summary<R: Recipe>(peer: &Peer<R>, state: &State<R>, slot: ClientSlot) -> Summary {
    (
        peer.class,
        peer.workload,
        state.beliefs.summary(slot),
        state.waits.summary(slot),
        peer.restarts,
        peer.incarnation,
        peer.timers.len(),
        peer.handle
            .as_ref()
            .map(|h| (h.link, h.requests.len(), h.events.len())),
        peer.client.framework().pending_requests(),
    )
}

/// The map that sends client `slot` (and all its sessions) to `to(slot)`.
fn client_map(clients: usize, incarnations: u8, to: impl Fn(usize) -> ClientSlot) -> ClientMap {
    let mut map = ClientMap::new();
    for slot in 0..clients {
        let from = ClientSlot(slot as u16);
        let image = to(slot);
        map.map_slot(from, image);
        for incarnation in 0..=incarnations {
            map.map_session(
                session_id(from, incarnation),
                session_id(image, incarnation),
            );
        }
    }
    map
}
