//! [`Contender`]: a program's side of a run. The program drives its own code on a
//! `zookeeper-client` session and tells splitbrain, through its contender, what it believes
//! (it called acquire, it holds with this token, it lost the lock, it leads ...) and what it
//! does to the run's fenced resource; the contender records each as the trace event a recipe
//! of splitbrain's would have, so the same checkers judge both. It also gives the program its
//! place in the run (its slot, the server, the session timeout, the lock path) and the
//! workload's timings, drawn from the run's seed.
//!
//! The contender is the same on every executor: what differs (the recorder's clock, the
//! sleeps, the seeded draws) is the executor's [`Backend`], given with the client's [`Place`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use coordination::fencing::Token;
use coordination::ids::ClientSlot;
use coordination::recipes::{Call, FailReason, Mode, Notice};
use coordination::zk::ZkError;
use runtime::resource::SharedResource;
use runtime::workload::OWNER;
use scenarios::scenario::{Span, Workload};
use trace::EventKind;
use zookeeper_client as zk;

/// What an executor gives the contenders of a run: its recorder, its clock and the run's
/// seeded source.
pub trait Backend: Send + Sync {
    /// Records `kind` as an event of client `slot`, at this instant of the run.
    fn record(&self, slot: ClientSlot, kind: EventKind);

    /// Sleeps for `duration` on the executor's clock.
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()>>>;

    /// A duration within `span` (milliseconds), drawn from the client's stream of the seed.
    fn draw_ms(&self, span: Span) -> Duration;
}

/// A client's place in a run, as its executor gives it to the client's [`Contender`].
pub struct Place {
    /// The client.
    pub slot: ClientSlot,
    /// Where the program connects: a connect string (`host:port[,host:port…]`).
    pub server: String,
    /// The scenario's session timeout.
    pub session_timeout: Duration,
    /// The scenario's lock path.
    pub lock_path: String,
    /// The scenario's workload.
    pub workload: Workload,
    /// The executor's recorder, clock and seeded source.
    pub backend: Arc<dyn Backend>,
    /// The run's fenced resource (it records the accesses).
    pub resource: Arc<dyn SharedResource>,
}

/// One client's program's view of the run: what it is told, and how it tells what it
/// believes. Every method that tells records one trace event on the program's client, at the
/// instant of the run it is called.
#[derive(Clone)]
pub struct Contender {
    place: Arc<Place>,
}

impl Contender {
    /// The contender of the client at `place` (executors make it; a program is given it).
    pub fn new(place: Place) -> Contender {
        Contender {
            place: Arc::new(place),
        }
    }

    /// The program's client slot, 0 up.
    pub fn slot(&self) -> u16 {
        self.place.slot.0
    }

    /// The server to connect to, as a connect string (`host:port[,host:port…]`).
    pub fn server(&self) -> String {
        self.place.server.clone()
    }

    /// The session timeout to ask for: the scenario's.
    pub fn session_timeout(&self) -> Duration {
        self.place.session_timeout
    }

    /// The scenario's lock path, under which the program keeps its nodes.
    pub fn lock_path(&self) -> &str {
        &self.place.lock_path
    }

    /// How many holds (or terms of leadership) the workload asks of each client.
    pub fn acquisitions(&self) -> u32 {
        self.place.workload.acquisitions
    }

    /// How long an acquire may wait, when the workload bounds it.
    pub fn acquire_timeout(&self) -> Option<Duration> {
        self.place
            .workload
            .acquire_timeout_ms
            .map(Duration::from_millis)
    }

    /// Sleeps for the workload's stagger of this client, `slot × stagger_ms`: call it before the
    /// first acquire, so that client `i` makes it `i × stagger_ms` after the start, as
    /// splitbrain's own clients do.
    pub async fn stagger(&self) {
        let stagger = self.place.workload.stagger_ms * u64::from(self.place.slot.0);
        if stagger > 0 {
            self.place
                .backend
                .sleep(Duration::from_millis(stagger))
                .await;
        }
    }

    /// Sleeps for a hold time drawn from the workload's `hold_ms`.
    pub async fn hold(&self) {
        self.sleep_for(self.place.workload.hold_ms).await;
    }

    /// Sleeps for a think time drawn from the workload's `think_ms`.
    pub async fn think(&self) {
        self.sleep_for(self.place.workload.think_ms).await;
    }

    async fn sleep_for(&self, span: Span) {
        let backend = &self.place.backend;
        backend.sleep(backend.draw_ms(span)).await;
    }

    /// Uses the fenced resource as splitbrain's workload does with a hold: reads it with
    /// `token`, holds, writes the value read plus one. Returns whether the write was
    /// accepted (a fenced resource refuses a token older than one it has seen).
    pub async fn use_resource(&self, token: u64) -> bool {
        let value = self.read(token);
        self.hold().await;
        self.write(token, value.unwrap_or(0) + 1)
    }

    /// Reads the fenced resource with `token`: its value, or `None` when it refuses the token.
    pub fn read(&self, token: u64) -> Option<u64> {
        self.place
            .resource
            .read(self.place.slot, OWNER, Token(token))
    }

    /// Writes `value` to the fenced resource with `token`: whether it was accepted.
    pub fn write(&self, token: u64, value: u64) -> bool {
        self.place
            .resource
            .write(self.place.slot, OWNER, Token(token), value)
    }

    /// The program calls acquire (with the workload's timeout, if it has one).
    pub fn acquiring(&self) {
        self.call(Call::acquire(OWNER, self.acquire_timeout()));
    }

    /// The program holds the lock; `token` fences its accesses (for a lock node, its czxid).
    pub fn acquired(&self, token: u64) {
        self.notice(Notice::Acquired {
            owner: OWNER,
            token: Token(token),
            mode: Mode::Exclusive,
        });
    }

    /// The acquire gave up after its timeout.
    pub fn timed_out(&self) {
        self.notice(Notice::TimedOut { owner: OWNER });
    }

    /// The call in progress (an acquire, a release, a start) failed with `error`.
    pub fn failed(&self, error: &zk::Error) {
        self.notice(Notice::Failed {
            owner: OWNER,
            reason: fail_reason(error),
        });
    }

    /// The program calls release.
    pub fn releasing(&self) {
        self.call(Call::Release {
            owner: OWNER,
            mode: Mode::Exclusive,
        });
    }

    /// The release is done: the program no longer holds.
    pub fn released(&self) {
        self.notice(Notice::Released {
            owner: OWNER,
            remaining: 0,
            mode: Mode::Exclusive,
        });
    }

    /// The program learnt its connection dropped while it holds.
    pub fn suspended(&self) {
        self.notice(Notice::Suspended { owner: OWNER });
    }

    /// The program learnt its connection is back with the same session while it holds.
    pub fn reconnected(&self) {
        self.notice(Notice::Reconnected { owner: OWNER });
    }

    /// The program learnt it no longer holds (its session expired or was closed).
    pub fn lost(&self) {
        self.notice(Notice::Lost { owner: OWNER });
    }

    /// The program joins the election.
    pub fn starting(&self) {
        self.call(Call::Start { owner: OWNER });
    }

    /// The program leads; `token` (its election node's czxid) fences its accesses.
    pub fn leading(&self, token: u64) {
        self.notice(Notice::IsLeader {
            owner: OWNER,
            token: Token(token),
        });
    }

    /// The program leads no more.
    pub fn not_leading(&self) {
        self.notice(Notice::NotLeader { owner: OWNER });
    }

    /// The program leaves the election.
    pub fn closing(&self) {
        self.call(Call::Close {
            owner: OWNER,
            notify: false,
        });
    }

    /// The program has left the election.
    pub fn closed(&self) {
        self.notice(Notice::Closed { owner: OWNER });
    }

    fn call(&self, call: Call) {
        self.record(EventKind::Call { call });
    }

    fn notice(&self, notice: Notice) {
        self.record(EventKind::Notice { notice });
    }

    pub(crate) fn record(&self, kind: EventKind) {
        self.place.backend.record(self.place.slot, kind);
    }
}

/// Why a call that failed with `error` failed, in the trace's words: ZooKeeper's error codes
/// by name, [`FailReason::Library`] for the client's own errors.
fn fail_reason(error: &zk::Error) -> FailReason {
    zookeeper_error(error).map_or(FailReason::Library, FailReason::Zk)
}

/// The ZooKeeper error `error` carries, in splitbrain's vocabulary; `None` for the client's own
/// errors (a connect timeout, a closed client, a connection given up: `Error::Custom`), which
/// carry no error code of the server's.
pub fn zookeeper_error(error: &zk::Error) -> Option<ZkError> {
    Some(match error {
        zk::Error::NoNode => ZkError::NoNode,
        zk::Error::NodeExists => ZkError::NodeExists,
        zk::Error::BadVersion => ZkError::BadVersion,
        zk::Error::NotEmpty => ZkError::NotEmpty,
        zk::Error::NoChildrenForEphemerals => ZkError::NoChildrenForEphemerals,
        zk::Error::NoWatcher => ZkError::NoWatcher,
        zk::Error::ConnectionLoss => ZkError::ConnectionLoss,
        zk::Error::SessionExpired => ZkError::SessionExpired,
        zk::Error::SessionMoved => ZkError::SessionMoved,
        _ => return None,
    })
}
