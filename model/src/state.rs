//! The model's state: the step world's server (the shared data tree and the live sessions,
//! [`lock::world::Server`]) and each client's session handle (its connection and queues,
//! [`lock::world::Handle`]), timers and workload, and the protected resource. Everything is
//! `Clone + Eq + Hash` and holds no history: a trace is rebuilt by replaying the actions of a
//! path.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use lock::client::Client;
use lock::fencing::{FencedResource, Token};
use lock::ids::{ClientSlot, Owner, TimerId};
use lock::relabel::{ClientMap, Relabel};
use lock::world::{Handle, Server};
use lock::zk::SessionId;
use scenarios::monitor::{Access, Beliefs, Fenced, Herds, Revokes, Seen, Waits};
use scenarios::workload::Workload;

/// The session id of `slot`'s `incarnation`-th session: deterministic, so that the same
/// path always builds the same state, and decodable, so that fired watches find their client.
pub fn session_id(slot: ClientSlot, incarnation: u8) -> SessionId {
    SessionId(((u64::from(slot.0) + 1) << 8) | u64::from(incarnation))
}

/// The client slot and incarnation a [`session_id`] encodes.
pub fn session_owner(session: SessionId) -> (ClientSlot, u8) {
    let slot = (session.0 >> 8).saturating_sub(1);
    (
        ClientSlot(u16::try_from(slot).unwrap_or(u16::MAX)),
        (session.0 & 0xff) as u8,
    )
}

/// One whole state of the model.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct State<R> {
    /// The server: the data tree and the sessions it holds (not expired, not closed).
    pub server: Server,
    /// The clients, by slot. Shared between a state and its successors: a step copies only
    /// the clients it changes ([`State::peer_mut`]).
    pub peers: Vec<Arc<Peer<R>>>,
    /// The protected counter and what the accesses to it looked like.
    pub resource: Resource,
    /// Faults injected so far.
    pub used: Used,
    /// Who believes they hold what: the belief properties' monitor, fed the same observations
    /// the trace records (the trace checkers fold the same monitor over a trace).
    pub beliefs: Beliefs,
    /// Who waits to be served: `progress`'s monitor, fed as [`State::beliefs`] is.
    pub waits: Waits,
    /// Who the changes to the tree woke: `herd_free`'s monitor, fed as [`State::beliefs`] is
    /// and with the watches each change fires.
    pub herds: Herds,
    /// Which revocation attempts are not yet answered: `revocation_answered`'s monitor, fed
    /// as [`State::beliefs`] is (empty unless the workload is revocable).
    pub revokes: Revokes,
}

/// Faults injected so far, against the budgets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Used {
    /// Session expiries.
    pub expiries: u8,
    /// Client crashes.
    pub crashes: u8,
    /// Connection losses.
    pub connection_losses: u8,
}

/// One client: the recipe with its framework layer, its connection and its workload.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Peer<R> {
    /// The same state machine the simulator and the real client run.
    pub client: Client<R>,
    /// Process restarts so far (the protection-id nonce of the current process).
    pub restarts: u8,
    /// Sessions opened so far, minus one: the current session is `session_id(slot, incarnation)`.
    pub incarnation: u8,
    /// The current session handle; `None` between a close and the next open.
    pub handle: Option<Handle>,
    /// Timers set and neither fired nor cancelled. Durations are ignored: any may fire next.
    pub timers: BTreeSet<TimerId>,
    /// The client's workload: the same state machine the simulator runs. Its pending timer
    /// (at most one) is what [`Action::Work`](crate::Action::Work) fires.
    pub workload: Workload,
    /// The client's workload class: 0 for clients that use the resource, 1 for the others (a
    /// read-write lock's readers, a semaphore's holders). Symmetry permutes clients only
    /// within a class: the workload gives a client its role by its slot (a read-write lock's
    /// writers are the lowest slots), so a writer must never take a reader's slot.
    pub class: u8,
    /// The client's symmetry sort key once computed: not part of the state (see
    /// [`SortKeyMemo`]).
    pub(crate) sort_key: SortKeyMemo<R>,
}

impl<R: Clone> Peer<R> {
    /// The client behind `shared`, to change: its own copy if another state still shares it,
    /// with its memoized sort key forgotten (a changed client has another key).
    pub fn make_mut(shared: &mut Arc<Peer<R>>) -> &mut Peer<R> {
        let peer = Arc::make_mut(shared);
        peer.sort_key = SortKeyMemo::default();
        peer
    }
}

/// The protected counter, and the fenced-access monitor of the accesses it accepted.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Resource {
    /// The counter (fenced or not).
    pub counter: FencedResource,
    /// The accepted accesses as `mutual_exclusion_fenced` judges them (the trace checker
    /// folds the same monitor over a trace).
    pub fenced: Fenced,
}

impl Resource {
    /// A counter at 0.
    pub fn new(fenced: bool) -> Resource {
        Resource {
            counter: FencedResource::new(fenced),
            fenced: Fenced::default(),
        }
    }

    /// Notes an accepted `access` with `token` by `owner` on `slot`.
    pub fn accepted(&mut self, slot: ClientSlot, owner: Owner, token: Token, access: Access) {
        self.fenced.observe((Some(slot), owner, token), access);
    }
}

impl<R> State<R> {
    /// Feeds one observation to the property monitors.
    pub fn observe(&mut self, seen: Seen) {
        self.beliefs.observe(seen);
        self.waits.observe(seen);
        self.herds.observe(seen, &self.waits);
        self.revokes.observe(seen);
    }

    /// The peer of `slot`.
    pub fn peer(&self, slot: ClientSlot) -> &Peer<R> {
        &self.peers[usize::from(slot.0)]
    }

    /// The client whose current handle is on `session`, if any.
    pub fn attached(&self, session: SessionId) -> Option<ClientSlot> {
        let (slot, _) = session_owner(session);
        let peer = self.peers.get(usize::from(slot.0))?;
        (peer.handle.as_ref()?.session == session).then_some(slot)
    }
}

impl<R: Clone> State<R> {
    /// The peer of `slot`, mutably: its own copy, if another state still shares it.
    pub fn peer_mut(&mut self, slot: ClientSlot) -> &mut Peer<R> {
        Peer::make_mut(&mut self.peers[usize::from(slot.0)])
    }
}

impl Relabel for Resource {
    fn relabel(&self, map: &ClientMap) -> Self {
        Resource {
            counter: self.counter.clone(),
            fenced: self.fenced.relabel(map),
        }
    }
}

impl<R: Relabel> Relabel for Peer<R> {
    fn relabel(&self, map: &ClientMap) -> Self {
        Peer {
            client: self.client.relabel(map),
            handle: self.handle.relabel(map),
            restarts: self.restarts,
            incarnation: self.incarnation,
            timers: self.timers.relabel(map),
            workload: self.workload.relabel(map),
            class: self.class,
            sort_key: SortKeyMemo::default(),
        }
    }
}

/// A client's symmetry sort key (`symmetry.rs`: its state seen from itself),
/// computed the first time its summary ties with another client's and kept with the client
/// for as long as it does not change: a step changes one or two clients, and the others keep
/// their keys. Not part of the state: every memo is equal to every other and hashes to
/// nothing, and a copy starts empty, so only an unchanged client ever has one
/// ([`Peer::make_mut`] empties it before a change).
pub(crate) struct SortKeyMemo<R>(OnceLock<Arc<Peer<R>>>);

impl<R> SortKeyMemo<R> {
    /// The key, computed by `key` the first time.
    pub(crate) fn get_or_init(&self, key: impl FnOnce() -> Peer<R>) -> &Peer<R> {
        self.0.get_or_init(|| Arc::new(key()))
    }

    /// A memo already holding `memo`'s key, if it has one: for the same client renamed.
    pub(crate) fn carried(memo: &SortKeyMemo<R>) -> SortKeyMemo<R> {
        SortKeyMemo(memo.0.clone())
    }
}

impl<R> Default for SortKeyMemo<R> {
    fn default() -> SortKeyMemo<R> {
        SortKeyMemo(OnceLock::new())
    }
}

impl<R> Clone for SortKeyMemo<R> {
    fn clone(&self) -> SortKeyMemo<R> {
        SortKeyMemo::default()
    }
}

impl<R> PartialEq for SortKeyMemo<R> {
    fn eq(&self, _: &SortKeyMemo<R>) -> bool {
        true
    }
}

impl<R> Eq for SortKeyMemo<R> {}

impl<R> PartialOrd for SortKeyMemo<R> {
    fn partial_cmp(&self, other: &SortKeyMemo<R>) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<R> Ord for SortKeyMemo<R> {
    fn cmp(&self, _: &SortKeyMemo<R>) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl<R> std::hash::Hash for SortKeyMemo<R> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl<R> std::fmt::Debug for SortKeyMemo<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("_")
    }
}
