//! Relabelling clients: rewriting every client slot, session id and protection id (also where
//! one is embedded in a node name) under a mapping of clients.
//!
//! The model checker uses this for symmetry reduction: two states that differ only in which
//! client is which are explored once. It needs to reach into the private state of the
//! framework layer, the recipes and the data tree, so each type implements [`Relabel`] next
//! to its definition. The trait is plain data manipulation: no runtime, no model checker.
//!
//! Op ids and timer ids are per client, so they never tell clients apart; a map may still
//! renumber them ([`ClientMap::renumber`]): the model checker maps one client's ids, in
//! order, to 1, 2, 3 … and its counters to the number of ids in use, so that two states
//! that differ only in how many ids a client has used up are explored once.
//!
//! What is *not* rewritten: owners, zxids and tokens (global counters), data bytes.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use crate::fencing::Token;
use crate::ids::{ClientSlot, OpId, Owner, ProtectionId, TimerId};
use crate::recipes::Mode;
use crate::zk::{CreateMode, EventKind, SessionId, ZkError, Zxid};

/// A mapping of client identities: client slots, and the session ids that belong to them.
/// Identities without an entry map to themselves. The mapping need not be injective (the
/// model maps "every other client" to one placeholder when it computes sort keys).
///
/// The pairs are kept in small vectors: a map has a handful of entries and is built and read
/// once per state the model checker canonicalizes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientMap {
    slots: Vec<(ClientSlot, ClientSlot)>,
    sessions: Vec<(SessionId, SessionId)>,
    /// The op and timer ids to renumber, if the map renumbers them.
    ids: Option<Ids>,
    /// Where a recording map ([`ClientMap::recording`]) notes the ids it meets.
    recorded: Option<RefCell<Ids>>,
}

/// One client's op ids and timer ids in use, each sorted and without repeats (a client holds
/// a handful: small sorted vectors, not trees).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ids {
    ops: Vec<u32>,
    timers: Vec<u32>,
    /// The op and timer counters a recording map met, if it met them.
    counters: [Option<u32>; 2],
}

impl Ids {
    /// The op ids, sorted.
    pub fn ops(&self) -> impl Iterator<Item = u32> + '_ {
        self.ops.iter().copied()
    }

    /// The timer ids, sorted.
    pub fn timers(&self) -> impl Iterator<Item = u32> + '_ {
        self.timers.iter().copied()
    }

    /// Whether renumbering these ids ([`ClientMap::renumber`]) would change nothing: the ids
    /// of each kind are 1, 2, 3 … already, and each counter met is their number.
    pub fn are_renumbered(&self) -> bool {
        [IdKind::Op, IdKind::Timer].into_iter().all(|kind| {
            let ids = self.of(kind);
            let counter = self.counters[kind as usize];
            (ids.iter().zip(1..)).all(|(&id, rank)| id == rank)
                && counter.is_none_or(|counter| counter == count(ids))
        })
    }
}

/// The two kinds of per-client ids a map renumbers.
#[derive(Clone, Copy, Debug)]
enum IdKind {
    Op = 0,
    Timer = 1,
}

impl Ids {
    fn of(&self, kind: IdKind) -> &[u32] {
        match kind {
            IdKind::Op => &self.ops,
            IdKind::Timer => &self.timers,
        }
    }

    /// Notes `id` of `kind` as in use.
    fn insert(&mut self, kind: IdKind, id: u32) {
        let ids = match kind {
            IdKind::Op => &mut self.ops,
            IdKind::Timer => &mut self.timers,
        };
        if let Err(at) = ids.binary_search(&id) {
            ids.insert(at, id);
        }
    }
}

/// The image of `id` when the ids in use, `in_use`, are renumbered 1, 2, 3 … in order.
fn rank(in_use: &[u32], id: u32) -> u32 {
    let below = in_use.partition_point(|&used| used < id);
    u32::try_from(below + 1).unwrap_or(u32::MAX)
}

/// A counter's image under the renumbering of `in_use`: the number of ids in use (every id
/// it hands out next is still above every id in use, as before).
fn count(in_use: &[u32]) -> u32 {
    u32::try_from(in_use.len()).unwrap_or(u32::MAX)
}

impl ClientMap {
    /// The identity mapping.
    pub fn new() -> ClientMap {
        ClientMap::default()
    }

    /// Maps client slot `from` to `to` (and with it every protection id of `from`).
    pub fn map_slot(&mut self, from: ClientSlot, to: ClientSlot) {
        insert(&mut self.slots, from, to);
    }

    /// Maps session `from` to `to`.
    pub fn map_session(&mut self, from: SessionId, to: SessionId) {
        insert(&mut self.sessions, from, to);
    }

    /// An identity map that notes every op id and timer id it is asked to map: relabelling
    /// one client's state with it finds the ids that client has in use
    /// ([`ClientMap::recorded`]).
    pub fn recording() -> ClientMap {
        ClientMap {
            recorded: Some(RefCell::default()),
            ..ClientMap::default()
        }
    }

    /// The ids a [`ClientMap::recording`] map has met.
    pub fn recorded(self) -> Ids {
        self.recorded.map(RefCell::into_inner).unwrap_or_default()
    }

    /// Renumbers one client's ids: the ids in `in_use` (all the client's state holds, as a
    /// recording map found them) become 1, 2, 3 … in order, and the client's op and timer
    /// counters become the number of ids in use. Sound because the framework and the recipes
    /// only compare these ids with each other and only count up from the counters: the
    /// renumbered client makes the same moves, with ids renamed in the same order.
    /// Apply the map to that one client's state only.
    pub fn renumber(&mut self, in_use: Ids) {
        self.ids = Some(in_use);
    }

    /// The image of an op id.
    pub fn op(&self, op: OpId) -> OpId {
        OpId(self.id(op.0, IdKind::Op))
    }

    /// The image of a timer id.
    pub fn timer(&self, timer: TimerId) -> TimerId {
        TimerId(self.id(timer.0, IdKind::Timer))
    }

    /// The image of one id of `kind`, noted if the map records.
    fn id(&self, id: u32, kind: IdKind) -> u32 {
        if let Some(recorded) = &self.recorded {
            recorded.borrow_mut().insert(kind, id);
        }
        self.ids.as_ref().map_or(id, |ids| rank(ids.of(kind), id))
    }

    /// The image of a client's op counter (the last op id it handed out).
    pub fn op_counter(&self, counter: u32) -> u32 {
        self.counter(counter, IdKind::Op)
    }

    /// The image of a client's timer counter (the last timer id it handed out).
    pub fn timer_counter(&self, counter: u32) -> u32 {
        self.counter(counter, IdKind::Timer)
    }

    /// The image of the counter of ids of `kind`, noted if the map records.
    ///
    /// # Panics
    ///
    /// When renumbering and an id in use is above the counter: the renumbered counter (the
    /// number of ids in use) would then hand out an id already in use. The framework and
    /// the recipes must hand ids out counting up.
    fn counter(&self, counter: u32, kind: IdKind) -> u32 {
        if let Some(recorded) = &self.recorded {
            recorded.borrow_mut().counters[kind as usize] = Some(counter);
        }
        self.ids.as_ref().map_or(counter, |ids| {
            let in_use = ids.of(kind);
            assert!(
                in_use.last().is_none_or(|&newest| newest <= counter),
                "{kind:?} counter {counter} is below an id in use ({in_use:?}): renumbering \
                 needs ids handed out counting up"
            );
            count(in_use)
        })
    }

    /// The image of a client slot.
    pub fn slot(&self, slot: ClientSlot) -> ClientSlot {
        lookup(&self.slots, slot)
    }

    /// The image of a session id.
    pub fn session(&self, session: SessionId) -> SessionId {
        lookup(&self.sessions, session)
    }

    /// The image of a node name: a protection prefix (`_c_<id>-`) is rewritten, the rest of
    /// the name is kept.
    pub fn name(&self, name: &str) -> String {
        let mut image = name.to_owned();
        if let Some(hex) = self.moved_prefix(name) {
            rewrite_digits(&mut image, 0, hex);
        }
        image
    }

    /// The image of a path's text, every component's protection prefix rewritten; `None` when
    /// the map moves none of them (the path is its own image).
    pub(crate) fn path_text(&self, path: &str) -> Option<String> {
        if self.slots.iter().all(|(from, to)| from == to) {
            return None;
        }
        let mut text: Option<String> = None;
        // Rewriting keeps lengths, so positions found in `path` hold in `text`.
        for (slash, _) in path.match_indices('/') {
            let start = slash + 1;
            if let Some(hex) = self.moved_prefix(&path[start..]) {
                rewrite_digits(text.get_or_insert_with(|| path.to_owned()), start, hex);
            }
        }
        text
    }

    /// The new client digits (lowercase hex) of the protection prefix `component` starts
    /// with, if it has one whose client the map moves.
    fn moved_prefix(&self, component: &str) -> Option<[u8; 4]> {
        let client = ProtectionId::prefix_client(component)?;
        let image = self.slot(client);
        (image != client).then(|| {
            std::array::from_fn(|i| {
                b"0123456789abcdef"[usize::from((image.0 >> (12 - 4 * i)) & 0xf)]
            })
        })
    }
}

/// Writes `hex` over the client digits of the protection prefix at byte `start` of `text`
/// (prefixes keep their length).
fn rewrite_digits(text: &mut String, start: usize, hex: [u8; 4]) {
    let digits = ProtectionId::CLIENT_DIGITS;
    let hex = std::str::from_utf8(&hex).expect("hex digits are ASCII");
    text.replace_range(start + digits.start..start + digits.end, hex);
}

fn insert<T: PartialEq + Copy>(pairs: &mut Vec<(T, T)>, from: T, to: T) {
    match pairs.iter_mut().find(|(key, _)| *key == from) {
        Some(pair) => pair.1 = to,
        None => pairs.push((from, to)),
    }
}

fn lookup<T: PartialEq + Copy>(pairs: &[(T, T)], key: T) -> T {
    pairs
        .iter()
        .find(|(from, _)| *from == key)
        .map_or(key, |(_, to)| *to)
}

/// A value whose client identities can be rewritten under a [`ClientMap`].
///
/// Most types relabel field by field: derive it (`#[derive(Relabel)]`, the derive macro of the
/// same name). Each field's type must implement `Relabel`, but for a field marked
/// `#[relabel(skip)]`, which holds no client identity and no op or timer id and is cloned
/// as it is; the fields are visited in declaration order, and each type parameter gets a
/// `Relabel` bound. A crate that reaches this crate by another path than `coordination` names it on
/// the type: `#[relabel(crate = "splitbrain::coordination")]`. Write it by hand where the image is
/// more than its fields' images (a node name with an embedded protection id, a map keyed by
/// client, ids renumbered through [`ClientMap::op_counter`]).
///
/// ```
/// use coordination::ids::{OpId, Owner};
/// use coordination::relabel::{ClientMap, Relabel};
///
/// #[derive(Clone, Debug, PartialEq, Relabel)]
/// enum Stage {
///     Idle,
///     Creating { owner: Owner, op: OpId },
/// }
///
/// let stage = Stage::Creating { owner: Owner(1), op: OpId(4) };
/// assert_eq!(stage.relabel(&ClientMap::new()), stage);
/// ```
///
/// Every op id and timer id the value holds must go through the map too (`relabel` on it,
/// or [`ClientMap::op`] / [`ClientMap::timer`]), never be copied: the model checker
/// renumbers them, and an id left behind could meet a renumbered one.
pub trait Relabel: Sized {
    /// The value with every client slot, session id and protection id mapped by `map`.
    fn relabel(&self, map: &ClientMap) -> Self;
}

pub use coordination_derive::Relabel;

/// Ids the map sends to their image through one of its methods.
macro_rules! mapped {
    ($($ty:ty => $method:ident),*) => {$(
        impl Relabel for $ty {
            fn relabel(&self, map: &ClientMap) -> Self {
                map.$method(*self)
            }
        }
    )*};
}

mapped!(ClientSlot => slot, SessionId => session, OpId => op, TimerId => timer);

impl Relabel for ProtectionId {
    fn relabel(&self, map: &ClientMap) -> Self {
        ProtectionId {
            client: map.slot(self.client),
            ..*self
        }
    }
}

impl Relabel for String {
    fn relabel(&self, map: &ClientMap) -> Self {
        map.name(self)
    }
}

/// Types that never identify a client relabel to themselves.
macro_rules! unchanged {
    ($($ty:ty),*) => {$(
        impl Relabel for $ty {
            fn relabel(&self, _: &ClientMap) -> Self {
                self.clone()
            }
        }
    )*};
}

unchanged!(
    bool, u8, u16, i32, u32, u64, usize, Duration, Owner, Token, Zxid, ZkError
);
unchanged!(Mode, CreateMode, EventKind);

impl<T: Relabel> Relabel for Option<T> {
    fn relabel(&self, map: &ClientMap) -> Self {
        self.as_ref().map(|value| value.relabel(map))
    }
}

impl<T: Relabel, E: Relabel> Relabel for Result<T, E> {
    fn relabel(&self, map: &ClientMap) -> Self {
        match self {
            Ok(value) => Ok(value.relabel(map)),
            Err(error) => Err(error.relabel(map)),
        }
    }
}

/// Tuples relabel element by element, in order.
macro_rules! tuple {
    ($($element:ident . $index:tt),*) => {
        impl<$($element: Relabel),*> Relabel for ($($element,)*) {
            fn relabel(&self, map: &ClientMap) -> Self {
                ($(self.$index.relabel(map),)*)
            }
        }
    };
}

tuple!(A.0, B.1);
tuple!(A.0, B.1, C.2);

/// A shared value relabels into a value of its own (the model's snapshot of a cut-off
/// follower's tree, [`Handle::cut`](crate::world::Handle::cut)).
impl<T: Relabel> Relabel for Arc<T> {
    fn relabel(&self, map: &ClientMap) -> Self {
        Arc::new((**self).relabel(map))
    }
}

impl<T: Relabel> Relabel for Vec<T> {
    fn relabel(&self, map: &ClientMap) -> Self {
        self.iter().map(|value| value.relabel(map)).collect()
    }
}

impl<T: Relabel> Relabel for VecDeque<T> {
    fn relabel(&self, map: &ClientMap) -> Self {
        self.iter().map(|value| value.relabel(map)).collect()
    }
}

impl<T: Relabel + Ord> Relabel for BTreeSet<T> {
    fn relabel(&self, map: &ClientMap) -> Self {
        self.iter().map(|value| value.relabel(map)).collect()
    }
}

impl<K: Relabel + Ord, V: Relabel> Relabel for BTreeMap<K, V> {
    fn relabel(&self, map: &ClientMap) -> Self {
        self.iter()
            .map(|(key, value)| (key.relabel(map), value.relabel(map)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_everything_but_the_protection_client() {
        let mut map = ClientMap::new();
        map.map_slot(ClientSlot(1), ClientSlot(0));
        let id = ProtectionId {
            nonce: 7,
            client: ClientSlot(1),
            serial: 3,
        };
        let name = format!("{}lock-0000000004", id.prefix());
        assert_eq!(map.name(&name), "_c_00000007-0000-00000003-lock-0000000004");
        assert_eq!(map.name("lock-0000000004"), "lock-0000000004");
        let other = ProtectionId {
            client: ClientSlot(2),
            ..id
        };
        assert_eq!(map.name(&other.prefix()), other.prefix());
        map.map_slot(ClientSlot(2), ClientSlot(0x1b));
        let path = format!("/locks/{}lock-0000000001", other.prefix());
        assert_eq!(
            map.path_text(&path).as_deref(),
            Some("/locks/_c_00000007-001b-00000003-lock-0000000001")
        );
        assert_eq!(
            map.path_text("/locks/lock-0000000001"),
            None,
            "nothing to move"
        );
        let unmoved = format!(
            "/locks/{}lock-0000000001",
            id.prefix().replace("0001", "0003")
        );
        assert_eq!(map.path_text(&unmoved), None, "a prefix the map leaves");
    }

    /// A map renumbering a client whose op ids in use are `ops`.
    fn renumbering(ops: &[u32]) -> ClientMap {
        let recording = ClientMap::recording();
        for &op in ops {
            recording.op(OpId(op));
        }
        let mut map = ClientMap::new();
        map.renumber(recording.recorded());
        map
    }

    #[test]
    fn renumbering_ranks_the_ids_in_use_and_counts_them() {
        let map = renumbering(&[40, 7, 12]);
        assert_eq!([7, 12, 40].map(|op| map.op(OpId(op)).0), [1, 2, 3]);
        assert_eq!(map.op_counter(41), 3, "the next id, 4, is above the three");
    }

    #[test]
    #[should_panic(expected = "Op counter 20 is below an id in use ([7, 12, 40])")]
    fn a_counter_below_an_id_in_use_cannot_be_renumbered() {
        renumbering(&[40, 7, 12]).op_counter(20);
    }

    #[test]
    fn unmapped_identities_stay() {
        let mut map = ClientMap::new();
        map.map_session(SessionId(5), SessionId(9));
        assert_eq!(SessionId(5).relabel(&map), SessionId(9));
        assert_eq!(SessionId(6).relabel(&map), SessionId(6));
        assert_eq!(ClientSlot(4).relabel(&map), ClientSlot(4));
    }

    /// The ids a recording map meets: `ops` and `timers`, then the two counters.
    fn met(ops: &[u32], timers: &[u32], counters: (u32, u32)) -> Ids {
        let recording = ClientMap::recording();
        for &op in ops {
            recording.op(OpId(op));
        }
        for &timer in timers {
            recording.timer(TimerId(timer));
        }
        recording.op_counter(counters.0);
        recording.timer_counter(counters.1);
        recording.recorded()
    }

    #[test]
    fn ids_are_renumbered_only_when_renumbering_would_change_nothing() {
        assert!(met(&[1, 2], &[1], (2, 1)).are_renumbered());
        assert!(met(&[], &[], (0, 0)).are_renumbered());
        assert!(
            !met(&[2], &[1], (2, 1)).are_renumbered(),
            "an id past a gap"
        );
        assert!(
            !met(&[1, 2], &[1], (3, 1)).are_renumbered(),
            "an op counter ahead"
        );
        assert!(
            !met(&[1], &[1, 3], (1, 3)).are_renumbered(),
            "a timer past a gap"
        );
        assert!(
            !met(&[1], &[1], (1, 0)).are_renumbered(),
            "a timer counter behind"
        );
        assert!(
            ClientMap::recording().recorded().are_renumbered(),
            "no counter met"
        );
    }
}
