//! `LeaderLatch`: Curator's LeaderLatch, an election whose leader keeps leading until it
//! closes its latch (or loses its connection).
//!
//! **What Curator does** (`recipes/leader/LeaderLatch.java`, 5.7+):
//! - `start` (once the connection is up) runs `reset`: the old node, if any, gets a
//!   guaranteed delete, and a protected ephemeral-sequential `<path>/_c_<id>-latch-NNNNNNNNNN`
//!   is created (parent containers as needed); then it lists `<path>`, sorted by the sequence
//!   suffix after `latch-`. Its own node missing from the listing → `reset`. First → a
//!   `getData` of its own node: leader (`isLeader`) only if the node's ephemeral owner is the
//!   *current* session, otherwise `reset` (CURATOR-696: a node left by an older session must
//!   not make a leader). Not first → not leader, and a `getData` watch on the node just ahead;
//!   a `NodeDeleted` event lists again; a `NoNode` answer to that `getData` lists again at
//!   once. A listing that finds the latch path gone → `reset` (CURATOR-724).
//! - Connection states, standard error policy (the default): `SUSPENDED` drops leadership at once
//!   (`notLeader` if it led); `RECONNECTED` lists again with the same node, so leadership
//!   comes back only through that check (since CURATOR-644, 5.4; before, it ran `reset`,
//!   which sent a leader that had merely reconnected to the back of the queue, and could
//!   livelock); `LOST` drops leadership and keeps the node (the reconnect check lists with
//!   it on the new session, and the ownership check resets it once it is first). We follow 5.4+. Under the session-based policy
//!   `SUSPENDED` changes nothing: a leader leads on until `LOST`.
//! - `close(mode)`: state CLOSED, the node gets a guaranteed delete, watchers are removed;
//!   `NOTIFY_LEADER` tells a leader `notLeader`, `SILENT` does not. `hasLeadership` is false
//!   from then on; `await` returns false (or throws `EOFException` without a timeout).
//!   `start` twice, and `close` when not started or closed already, throw
//!   `IllegalStateException`.
//!
//! **What we do**: the same, with these differences (and why):
//! - The ownership check reads the node's ephemeral owner from the create's reply (the node
//!   name is unique: it carries the protection id), instead of a `getData` round trip: the
//!   listing says the node is first, the create said whose it is, and leadership is taken
//!   only if that is the current session; otherwise the latch resets.
//! - Any watch event on the node ahead lists again (Curator reacts to `NodeDeleted` only; a
//!   data change would consume its watch and leave it waiting).
//! - The calls are per owner: each owner is its own participant with its own node (like two
//!   `LeaderLatch` instances on one client). `Start` twice answers `Failed { AlreadyStarted }`
//!   and `Close` of an owner that has not started answers `Failed { NotStarted }`. After
//!   `Closed`, the owner's latch is gone: a later `Start` is a new latch (a Curator user
//!   constructs a new `LeaderLatch`), which lets workloads run election cycles.
//! - The close mode is given per `Close` call (`notify`); Curator's constructor default plus
//!   `close(CloseMode)` amount to the same. Close answers pending `Await`s with
//!   `Awaited { leader: false }`, then says `Closed`. Watches left by a closed latch are not
//!   removed (Curator's `removeWatchers`): their events find no latch and are ignored.
//!
//! **Calls and notices**: `Start`, `Close { notify }` (→ `NotLeader` first if it led and
//! `notify`, then `Closed`), `Await { timeout }` (→ `Awaited { leader }`: at once when it
//! leads or has not started; otherwise when it becomes leader (true), or at the timeout or
//! close (false)), `HasLeadership` (→ `Leadership { leader }`). The listener notices are
//! `IsLeader { token }` and `NotLeader`, each sent only when leadership changes. Other calls
//! → `Failed { Unsupported }`. No `Suspended`/`Reconnected`/`Lost` notices: an election says
//! `NotLeader` instead.
//!
//! **The token** is the latch node's czxid. Successive leaders' tokens increase: a node is
//! first only once every node with a lower sequence number is gone, and sequence numbers and
//! czxids are handed out by the same creates under the one latch path, so they order the
//! nodes alike. A node M that led before node N was created before N: had M been created
//! after N, it would have had N ahead of it while it led. So this holds also when a node made
//! long ago becomes first (a participant that waited a long time, or one whose node outlived
//! a partition): its czxid is older than those of the nodes behind it, but newer than every
//! earlier leader's. After a reaped latch path is created again, sequence numbers restart
//! but czxids keep growing, and no older node is left (a container is reaped only when it is
//! empty). A leader that regains leadership after `Suspended` keeps its node and its token
//! (equal, not lower: the fence accepts it). The ownership check guards the belief, not the
//! token: a client counting a node of a session it gave up would lead through a node the
//! server may delete at any moment (expiring that session) without the client ever hearing
//! of it, while the next node's owner leads beside it (CURATOR-696); the fence would still
//! reject its stale token.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::kit::{
    Place, answer_abandoned, cancel_timeout, create_sequential, failed, list, place, refuse,
};
use super::{Call, FailReason, Notice};
use crate::fencing::Token;
use crate::ids::{OpId, Owner, TimerId};
use crate::recipe::{Ctx, Input, Recipe, SessionEvent};
use crate::relabel::Relabel;
use crate::zk::{OpOk, OpResult, Path, Request, SessionId, WatchedEvent, ZkError};

/// The latch-node name (Curator's `latch-`).
pub const LATCH_NAME: &str = "latch-";

/// The LeaderLatch recipe for one latch path; one participant per owner.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct LeaderLatch {
    path: Path,
    latches: BTreeMap<Owner, Latch>,
    /// Creates of latches that closed meanwhile: the node they produce gets deleted.
    abandoned: BTreeSet<OpId>,
}

/// One owner's participation.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
struct Latch {
    stage: Stage,
    leader: bool,
    /// Pending `Await`s, each with its timeout's timer (none: until leader or closed).
    waiters: Vec<Option<TimerId>>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
enum Stage {
    /// Creating our node (`reset`).
    Creating(OpId),
    /// Our node exists.
    Joined { node: Node, step: Step },
}

/// Our latch node.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
struct Node {
    path: Path,
    token: Token,
    /// The session that owns it (from the create's reply).
    session: Option<SessionId>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
enum Step {
    /// Listing the latch path.
    Listing(OpId),
    /// Watching the node ahead; the op is the get_data that sets the watch, until it replies.
    Watching { predecessor: Path, op: Option<OpId> },
    /// First in line with nothing in flight: leading, unless `Suspended` dropped it (the
    /// `Reconnected` check gives it back).
    First,
}

impl LeaderLatch {
    /// A latch on the election path `path`.
    pub fn new(path: Path) -> LeaderLatch {
        LeaderLatch {
            path,
            latches: BTreeMap::new(),
            abandoned: BTreeSet::new(),
        }
    }

    /// The election path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The token of `owner`'s leadership, while it leads.
    pub fn leading(&self, owner: Owner) -> Option<Token> {
        let latch = self.latches.get(&owner).filter(|latch| latch.leader)?;
        match &latch.stage {
            Stage::Joined { node, .. } => Some(node.token),
            Stage::Creating(_) => None,
        }
    }

    fn start(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        if self.latches.contains_key(&owner) {
            return failed(owner, FailReason::AlreadyStarted, cx);
        }
        let latch = Latch {
            stage: Stage::Creating(create_sequential(&self.path, LATCH_NAME, cx)),
            leader: false,
            waiters: Vec::new(),
        };
        self.latches.insert(owner, latch);
    }

    fn close(&mut self, owner: Owner, notify: bool, cx: &mut Ctx<'_, Notice>) {
        let Some(latch) = self.latches.remove(&owner) else {
            return failed(owner, FailReason::NotStarted, cx);
        };
        match latch.stage {
            Stage::Creating(op) => {
                self.abandoned.insert(op);
            }
            Stage::Joined { node, .. } => cx.delete_guaranteed(node.path),
        }
        if latch.leader && notify {
            cx.notify(Notice::NotLeader { owner });
        }
        for timer in latch.waiters {
            cancel_timeout(timer, cx);
            cx.notify(Notice::Awaited {
                owner,
                leader: false,
            });
        }
        cx.notify(Notice::Closed { owner });
    }

    fn wait(&mut self, owner: Owner, timeout: Option<Duration>, cx: &mut Ctx<'_, Notice>) {
        match self.latches.get_mut(&owner) {
            Some(latch) if !latch.leader => {
                let timer = timeout.map(|after| cx.set_timer(after));
                latch.waiters.push(timer);
            }
            Some(_) => cx.notify(Notice::Awaited {
                owner,
                leader: true,
            }),
            None => cx.notify(Notice::Awaited {
                owner,
                leader: false,
            }),
        }
    }

    fn has_leadership(&self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        let leader = self.latches.get(&owner).is_some_and(|latch| latch.leader);
        cx.notify(Notice::Leadership { owner, leader });
    }

    fn on_reply(&mut self, op: OpId, result: OpResult, cx: &mut Ctx<'_, Notice>) {
        if answer_abandoned(&mut self.abandoned, op, &result, cx) {
            return;
        }
        let Some((&owner, latch)) = self.latches.iter_mut().find(|(_, l)| l.stage.waits_for(op))
        else {
            return;
        };
        let path = &self.path;
        match (&mut latch.stage, result) {
            (Stage::Creating(_), Ok(OpOk::Created { path: node, stat })) => {
                let node = Node {
                    path: node,
                    token: stat.czxid.into(),
                    session: stat.ephemeral_owner,
                };
                let step = Step::Listing(list(path, false, cx));
                latch.stage = Stage::Joined { node, step };
            }
            // The create failed (the latch path vanished again after the create made it, or
            // retries ran out): create again.
            (Stage::Creating(pending), Err(_)) => {
                *pending = create_sequential(path, LATCH_NAME, cx);
            }
            (
                Stage::Joined {
                    step: Step::Listing(_),
                    ..
                },
                Ok(OpOk::Children { names, .. }),
            ) => latch.check(owner, path, &names, cx),
            // A listing of the session that was lost: the Reconnected check lists again.
            (
                Stage::Joined {
                    step: Step::Listing(_),
                    ..
                },
                Err(ZkError::SessionExpired),
            ) => latch.relist(path, cx),
            // The latch path is gone, and our node with it (CURATOR-724).
            (
                Stage::Joined {
                    step: Step::Listing(_),
                    ..
                },
                Err(_),
            ) => latch.reset(owner, path, false, cx),
            (
                Stage::Joined {
                    step: Step::Watching { op, .. },
                    ..
                },
                Ok(_),
            ) => *op = None,
            // The node ahead went before the watch was set: look again.
            (Stage::Joined { step, .. }, Err(_)) => *step = Step::Listing(list(path, false, cx)),
            (_, Ok(_)) => {}
        }
    }

    fn on_watch(&mut self, event: &WatchedEvent, cx: &mut Ctx<'_, Notice>) {
        for latch in self.latches.values_mut() {
            if let Stage::Joined { step, .. } = &mut latch.stage
                && matches!(step, Step::Watching { predecessor, .. } if *predecessor == event.path)
            {
                *step = Step::Listing(list(&self.path, false, cx));
            }
        }
    }

    fn on_timer(&mut self, timer: TimerId, cx: &mut Ctx<'_, Notice>) {
        for (&owner, latch) in &mut self.latches {
            if let Some(index) = latch.waiters.iter().position(|t| *t == Some(timer)) {
                latch.waiters.remove(index);
                return cx.notify(Notice::Awaited {
                    owner,
                    leader: false,
                });
            }
        }
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Ctx<'_, Notice>) {
        for (&owner, latch) in &mut self.latches {
            match event {
                SessionEvent::Suspended if cx.error_policy().suspended_ends_holds() => {
                    latch.unlead(owner, cx)
                }
                SessionEvent::Suspended => {}
                // Curator's handleStateChange: LOST only drops leadership; the node stays, and
                // the Reconnected check lists again with it on the new session (a create under
                // way carries on there: protection mode sorts it out).
                SessionEvent::Lost { .. } => latch.unlead(owner, cx),
                SessionEvent::Reconnected { .. } => {
                    if let Stage::Joined { step, .. } = &latch.stage
                        && !matches!(step, Step::Listing(_))
                    {
                        latch.relist(&self.path, cx);
                    }
                }
            }
        }
    }
}

impl Latch {
    /// Acts on a listing of the latch path.
    fn check(&mut self, owner: Owner, path: &Path, names: &[String], cx: &mut Ctx<'_, Notice>) {
        let Stage::Joined { node, step } = &mut self.stage else {
            return;
        };
        match place(names, LATCH_NAME, node.path.name()) {
            Place::Missing => self.reset(owner, path, false, cx),
            Place::First if node.session.is_some() && node.session == cx.session() => {
                *step = Step::First;
                let token = node.token;
                self.lead(owner, token, cx);
            }
            // First, but with a node of an older session: it must not count.
            Place::First => self.reset(owner, path, true, cx),
            Place::Behind(name) => {
                let predecessor = path.child(name).expect("a listed child name is valid");
                let op = cx.submit(Request::GetData {
                    path: predecessor.clone(),
                    watch: true,
                });
                *step = Step::Watching {
                    predecessor,
                    op: Some(op),
                };
                self.unlead(owner, cx);
            }
        }
    }

    /// Lists the latch path again (Curator's `getChildren`), keeping our node.
    fn relist(&mut self, path: &Path, cx: &mut Ctx<'_, Notice>) {
        if let Stage::Joined { step, .. } = &mut self.stage {
            *step = Step::Listing(list(path, false, cx));
        }
    }

    /// Curator's `reset`: not leader; the node (if `delete`) gets a guaranteed delete and a
    /// fresh one is created.
    fn reset(&mut self, owner: Owner, path: &Path, delete: bool, cx: &mut Ctx<'_, Notice>) {
        self.unlead(owner, cx);
        if let Stage::Joined { node, .. } = &self.stage
            && delete
        {
            cx.delete_guaranteed(node.path.clone());
        }
        self.stage = Stage::Creating(create_sequential(path, LATCH_NAME, cx));
    }

    /// Curator's `setLeadership(false)`: a leader hears `NotLeader`.
    fn unlead(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        if self.leader {
            self.leader = false;
            cx.notify(Notice::NotLeader { owner });
        }
    }

    /// Curator's `setLeadership(true)`: a new leader hears `IsLeader` and its waiters are
    /// answered.
    fn lead(&mut self, owner: Owner, token: Token, cx: &mut Ctx<'_, Notice>) {
        if self.leader {
            return;
        }
        self.leader = true;
        cx.notify(Notice::IsLeader { owner, token });
        for timer in self.waiters.drain(..) {
            cancel_timeout(timer, cx);
            cx.notify(Notice::Awaited {
                owner,
                leader: true,
            });
        }
    }
}

impl Stage {
    fn waits_for(&self, op: OpId) -> bool {
        match self {
            Stage::Creating(pending)
            | Stage::Joined {
                step: Step::Listing(pending),
                ..
            } => *pending == op,
            Stage::Joined {
                step: Step::Watching { op: pending, .. },
                ..
            } => *pending == Some(op),
            Stage::Joined {
                step: Step::First, ..
            } => false,
        }
    }
}

impl Recipe for LeaderLatch {
    type Call = Call;
    type Notice = Notice;

    fn handle(&mut self, input: Input<Call>, cx: &mut Ctx<'_, Notice>) {
        match input {
            Input::Call(Call::Start { owner }) => self.start(owner, cx),
            Input::Call(Call::Close { owner, notify }) => self.close(owner, notify, cx),
            Input::Call(Call::Await { owner, timeout }) => self.wait(owner, timeout, cx),
            Input::Call(Call::HasLeadership { owner }) => self.has_leadership(owner, cx),
            Input::Call(other) => refuse(other, cx),
            Input::Reply { op, result } => self.on_reply(op, result, cx),
            Input::Watch(event) => self.on_watch(&event, cx),
            Input::Session(event) => self.on_session(event, cx),
            Input::Timer(timer) => self.on_timer(timer, cx),
        }
    }
}

#[cfg(test)]
mod tests;
