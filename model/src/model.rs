//! The stateright [`Model`]: N clients (recipe + framework layer, exactly as the simulator and
//! the real client run them) over an abstract ZooKeeper server built on the shared data tree.
//!
//! `Model` is implemented directly rather than through stateright's `ActorModel`: the server
//! applies requests atomically from per-client FIFO queues, each session has one ordered
//! event stream, and one fault touches the tree, the session table and a client's queues at
//! once. Actors exchanging messages over a network would need all of that rebuilt on top,
//! and `ActorModel`'s symmetry support does not rewrite timers (see the notes).
//!
//! Actions, each atomic:
//! - [`Action::Work`]: the client's workload timer fires (the workload is
//!   [`runtime::workload::Workload`], the state machine the simulator runs): the first
//!   start or the end of a think begins a cycle (the call that asks for a hold — acquire,
//!   start —, after the revocation calls when revocable), the end of a hold writes the
//!   resource and gives the hold back. Any timer may fire at any point, so any hold and
//!   think time is covered; the read happens with the grant, as in the simulator;
//! - [`Action::Deliver`]: the client handles the next event of its session's stream;
//! - [`Action::Fire`]: one of the client's pending timers fires (durations are ignored, so
//!   any hold time and any timeout are covered);
//! - [`Action::Apply`]: the server applies the client's next request (`Tree::apply`); fired
//!   watches go to their sessions' streams, the reply to the requester's after them;
//! - faults within the budgets: [`Action::Expire`] (the server expires the session of a
//!   paused or cut-off client; the client hears of it only when it next handles an event,
//!   and until then acts on its stale belief),
//!   [`Action::Crash`], [`Action::LoseConnection`] (the in-flight request applied or not);
//!   and [`Action::ExpireOrphan`]: the server expires a session no client uses any more;
//! - [`Action::ReapContainers`], within its budget: the server's periodic sweep deletes the
//!   empty containers (`Tree::reap_containers`, as the simulated server's sweep does), so a
//!   recipe may find its lock directory gone and create it anew, its sequence numbers
//!   starting over;
//! - [`Action::CutFollower`], within its budget: the client's server is a follower of an
//!   ensemble cut off from the leader. The follower keeps the connection (no `Disconnected`)
//!   and answers the client's reads from its tree as the cut found it, its writes held, while
//!   the leader expires the session; until [`Action::FollowerGivesUp`] the client hears
//!   nothing of it.
//!
//! After any action, a client whose workload is done and whose requests have all been applied
//! closes its session and stops, as the simulator's clients do.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use coordination::client::Client;
use coordination::framework::Framework;
use coordination::ids::{ClientSlot, Owner};
use coordination::world::Server;
use coordination::zk::tree::Tree;
use coordination::zk::{CreateMode, Path, Request, SessionId};
use properties::monitor::Beliefs;
use recipe_table::model_spec::MODEL_LOCK_PATH;
use recipe_table::recipes::{RecipeDef, Testable};
use runtime::workload::Workload;
use stateright::{Model, Property};
use trace::EventKind;

use crate::budget::ModelSpec;
use crate::predicates;
use crate::state::{Peer, Resource, SharedServer, State, Used};
use crate::symmetry::canonicalize;
use crate::transition::Transition;

/// The path every client locks.
pub const LOCK_PATH: &str = MODEL_LOCK_PATH;

/// The one owner each client's workload acquires for (the simulator's).
pub const OWNER: Owner = runtime::workload::OWNER;

/// How long an acquire waits at most when the check has timeouts (only its existence
/// matters: the recipe's timer may fire at any point).
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(1);

/// The session timeout the abstract server negotiates (only its existence matters).
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(10);

/// One step of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// The client's pending workload timer fires (start, end of hold, end of think).
    Work(ClientSlot),
    /// The client handles the next event of its session's stream.
    Deliver(ClientSlot),
    /// The `n`-th of the client's pending timers (in the order of their ids) fires. By rank,
    /// not by id: the search renumbers a client's ids ([`LockModel::next`]) and a trace's
    /// replay does not, and the same path must take the same steps in both.
    Fire(ClientSlot, u8),
    /// The server applies the client's next request.
    Apply(ClientSlot),
    /// The server expires the session of the (paused or cut-off) client.
    Expire(ClientSlot),
    /// The client process dies and restarts with a new session; the old one lives on.
    Crash(ClientSlot),
    /// The client's connection drops and comes back on the same session. With `applied`,
    /// the server applied the first request in flight but the reply was lost.
    LoseConnection {
        /// Whose connection.
        client: ClientSlot,
        /// Whether the first request in flight was applied.
        applied: bool,
    },
    /// A connection attempt of the client, not yet (re)connected, fails.
    FailAttempt(ClientSlot),
    /// The server expires a session that no client uses any more (crashed or given up).
    ExpireOrphan(SessionId),
    /// The server's sweep deletes every container that has had children and has none left,
    /// firing the watches a delete fires.
    ReapContainers,
    /// The client's server, a follower, is cut off from the leader, and the leader expires
    /// the session (one step: between the two only reads by a session still alive would be
    /// served). The follower keeps the client connected, answers its reads from its tree as
    /// it was (the client's own nodes still there; no watch fires any more) and holds its
    /// writes.
    CutFollower(ClientSlot),
    /// The cut-off follower gives up on the leader (syncLimit × tick later) and drops the
    /// client: what it held fails with `ConnectionLoss`, the stream says `Disconnected`, and
    /// the next server the client reaches says `Expired`.
    FollowerGivesUp(ClientSlot),
}

/// Receives the trace events of a step as they happen.
pub trait Recorder {
    /// Records an event on `client` (`None`: the server or the environment). `kind` is only
    /// evaluated by recorders that keep events.
    fn record(&mut self, client: Option<ClientSlot>, kind: impl FnOnce() -> EventKind);
}

/// A recorder that keeps nothing: what the checker runs with.
pub struct Silent;

impl Recorder for Silent {
    fn record(&mut self, _: Option<ClientSlot>, _: impl FnOnce() -> EventKind) {}
}

/// The model of recipe `R`, as its row of the recipe table defines it, under one [`ModelSpec`].
pub struct LockModel<R: 'static> {
    def: &'static RecipeDef<R>,
    config: ModelSpec,
    lock_path: Path,
    cutoff: Cutoff,
    reduction: bool,
}

/// Ends a search on time: once `stop` is set, the model keeps every new state out of bounds
/// (stateright then expands nothing more, on any number of threads) and counts them, so a
/// search tells whether it was cut short or had finished anyway.
#[derive(Clone, Debug, Default)]
pub struct Cutoff {
    stop: Arc<AtomicBool>,
    cut: Arc<AtomicUsize>,
}

impl Cutoff {
    /// From now on, no new state is explored.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether some state was left unexplored because of [`Cutoff::stop`].
    pub fn cut_short(&self) -> bool {
        self.cut.load(Ordering::Relaxed) > 0
    }

    fn admits(&self) -> bool {
        let stopped = self.stop.load(Ordering::Relaxed);
        if stopped {
            self.cut.fetch_add(1, Ordering::Relaxed);
        }
        !stopped
    }
}

impl<R: Testable> LockModel<R> {
    /// The model of the recipe `def` defines, under `config`.
    pub fn new(def: &'static RecipeDef<R>, config: ModelSpec) -> LockModel<R> {
        LockModel {
            def,
            config,
            lock_path: Path::new(LOCK_PATH).expect("a valid constant path"),
            cutoff: Cutoff::default(),
            reduction: true,
        }
    }

    /// The same model, searched with or without the partial-order reduction (with, unless
    /// said otherwise; see `reduction.rs`).
    pub fn with_reduction(mut self, reduction: bool) -> LockModel<R> {
        self.reduction = reduction;
        self
    }

    /// Whether the search takes one interleaving of local, invisible steps only.
    pub fn reduces(&self) -> bool {
        self.reduction
    }

    /// What stops a search of this model on time.
    pub fn cutoff(&self) -> &Cutoff {
        &self.cutoff
    }

    /// The recipe's row of the recipe table.
    pub fn def(&self) -> &'static RecipeDef<R> {
        self.def
    }

    /// What is checked.
    pub fn config(&self) -> &ModelSpec {
        &self.config
    }

    /// The lock path.
    pub fn lock_path(&self) -> &Path {
        &self.lock_path
    }

    /// The initial state as the search starts from it: every client's ids renumbered (see
    /// [`LockModel::next`]).
    pub fn initial_canonical(&self) -> State<R> {
        let mut state = self.initial(&mut Silent);
        state
            .peers
            .iter_mut()
            .for_each(|peer| canonicalize(Peer::make_mut(peer)));
        state
    }

    /// The one initial state, with its trace events: the lock path exists (with the
    /// recipe's directories below it), and every client is connected with its first session.
    /// The lock path and the directories are containers, as the recipes create them
    /// ([`create_parents`](coordination::recipes::kit::create_parents)) in the simulator and
    /// on a real server: a sweep ([`Action::ReapContainers`]) deletes them once they have had
    /// children and have none left.
    pub fn initial(&self, rec: &mut impl Recorder) -> State<R> {
        let mut tree = Tree::new();
        let lock_path = std::iter::once(self.lock_path.clone());
        for path in lock_path.chain((self.def.directories)(&self.lock_path)) {
            let create = Request::Create {
                path,
                data: Vec::new(),
                mode: CreateMode::Container,
            };
            tree.apply(SessionId(0), &create);
        }
        let peers = (0..self.config.clients)
            .map(|slot| Arc::new(self.fresh_peer(ClientSlot(slot), 0, 0)))
            .collect();
        let mut state = State {
            server: Arc::new(SharedServer::new(Server::new(tree))),
            peers,
            resource: Resource::new(self.config.fenced),
            used: Used::default(),
            beliefs: Beliefs::new(self.config.framework.error_policy),
            waits: Default::default(),
            herds: Default::default(),
            revokes: Default::default(),
        };
        let mut step = Transition {
            model: self,
            state: &mut state,
            rec,
        };
        for slot in 0..self.config.clients {
            let slot = ClientSlot(slot);
            step.open_session(slot);
            step.deliver(slot);
        }
        state
    }

    /// A client as it starts: a fresh process, not connected yet.
    pub(crate) fn fresh_peer(&self, slot: ClientSlot, restarts: u8, incarnation: u8) -> Peer<R> {
        let framework = Framework::new(self.config.framework, slot, u32::from(restarts));
        Peer {
            client: Client::new(
                framework,
                (self.def.build)(self.lock_path.clone(), &self.config.settings),
            ),
            restarts,
            incarnation,
            handle: None,
            timers: Default::default(),
            workload: self.workload(slot),
            class: u8::from(!self.writes(slot)),
            sort_key: Default::default(),
            image: Default::default(),
        }
    }

    /// `slot`'s workload as it starts: the budget's cycles, acquires with a timeout when the
    /// check has timeouts.
    pub fn workload(&self, slot: ClientSlot) -> Workload {
        let config = &self.config;
        let timeout = config.timeouts.then_some(ACQUIRE_TIMEOUT);
        Workload::new(
            self.def.family,
            slot,
            &config.settings,
            config.budgets.cycles.into(),
        )
        .with_timeout(timeout)
    }

    /// Whether `slot`'s holds use the resource (a read-write lock's readers do not).
    pub fn writes(&self, slot: ClientSlot) -> bool {
        self.workload(slot).writes()
    }

    /// The actions enabled in `state`, in a fixed order.
    pub fn enabled(&self, state: &State<R>, out: &mut Vec<Action>) {
        let budgets = &self.config.budgets;
        for (index, peer) in state.peers.iter().enumerate() {
            let slot = ClientSlot(index as u16);
            if peer.workload.pending_timer().is_some() {
                out.push(Action::Work(slot));
            }
            let Some(handle) = &peer.handle else {
                out.extend(fire_each(slot, peer));
                continue;
            };
            if !handle.events.is_empty() {
                out.push(Action::Deliver(slot));
            }
            out.extend(fire_each(slot, peer));
            let up = handle.served();
            if handle.applicable() {
                out.push(Action::Apply(slot));
            }
            if up && state.used.expiries < budgets.expiries {
                out.push(Action::Expire(slot));
            }
            if state.used.crashes < budgets.crashes {
                out.push(Action::Crash(slot));
            }
            if up && state.used.connection_losses < budgets.connection_losses {
                out.push(Action::LoseConnection {
                    client: slot,
                    applied: false,
                });
                if !handle.requests.is_empty() {
                    out.push(Action::LoseConnection {
                        client: slot,
                        applied: true,
                    });
                }
            }
            if handle.reconnecting() && state.used.failed_attempts < budgets.failed_attempts {
                out.push(Action::FailAttempt(slot));
            }
            if up && state.used.follower_cuts < budgets.follower_cuts {
                out.push(Action::CutFollower(slot));
            }
            if handle.cut.is_some() {
                out.push(Action::FollowerGivesUp(slot));
            }
        }
        for &session in &state.server.live {
            if state.attached(session).is_none() {
                out.push(Action::ExpireOrphan(session));
            }
        }
        let reapable = state.server.tree.reapable().next().is_some();
        if reapable && state.used.reaps < budgets.reaps {
            out.push(Action::ReapContainers);
        }
    }

    /// Takes `action` from `state`, recording what happens; `None` if it is not enabled.
    pub fn step(
        &self,
        state: &State<R>,
        action: Action,
        rec: &mut impl Recorder,
    ) -> Option<State<R>> {
        let mut next = state.clone();
        let mut step = Transition {
            model: self,
            state: &mut next,
            rec,
        };
        let done = match action {
            Action::Work(slot) => step.work(slot),
            Action::Deliver(slot) => step.deliver(slot),
            Action::Fire(slot, n) => {
                let timer = step.state.peer(slot).timers.iter().nth(usize::from(n));
                timer.copied().and_then(|timer| step.fire(slot, timer))
            }
            Action::Apply(slot) => step.apply(slot, false),
            Action::Expire(slot) => step.expire(slot),
            Action::Crash(slot) => step.crash(slot),
            Action::LoseConnection { client, applied } => step.lose_connection(client, applied),
            Action::FailAttempt(slot) => step.fail_attempt(slot),
            Action::ExpireOrphan(session) => step.expire_orphan(session),
            Action::ReapContainers => step.reap_containers(),
            Action::CutFollower(slot) => step.cut_follower(slot),
            Action::FollowerGivesUp(slot) => step.follower_gives_up(slot),
        };
        step.close_finished();
        done.map(|()| next)
    }

    /// Takes `action` from `state` as the search does: [`LockModel::step`], then each client
    /// whose ids it may have changed (the one that acted, and one whose session it closed)
    /// has them renumbered 1, 2, 3 … (`symmetry::canonicalize`), so that states differing
    /// only in those ids are one state. `None` if the action is not enabled.
    pub fn next(&self, state: &State<R>, action: Action) -> Option<State<R>> {
        let stepped = self.step(state, action, &mut Silent)?;
        Some(self.renumbered(state, action, stepped))
    }

    /// `stepped`, the [`LockModel::step`] of `action` from `state`, with the ids renumbered as
    /// [`LockModel::next`] renumbers them.
    pub(crate) fn renumbered(
        &self,
        state: &State<R>,
        action: Action,
        mut stepped: State<R>,
    ) -> State<R> {
        let acted = action.client().map(|slot| usize::from(slot.0));
        for (index, peer) in stepped.peers.iter_mut().enumerate() {
            let closed = peer.handle.is_none() && state.peers[index].handle.is_some();
            if closed || acted == Some(index) {
                canonicalize(Peer::make_mut(peer));
            }
        }
        stepped
    }
}

/// The [`Action::Fire`] of each of `peer`'s pending timers.
fn fire_each<R>(slot: ClientSlot, peer: &Peer<R>) -> impl Iterator<Item = Action> + '_ {
    (0..peer.timers.len()).map(move |n| Action::Fire(slot, u8::try_from(n).unwrap_or(u8::MAX)))
}

impl Action {
    /// The client the action is taken by or on (`None`: a session no client uses, or the
    /// server's sweep).
    pub fn client(&self) -> Option<ClientSlot> {
        match *self {
            Action::Work(slot)
            | Action::Deliver(slot)
            | Action::Fire(slot, _)
            | Action::Apply(slot)
            | Action::Expire(slot)
            | Action::Crash(slot)
            | Action::LoseConnection { client: slot, .. }
            | Action::FailAttempt(slot)
            | Action::CutFollower(slot)
            | Action::FollowerGivesUp(slot) => Some(slot),
            Action::ExpireOrphan(_) | Action::ReapContainers => None,
        }
    }
}

impl<R: Testable> Model for LockModel<R> {
    type State = State<R>;
    type Action = Action;

    fn init_states(&self) -> Vec<State<R>> {
        vec![self.initial_canonical()]
    }

    fn actions(&self, state: &State<R>, actions: &mut Vec<Action>) {
        // The delivery's step is taken again by `next_state`: stateright hands over actions.
        self.reduce(state, actions);
    }

    fn next_state(&self, state: &State<R>, action: Action) -> Option<State<R>> {
        self.next(state, action)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        predicates::all(self.def.family)
    }

    fn within_boundary(&self, _: &State<R>) -> bool {
        self.cutoff.admits()
    }

    fn format_action(&self, action: &Action) -> String {
        format!("{action:?}")
    }
}
