//! The parts every built-in recipe is made of, public so that a recipe of yours (a fork of a
//! built-in with one line changed, or a recipe of your own) is built of the same ones.
//!
//! - Nodes: [`create_parents`], [`create_sequential`] (a protected ephemeral-sequential
//!   node), [`answer_abandoned`] (the reply to a create its owner gave up on).
//! - Queues: [`list`] the children, [`place`] / [`place_by`] a node among them ("which node
//!   do I wait for"), [`queue`] / [`queue_of`] them in sequence order; the mutexes' queue
//!   disciplines are [`super::queue::Queue`].
//! - Holds: [`Hold`] with its [`Standing`], [`regrant`], [`release_hold`], and
//!   [`update_hold`] / [`update_holds`], which apply a connection-state change under the
//!   error policy.
//! - Acquisitions: [`Acquisition`] with its timeout, [`timed_out`] and [`cancel_timeout`].
//! - Answers: [`failed`], and [`refuse`] for a call the recipe does not serve.
//! - Composition: [`OverMutex`], a recipe built on one internal [`Mutex`]; revocation is
//!   [`super::revocation::Revocation`].
//!
//! Each helper acts through the recipe's [`Ctx`] in the shared vocabulary ([`Notice`]).
//! To test a recipe step by step, see [`crate::harness`].

use std::collections::{BTreeMap, BTreeSet};

use super::{Call, FailReason, Mode, Mutex, Notice};
use crate::fencing::Token;
use crate::framework::OnLost;
use crate::ids::{OpId, Owner, TimerId};
use crate::recipe::{Ctx, Input, SessionEvent};
use crate::relabel::Relabel;
use crate::zk::{CreateMode, OpOk, OpResult, Path, Request, sequence_suffix};

/// One owner's hold of a lock: its node, the fencing token it was granted with, how many
/// times it holds (reentrant acquires) and where it stands with the connection. The mutex's
/// and the naive mutex's holds.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct Hold {
    /// The owner's lock node.
    pub node: Path,
    /// The fencing token of the hold (the node's czxid).
    pub token: Token,
    /// Grants not yet released: 1, and one more per reentrant acquire ([`regrant`]).
    pub count: u32,
    /// Where the hold stands with the connection ([`update_hold`]).
    pub standing: Standing,
}

/// Where a hold stands with the connection, as [`update_holds`] moves it (a mutex's
/// [`Hold`], a semaphore's leases).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub enum Standing {
    /// Held, as far as the holder knows.
    #[default]
    Held,
    /// Suspended (standard error policy): a reconnect to the same session restores it.
    Suspended,
    /// Its session was lost and the holder told so, but the hold is kept until released
    /// (Curator's behaviour, [`OnLost::Curator`]): it hears of no later connection change.
    Lost,
}

/// One owner's acquisition, at `stage` (the recipe's own stages), with the timer of its
/// timeout until it is granted ([`timed_out`] finds it, [`cancel_timeout`] cancels it). The
/// mutex's and the semaphore's acquisitions.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct Acquisition<S> {
    /// Where the acquisition is (for the mutex: creating, waiting or holding).
    pub stage: S,
    /// The timer of the acquire's timeout, while it waits (a grant cancels and clears it).
    pub timeout: Option<TimerId>,
    /// How often it started over with a new node because its own was gone, which Curator's
    /// `attemptLock` counts against the retry policy.
    pub start_overs: u32,
}

impl<S> Acquisition<S> {
    /// An acquisition at `stage` that has not started over.
    pub fn new(stage: S, timeout: Option<TimerId>) -> Acquisition<S> {
        Acquisition {
            stage,
            timeout,
            start_overs: 0,
        }
    }
}

/// Applies a connection-state change to `owner`'s hold, telling the owner. Returns false
/// when the hold is over (see [`update_holds`]). The mutex's and the naive mutex's holds.
pub fn update_hold(
    owner: Owner,
    hold: &mut Hold,
    event: SessionEvent,
    cx: &mut Ctx<'_, Notice>,
) -> bool {
    update_holds(owner, &mut hold.standing, [&hold.node], event, cx)
}

/// Applies a connection-state change to the holds of `owner` on `nodes` (one hold per node,
/// as a semaphore's leases), telling the owner once. `Suspended` ends them for now only
/// under the standard error policy (a `Reconnected` to the same session restores them).
/// `Lost` always tells the owner; it ends the holds (returning false, every node getting a
/// guaranteed delete) only under [`OnLost::Release`]: Curator keeps them until released.
/// The semaphore's leases, and through [`update_hold`] every lock hold.
pub fn update_holds<'a>(
    owner: Owner,
    standing: &mut Standing,
    nodes: impl IntoIterator<Item = &'a Path>,
    event: SessionEvent,
    cx: &mut Ctx<'_, Notice>,
) -> bool {
    match event {
        _ if *standing == Standing::Lost => {}
        // Under the session-based policy a hold lives through SUSPENDED: not a word.
        SessionEvent::Suspended if !cx.error_policy().suspended_ends_holds() => {}
        SessionEvent::Suspended => {
            *standing = Standing::Suspended;
            cx.notify(Notice::Suspended { owner });
        }
        SessionEvent::Reconnected { .. } if *standing == Standing::Suspended => {
            *standing = Standing::Held;
            cx.notify(Notice::Reconnected { owner });
        }
        SessionEvent::Reconnected { .. } => {}
        SessionEvent::Lost { .. } => {
            cx.notify(Notice::Lost { owner });
            if cx.on_lost() == OnLost::Curator {
                *standing = Standing::Lost;
                return true;
            }
            for node in nodes {
                cx.delete_guaranteed(node.clone());
            }
            return false;
        }
    }
    true
}

/// Creates `path` and its ancestors as containers (a reaped container leaves the next create
/// with NoNode); replies are dropped, NodeExists being the usual one. A plain create's answer
/// to `NoNode`; a protected create ([`create_sequential`]) makes its parents itself.
pub fn create_parents(path: &Path, cx: &mut Ctx<'_, Notice>) {
    for request in Request::make_containers(path) {
        cx.submit_detached(request);
    }
}

/// Creates a protected ephemeral-sequential node named `name` (after the protection prefix,
/// before the sequence number) under `dir`: a lock's, a lease's or a latch's node. Its op
/// id is the recipe's; the reply is `Created` with the node's full path. A missing `dir` is
/// made as Curator's `creatingParentContainersIfNeeded` makes it, within the create and under
/// the same protection id; `NoNode` reaches the recipe only when `dir` is gone again.
pub fn create_sequential(dir: &Path, name: &str, cx: &mut Ctx<'_, Notice>) -> OpId {
    cx.create_protected(dir, name, Vec::new(), CreateMode::EphemeralSequential)
}

/// One more grant of the hold `owner` has: a reentrant acquire, answered `Acquired` with
/// the hold's token at once (the mutexes).
pub fn regrant(owner: Owner, hold: &mut Hold, cx: &mut Ctx<'_, Notice>) {
    hold.count += 1;
    cx.notify(Notice::Acquired {
        owner,
        token: hold.token,
        mode: Mode::Exclusive,
    });
}

/// Tells `owner` that its call failed, for `reason` (an acquire while its earlier one
/// waits, a release of nothing held, ...). Every built-in answers this way.
pub fn failed(owner: Owner, reason: FailReason, cx: &mut Ctx<'_, Notice>) {
    cx.notify(Notice::Failed { owner, reason });
}

/// Releases one hold of `owner`, deleting the node (guaranteed) on the last one. Returns true
/// while holds remain, and tells the owner `Released` with the holds that remain (the
/// mutexes).
pub fn release_hold(owner: Owner, hold: &mut Hold, cx: &mut Ctx<'_, Notice>) -> bool {
    hold.count -= 1;
    if hold.count == 0 {
        cx.delete_guaranteed(hold.node.clone());
    }
    cx.notify(Notice::Released {
        owner,
        remaining: hold.count,
        mode: Mode::Exclusive,
    });
    hold.count > 0
}

/// A recipe built on one internal [`Mutex`] (as Curator's semaphore and leader selector hold
/// an InterProcessMutex): what the mutex says is for the recipe to act on, never for the user.
/// The semaphore's lock and the leader selector.
pub trait OverMutex {
    /// The internal mutex.
    fn mutex(&mut self) -> &mut Mutex;

    /// Acts on one notice of the internal mutex.
    fn on_lock_notice(&mut self, notice: Notice, cx: &mut Ctx<'_, Notice>);

    /// Hands `input` to the internal mutex, then acts on the notices it gave, in order.
    fn to_lock(&mut self, input: Input<Call>, cx: &mut Ctx<'_, Notice>) {
        for notice in cx.run_inner(self.mutex(), input) {
            self.on_lock_notice(notice, cx);
        }
    }
}

/// True when `op` is a create that its owner gave up on (one of `abandoned`): its reply is
/// then dealt with here, the node it created (if any) getting a guaranteed delete. A recipe
/// puts the create's op in `abandoned` when its owner gives up while the create is pending
/// (a timeout, a failure), and asks this first of every reply.
pub fn answer_abandoned(
    abandoned: &mut BTreeSet<OpId>,
    op: OpId,
    result: &OpResult,
    cx: &mut Ctx<'_, Notice>,
) -> bool {
    if !abandoned.remove(&op) {
        return false;
    }
    if let Ok(OpOk::Created { path, .. }) = result {
        cx.delete_guaranteed(path.clone());
    }
    true
}

/// The owner among `owners` whose acquisition waits with the timeout `timer`; `timeout` reads
/// an acquisition's (a grant cancels and clears it, so a holder has none). A recipe asks it
/// of every timer that fires (the mutex, the semaphore, the multi-lock).
pub fn timed_out<A>(
    owners: &BTreeMap<Owner, A>,
    timer: TimerId,
    timeout: impl Fn(&A) -> Option<TimerId>,
) -> Option<Owner> {
    owners
        .iter()
        .find(|(_, acquisition)| timeout(acquisition) == Some(timer))
        .map(|(owner, _)| *owner)
}

/// Cancels `timeout`'s timer, if there is one (a wait answered or given up).
pub fn cancel_timeout(timeout: Option<TimerId>, cx: &mut Ctx<'_, Notice>) {
    if let Some(timer) = timeout {
        cx.cancel_timer(timer);
    }
}

/// Lists the children of `path`, leaving a child watch when `watch` (the mutex and the
/// semaphore list without, waiting on a data watch; the latch lists with one). The reply is
/// `Children`, names in the server's order: [`place`] orders them.
pub fn list(path: &Path, watch: bool, cx: &mut Ctx<'_, Notice>) -> OpId {
    cx.submit(Request::GetChildren {
        path: path.clone(),
        watch,
    })
}

/// Where a node stands in its queue (the lock's or the election's): "which node do I wait
/// for", as [`place`] and [`Queue::place`](super::queue::Queue::place) answer it.
#[derive(Debug, PartialEq, Eq)]
pub enum Place<'a> {
    /// The node is not listed.
    Missing,
    /// Nothing ahead of the node blocks it (for a lock or an election: it is first): it holds
    /// (or leads).
    First,
    /// The node waits behind the node of this name.
    Behind(&'a str),
}

/// Where `node` stands among the nodes of `names` whose name contains `kind` (`lock-`,
/// `latch-`), in queue order: by the sequence suffix, ignoring the protection prefix
/// (Curator's `StandardLockInternalsDriver` sorting): first, behind its predecessor, or not
/// listed. The mutex (through [`Queue`](super::queue::Queue)) and the latch.
pub fn place<'a>(names: &'a [String], kind: &str, node: &str) -> Place<'a> {
    place_by(&queue(names, kind), node, |ahead| ahead.last().copied())
}

/// Where `node` stands in `queue` (in queue order) when it waits for the node that `blocker`
/// picks among the nodes ahead of it ("who do I wait for"); `First` when it picks none. The
/// read-write lock's readers pick the nearest writer ahead.
pub fn place_by<'a>(
    queue: &[&'a String],
    node: &str,
    blocker: impl FnOnce(&[&'a String]) -> Option<&'a String>,
) -> Place<'a> {
    match queue.iter().position(|name| name.as_str() == node) {
        None => Place::Missing,
        Some(index) => blocker(&queue[..index]).map_or(Place::First, |name| Place::Behind(name)),
    }
}

/// The nodes of `names` whose name contains `kind`, in queue order: by the sequence suffix,
/// ignoring the protection prefix.
pub fn queue<'a>(names: &'a [String], kind: &str) -> Vec<&'a String> {
    queue_of(names, |name| name.contains(kind))
}

/// The nodes of `names` that `is_node` accepts, in queue order: by the sequence suffix,
/// ignoring the protection prefix.
pub fn queue_of(names: &[String], is_node: impl Fn(&str) -> bool) -> Vec<&String> {
    let mut queue: Vec<&String> = names.iter().filter(|n| is_node(n)).collect();
    // The key once per node, not twice per comparison (sorting is a recipe's hottest step).
    queue.sort_by_cached_key(|name| (sequence_suffix(name), *name));
    queue
}

/// Answers a call the recipe does not serve: `Failed` with [`FailReason::Unsupported`] (the
/// default of [`Lock::other_call`](super::Lock::other_call)).
pub fn refuse(call: Call, cx: &mut Ctx<'_, Notice>) {
    failed(call.owner(), FailReason::Unsupported, cx);
}
