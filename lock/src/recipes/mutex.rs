//! `Mutex`: Curator's InterProcessMutex.
//!
//! Each acquisition creates a protected ephemeral-sequential node
//! `<path>/_c_<protection-id>-lock-NNNNNNNNNN`. Nodes are ordered by the sequence suffix
//! after `lock-` (the protection prefix is ignored); the lowest holds. Every other waiter
//! leaves a one-shot get_data watch on its immediate predecessor only, so a release wakes at
//! most one waiter, and re-lists when woken (or at once, if the predecessor vanished before
//! the watch was set). Reentrant per owner; a second owner on one instance queues with its
//! own node. The fencing token is the node's czxid.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    Call, FailReason, Hold, LOCK_NAME, Mode, Notice, Place, create_parents, list, place, refuse,
    release_hold, update_hold,
};
use crate::fencing::Token;
use crate::ids::{OpId, Owner, TimerId};
use crate::recipe::{Ctx, Input, Recipe, SessionEvent};
use crate::zk::{CreateMode, OpOk, OpResult, Path, Request, WatchedEvent, ZkError};

/// The InterProcessMutex recipe for one lock path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Mutex {
    path: Path,
    owners: BTreeMap<Owner, Acquisition>,
    /// Protected creates of owners that gave up: the node they produce gets deleted.
    abandoned: BTreeSet<OpId>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Acquisition {
    stage: Stage,
    timeout: Option<TimerId>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
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

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Wait {
    /// Listing the lock's children.
    Listing(OpId),
    /// Watching the predecessor; the op is the get_data that sets the watch, until it replies.
    Watching { predecessor: Path, op: Option<OpId> },
}

impl Mutex {
    /// A mutex on the lock path `path`.
    pub fn new(path: Path) -> Mutex {
        Mutex {
            path,
            owners: BTreeMap::new(),
            abandoned: BTreeSet::new(),
        }
    }

    /// The lock path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The token of `owner`'s current hold.
    pub fn holding(&self, owner: Owner) -> Option<Token> {
        match &self.owners.get(&owner)?.stage {
            Stage::Holding(hold) => Some(hold.token),
            _ => None,
        }
    }

    fn acquire(
        &mut self,
        owner: Owner,
        timeout: Option<std::time::Duration>,
        cx: &mut Ctx<'_, Notice>,
    ) {
        match self.owners.get_mut(&owner).map(|a| &mut a.stage) {
            Some(Stage::Holding(hold)) => {
                hold.count += 1;
                let token = hold.token;
                cx.notify(Notice::Acquired {
                    owner,
                    token,
                    mode: Mode::Exclusive,
                });
            }
            Some(_) => cx.notify(Notice::Failed {
                owner,
                reason: FailReason::AlreadyAcquiring,
            }),
            None => {
                let stage = Stage::Creating(create(&self.path, cx));
                let timeout = timeout.map(|after| cx.set_timer(after));
                self.owners.insert(owner, Acquisition { stage, timeout });
            }
        }
    }

    fn release(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        let Some(Acquisition {
            stage: Stage::Holding(hold),
            ..
        }) = self.owners.get_mut(&owner)
        else {
            return cx.notify(Notice::Failed {
                owner,
                reason: FailReason::NotHeld,
            });
        };
        if !release_hold(owner, hold, cx) {
            self.owners.remove(&owner);
        }
    }

    fn on_reply(&mut self, op: OpId, result: OpResult, cx: &mut Ctx<'_, Notice>) {
        if self.abandoned.remove(&op) {
            if let Ok(OpOk::Created { path, .. }) = result {
                cx.delete_guaranteed(path);
            }
            return;
        }
        let Some((&owner, acquisition)) =
            self.owners.iter_mut().find(|(_, a)| a.stage.waits_for(op))
        else {
            return;
        };
        match (&mut acquisition.stage, result) {
            (Stage::Creating(_), Ok(OpOk::Created { path, stat })) => {
                let token = stat.czxid.into();
                let step = Wait::Listing(list(&self.path, cx));
                acquisition.stage = Stage::Waiting {
                    node: path,
                    token,
                    step,
                };
            }
            (Stage::Creating(pending), Err(ZkError::NoNode)) => {
                create_parents(&self.path, cx);
                *pending = create(&self.path, cx);
            }
            (Stage::Waiting { node, token, step }, Ok(OpOk::Children { names })) => {
                match place(&names, LOCK_NAME, node.name()) {
                    Place::Missing => self.fail(owner, FailReason::NodeVanished, cx),
                    Place::First => {
                        let hold = Hold {
                            node: node.clone(),
                            token: *token,
                            count: 1,
                            suspended: false,
                        };
                        let token = *token;
                        if let Some(timer) = acquisition.timeout.take() {
                            cx.cancel_timer(timer);
                        }
                        acquisition.stage = Stage::Holding(hold);
                        cx.notify(Notice::Acquired {
                            owner,
                            token,
                            mode: Mode::Exclusive,
                        });
                    }
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
                *step = Wait::Listing(list(&self.path, cx));
            }
            (_, Err(error)) => self.fail(owner, FailReason::Zk(error), cx),
            (_, Ok(_)) => {}
        }
    }

    fn on_watch(&mut self, event: &WatchedEvent, cx: &mut Ctx<'_, Notice>) {
        for acquisition in self.owners.values_mut() {
            if let Stage::Waiting { step, .. } = &mut acquisition.stage
                && matches!(step, Wait::Watching { predecessor, .. } if *predecessor == event.path)
            {
                *step = Wait::Listing(list(&self.path, cx));
            }
        }
    }

    fn on_timer(&mut self, timer: TimerId, cx: &mut Ctx<'_, Notice>) {
        let Some(&owner) = self
            .owners
            .iter()
            .find(|(_, a)| a.timeout == Some(timer) && !matches!(a.stage, Stage::Holding(_)))
            .map(|(owner, _)| owner)
        else {
            return;
        };
        self.abandon(owner, cx);
        cx.notify(Notice::TimedOut { owner });
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Ctx<'_, Notice>) {
        let owners: Vec<Owner> = self.owners.keys().copied().collect();
        for owner in owners {
            let acquisition = self.owners.get_mut(&owner).expect("listed above");
            match &mut acquisition.stage {
                Stage::Holding(hold) => {
                    let held = update_hold(owner, hold, event, cx);
                    if !held {
                        self.owners.remove(&owner);
                    }
                }
                Stage::Waiting { .. } if matches!(event, SessionEvent::Lost { .. }) => {
                    self.fail(owner, FailReason::SessionLost, cx);
                }
                // A create carries on in the new session: protection mode sorts it out.
                _ => {}
            }
        }
    }

    /// Ends `owner`'s acquisition with a failure notice.
    fn fail(&mut self, owner: Owner, reason: FailReason, cx: &mut Ctx<'_, Notice>) {
        self.abandon(owner, cx);
        cx.notify(Notice::Failed { owner, reason });
    }

    /// Drops `owner`'s acquisition or hold without a notice, making sure its node goes.
    pub(crate) fn abandon(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        let Some(acquisition) = self.owners.remove(&owner) else {
            return;
        };
        if let Some(timer) = acquisition.timeout {
            cx.cancel_timer(timer);
        }
        match acquisition.stage {
            Stage::Creating(op) => {
                self.abandoned.insert(op);
            }
            Stage::Waiting { node, .. } | Stage::Holding(Hold { node, .. }) => {
                cx.delete_guaranteed(node)
            }
        }
    }
}

impl Stage {
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

impl Recipe for Mutex {
    type Call = Call;
    type Notice = Notice;

    fn handle(&mut self, input: Input<Call>, cx: &mut Ctx<'_, Notice>) {
        match input {
            Input::Call(Call::Acquire {
                owner,
                timeout,
                mode: Mode::Exclusive,
            }) => self.acquire(owner, timeout, cx),
            Input::Call(Call::Release {
                owner,
                mode: Mode::Exclusive,
            }) => self.release(owner, cx),
            Input::Call(other) => refuse(other, cx),
            Input::Reply { op, result } => self.on_reply(op, result, cx),
            Input::Watch(event) => self.on_watch(&event, cx),
            Input::Session(event) => self.on_session(event, cx),
            Input::Timer(timer) => self.on_timer(timer, cx),
        }
    }
}

/// Creates this acquisition's protected ephemeral-sequential node under the lock path.
fn create(path: &Path, cx: &mut Ctx<'_, Notice>) -> OpId {
    cx.create_protected(path, LOCK_NAME, Vec::new(), CreateMode::EphemeralSequential)
}

impl crate::relabel::Relabel for Mutex {
    fn relabel(&self, map: &crate::relabel::ClientMap) -> Self {
        let Mutex {
            path,
            owners,
            abandoned,
        } = self;
        let owners = owners
            .iter()
            .map(|(owner, Acquisition { stage, timeout })| {
                let stage = match stage {
                    Stage::Creating(_) => stage.clone(),
                    Stage::Waiting { node, token, step } => Stage::Waiting {
                        node: node.relabel(map),
                        token: *token,
                        step: match step {
                            Wait::Listing(_) => step.clone(),
                            Wait::Watching { predecessor, op } => Wait::Watching {
                                predecessor: predecessor.relabel(map),
                                op: *op,
                            },
                        },
                    },
                    Stage::Holding(hold) => Stage::Holding(hold.relabel(map)),
                };
                let timeout = *timeout;
                (*owner, Acquisition { stage, timeout })
            })
            .collect();
        Mutex {
            path: path.relabel(map),
            owners,
            abandoned: abandoned.clone(),
        }
    }
}
