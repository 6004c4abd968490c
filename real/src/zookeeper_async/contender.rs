//! The contender program (`splitbrain zookeeper-async-contender`, and this crate's
//! `splitbrain-zookeeper-async-contender` binary for its tests): the contender protocol
//! ([`crate::contender::protocol`]) served by `zookeeper-async`'s own recipes through its
//! public API only. `mutex`: `recipes::shared_lock::lock` (the hold is its `LockGuard`, given
//! back by dropping it); `leader-latch`: a new `recipes::leader_latch::LeaderLatch` per
//! `start`, `stop` at `close`. What the crate cannot do is a `failed` with `unsupported`: an
//! acquire with a timeout (`lock` takes none) and `await` (the latch has none). The latch
//! tells nobody when its leadership changes; an application learns it from
//! `has_leadership()`, which the contender asks every 5 ms and reports each change of as
//! `is_leader` or `not_leader`. The crate's connection listener (`ZooKeeper::add_listener`)
//! is reported while the contender holds or leads: `Connecting` is `suspended`, `Connected`
//! `reconnected`, `NotConnected` (its word for an expired session) `lost`; once an expired
//! session is lost the crate connects on a new one by itself, which is a `session` report.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use coordination::recipes::Mode;
use tokio::task::JoinHandle;
use zookeeper_async::recipes::leader_latch::LeaderLatch;
use zookeeper_async::recipes::shared_lock::{self, LockGuard};
use zookeeper_async::{WatchedEvent, ZkError, ZkState, ZooKeeper};

use super::session;
use crate::contender::password::password;
use crate::contender::protocol::{Command, Hello, Report};
use crate::contender::serve::{self, Served, czxid, failure, panicked, say};

/// How often a latch's `has_leadership()` is asked.
const POLL: Duration = Duration::from_millis(5);

/// Runs the contender on a tokio runtime: exits 0 once stdin ends, 2 with one line on stderr
/// when a line is not a command or the crate cannot start.
pub fn serve() -> ExitCode {
    serve::serve::<Contender>(|run| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| format!("cannot build a tokio runtime: {e}"))?;
        runtime.block_on(run)
    })
}

/// The `failed` report of the crate's `error`, named as splitbrain names ZooKeeper's errors
/// (`ConnectionLoss` is `connection_loss`).
fn failed(error: ZkError) -> Report {
    let name = format!("{error:?}");
    let mut snake = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            snake.push('_');
        }
        snake.push(c.to_ascii_lowercase());
    }
    failure(&snake, &error.to_string())
}

/// What the contender's listener and its commands share.
struct Shared {
    /// A hold or a leadership is held: connection states are reported.
    holding: AtomicBool,
    /// The crate said `NotConnected`: its next `Connected` is on a new session.
    expired: AtomicBool,
    /// The session last reported (`ready` or `session`).
    session: tokio::sync::Mutex<i64>,
}

/// One contender: the crate's client, and the hold or latch it has.
struct Contender {
    zk: Arc<ZooKeeper>,
    hello: Hello,
    shared: Arc<Shared>,
    /// The `mutex`'s hold.
    guard: Option<Arc<LockGuard>>,
    /// The `leader-latch`'s latch and the task asking it whether it leads.
    latch: Option<(LeaderLatch, JoinHandle<()>)>,
}

impl Contender {
    fn new(zk: Arc<ZooKeeper>, hello: Hello) -> Contender {
        Contender {
            zk,
            hello,
            shared: Arc::new(Shared {
                holding: AtomicBool::new(false),
                expired: AtomicBool::new(false),
                session: tokio::sync::Mutex::new(0),
            }),
            guard: None,
            latch: None,
        }
    }

    /// Learns the session, reports `ready` and listens to the crate's connection states.
    async fn ready(&mut self) -> Result<(), String> {
        let id = session::current(&self.zk, &self.hello.lock_path)
            .await
            .map_err(|e| format!("{}: cannot learn the session: {e}", self.hello.connect))?;
        *self.shared.session.lock().await = id;
        say(Report::Ready {
            session_id: id,
            password: password(id),
        });
        let (zk, shared, path) = (
            self.zk.clone(),
            self.shared.clone(),
            self.hello.lock_path.clone(),
        );
        self.zk.add_listener(move |state| {
            let holding = shared.holding.load(Ordering::SeqCst);
            // The crate marks `NotConnected` deprecated, yet says it when the server answers
            // its reconnect with an expired session (src/io.rs:239-241).
            #[allow(deprecated)]
            match state {
                ZkState::NotConnected => {
                    shared.expired.store(true, Ordering::SeqCst);
                    holding.then(|| say(Report::Lost));
                }
                ZkState::Connecting if !shared.expired.load(Ordering::SeqCst) => {
                    holding.then(|| say(Report::Suspended));
                }
                ZkState::Connected if shared.expired.swap(false, Ordering::SeqCst) => {
                    let (zk, shared, path) = (zk.clone(), shared.clone(), path.clone());
                    tokio::spawn(async move { learn(&zk, &shared, &path).await });
                }
                ZkState::Connected => {
                    holding.then(|| say(Report::Reconnected));
                }
                _ => {}
            }
        });
        Ok(())
    }

    /// `shared_lock::lock`, on a task of its own so that a panic of the crate's is a
    /// `failed` report naming it, not the contender's end.
    async fn acquire(&mut self) {
        let lock = tokio::spawn(shared_lock::lock(
            self.zk.clone(),
            self.hello.lock_path.clone(),
        ));
        let guard = match lock.await {
            Ok(Ok(guard)) => guard,
            Ok(Err(e)) => return say(failed(e)),
            Err(_) => return say(panicked("shared_lock::lock panicked")),
        };
        match self.lock_token().await {
            Ok(token) => {
                self.guard = Some(guard);
                self.shared.holding.store(true, Ordering::SeqCst);
                say(Report::Acquired {
                    token,
                    mode: Mode::Exclusive,
                });
            }
            // Given back (dropped), the take fails.
            Err(e) => say(failed(e)),
        }
    }

    /// The czxid of the lock node of the current session: the guard does not say which
    /// node is its own, so it is the one node under the lock path that the session owns;
    /// none (the session ended at the grant) is `no_node`.
    async fn lock_token(&self) -> Result<u64, ZkError> {
        let session = learn(&self.zk, &self.shared, &self.hello.lock_path).await?;
        let path = &self.hello.lock_path;
        for child in self.zk.get_children(path, false).await? {
            let stat = self.zk.exists(&format!("{path}/{child}"), false).await?;
            if let Some(stat) = stat.filter(|stat| stat.ephemeral_owner == session) {
                return Ok(czxid(stat.czxid));
            }
        }
        Err(ZkError::NoNode)
    }

    /// Drops the guard, whose `Drop` deletes its node on a task of its own.
    fn release(&mut self) {
        match self.guard.take() {
            Some(guard) => {
                self.shared.holding.store(false, Ordering::SeqCst);
                drop(guard);
                say(Report::Released {
                    mode: Mode::Exclusive,
                });
            }
            None => say(failure("not_held", "no lock held")),
        }
    }

    /// A new `LeaderLatch`, started, and a task asking it whether it leads.
    async fn start(&mut self) {
        if self.latch.is_some() {
            return say(failure("already_started", "a latch is started"));
        }
        let id = format!("c{}", self.hello.client);
        let latch = LeaderLatch::new(self.zk.clone(), id, self.hello.lock_path.clone());
        if let Err(e) = latch.start().await {
            // The latch is started all the same (its state is set first): close stops it.
            say(failed(e));
        }
        let watch = tokio::spawn(leadership(
            latch.clone(),
            self.zk.clone(),
            self.shared.clone(),
        ));
        self.latch = Some((latch, watch));
    }

    /// `LeaderLatch::stop`; a leader is told it leads no more when `notify`.
    async fn close(&mut self, notify: bool) {
        let Some((latch, watch)) = self.latch.take() else {
            return say(failure("not_started", "no latch started"));
        };
        watch.abort();
        let _ = watch.await;
        let led = self.shared.holding.swap(false, Ordering::SeqCst);
        let stopped = latch.stop().await;
        if led && notify {
            say(Report::NotLeader);
        }
        match stopped {
            Ok(()) => say(Report::Closed),
            Err(e) => say(failed(e)),
        }
    }
}

impl Served for Contender {
    /// Connects, learns the session, reports `ready` and listens to the crate's connection
    /// states.
    async fn start(hello: Hello) -> Result<Contender, String> {
        let timeout = Duration::from_millis(hello.session_timeout_ms);
        let zk = ZooKeeper::connect(&hello.connect, timeout, |_: WatchedEvent| {})
            .await
            .map_err(|e| format!("connect {}: {e}", hello.connect))?;
        let mut contender = Contender::new(Arc::new(zk), hello);
        contender.ready().await?;
        Ok(contender)
    }

    async fn answer(&mut self, command: Command) {
        match command {
            Command::Acquire { timeout_ms, .. } if timeout_ms.is_some() => say(failure(
                "unsupported",
                "zookeeper-async's shared_lock::lock takes no timeout",
            )),
            Command::Acquire { .. } => self.acquire().await,
            Command::Release { .. } => self.release(),
            Command::Start | Command::Requeue => self.start().await,
            Command::Close { notify } => self.close(notify).await,
            Command::Await { .. } => say(failure(
                "unsupported",
                "zookeeper-async's LeaderLatch has no await",
            )),
            Command::HasLeadership => say(Report::Leadership {
                leader: self.latch.as_ref().is_some_and(|(l, _)| l.has_leadership()),
            }),
            Command::Relinquish => say(failure(
                "unsupported",
                "zookeeper-async has no leader selector",
            )),
            // Answered by the protocol's loop.
            Command::Read { .. } | Command::Write { .. } | Command::Hello(_) => {}
        }
    }

    /// Gives back what it holds and closes the session.
    async fn end(mut self) {
        self.shared.holding.store(false, Ordering::SeqCst);
        self.guard = None;
        if let Some((latch, watch)) = self.latch.take() {
            watch.abort();
            let _ = watch.await;
            let _ = latch.stop().await;
        }
        let _ = self.zk.close().await;
    }
}

/// The session `zk` is on now, reported as a `session` when it is not the one last reported.
async fn learn(zk: &ZooKeeper, shared: &Shared, lock_path: &str) -> Result<i64, ZkError> {
    let mut last = shared.session.lock().await;
    let id = session::current(zk, lock_path).await?;
    if id != *last {
        *last = id;
        say(Report::Session {
            session_id: id,
            password: password(id),
        });
    }
    Ok(id)
}

/// Asks `latch` whether it leads every [`POLL`] and reports each change: `is_leader` with its
/// node's czxid, `not_leader`. A node gone before its czxid is read is a `failed` with
/// `no_node`, and the asking ends.
async fn leadership(latch: LeaderLatch, zk: Arc<ZooKeeper>, shared: Arc<Shared>) {
    let mut leads = false;
    loop {
        if latch.has_leadership() != leads {
            leads = !leads;
            if !leads {
                shared.holding.store(false, Ordering::SeqCst);
                say(Report::NotLeader);
            } else {
                let node = match latch.path().await {
                    Some(path) => zk.exists(&path, false).await,
                    None => Ok(None),
                };
                match node {
                    Ok(Some(stat)) => {
                        shared.holding.store(true, Ordering::SeqCst);
                        say(Report::IsLeader {
                            token: czxid(stat.czxid),
                        });
                    }
                    Ok(None) => return say(failed(ZkError::NoNode)),
                    Err(e) => return say(failed(e)),
                }
            }
        }
        tokio::time::sleep(POLL).await;
    }
}
