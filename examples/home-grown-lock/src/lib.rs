//! A home-grown ZooKeeper lock, as teams write them before they find Curator: every contender
//! creates the one ephemeral node `<path>/lock`; whoever gets `NodeExists` reads the node with
//! a watch and tries again when the watch fires.
//!
//! It has two bugs splitbrain finds by seed (see `tests/`):
//! - every waiter watches the same node, so each release wakes them all (a herd);
//! - a waiter whose read finds the node already gone (released between its failed create and
//!   its read) thinks its watch is set, but ZooKeeper sets no data watch on a missing node:
//!   that waiter waits for ever.
//!
//! It is written against splitbrain's public API only: the [`Recipe`] contract, the shared
//! call and notice vocabulary, and [`Relabel`] for the model's symmetry reduction.

use splitbrain::coordination::prelude::*;
use splitbrain::recipe_table::recipes::RecipeDef;

/// The recipe's row: what splitbrain's executors need to run it. A lock's defaults (not
/// revocable, no directories, what every exclusive lock promises: what we hope of it) leave
/// its name, constructor and description.
pub static HOME_GROWN_LOCK: RecipeDef<HomeGrownLock> = RecipeDef {
    about: "acquire by creating one ephemeral node, retry on NodeExists",
    ..RecipeDef::lock("home-grown-lock", |path, _settings| {
        HomeGrownLock::new(path)
    })
};

/// One client's lock on `<path>/lock`. One owner at a time (a second acquire fails).
///
/// Its `Relabel` is derived: the op ids its stage waits for go through the map, which the
/// model checker uses to renumber each client's op ids; its node holds no client identity (no
/// protection prefix), so it is kept as it is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
#[relabel(crate = "splitbrain::coordination")]
pub struct HomeGrownLock {
    /// `<path>/lock`: no protection prefix, no client identity.
    #[relabel(skip)]
    node: Path,
    stage: Stage,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
#[relabel(crate = "splitbrain::coordination")]
enum Stage {
    Idle,
    /// Creating the lock node.
    Creating {
        owner: Owner,
        op: OpId,
    },
    /// Reading the node with a watch, after `NodeExists`.
    Reading {
        owner: Owner,
        op: OpId,
    },
    /// Waiting for the watch.
    Waiting {
        owner: Owner,
    },
    Holding {
        owner: Owner,
        token: Token,
    },
}

impl HomeGrownLock {
    /// A lock whose node is `<path>/lock`.
    pub fn new(path: Path) -> HomeGrownLock {
        let node = path.child("lock").expect("'lock' is a valid name");
        HomeGrownLock {
            node,
            stage: Stage::Idle,
        }
    }

    fn create(&mut self, owner: Owner, cx: &mut Ctx<'_, Notice>) {
        let op = cx.submit(Request::Create {
            path: self.node.clone(),
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
        });
        self.stage = Stage::Creating { owner, op };
    }

    fn on_call(&mut self, call: Call, cx: &mut Ctx<'_, Notice>) {
        match (call, &self.stage) {
            (Call::Acquire { owner, .. }, Stage::Idle) => self.create(owner, cx),
            (Call::Release { owner, .. }, Stage::Holding { owner: holder, .. })
                if owner == *holder =>
            {
                cx.delete_guaranteed(self.node.clone());
                self.stage = Stage::Idle;
                cx.notify(Notice::Released {
                    owner,
                    remaining: 0,
                    mode: Mode::Exclusive,
                });
            }
            (Call::Acquire { owner, .. }, _) => cx.notify(Notice::Failed {
                owner,
                reason: FailReason::AlreadyAcquiring,
            }),
            (Call::Release { owner, .. }, _) => cx.notify(Notice::Failed {
                owner,
                reason: FailReason::NotHeld,
            }),
            _ => {}
        }
    }

    fn on_reply(&mut self, op: OpId, result: OpResult, cx: &mut Ctx<'_, Notice>) {
        match (self.stage.clone(), result) {
            (Stage::Creating { owner, op: sent }, Ok(OpOk::Created { stat, .. })) if sent == op => {
                let token = stat.czxid.into();
                self.stage = Stage::Holding { owner, token };
                cx.notify(Notice::Acquired {
                    owner,
                    token,
                    mode: Mode::Exclusive,
                });
            }
            (Stage::Creating { owner, op: sent }, Err(ZkError::NodeExists)) if sent == op => {
                let op = cx.submit(Request::GetData {
                    path: self.node.clone(),
                    watch: true,
                });
                self.stage = Stage::Reading { owner, op };
            }
            (Stage::Creating { owner, op: sent }, Err(ZkError::NoNode)) if sent == op => {
                // The lock's parents are missing: create them, then try again.
                for parent in self.node.ancestors() {
                    cx.submit_detached(Request::Create {
                        path: parent,
                        data: Vec::new(),
                        mode: CreateMode::Persistent,
                    });
                }
                self.create(owner, cx);
            }
            // THE BUG: the node went away between our create and our read. We wait for the
            // watch, but ZooKeeper leaves no data watch on a node that does not exist.
            (Stage::Reading { owner, op: sent }, _) if sent == op => {
                self.stage = Stage::Waiting { owner };
            }
            // The session ended under a pending request: start over on the new one.
            (Stage::Creating { owner, op: sent }, Err(_)) if sent == op => self.create(owner, cx),
            _ => {}
        }
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Ctx<'_, Notice>) {
        match (event, self.stage.clone()) {
            (SessionEvent::Suspended, Stage::Holding { owner, .. }) => {
                cx.notify(Notice::Suspended { owner })
            }
            (
                SessionEvent::Reconnected {
                    session_changed: false,
                },
                Stage::Holding { owner, .. },
            ) => cx.notify(Notice::Reconnected { owner }),
            (SessionEvent::Lost { .. }, Stage::Holding { owner, .. }) => {
                self.stage = Stage::Idle;
                cx.notify(Notice::Lost { owner });
            }
            // A waiter's watch died with its session: contend again on the new one.
            (
                SessionEvent::Reconnected {
                    session_changed: true,
                },
                Stage::Waiting { owner },
            ) => self.create(owner, cx),
            _ => {}
        }
    }
}

impl Recipe for HomeGrownLock {
    type Call = Call;
    type Notice = Notice;

    fn handle(&mut self, input: Input<Call>, cx: &mut Ctx<'_, Notice>) {
        match input {
            Input::Call(call) => self.on_call(call, cx),
            Input::Reply { op, result } => self.on_reply(op, result, cx),
            Input::Watch(event) => {
                if let Stage::Waiting { owner } = self.stage
                    && event.kind == EventKind::NodeDeleted
                    && event.path == self.node
                {
                    self.create(owner, cx);
                }
            }
            Input::Session(event) => self.on_session(event, cx),
            Input::Timer(_) => {}
        }
    }
}
