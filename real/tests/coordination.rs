//! The `Coordination` over a real ZooKeeper: the raw session's stream (names, stats, errors,
//! watch-before-reply), and the lock recipes through the driver, on a standalone server and
//! on an ensemble whose leader is killed. Every wait is bounded; nothing assumes speed.

use std::future::Future;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use coordination::client::Client;
use coordination::driver::{Driver, Handle, Observed, Observer};
use coordination::fencing::{FencedResource, Token};
use coordination::framework::{Framework, FrameworkConfig};
use coordination::ids::{ClientSlot, OpId, Owner};
use coordination::recipe::SessionEvent;
use coordination::recipes::{Call, Mutex, Notice};
use coordination::session::{Connector, Coordination, RawEvent, RawState};
use coordination::zk::{
    CreateMode, EventKind, OpOk, OpResult, Path, Request, WatchedEvent, WatcherKind, ZkError,
};
use real::executor;
use real::local::{Ensemble, Settings, Standalone};
use real::session::{RealConnector, RealSession};

const OWNER: Owner = Owner(0);
/// The bound on any single wait for an event.
const EVENT_WAIT: Duration = Duration::from_secs(20);

fn p(text: &str) -> Path {
    Path::new(text).unwrap()
}

/// `future`'s output within `limit` (on any executor: tokio's or `real::executor`'s).
async fn bounded<T>(what: &str, limit: Duration, future: impl Future<Output = T>) -> T {
    executor::within(limit, future)
        .await
        .unwrap_or_else(|| panic!("{what}: nothing within {limit:?}"))
}

/// The raw session of a test: numbers its requests and reads its stream with bounds.
struct Raw {
    session: RealSession,
    next_op: u32,
}

impl Raw {
    async fn open(connector: &RealConnector) -> (Raw, RawState) {
        let session = connector.connect().await;
        let first = bounded("connect", EVENT_WAIT, session.next_event()).await;
        let Some(RawEvent::State { state }) = first else {
            panic!(
                "expected Connected first, got {first:?} (last error: {:?})",
                session.last_error()
            );
        };
        assert!(matches!(state, RawState::Connected { .. }), "{state:?}");
        (
            Raw {
                session,
                next_op: 0,
            },
            state,
        )
    }

    async fn send(&mut self, request: Request) -> OpId {
        self.next_op += 1;
        let op = OpId(self.next_op);
        self.session.submit(op, request).await;
        op
    }

    async fn event(&self) -> RawEvent {
        bounded("event", EVENT_WAIT, self.session.next_event())
            .await
            .expect("the stream is open")
    }

    /// Sends `request` and returns its reply, which must be the next event.
    async fn call(&mut self, request: Request) -> OpResult {
        let op = self.send(request.clone()).await;
        match self.event().await {
            RawEvent::Reply { op: got, result } if got == op => result,
            other => panic!("{request:?}: expected its reply, got {other:?}"),
        }
    }

    async fn create(&mut self, path: &str, mode: CreateMode) -> OpResult {
        self.call(Request::Create {
            path: p(path),
            data: Vec::new(),
            mode,
        })
        .await
    }
}

fn created(result: OpResult) -> (Path, coordination::zk::Stat) {
    match result {
        Ok(OpOk::Created { path, stat }) => (path, stat),
        other => panic!("expected Created, got {other:?}"),
    }
}

fn watch(kind: EventKind, path: &str) -> RawEvent {
    RawEvent::Watch {
        event: WatchedEvent {
            kind,
            path: p(path),
        },
    }
}

fn standalone() -> Standalone {
    Standalone::start().unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
async fn a_raw_session_sees_names_stats_errors_and_watches_in_order() {
    let server = standalone();
    let connector = RealConnector::new(server.connect_string(), Duration::from_secs(2));
    let (mut a, state) = Raw::open(&connector).await;
    let RawState::Connected { session, timeout } = state else {
        unreachable!()
    };
    assert_eq!(timeout, Duration::from_secs(2), "negotiated as asked");

    // Names and stats.
    let (path, stat) = created(a.create("/raw", CreateMode::Persistent).await);
    assert_eq!(path, p("/raw"));
    assert_eq!((stat.version, stat.ephemeral_owner), (0, None));
    assert_eq!(stat.czxid, stat.mzxid);
    let (first, stat) = created(a.create("/raw/n-", CreateMode::EphemeralSequential).await);
    assert_eq!(first, p("/raw/n-0000000000"));
    assert_eq!(stat.ephemeral_owner, Some(session));
    let (second, later) = created(a.create("/raw/n-", CreateMode::EphemeralSequential).await);
    assert_eq!(second, p("/raw/n-0000000001"));
    assert!(later.czxid > stat.czxid, "zxids grow");
    let children = a
        .call(Request::GetChildren {
            path: p("/raw"),
            watch: true,
        })
        .await;
    let Ok(OpOk::Children { mut names, .. }) = children else {
        panic!("{children:?}")
    };
    names.sort();
    assert_eq!(names, ["n-0000000000", "n-0000000001"]);

    // Two data watches on one node and a child watch on its parent: deleting the node gives
    // one NodeDeleted and one NodeChildrenChanged, both before the delete's reply.
    let exists = a
        .call(Request::Exists {
            path: first.clone(),
            watch: true,
        })
        .await;
    assert!(matches!(exists, Ok(OpOk::Exists { stat: Some(_) })));
    let data = a
        .call(Request::GetData {
            path: first.clone(),
            watch: true,
        })
        .await;
    assert!(matches!(data, Ok(OpOk::Data { .. })), "{data:?}");
    let delete = a
        .send(Request::Delete {
            path: first.clone(),
            version: None,
        })
        .await;
    assert_eq!(
        a.event().await,
        watch(EventKind::NodeDeleted, "/raw/n-0000000000")
    );
    assert_eq!(
        a.event().await,
        watch(EventKind::NodeChildrenChanged, "/raw")
    );
    assert_eq!(
        a.event().await,
        RawEvent::Reply {
            op: delete,
            result: Ok(OpOk::Deleted)
        }
    );

    // Another session's change: the watch event comes before the reply that reflects it.
    let (mut b, _) = Raw::open(&connector).await;
    let missing = a
        .call(Request::Exists {
            path: p("/raw/x"),
            watch: true,
        })
        .await;
    assert_eq!(missing, Ok(OpOk::Exists { stat: None }));
    created(b.create("/raw/x", CreateMode::Persistent).await);
    let read = a
        .send(Request::GetData {
            path: p("/raw/x"),
            watch: false,
        })
        .await;
    assert_eq!(a.event().await, watch(EventKind::NodeCreated, "/raw/x"));
    assert!(matches!(
        a.event().await,
        RawEvent::Reply { op, result: Ok(OpOk::Data { .. }) } if op == read
    ));

    // Errors.
    let exists = Err(ZkError::NodeExists);
    assert_eq!(a.create("/raw/x", CreateMode::Persistent).await, exists);
    let no_parent = a.create("/nowhere/x", CreateMode::Persistent).await;
    assert_eq!(no_parent, Err(ZkError::NoNode));
    let ephemeral_child = a
        .create("/raw/n-0000000001/c", CreateMode::Persistent)
        .await;
    assert_eq!(ephemeral_child, Err(ZkError::NoChildrenForEphemerals));
    let delete_missing = Request::Delete {
        path: p("/raw/missing"),
        version: None,
    };
    assert_eq!(a.call(delete_missing).await, Err(ZkError::NoNode));
    let not_empty = Request::Delete {
        path: p("/raw"),
        version: None,
    };
    assert_eq!(a.call(not_empty).await, Err(ZkError::NotEmpty));
    let set = |version| Request::SetData {
        path: p("/raw/x"),
        data: b"v".to_vec(),
        version,
    };
    assert_eq!(a.call(set(Some(5))).await, Err(ZkError::BadVersion));
    let Ok(OpOk::DataSet { stat }) = a.call(set(Some(0))).await else {
        panic!("set_data")
    };
    assert_eq!(stat.version, 1);
    assert!(stat.mzxid > stat.czxid);

    // Removing a watch: its event never comes.
    let watched = Request::Exists {
        path: p("/raw/x"),
        watch: true,
    };
    assert!(matches!(
        a.call(watched).await,
        Ok(OpOk::Exists { stat: Some(_) })
    ));
    let remove = Request::RemoveWatches {
        path: p("/raw/x"),
        kind: WatcherKind::Data,
    };
    assert_eq!(a.call(remove.clone()).await, Ok(OpOk::WatchesRemoved));
    assert_eq!(a.call(remove).await, Err(ZkError::NoWatcher));
    assert!(b.call(set(None)).await.is_ok());
    let quiet = Request::Exists {
        path: p("/raw/x"),
        watch: false,
    };
    assert!(matches!(a.call(quiet).await, Ok(OpOk::Exists { stat: Some(s) }) if s.version == 2));

    // Closing ends the stream and the session's ephemerals.
    a.session.close().await;
    assert_eq!(
        bounded("closed stream", EVENT_WAIT, a.session.next_event()).await,
        None
    );
    let left = b
        .call(Request::GetChildren {
            path: p("/raw"),
            watch: false,
        })
        .await;
    let names = match &left {
        Ok(OpOk::Children { names, .. }) => names.clone(),
        other => panic!("a listing: {other:?}"),
    };
    assert_eq!(names, ["x"]);
    b.session.close().await;
}

/// Records the framework's session events of one client.
#[derive(Clone, Default)]
struct Sessions(Arc<StdMutex<Vec<SessionEvent>>>);

impl Observer<Mutex> for Sessions {
    fn observe(&mut self, observed: Observed<'_, Mutex>) {
        if let Observed::Session(event) = observed {
            self.0.lock().unwrap().push(event);
        }
    }
}

/// Starts a driver task for client `slot` on `connector`.
fn spawn(
    connector: &RealConnector,
    slot: u16,
    sessions: &Sessions,
) -> (Handle<Mutex>, tokio::task::JoinHandle<Client<Mutex>>) {
    let framework = Framework::new(FrameworkConfig::default(), ClientSlot(slot), 1);
    let (driver, handle) = Driver::new(Client::new(framework, Mutex::new(p("/locks/real"))));
    let connector = connector.clone();
    let mut observer = sessions.clone();
    let task = tokio::spawn(async move { driver.run(&connector, &mut observer).await });
    (handle, task)
}

/// What the contending clients did.
#[derive(Default)]
struct Shared {
    resource: FencedResource,
    tokens: Vec<Token>,
    stale: u32,
}

/// The next notice that is not a connection-state notice (those are counted by the
/// observer; a holder that was only suspended carries on, as the workload does).
async fn next_decisive(handle: &mut Handle<Mutex>) -> Notice {
    loop {
        let notice = bounded("notice", Duration::from_secs(60), handle.next_notice())
            .await
            .expect("driver running");
        match notice {
            Notice::Suspended { .. } | Notice::Reconnected { .. } => continue,
            other => return other,
        }
    }
}

/// `clients` driver tasks each acquire `rounds` times, read the fenced counter, hold for a
/// moment, write it plus one, and release.
fn contend(
    connector: &RealConnector,
    clients: u16,
    rounds: u32,
    shared: &Arc<StdMutex<Shared>>,
) -> Vec<(Sessions, tokio::task::JoinHandle<()>)> {
    let mut workers = Vec::new();
    for slot in 0..clients {
        let sessions = Sessions::default();
        let (mut handle, task) = spawn(connector, slot, &sessions);
        let shared = shared.clone();
        let worker = tokio::spawn(async move {
            for _ in 0..rounds {
                handle.call(Call::acquire(OWNER, None)).unwrap();
                let token = match next_decisive(&mut handle).await {
                    Notice::Acquired { token, .. } => token,
                    other => panic!("client {slot}: expected Acquired, got {other:?}"),
                };
                let read = {
                    let mut shared = shared.lock().unwrap();
                    shared.tokens.push(token);
                    shared.resource.read(token)
                };
                tokio::time::sleep(Duration::from_millis(5 + u64::from(slot))).await;
                {
                    let mut shared = shared.lock().unwrap();
                    let written = read.and_then(|v| shared.resource.write(token, v + 1));
                    if written.is_err() {
                        shared.stale += 1;
                    }
                }
                handle.call(Call::release(OWNER)).unwrap();
                match next_decisive(&mut handle).await {
                    Notice::Released { remaining: 0, .. } => {}
                    other => panic!("client {slot}: expected Released, got {other:?}"),
                }
            }
            drop(handle);
            bounded("driver end", EVENT_WAIT, task).await.unwrap();
        });
        workers.push((sessions, worker));
    }
    workers
}

/// Exclusion held: no stale access, no lost update, tokens strictly increasing.
fn check(shared: &Shared, acquisitions: u64) {
    assert_eq!(shared.stale, 0, "stale accesses");
    assert_eq!(shared.resource.value(), acquisitions, "no lost update");
    assert_eq!(shared.tokens.len() as u64, acquisitions);
    assert!(
        shared.tokens.windows(2).all(|w| w[0] < w[1]),
        "{:?}",
        shared.tokens
    );
}

async fn assert_no_lock_nodes(connector: &RealConnector) {
    let (mut raw, _) = Raw::open(connector).await;
    let left = raw
        .call(Request::GetChildren {
            path: p("/locks/real"),
            watch: false,
        })
        .await;
    assert!(
        matches!(&left, Ok(OpOk::Children { names, .. }) if names.is_empty()),
        "{left:?}"
    );
    raw.session.close().await;
}

#[tokio::test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
async fn mutex_clients_take_turns_on_a_real_server() {
    let server = standalone();
    let connector = RealConnector::new(server.connect_string(), Duration::from_secs(4));
    let shared = Arc::new(StdMutex::new(Shared::default()));
    let began = Instant::now();
    for (_, worker) in contend(&connector, 3, 5, &shared) {
        bounded("worker", Duration::from_secs(60), worker)
            .await
            .unwrap();
    }
    eprintln!("15 acquisitions by 3 clients in {:?}", began.elapsed());
    check(&shared.lock().unwrap(), 15);
    assert_no_lock_nodes(&connector).await;
}

#[tokio::test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
async fn clients_carry_on_when_the_ensemble_leader_is_killed() {
    let settings = Settings {
        max_session_timeout: Some(Duration::from_secs(10)),
        ..Settings::default()
    };
    let ensemble = Ensemble::start_with(3, settings).unwrap_or_else(|e| panic!("{e}"));
    let connector = RealConnector::new(ensemble.connect_string(), Duration::from_secs(8));
    let ensemble = Arc::new(StdMutex::new(ensemble));
    let shared = Arc::new(StdMutex::new(Shared::default()));
    let workers = contend(&connector, 3, 6, &shared);

    // Kill the leader once the clients are under way.
    let deadline = Instant::now() + Duration::from_secs(30);
    while shared.lock().unwrap().tokens.len() < 3 {
        assert!(Instant::now() < deadline, "no acquisitions within 30 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let killer = ensemble.clone();
    let (old, new, election) = tokio::task::spawn_blocking(move || {
        let mut ensemble = killer.lock().unwrap();
        let old = ensemble.leader().expect("a leader");
        ensemble.kill(old).unwrap();
        let began = Instant::now();
        let new = ensemble
            .wait_leader(Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("{e}"));
        (old, new, began.elapsed())
    })
    .await
    .unwrap();
    eprintln!("leader {old} killed; server {new} leads after {election:?}");
    assert_ne!(old, new);

    let mut reconnected = 0;
    for (sessions, worker) in workers {
        bounded("worker", Duration::from_secs(90), worker)
            .await
            .unwrap();
        let events = sessions.0.lock().unwrap().clone();
        eprintln!("session events: {events:?}");
        let same_session = SessionEvent::Reconnected {
            session_changed: false,
        };
        if events.contains(&SessionEvent::Suspended) && events.contains(&same_session) {
            reconnected += 1;
        }
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, SessionEvent::Lost { .. })),
            "sessions survive a leader election: {events:?}"
        );
    }
    assert!(reconnected > 0, "some client was suspended and reconnected");
    check(&shared.lock().unwrap(), 18);
    assert_no_lock_nodes(&connector).await;
}

/// Kills (or restarts) the standalone server off the async thread.
async fn blocking<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(job).await.unwrap()
}

#[tokio::test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
async fn a_server_restart_keeps_the_session_and_re_registers_its_watches() {
    let server = Arc::new(StdMutex::new(standalone()));
    let connect_string = server.lock().unwrap().connect_string();
    let connector = RealConnector::new(connect_string, Duration::from_secs(4));
    let (mut a, first) = Raw::open(&connector).await;
    created(a.create("/w", CreateMode::Persistent).await);
    let missing = Request::Exists {
        path: p("/w/x"),
        watch: true,
    };
    assert_eq!(a.call(missing).await, Ok(OpOk::Exists { stat: None }));
    let children = Request::GetChildren {
        path: p("/w"),
        watch: true,
    };
    assert!(a.call(children).await.is_ok());

    let killed = server.clone();
    blocking(move || killed.lock().unwrap().kill()).await;
    assert_eq!(
        a.event().await,
        RawEvent::State {
            state: RawState::Disconnected
        }
    );
    // A request made while disconnected waits for the reconnect and gets its reply.
    let read = a
        .send(Request::GetData {
            path: p("/w"),
            watch: false,
        })
        .await;
    let restarted = server.clone();
    let began = Instant::now();
    blocking(move || restarted.lock().unwrap().restart(Duration::ZERO))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.event().await, RawEvent::State { state: first });
    eprintln!("reconnected {:?} after the restart began", began.elapsed());
    assert!(matches!(
        a.event().await,
        RawEvent::Reply { op, result: Ok(OpOk::Data { .. }) } if op == read
    ));

    // The watches were re-registered (by the crate's SetWatches): they fire.
    let (mut b, _) = Raw::open(&connector).await;
    created(b.create("/w/x", CreateMode::Persistent).await);
    assert_eq!(a.event().await, watch(EventKind::NodeCreated, "/w/x"));
    assert_eq!(a.event().await, watch(EventKind::NodeChildrenChanged, "/w"));
    a.session.close().await;
    b.session.close().await;
}

#[tokio::test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
async fn a_server_down_longer_than_the_timeout_expires_the_session() {
    let mut server = standalone();
    let connector = RealConnector::new(server.connect_string(), Duration::from_secs(1));
    let (mut a, _) = Raw::open(&connector).await;
    server.kill();
    assert_eq!(
        a.event().await,
        RawEvent::State {
            state: RawState::Disconnected
        }
    );
    let read = a
        .send(Request::GetData {
            path: p("/"),
            watch: false,
        })
        .await;
    // The crate gives up after 7/5 of the timeout without a server: its own expiry.
    assert_eq!(
        a.event().await,
        RawEvent::Reply {
            op: read,
            result: Err(ZkError::SessionExpired)
        }
    );
    assert_eq!(
        a.event().await,
        RawEvent::State {
            state: RawState::Expired
        }
    );
    let late = a
        .call(Request::GetData {
            path: p("/"),
            watch: false,
        })
        .await;
    assert_eq!(late, Err(ZkError::SessionExpired));
    a.session.close().await;
}

#[tokio::test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
async fn an_expiry_by_a_second_connection_ends_the_session_and_its_ephemerals() {
    let server = standalone();
    let connector = RealConnector::new(server.connect_string(), Duration::from_secs(4));
    let (mut a, _) = Raw::open(&connector).await;
    let (mut b, _) = Raw::open(&connector).await;
    created(a.create("/mine", CreateMode::Ephemeral).await);
    let watched = Request::Exists {
        path: p("/mine"),
        watch: true,
    };
    assert!(matches!(
        b.call(watched).await,
        Ok(OpOk::Exists { stat: Some(_) })
    ));
    let began = Instant::now();
    bounded("expire", EVENT_WAIT, a.session.expire())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("expired after {:?}", began.elapsed());
    assert_eq!(b.event().await, watch(EventKind::NodeDeleted, "/mine"));
    // The second connection takes the session over (this one is disconnected, and may
    // reconnect before the close); after the close, this one reconnects to learn of expiry.
    let mut states = Vec::new();
    loop {
        match a.event().await {
            RawEvent::State {
                state: RawState::Expired,
            } => break,
            RawEvent::State { state } => states.push(state),
            other => panic!("expected only state changes, got {other:?}"),
        }
    }
    eprintln!(
        "states before Expired: {states:?}, {:?} after the expiry began",
        began.elapsed()
    );
    assert_eq!(states.first(), Some(&RawState::Disconnected), "{states:?}");
    assert_eq!(states.last(), Some(&RawState::Disconnected), "{states:?}");
    a.session.close().await;
    b.session.close().await;
}

#[tokio::test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
async fn a_watch_event_precedes_every_reply_that_reflects_its_change() {
    let server = standalone();
    let connector = RealConnector::new(server.connect_string(), Duration::from_secs(4));
    race_changes_against_reads(&connector).await;
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn on_the_calling_thread_a_watch_event_precedes_every_reply_that_reflects_its_change() {
    let server = standalone();
    let connector =
        RealConnector::new(server.connect_string(), Duration::from_secs(4)).on_the_calling_thread();
    executor::block_on(race_changes_against_reads(&connector));
}

/// 200 rounds of a change on one session racing a read on another that watches the node:
/// the watch event comes before the read's reply exactly when the read reflects the change.
async fn race_changes_against_reads(connector: &RealConnector) {
    let (mut a, _) = Raw::open(connector).await;
    let (mut b, _) = Raw::open(connector).await;
    created(a.create("/s", CreateMode::Persistent).await);
    let changed = watch(EventKind::NodeDataChanged, "/s");
    let (mut reflected, mut before, mut early) = (0, 0, 0);
    for round in 1..=200 {
        let watched = Request::Exists {
            path: p("/s"),
            watch: true,
        };
        assert!(a.call(watched).await.is_ok());
        // The change and the read race on the server.
        let set = b
            .send(Request::SetData {
                path: p("/s"),
                data: Vec::new(),
                version: None,
            })
            .await;
        let read = a
            .send(Request::GetData {
                path: p("/s"),
                watch: false,
            })
            .await;
        let mut seen_watch = false;
        let version = loop {
            match a.event().await {
                event if event == changed => seen_watch = true,
                RawEvent::Reply {
                    op,
                    result: Ok(OpOk::Data { stat, .. }),
                } if op == read => break stat.version,
                other => panic!("round {round}: unexpected {other:?}"),
            }
        };
        if version == round {
            reflected += 1;
            assert!(
                seen_watch,
                "round {round}: the reply reflects the change, no watch before"
            );
        } else {
            before += 1;
            assert_eq!(version, round - 1);
            // The server sent the event after the reply: it must come after it too.
            early += u32::from(seen_watch);
            assert!(
                !seen_watch,
                "round {round}: a later watch event overtook the reply"
            );
            if !seen_watch {
                assert_eq!(a.event().await, changed, "round {round}");
            }
        }
        assert!(matches!(b.event().await, RawEvent::Reply { op, result: Ok(_) } if op == set));
    }
    eprintln!(
        "200 races: {reflected} reads saw the change (each after its watch event), {before} did \
         not ({early} of those had the watch event emitted before the reply)"
    );
    a.session.close().await;
    b.session.close().await;
}

/// A driver task for client `slot` with its own connector (so its session can be expired).
fn spawn_own(
    connect_string: &str,
    slot: u16,
) -> (
    RealConnector,
    Handle<Mutex>,
    tokio::task::JoinHandle<Client<Mutex>>,
) {
    let connector = RealConnector::new(connect_string, Duration::from_secs(4));
    let (handle, task) = spawn(&connector, slot, &Sessions::default());
    (connector, handle, task)
}

#[tokio::test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
async fn an_expired_holder_loses_the_lock_and_the_waiter_acquires() {
    let server = standalone();
    let (holder_connector, mut holder, holder_task) = spawn_own(&server.connect_string(), 0);
    let (_, mut waiter, waiter_task) = spawn_own(&server.connect_string(), 1);
    holder.call(Call::acquire(OWNER, None)).unwrap();
    let Notice::Acquired { token: first, .. } = next_decisive(&mut holder).await else {
        panic!("the holder acquires")
    };
    waiter.call(Call::acquire(OWNER, None)).unwrap();
    // The waiter is queued behind the holder: wait (bounded) for its node.
    let (mut raw, _) = Raw::open(&RealConnector::new(
        server.connect_string(),
        Duration::from_secs(4),
    ))
    .await;
    let deadline = Instant::now() + EVENT_WAIT;
    loop {
        let children = Request::GetChildren {
            path: p("/locks/real"),
            watch: false,
        };
        if let Ok(OpOk::Children { names, .. }) = raw.call(children).await
            && names.len() == 2
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the waiter's node never appeared"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let began = Instant::now();
    bounded("expire", EVENT_WAIT, holder_connector.expire_latest())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let Notice::Acquired { token: next, .. } = next_decisive(&mut waiter).await else {
        panic!("the waiter acquires")
    };
    eprintln!(
        "the waiter acquired {:?} after the expiry began",
        began.elapsed()
    );
    assert!(next > first);
    match next_decisive(&mut holder).await {
        Notice::Lost { owner } => assert_eq!(owner, OWNER),
        other => panic!("expected Lost, got {other:?}"),
    }
    waiter.call(Call::release(OWNER)).unwrap();
    assert!(matches!(
        next_decisive(&mut waiter).await,
        Notice::Released { remaining: 0, .. }
    ));
    drop((holder, waiter));
    bounded("holder end", EVENT_WAIT, holder_task)
        .await
        .unwrap();
    bounded("waiter end", EVENT_WAIT, waiter_task)
        .await
        .unwrap();
    raw.session.close().await;
}

#[tokio::test]
async fn an_unreachable_server_gives_no_event_a_named_error_an_empty_expiry_and_a_prompt_close() {
    // A port nobody listens on (bound, then released), on loopback.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let address = format!("127.0.0.1:{port}");
    let connector = RealConnector::new(address.clone(), Duration::from_secs(1));
    let session = connector.connect().await;
    let quiet = tokio::time::timeout(Duration::from_millis(300), session.next_event()).await;
    assert!(quiet.is_err(), "no event without a server: {quiet:?}");
    let deadline = Instant::now() + EVENT_WAIT;
    let error = loop {
        if let Some(error) = session.last_error() {
            break error;
        }
        assert!(
            Instant::now() < deadline,
            "no connection error within {EVENT_WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(error.contains(&address), "{error}");
    // Not connected, so no session on any server: an expiry expires nothing (as the simulated
    // server's does for a client it has no session of), where it used to fail the run.
    let expired = bounded("expiry", Duration::from_secs(5), connector.expire_latest()).await;
    assert_eq!(expired, Ok(()));
    bounded("close", Duration::from_secs(5), session.close()).await;
    assert_eq!(session.next_event().await, None);
}

#[tokio::test]
async fn a_session_on_the_calling_thread_outside_the_executor_ends_at_once_saying_why() {
    let connector =
        RealConnector::new("127.0.0.1:1", Duration::from_secs(1)).on_the_calling_thread();
    let session = connector.connect().await;
    assert_eq!(session.next_event().await, None);
    let error = session.last_error().expect("an error");
    assert!(error.contains("real::executor::block_on"), "{error}");
    bounded("close", Duration::from_secs(5), session.close()).await;
}
