//! Symmetry reduction: clients are interchangeable, so a state and the same state with the
//! clients permuted are explored once. The representative sorts the clients and rewrites
//! every client identity accordingly — slots, session ids, protection ids inside node
//! names, node owners, watch tables (a cut-off follower's tree's too), queued requests and
//! events — through
//! [`coordination::relabel::Relabel`]; when the sorted order is the clients' own, it is the state.
//!
//! Clients are sorted by a cheap summary, and clients whose summaries tie by a key that does
//! not depend on their current numbering: each client's state with itself renamed to slot 0
//! and every other client to one placeholder. Clients whose keys tie keep their order (sound,
//! if not always canonical). The key depends on the client alone, so it is kept with the
//! client ([`crate::state::SortKeyMemo`]) and computed again only after the client changes:
//! a step changes one or two clients, and the states share the others
//! ([`State::peers`](crate::State::peers)). For the same reason each client, and the server,
//! keeps its image under the last renaming applied to it ([`crate::state::ImageMemo`]): the
//! successors of a state share what their step left alone and are mostly put in the same
//! order, so a shared client is relabelled once for all of them, not once per successor.
//!
//! Each client's op ids and timer ids are kept renumbered in the state itself ([`canonicalize`],
//! applied by [`LockModel::next`](crate::LockModel::next) to the client a step touched): the
//! ids its state holds are 1, 2, 3 … in order and its counters the number of ids in use, so
//! that a client that has used up more ids (a retry, an earlier cycle) meets its twin that
//! has not. Sound: the framework and the recipes compare these ids only with each other (for
//! equality and order) and hand out new ones by counting up from the counter, so the
//! renumbered state takes the same actions to renumbered states, with the same properties
//! (no property reads an op or timer id, and [`Action::Fire`](crate::Action::Fire) names a
//! timer by its rank). The ids live only in the client's own state — its framework, recipe,
//! timers and session queues — and only a step of that client (or the close of its session)
//! changes them; the test `every_op_and_timer_id_is_renumbered` checks state by state that
//! every client's ids are 1, 2, 3 …. Renumbering once per step, for one client, instead of
//! for every client of every successor's representative, is what makes the representative
//! cheap: a permutation, or nothing.

use coordination::ids::ClientSlot;
use coordination::relabel::{ClientMap, Ids, Relabel};
use coordination::world::Link;
use stateright::Representative;

use coordination::recipe::Recipe;

use properties::monitor::{ClientBeliefs, ClientRevokes, ClientWaits};
use runtime::workload::Workload;

use crate::state::{Peer, SortKeyMemo, State, session_id};

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
        let incarnations = self.max_incarnation();
        let map = client_map(clients, incarnations, |slot| {
            ClientSlot(position[slot] as u16)
        });
        State {
            server: self.server.image(&position, incarnations, &map),
            peers: order
                .iter()
                .map(|&old| {
                    let peer = &self.peers[old];
                    peer.image.get_or_make(&position, incarnations, || Peer {
                        sort_key: SortKeyMemo::carried(&peer.sort_key),
                        ..Peer::relabel(peer, &map)
                    })
                })
                .collect(),
            resource: self.resource.relabel(&map),
            used: self.used,
            beliefs: self.beliefs.relabel(&map),
            waits: self.waits.relabel(&map),
            herds: self.herds.relabel(&map),
            revokes: self.revokes.relabel(&map),
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
            if end - start > 1 {
                order[start..end]
                    .sort_by(|&a, &b| (self.sort_key(a), a).cmp(&(self.sort_key(b), b)));
            }
            start = end;
        }
        order
    }

    /// Client `focus`'s sort key: its state seen from itself ([`State::seen_from`]),
    /// memoized in the client. The key does not depend on how the clients are numbered, so
    /// the same client renamed keeps it (the representative carries it over); and it does not
    /// depend on the other clients, so a step that leaves the client alone keeps it too.
    fn sort_key(&self, focus: usize) -> &Peer<R> {
        self.peers[focus]
            .sort_key
            .get_or_init(|| self.seen_from(focus))
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
        Peer::relabel(&self.peers[focus], &map)
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
    (Option<u16>, bool),
    ClientRevokes,
    u8,
    u8,
    usize,
    Option<(Link, bool, usize, usize)>,
    usize,
);

fn summary<R: Recipe>(peer: &Peer<R>, state: &State<R>, slot: ClientSlot) -> Summary {
    (
        peer.class,
        peer.workload,
        state.beliefs.summary(slot),
        state.waits.summary(slot),
        state.herds.summary(slot),
        state.revokes.summary(slot),
        peer.restarts,
        peer.incarnation,
        peer.timers.len(),
        peer.handle
            .as_ref()
            .map(|h| (h.link, h.cut.is_some(), h.requests.len(), h.events.len())),
        peer.client.framework().pending_requests(),
    )
}

/// The op ids and timer ids `peer`'s state holds.
pub(crate) fn ids_in_use<R: Relabel>(peer: &Peer<R>) -> Ids {
    let recording = ClientMap::recording();
    let _ = peer.relabel(&recording);
    recording.recorded()
}

/// Renumbers `peer`'s op ids and timer ids 1, 2, 3 … in order, and its counters to the
/// number of ids in use ([`ClientMap::renumber`]); leaves it alone if they are already.
pub(crate) fn canonicalize<R: Relabel>(peer: &mut Peer<R>) {
    let in_use = ids_in_use(peer);
    if in_use.are_renumbered() {
        return;
    }
    let mut map = ClientMap::new();
    map.renumber(in_use);
    *peer = peer.relabel(&map);
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use recipe_table::recipes::{RecipeDef, RecipeKind, Testable, Visitor};

    use super::ids_in_use;
    use crate::budget::ModelSpec;
    use crate::components::reachable;
    use crate::model::LockModel;

    /// The numbers after every `marker` in `text`.
    fn numbers_after(text: &str, marker: &str) -> BTreeSet<u32> {
        text.match_indices(marker)
            .filter_map(|(at, _)| {
                let digits: String = text[at + marker.len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits.parse().ok()
            })
            .collect()
    }

    /// Explores a row's representatives (2 clients, timeouts, a connection loss, a crash, a
    /// follower cut, revocable where the recipe has it; at most 20,000 states) and checks, in every one,
    /// that each client's op and timer ids are exactly the ones the renumbering met (a
    /// `Relabel` impl that copied an id instead of mapping it would leave one behind), that
    /// they are 1, 2, 3 … (they were renumbered), and that no id lives outside the clients.
    struct IdsAreRenumbered;

    impl Visitor for IdsAreRenumbered {
        type Output = usize;

        fn visit<R: Testable>(self, def: &'static RecipeDef<R>) -> usize {
            let mut config = ModelSpec::new(2);
            config.timeouts = true;
            config.budgets.connection_losses = 1;
            config.budgets.crashes = 1;
            config.budgets.follower_cuts = 1;
            config.settings.revocable = def.name == "mutex";
            let model = LockModel::new(def, config);
            let states = reachable(&model, 20_000);
            for state in &states {
                for peer in &state.peers {
                    let text = format!("{peer:?}");
                    let ids = ids_in_use(peer);
                    let ops: BTreeSet<u32> = ids.ops().collect();
                    let timers: BTreeSet<u32> = ids.timers().collect();
                    assert_eq!(numbers_after(&text, "OpId("), ops, "{}: {text}", def.name);
                    assert_eq!(numbers_after(&text, "TimerId("), timers, "{}", def.name);
                    assert_eq!(ops, (1..=ops.len() as u32).collect(), "{}", def.name);
                    assert_eq!(timers, (1..=timers.len() as u32).collect(), "{}", def.name);
                }
                let mut rest = state.clone();
                rest.peers.clear();
                let rest = format!("{rest:?}");
                assert!(
                    !rest.contains("OpId(")
                        && !rest.contains("TimerId(")
                        && !rest.contains("next_op")
                );
            }
            states.len()
        }
    }

    #[test]
    fn every_op_and_timer_id_is_renumbered() {
        for kind in RecipeKind::ALL {
            let explored = kind.visit(IdsAreRenumbered);
            assert!(explored > 100, "{kind}: {explored} states");
        }
    }
}
