//! The model's state: the step world's server (the shared data tree and the live sessions,
//! [`coordination::world::Server`]) and each client's session handle (its connection and queues,
//! [`coordination::world::Handle`]), timers and workload, and the protected resource. Everything is
//! `Clone + Eq + Hash` and holds no history: a trace is rebuilt by replaying the actions of a
//! path.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};

use coordination::client::Client;
use coordination::fencing::{FencedResource, Token};
use coordination::ids::{ClientSlot, Owner, TimerId};
use coordination::relabel::{ClientMap, Relabel};
use coordination::world::{Handle, Server};
use coordination::zk::SessionId;
use properties::monitor::{Access, Beliefs, Fenced, Herds, Observation, Revokes, Waits};
use runtime::workload::Workload;

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
    /// The server: the data tree and the sessions it holds (not expired, not closed). Shared
    /// between a state and its successors as the clients are: only a step that changes the
    /// server copies it ([`State::server_mut`]).
    pub server: Arc<SharedServer>,
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
    /// Failed connection attempts.
    pub failed_attempts: u8,
    /// Sweeps of the empty containers.
    pub reaps: u8,
    /// Cuts of a client's follower off from the leader.
    pub follower_cuts: u8,
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
    /// The client's last image under a renaming of the clients: not part of the state (see
    /// [`ImageMemo`]).
    pub(crate) image: ImageMemo<Peer<R>>,
}

impl<R: Clone> Peer<R> {
    /// The client behind `shared`, to change: its own copy if another state still shares it,
    /// with its memoized sort key forgotten (a changed client has another key).
    pub fn make_mut(shared: &mut Arc<Peer<R>>) -> &mut Peer<R> {
        let peer = Arc::make_mut(shared);
        peer.sort_key = SortKeyMemo::default();
        peer.image = ImageMemo::default();
        peer
    }
}

/// The protected counter, and the fenced-access monitor of the accesses it accepted.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct Resource {
    /// The counter (fenced or not).
    #[relabel(skip)]
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
    pub fn observe(&mut self, seen: Observation) {
        self.beliefs.observe(seen);
        self.waits.observe(seen);
        self.herds.observe(seen, &self.waits);
        self.revokes.observe(seen);
    }

    /// The peer of `slot`.
    pub fn peer(&self, slot: ClientSlot) -> &Peer<R> {
        &self.peers[usize::from(slot.0)]
    }

    /// Forgets the images under a renaming its clients and its server keep ([`ImageMemo`]):
    /// for a search that keeps many states at once, once their siblings have used them.
    pub(crate) fn forget_images(&self) {
        self.server.image.forget();
        for peer in &self.peers {
            peer.image.forget();
        }
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

    /// The server, mutably: its own copy, if another state still shares it.
    pub fn server_mut(&mut self) -> &mut Server {
        SharedServer::make_mut(&mut self.server)
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
            image: ImageMemo::default(),
        }
    }
}

/// A cache kept with a state's data but not part of the state: every memo is equal to every
/// other and hashes to nothing, and a copy starts empty, so only an unchanged client or server
/// ever holds one ([`Peer::make_mut`] and [`SharedServer::make_mut`] empty theirs before a
/// change).
#[derive(Default)]
pub(crate) struct Memo<T>(T);

impl<T: Default> Clone for Memo<T> {
    fn clone(&self) -> Memo<T> {
        Memo::default()
    }
}

impl<T> PartialEq for Memo<T> {
    fn eq(&self, _: &Memo<T>) -> bool {
        true
    }
}

impl<T> Eq for Memo<T> {}

impl<T> PartialOrd for Memo<T> {
    fn partial_cmp(&self, other: &Memo<T>) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Memo<T> {
    fn cmp(&self, _: &Memo<T>) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl<T> std::hash::Hash for Memo<T> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl<T> std::fmt::Debug for Memo<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("_")
    }
}

/// A client's symmetry sort key (`symmetry.rs`: its state seen from itself), computed the
/// first time its summary ties with another client's and kept with the client for as long as
/// it does not change: a step changes one or two clients, and the others keep their keys.
pub(crate) type SortKeyMemo<R> = Memo<OnceLock<Arc<Peer<R>>>>;

impl<R> SortKeyMemo<R> {
    /// The key, computed by `key` the first time.
    pub(crate) fn get_or_init(&self, key: impl FnOnce() -> Peer<R>) -> &Peer<R> {
        self.0.get_or_init(|| Arc::new(key()))
    }

    /// A memo already holding `memo`'s key, if it has one: for the same client renamed.
    pub(crate) fn carried(memo: &SortKeyMemo<R>) -> SortKeyMemo<R> {
        Memo(memo.0.clone())
    }
}

/// A value's image under the last renaming of the clients its states' representatives
/// applied (`symmetry.rs`), kept with the value for as long as it does not change: the
/// successors of a state share the clients (and the server) a step left alone, and most of
/// them are put in the same order, so each such part is relabelled once instead of once per
/// successor.
pub(crate) type ImageMemo<T> = Memo<Mutex<Option<Image<T>>>>;

/// A value's image under one renaming: the renaming ([`State::representative`]'s new position
/// of each client, and the incarnations it maps) and the image.
pub(crate) struct Image<T> {
    position: Vec<usize>,
    incarnations: u8,
    image: Arc<T>,
}

impl<T> ImageMemo<T> {
    /// Forgets the image kept, if any.
    pub(crate) fn forget(&self) {
        if let Ok(mut kept) = self.0.try_lock() {
            *kept = None;
        }
    }

    /// The image under the renaming (`position`, `incarnations`), computed by `image` unless
    /// it is the one kept. Another thread reading the memo at the same moment computes it
    /// again rather than wait.
    pub(crate) fn get_or_make(
        &self,
        position: &[usize],
        incarnations: u8,
        image: impl FnOnce() -> T,
    ) -> Arc<T> {
        let Ok(mut kept) = self.0.try_lock() else {
            return Arc::new(image());
        };
        match &*kept {
            Some(kept) if kept.position == position && kept.incarnations == incarnations => {
                Arc::clone(&kept.image)
            }
            _ => {
                let made = Arc::new(image());
                *kept = Some(Image {
                    position: position.to_vec(),
                    incarnations,
                    image: Arc::clone(&made),
                });
                made
            }
        }
    }
}

/// The server as states share it: the server, and its last image under a renaming of the
/// clients (not part of the state: equal to every other, hashed as nothing, and empty in a
/// copy).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedServer {
    server: Server,
    image: ImageMemo<SharedServer>,
}

impl SharedServer {
    /// `server`, to be shared.
    pub fn new(server: Server) -> SharedServer {
        SharedServer {
            server,
            image: ImageMemo::default(),
        }
    }

    /// The server behind `shared`, to change: its own copy if another state still shares it,
    /// with its kept image forgotten.
    pub(crate) fn make_mut(shared: &mut Arc<SharedServer>) -> &mut Server {
        let this = Arc::make_mut(shared);
        this.image = ImageMemo::default();
        &mut this.server
    }

    /// The image of `self` under a renaming of the clients: (`position`, `incarnations`)
    /// is the renaming, `map` the map that applies it.
    pub(crate) fn image(&self, position: &[usize], incarnations: u8, map: &ClientMap) -> Arc<Self> {
        (self.image).get_or_make(position, incarnations, || {
            SharedServer::new(self.server.relabel(map))
        })
    }
}

impl std::ops::Deref for SharedServer {
    type Target = Server;

    fn deref(&self) -> &Server {
        &self.server
    }
}
