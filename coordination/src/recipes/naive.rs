//! `NaiveHerdMutex`: a known-bad lock, kept to prove that the herd checkers catch herds.
//!
//! Every contender creates the one ephemeral node `<path>/lock`; whoever fails leaves an
//! exists watch on that same node and retries when it fires, so each release wakes every
//! waiting client (the herd effect). Owners on one instance queue locally and only the first
//! contends in ZooKeeper. Wasteful (herd-freedom does not hold), and not even safe across
//! session loss: a holder that gives up at LOST deletes `<path>/lock` by name on its new
//! session, and when the server has expired the old session first, the node it deletes is the
//! next holder's, so a third contender takes the lock beside that holder while both sessions
//! are alive (`live_session_exclusion`; `check naive-herd-mutex --clients 3`, 14 steps).

use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;

use super::kit::{
    Hold, Standing, answer_abandoned, cancel_timeout, create_parents, failed, regrant,
    release_hold, update_hold,
};
use super::{Cx, Event, FailReason, Lock, Mode, Notice};
use crate::ids::{OpId, Owner, TimerId};
use crate::recipe::{Ctx, Input, SessionEvent};
use crate::relabel::Relabel;
use crate::zk::{CreateMode, OpOk, OpResult, Path, Request, ZkError};

/// The naive "everyone watches /lock" herd lock.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct NaiveHerdMutex {
    path: Path,
    node: Path,
    /// Owners in arrival order; the first one contends (or holds).
    queue: VecDeque<Contender>,
    /// Creates of contenders that gave up: the node they produce gets deleted.
    abandoned: BTreeSet<OpId>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
struct Contender {
    owner: Owner,
    stage: Stage,
    timeout: Option<TimerId>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
enum Stage {
    /// Behind another owner of this instance.
    Queued,
    /// Trying to create the lock node.
    Creating(OpId),
    /// Checking the node (and leaving an exists watch on it).
    Checking(OpId),
    /// Waiting for the watch to fire.
    Waiting,
    /// Holding the lock.
    Holding(Hold),
}

impl NaiveHerdMutex {
    /// A herd lock whose node is `<path>/lock`.
    pub fn new(path: Path) -> NaiveHerdMutex {
        let node = path.child("lock").expect("'lock' is a valid name");
        NaiveHerdMutex {
            path,
            node,
            queue: VecDeque::new(),
            abandoned: BTreeSet::new(),
        }
    }

    /// Lets the first queued owner contend, if nobody of this instance is contending.
    fn start_head(&mut self, cx: &mut Ctx<'_, Notice>) {
        if let Some(head) = self.queue.front_mut()
            && head.stage == Stage::Queued
        {
            head.stage = Stage::Creating(create(&self.node, cx));
        }
    }

    fn on_reply(&mut self, op: OpId, result: OpResult, cx: &mut Ctx<'_, Notice>) {
        if answer_abandoned(&mut self.abandoned, op, &result, cx) {
            return;
        }
        let Some(head) = self.queue.front_mut() else {
            return;
        };
        match (&head.stage, result) {
            (Stage::Creating(pending), Ok(OpOk::Created { path, stat })) if *pending == op => {
                self.hold(path, stat.czxid.into(), cx);
            }
            (Stage::Creating(pending), Err(ZkError::NodeExists)) if *pending == op => {
                head.stage = Stage::Checking(check(&self.node, cx));
            }
            (Stage::Creating(pending), Err(ZkError::NoNode)) if *pending == op => {
                create_parents(&self.path, cx);
                head.stage = Stage::Creating(create(&self.node, cx));
            }
            (Stage::Checking(pending), Ok(OpOk::Exists { stat })) if *pending == op => {
                match stat {
                    // Our own create, applied before a connection loss and retried.
                    Some(stat)
                        if stat.ephemeral_owner.is_some()
                            && stat.ephemeral_owner == cx.session() =>
                    {
                        self.hold(self.node.clone(), stat.czxid.into(), cx);
                    }
                    Some(_) => head.stage = Stage::Waiting,
                    None => head.stage = Stage::Creating(create(&self.node, cx)),
                }
            }
            (Stage::Creating(pending) | Stage::Checking(pending), Err(error)) if *pending == op => {
                self.fail_head(FailReason::Zk(error), cx);
            }
            _ => {}
        }
    }

    fn hold(&mut self, node: Path, token: crate::fencing::Token, cx: &mut Ctx<'_, Notice>) {
        let head = self.queue.front_mut().expect("the head contends");
        cancel_timeout(head.timeout.take(), cx);
        head.stage = Stage::Holding(Hold {
            node,
            token,
            count: 1,
            standing: Standing::Held,
        });
        cx.notify(Notice::Acquired {
            owner: head.owner,
            token,
            mode: Mode::Exclusive,
        });
    }

    fn on_watch(&mut self, path: &Path, cx: &mut Ctx<'_, Notice>) {
        if *path != self.node {
            return;
        }
        if let Some(head) = self.queue.front_mut()
            && head.stage == Stage::Waiting
        {
            head.stage = Stage::Creating(create(&self.node, cx));
        }
    }

    fn on_timer(&mut self, timer: TimerId, cx: &mut Ctx<'_, Notice>) {
        let Some(index) = self
            .queue
            .iter()
            .position(|c| c.timeout == Some(timer) && !matches!(c.stage, Stage::Holding(_)))
        else {
            return;
        };
        let contender = self.queue.remove(index).expect("found above");
        self.forget(contender.stage);
        cx.notify(Notice::TimedOut {
            owner: contender.owner,
        });
        self.start_head(cx);
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Ctx<'_, Notice>) {
        let Some(head) = self.queue.front_mut() else {
            return;
        };
        let owner = head.owner;
        match &mut head.stage {
            Stage::Holding(hold) => {
                let held = update_hold(owner, hold, event, cx);
                if !held {
                    self.queue.pop_front();
                    self.start_head(cx);
                }
            }
            // A waiter's watch went with its session; a create in flight fails with it.
            Stage::Waiting | Stage::Checking(_) | Stage::Creating(_)
                if matches!(event, SessionEvent::Lost { .. }) =>
            {
                self.fail_head(FailReason::SessionLost, cx);
            }
            _ => {}
        }
    }

    /// Ends the head's acquisition with a failure and lets the next owner contend.
    fn fail_head(&mut self, reason: FailReason, cx: &mut Ctx<'_, Notice>) {
        let head = self.queue.pop_front().expect("the head contends");
        cancel_timeout(head.timeout, cx);
        self.forget(head.stage);
        cx.notify(Notice::Failed {
            owner: head.owner,
            reason,
        });
        self.start_head(cx);
    }

    /// Makes sure a node that a dropped contender's create may still produce gets deleted.
    fn forget(&mut self, stage: Stage) {
        if let Stage::Creating(op) = stage {
            self.abandoned.insert(op);
        }
    }
}

impl Lock for NaiveHerdMutex {
    fn acquire(&mut self, owner: Owner, timeout: Option<Duration>, _: Mode, cx: &mut Cx<'_>) {
        match self.queue.iter_mut().find(|c| c.owner == owner) {
            Some(Contender {
                stage: Stage::Holding(hold),
                ..
            }) => regrant(owner, hold, cx),
            Some(_) => failed(owner, FailReason::AlreadyAcquiring, cx),
            None => {
                let timeout = timeout.map(|after| cx.set_timer(after));
                self.queue.push_back(Contender {
                    owner,
                    stage: Stage::Queued,
                    timeout,
                });
                self.start_head(cx);
            }
        }
    }

    fn release(&mut self, owner: Owner, _: Mode, cx: &mut Cx<'_>) {
        let Some(Contender {
            stage: Stage::Holding(hold),
            ..
        }) = self.queue.front_mut().filter(|c| c.owner == owner)
        else {
            return failed(owner, FailReason::NotHeld, cx);
        };
        if !release_hold(owner, hold, cx) {
            self.queue.pop_front();
            self.start_head(cx);
        }
    }

    fn react(&mut self, event: Event, cx: &mut Cx<'_>) {
        match event {
            Input::Reply { op, result } => self.on_reply(op, result, cx),
            Input::Watch(event) => self.on_watch(&event.path, cx),
            Input::Session(event) => self.on_session(event, cx),
            Input::Timer(timer) => self.on_timer(timer, cx),
        }
    }
}

fn create(node: &Path, cx: &mut Ctx<'_, Notice>) -> OpId {
    cx.submit(Request::Create {
        path: node.clone(),
        data: Vec::new(),
        mode: CreateMode::Ephemeral,
    })
}

fn check(node: &Path, cx: &mut Ctx<'_, Notice>) -> OpId {
    cx.submit(Request::Exists {
        path: node.clone(),
        watch: true,
    })
}
