//! A fork of splitbrain's built-in `Mutex` (Curator's InterProcessMutex), as a user writes
//! one: the built-in's module copied and built of the public kit
//! (`splitbrain::coordination::prelude`), with one line changed to put a known bug back: its holder
//! ignores connection-state changes, as a home-grown lock with no connection listener does.
//! It hears neither SUSPENDED nor LOST and keeps holding through a partition that expires its
//! session, while the next waiter holds (see `tests/hunt.rs`).
//!
//! What the fork leaves out of the built-in: the queue disciplines of the read-write lock
//! (this is the exclusive queue only), the built-in's known-bad variants, and the accessors
//! other built-ins use.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use splitbrain::coordination::prelude::*;
use splitbrain::recipe_table::recipes::{RecipeDef, curator_lock_loop};

/// The fork's row: a lock over Curator's lock loop, revocable as the built-in is.
pub static FORKED_MUTEX: RecipeDef<ForkedMutex> = RecipeDef {
    about: "the built-in mutex forked, its holder deaf to connection-state changes",
    revocable: true,
    expectation: curator_lock_loop,
    ..RecipeDef::lock("forked-mutex", |path, _settings| ForkedMutex::new(path))
};

/// How the fork's nodes queue: the built-in mutex's own way.
const QUEUE: Queue = Queue::Exclusive;

/// The InterProcessMutex recipe for one lock path, forked.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
#[relabel(crate = "splitbrain::coordination")]
pub struct ForkedMutex {
    path: Path,
    owners: BTreeMap<Owner, Acquisition<Stage>>,
    /// Protected creates of owners that gave up: the node they produce gets deleted.
    abandoned: BTreeSet<OpId>,
    /// Who is revocable, and the revocation attempts under way.
    revocation: Revocation,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
#[relabel(crate = "splitbrain::coordination")]
enum Stage {
    /// Creating our node.
    Creating(OpId),
    /// Our node exists; we are not first (yet).
    Waiting {
        node: Path,
        token: Token,
        step: Wait,
    },
    /// We hold the lock.
    Holding(Hold),
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
#[relabel(crate = "splitbrain::coordination")]
enum Wait {
    /// Listing the lock's children.
    Listing(OpId),
    /// Watching the predecessor; the op is the get_data that sets the watch, until it replies.
    Watching { predecessor: Path, op: Option<OpId> },
}

impl ForkedMutex {
    /// A mutex on the lock path `path`.
    pub fn new(path: Path) -> ForkedMutex {
        ForkedMutex {
            path,
            owners: BTreeMap::new(),
            abandoned: BTreeSet::new(),
            revocation: Revocation::default(),
        }
    }
}

impl Lock for ForkedMutex {
    fn acquire(&mut self, owner: Owner, timeout: Option<Duration>, _: Mode, cx: &mut Cx<'_>) {
        match self.owners.get_mut(&owner).map(|a| &mut a.stage) {
            Some(Stage::Holding(hold)) => regrant(owner, hold, cx),
            Some(_) => failed(owner, FailReason::AlreadyAcquiring, cx),
            None => {
                let stage = Stage::Creating(create_sequential(&self.path, QUEUE.name(), cx));
                let timeout = timeout.map(|after| cx.set_timer(after));
                (self.owners).insert(owner, Acquisition::new(stage, timeout));
            }
        }
    }

    fn release(&mut self, owner: Owner, _: Mode, cx: &mut Cx<'_>) {
        if let Some(Stage::Holding(Hold { count: 1, .. })) =
            self.owners.get(&owner).map(|a| &a.stage)
        {
            self.unwatch(owner, cx);
        }
        let Some(Acquisition {
            stage: Stage::Holding(hold),
            ..
        }) = self.owners.get_mut(&owner)
        else {
            return failed(owner, FailReason::NotHeld, cx);
        };
        if !release_hold(owner, hold, cx) {
            self.owners.remove(&owner);
            self.revocation.released(owner);
        }
    }

    fn other_call(&mut self, call: Call, cx: &mut Cx<'_>) {
        match call {
            Call::MakeRevocable { owner } => {
                let node = node_of(&self.owners, owner);
                self.revocation.make_revocable(owner, node.as_ref(), cx);
            }
            Call::AttemptRevoke { owner } => self.revocation.attempt(owner, &self.path, cx),
            other => refuse(other, cx),
        }
    }

    fn react(&mut self, event: Event, cx: &mut Cx<'_>) {
        match event {
            Input::Reply { op, result } => self.on_reply(op, result, cx),
            Input::Watch(event) => self.on_watch(&event, cx),
            Input::Session(event) => self.on_session(event, cx),
            Input::Timer(timer) => self.on_timer(timer, cx),
        }
    }
}

impl ForkedMutex {
    fn on_reply(&mut self, op: OpId, result: OpResult, cx: &mut Ctx<'_, Notice>) {
        if answer_abandoned(&mut self.abandoned, op, &result, cx) {
            return;
        }
        if self.revocation.waits_for(op) {
            let node_of = |owner| node_of(&self.owners, owner);
            return self
                .revocation
                .on_reply(op, result, (&self.path, QUEUE.name()), node_of, cx);
        }
        let Some((&owner, acquisition)) =
            self.owners.iter_mut().find(|(_, a)| a.stage.waits_for(op))
        else {
            return;
        };
        match (&mut acquisition.stage, result) {
            (Stage::Creating(_), Ok(OpOk::Created { path, stat })) => {
                self.revocation.node_created(owner, &path, cx);
                let token = stat.czxid.into();
                let step = Wait::Listing(list(&self.path, false, cx));
                acquisition.stage = Stage::Waiting {
                    node: path,
                    token,
                    step,
                };
            }
            (Stage::Creating(pending), Err(ZkError::NoNode)) => {
                *pending = create_sequential(&self.path, QUEUE.name(), cx);
            }
            (Stage::Waiting { node, step, .. }, Ok(OpOk::Children { names, .. })) => {
                match QUEUE.place(&names, node.name()) {
                    Place::Missing if cx.on_lost() == OnLost::Release => {
                        self.fail(owner, FailReason::NodeVanished, cx)
                    }
                    // Our node is gone (its session expired on the server).
                    Place::Missing => self.node_gone(owner, cx),
                    Place::First => grant(owner, acquisition, cx),
                    Place::Behind(name) => {
                        let predecessor =
                            self.path.child(name).expect("a listed child name is valid");
                        let op = cx.submit(Request::GetData {
                            path: predecessor.clone(),
                            watch: true,
                        });
                        *step = Wait::Watching {
                            predecessor,
                            op: Some(op),
                        };
                    }
                }
            }
            (
                Stage::Waiting {
                    step: Wait::Watching { op, .. },
                    ..
                },
                Ok(_),
            ) => *op = None,
            // The predecessor went before the watch was set: look again.
            (
                Stage::Waiting {
                    step: step @ Wait::Watching { .. },
                    ..
                },
                Err(ZkError::NoNode),
            ) => {
                *step = Wait::Listing(list(&self.path, false, cx));
            }
            // The lock's parent is gone (a container swept once the server expired the
            // session that held our node): as for our node missing from the listing.
            (
                Stage::Waiting {
                    step: Wait::Listing(_),
                    ..
                },
                Err(ZkError::NoNode),
            ) if cx.on_lost() != OnLost::Release => self.node_gone(owner, cx),
            (stage, Err(error)) => {
                // A failed create has answered: no node will come of it to delete.
                let answered = matches!(stage, Stage::Creating(_)).then_some(op);
                self.fail(owner, FailReason::Zk(error), cx);
                if let Some(op) = answered {
                    self.abandoned.remove(&op);
                }
            }
            (_, Ok(_)) => {}
        }
    }

    fn on_watch(&mut self, event: &WatchedEvent, cx: &mut Ctx<'_, Notice>) {
        let node_of = |owner| node_of(&self.owners, owner);
        self.revocation.on_watch(event, node_of, cx);
        for acquisition in self.owners.values_mut() {
            if let Stage::Waiting { step, .. } = &mut acquisition.stage
                && matches!(step, Wait::Watching { predecessor, .. } if *predecessor == event.path)
            {
                *step = Wait::Listing(list(&self.path, false, cx));
            }
        }
    }

    fn on_timer(&mut self, timer: TimerId, cx: &mut Ctx<'_, Notice>) {
        if let Some(owner) = timed_out(&self.owners, timer, |a| a.timeout) {
            self.abandon(owner, cx);
            cx.notify(Notice::TimedOut { owner });
        }
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Ctx<'_, Notice>) {
        let owners: Vec<Owner> = self.owners.keys().copied().collect();
        for owner in owners {
            let acquisition = self.owners.get_mut(&owner).expect("listed above");
            match &mut acquisition.stage {
                // THE BUG, the one line changed: the built-in tells the holder and ends its
                // hold as the error policy says (`update_hold`); this one does nothing.
                Stage::Holding(_) => {}
                // Under `OnLost::Release` a waiter gives up at LOST, its node deleted at once.
                Stage::Waiting { .. }
                    if matches!(event, SessionEvent::Lost { .. })
                        && cx.on_lost() == OnLost::Release =>
                {
                    self.fail(owner, FailReason::SessionLost, cx);
                }
                // Curator's wait loop ignores connection state, but waits on the predecessor's
                // watcher, which ZooKeeper's client hands every connection-state change too
                // (`ZKWatchManager.materialize`): a waiter in its `wait()` lists again at
                // SUSPENDED, RECONNECTED and LOST (its request blocking until connected, or
                // failing as the retry policy says). At LOST a request in flight is retried on
                // the new session as well: the waiter keeps its node and lists again there.
                Stage::Waiting { step, .. }
                    if matches!(event, SessionEvent::Lost { .. }) || step.waits() =>
                {
                    *step = Wait::Listing(list(&self.path, false, cx));
                }
                // A create carries on in the new session: protection mode sorts it out.
                _ => {}
            }
        }
    }

    /// `owner`'s node is gone: Curator's `attemptLock` catches the `NoNode` and starts over
    /// with a new node while its retry policy allows (its sleep before each start-over is
    /// not taken: the model fires timers at any point anyway), and rethrows it after, its
    /// acquire failing.
    fn node_gone(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        let acquisition = self.owners.get_mut(&owner).expect("a waiting owner");
        if cx.retry_policy().allows(acquisition.start_overs) {
            acquisition.start_overs += 1;
            acquisition.stage = Stage::Creating(create_sequential(&self.path, QUEUE.name(), cx));
        } else {
            self.fail(owner, FailReason::Zk(ZkError::NoNode), cx);
        }
    }

    /// Ends `owner`'s acquisition with a failure notice.
    fn fail(&mut self, owner: Owner, reason: FailReason, cx: &mut Ctx<'_, Notice>) {
        self.abandon(owner, cx);
        cx.notify(Notice::Failed { owner, reason });
    }

    /// Drops `owner`'s acquisition or hold without a notice, making sure its node goes.
    fn abandon(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        self.unwatch(owner, cx);
        let Some(acquisition) = self.owners.remove(&owner) else {
            return;
        };
        cancel_timeout(acquisition.timeout, cx);
        match acquisition.stage {
            Stage::Creating(op) => {
                self.abandoned.insert(op);
            }
            Stage::Waiting { node, .. } | Stage::Holding(Hold { node, .. }) => {
                cx.delete_guaranteed(node)
            }
        }
    }

    /// `owner` is about to delete its own node: its revocation watch on it goes first, so that
    /// the delete does not wake it (Curator's release removes its watchers before deleting) —
    /// unless another owner of this instance waits on that node, since this session's watch on
    /// a path is one and the same.
    fn unwatch(&self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        let Some(node) = node_of(&self.owners, owner) else {
            return;
        };
        let watched = self.owners.values().any(|a| {
            matches!(&a.stage, Stage::Waiting {
                step: Wait::Watching { predecessor, .. },
                ..
            } if *predecessor == node)
        });
        if !watched {
            self.revocation.unwatch(owner, &node, cx);
        }
    }
}

impl Wait {
    /// In Curator's `wait()`: the watch on the predecessor is set and nothing is in flight.
    fn waits(&self) -> bool {
        matches!(self, Wait::Watching { op: None, .. })
    }
}

impl Stage {
    /// The acquisition's lock node, once created.
    fn node(&self) -> Option<&Path> {
        match self {
            Stage::Creating(_) => None,
            Stage::Waiting { node, .. } | Stage::Holding(Hold { node, .. }) => Some(node),
        }
    }

    fn waits_for(&self, op: OpId) -> bool {
        match self {
            Stage::Creating(pending)
            | Stage::Waiting {
                step: Wait::Listing(pending),
                ..
            } => *pending == op,
            Stage::Waiting {
                step: Wait::Watching { op: pending, .. },
                ..
            } => *pending == Some(op),
            Stage::Holding(_) => false,
        }
    }
}

/// `owner`, waiting, holds now: its timeout is cancelled and it hears `Acquired`.
fn grant(owner: Owner, acquisition: &mut Acquisition<Stage>, cx: &mut Ctx<'_, Notice>) {
    let Stage::Waiting { node, token, .. } = &acquisition.stage else {
        return;
    };
    let token = *token;
    let hold = Hold {
        node: node.clone(),
        token,
        count: 1,
        standing: Standing::Held,
    };
    cancel_timeout(acquisition.timeout.take(), cx);
    acquisition.stage = Stage::Holding(hold);
    cx.notify(Notice::Acquired {
        owner,
        token,
        mode: Mode::Exclusive,
    });
}

/// `owner`'s lock node, once created (waiting or holding).
fn node_of(owners: &BTreeMap<Owner, Acquisition<Stage>>, owner: Owner) -> Option<Path> {
    owners.get(&owner)?.stage.node().cloned()
}
