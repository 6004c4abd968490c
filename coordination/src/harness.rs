//! A step-by-step test harness: clients (recipe + framework) over one shared
//! [`Tree`](crate::zk::tree::Tree), with every request, reply, watch and session change
//! delivered by hand, so that unit tests can drive the exact interleaving they are about
//! (quinn-proto's `Pair` in spirit).
//!
//! The built-ins' unit tests use it, and so can a recipe of yours:
//!
//! ```
//! use coordination::harness::Harness;
//! use coordination::ids::Owner;
//! use coordination::recipes::{Call, Mode, Mutex, Notice};
//! use coordination::zk::Path;
//!
//! let mut harness = Harness::new(2, || Mutex::new(Path::new("/lock").unwrap()));
//! let acquire = |owner| Call::Acquire { owner: Owner(owner), timeout: None, mode: Mode::Exclusive };
//! harness.call(0, acquire(0));
//! harness.call(1, acquire(1));
//! harness.settle();
//! assert!(matches!(harness.peers[0].notices[..], [Notice::Acquired { .. }]));
//! assert!(harness.peers[1].notices.is_empty(), "the second waits");
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use crate::client::{Client, ClientInput};
use crate::framework::{Framework, FrameworkConfig, OwnTimer};
use crate::ids::{ClientSlot, TimerId};
use crate::recipe::{Effect, Recipe, SessionEvent};
use crate::session::RawEvent;
use crate::world::{Handle, Link, Server};
use crate::zk::tree::Fired;
use crate::zk::{Path, Request, SessionId, WatchedEvent};

/// The session timeout every session of the harness negotiates.
pub const TIMEOUT: Duration = Duration::from_secs(6);

/// One client of the harness: the recipe with its framework layer, its session handle, and
/// what it did so far.
pub struct Peer<R: Recipe> {
    /// The recipe with its framework layer.
    pub client: Client<R>,
    /// The current session handle: its session, connection and queues.
    pub handle: Handle,
    /// The timers set and not yet fired or cancelled, with their delays ([`Harness::fire`]).
    pub timers: BTreeMap<TimerId, Duration>,
    /// Every notice the recipe gave its user, in order.
    pub notices: Vec<R::Notice>,
    /// Every session event the framework layer told the recipe, in order.
    pub sessions: Vec<SessionEvent>,
    /// Watch events the client has handled.
    pub watched: Vec<WatchedEvent>,
    /// Every request the client sent, in order.
    pub sent: Vec<Request>,
    /// Set when the client asked for a new session.
    pub wants_session: bool,
}

/// Clients over one server, stepped by hand: nothing happens but what a test asks for.
pub struct Harness<R: Recipe> {
    /// The server: the shared tree and its live sessions.
    pub server: Server,
    /// The clients, by slot.
    pub peers: Vec<Peer<R>>,
    last_session: u64,
}

impl<R: Recipe> Harness<R> {
    /// `n` clients, each running `recipe()`, all connected.
    pub fn new(n: u16, recipe: impl Fn() -> R) -> Harness<R> {
        Harness::with_config(n, FrameworkConfig::default(), recipe)
    }

    /// `n` clients whose framework layers have the settings `config`, each running
    /// `recipe()`, all connected.
    pub fn with_config(n: u16, config: FrameworkConfig, recipe: impl Fn() -> R) -> Harness<R> {
        let mut harness = Harness {
            server: Server::default(),
            peers: Vec::new(),
            last_session: 0,
        };
        for slot in 0..n {
            let framework = Framework::new(config, ClientSlot(slot), 7);
            let handle = harness.new_session();
            harness.peers.push(Peer {
                client: Client::new(framework, recipe()),
                handle,
                timers: BTreeMap::new(),
                notices: Vec::new(),
                sessions: Vec::new(),
                watched: Vec::new(),
                sent: Vec::new(),
                wants_session: false,
            });
        }
        harness.settle();
        harness
    }

    /// The server opens the next session; its handle.
    fn new_session(&mut self) -> Handle {
        self.last_session += 1;
        let session = SessionId(self.last_session);
        self.server.open(session);
        Handle::open(session, TIMEOUT)
    }

    /// Feeds `input` to client `c` and carries out its effects.
    pub fn input(&mut self, c: usize, input: ClientInput<R::Call>) {
        let mut out = Vec::new();
        self.peers[c].client.handle(input, &mut out);
        for effect in out {
            let peer = &mut self.peers[c];
            match effect {
                Effect::Op { op, request } => {
                    if peer.handle.send(op, request.clone()) {
                        peer.sent.push(request);
                    }
                }
                Effect::SetTimer { timer, after } => {
                    peer.timers.insert(timer, after);
                }
                Effect::CancelTimer(timer) => {
                    peer.timers.remove(&timer);
                }
                Effect::CloseSession => peer.handle.link = Link::Down,
                Effect::OpenSession => peer.wants_session = true,
                Effect::Session(event) => peer.sessions.push(event),
                Effect::Notify(notice) => peer.notices.push(notice),
            }
        }
        if self.peers[c].wants_session {
            let handle = self.new_session();
            let peer = &mut self.peers[c];
            peer.handle = handle;
            peer.wants_session = false;
        }
    }

    /// Client `c`'s user makes `call`.
    pub fn call(&mut self, c: usize, call: R::Call) {
        self.input(c, ClientInput::Call(call));
    }

    /// Applies client `c`'s oldest in-flight request; returns false if there was none.
    pub fn apply_next(&mut self, c: usize) -> bool {
        self.apply_and_answer(c, false)
    }

    /// Applies client `c`'s oldest in-flight request, routes the watches it fired, then
    /// answers it (`ConnectionLoss` if `lost`); false if there was none.
    fn apply_and_answer(&mut self, c: usize, lost: bool) -> bool {
        let Some(mut applied) = self.server.apply_next(&mut self.peers[c].handle) else {
            return false;
        };
        self.route(std::mem::take(&mut applied.fired));
        self.peers[c].handle.answer(&applied, lost);
        true
    }

    /// Delivers client `c`'s next event; returns false if there was none.
    pub fn deliver_next(&mut self, c: usize) -> bool {
        let Some(event) = self.peers[c].handle.next_event() else {
            return false;
        };
        if let RawEvent::Watch { event } = &event {
            self.peers[c].watched.push(event.clone());
        }
        self.input(c, ClientInput::Event(event));
        true
    }

    /// Runs every client until nothing is left to apply or deliver. The framework's retry
    /// sleeps end when nothing else is left (and the loop goes on); other timers do not fire.
    pub fn settle(&mut self) {
        loop {
            self.settle_without_sleeps();
            let mut slept = false;
            for c in 0..self.peers.len() {
                for timer in self.peers[c].client.framework().retry_sleeps() {
                    self.fire(c, timer);
                    slept = true;
                }
            }
            if !slept {
                break;
            }
        }
    }

    /// Runs every client until nothing is left to apply or deliver (timers do not fire).
    pub fn settle_without_sleeps(&mut self) {
        loop {
            let mut progressed = false;
            for c in 0..self.peers.len() {
                while self.apply_next(c) {
                    progressed = true;
                }
                while self.deliver_next(c) {
                    progressed = true;
                }
            }
            if !progressed {
                break;
            }
        }
    }

    /// Fires client `c`'s timer `timer`.
    pub fn fire(&mut self, c: usize, timer: TimerId) {
        assert!(
            self.peers[c].timers.remove(&timer).is_some(),
            "timer {timer:?} is not set"
        );
        self.input(c, ClientInput::Timer(timer));
    }

    /// The connection of client `c` drops. Its oldest in-flight request is applied first if
    /// `apply_first` (its reply lost); every request in flight gets ConnectionLoss, then
    /// Disconnected.
    pub fn drop_connection(&mut self, c: usize, apply_first: bool) {
        if apply_first {
            assert!(self.apply_and_answer(c, true), "a request in flight");
        }
        self.peers[c].handle.drop_connection();
    }

    /// A connection attempt of client `c`, whose connection is down, fails.
    pub fn fail_connection_attempt(&mut self, c: usize) {
        assert!(self.peers[c].handle.fail_attempt(), "c{c} is connected");
    }

    /// Client `c` reconnects to its session (which must still be alive).
    pub fn reconnect(&mut self, c: usize) {
        self.peers[c].handle.reconnect(TIMEOUT);
    }

    /// The server expires client `c`'s session; the client hears of it only when `tell`.
    pub fn expire(&mut self, c: usize, tell: bool) {
        let fired = self.server.end(self.peers[c].handle.session);
        self.route(fired.unwrap_or_default());
        if tell {
            self.peers[c].handle.expire();
        }
    }

    /// Applies `request` behind every client's back (an operator or another process, on no
    /// client's session), delivering the watches it fires.
    pub fn operator(&mut self, request: &Request) -> crate::zk::OpResult {
        let applied = self.server.tree.apply(SessionId(0), request);
        self.route(applied.fired);
        applied.result
    }

    fn route(&mut self, fired: Vec<Fired>) {
        for Fired { session, event } in fired {
            if let Some(peer) = self.peers.iter_mut().find(|p| p.handle.session == session) {
                peer.handle.watch(event);
            }
        }
    }

    /// The names of the children of `path`, in lock order of their sequence suffix.
    pub fn children(&self, path: &str) -> Vec<String> {
        let path = Path::new(path).unwrap();
        let Some(node) = self.server.tree.get(&path) else {
            return Vec::new();
        };
        let mut names: Vec<String> = node.children().map(str::to_owned).collect();
        names.sort_by_key(|n| crate::zk::sequence_suffix(n));
        names
    }

    /// Client `c`'s LOST timer, set while its connection is suspended.
    pub fn lost_timer(&self, c: usize) -> TimerId {
        let framework = self.peers[c].client.framework();
        let lost = |timer: &&TimerId| framework.own_timer(**timer) == Some(OwnTimer::Lost);
        *self.peers[c]
            .timers
            .keys()
            .find(lost)
            .expect("a LOST timer")
    }

    /// Client `c`'s only set timer.
    pub fn only_timer(&self, c: usize) -> TimerId {
        let timers: Vec<_> = self.peers[c].timers.keys().copied().collect();
        assert_eq!(timers.len(), 1, "timers of c{c}: {timers:?}");
        timers[0]
    }
}
