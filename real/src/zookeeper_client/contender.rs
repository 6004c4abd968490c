//! The contender program (`splitbrain zookeeper-client-contender`, and this crate's
//! `splitbrain-zookeeper-client-contender` binary for its tests): the contender protocol
//! ([`crate::contender::protocol`]) served by `zookeeper-client` 0.11's own lock through its
//! public API only.
//!
//! - `mutex` is `Client::lock` with Curator's prefix, `LockPrefix::new_curator(lock_path,
//!   "lock-")`: Curator's `InterProcessMutex` node names, so that the contender shares a lock
//!   path with Curator's and splitbrain's mutexes (see [`super`]), and the prefix by which the
//!   crate finds its own node again after a connection loss during the create (the uuid, not
//!   the session: `Client::find_lock`). Missing parents are created as containers, as Curator
//!   creates them. `acquire` awaits the lock; with a `timeout_ms` the lock is raced against a
//!   timer, as the crate's documentation says to (the lock is cancellation safe), and a timeout
//!   is `timed_out`. The hold is the crate's `LockClient` (kept as its owned form,
//!   `LockClient::into_owned`), and `release` drops it: the crate's only release, which deletes
//!   the node on a task of its own and tells nobody whether the delete was made, so `released`
//!   is reported at once.
//! - The token is the lock node's czxid, read with `Client::check_stat` on the
//!   `LockClient::lock_path` the grant gives (the lock itself gives no stat); a node gone by
//!   then (its session ended at the grant) is a `failed` with `no_node`, the hold given back.
//! - What the crate's `Client::state_watcher` says while the contender holds is reported as it
//!   says it: `Disconnected` is `suspended`, `SyncConnected` after it `reconnected`, `Expired`
//!   `lost` (its `Closed` is the contender's own end). An expired `Client` is done for good
//!   (`Expired` is a terminal state: the crate never connects on a new session by itself), so
//!   the contender, as an application must, connects a new `Client` at its next acquire and
//!   reports its session as `session`.
//! - `ready` and `session` carry `Client::session()`'s id; the crate keeps the password to
//!   itself (`SessionInfo` has no accessor for it), so it is the one the server derives from
//!   the id ([`crate::contender::password`]).
//! - Errors are named by the ZooKeeper error they carry (`connection_loss`, `session_expired`,
//!   `no_node`, ...), or `library` for the crate's own (`Timeout`, `ClientClosed`, a
//!   connection given up: `Custom`).
//! - What the crate does not have is a `failed` with `unsupported`: another `mode` than
//!   exclusive, and every election command (`start`, `requeue`, `relinquish`, `close`,
//!   `await`, `has_leadership`).
//!
//! The crate spawns its session's task through `spawns-core` and registers its socket and
//! timers with `async-io`'s reactor, with no tokio support enabled (its `tokio` feature is
//! off in this workspace), so the contender runs on [`crate::executor`]'s one-thread executor,
//! as this crate's real sessions do ([`crate::session`]).

use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

use coordination::recipes::{FailReason, Mode};
use futures::FutureExt;
use zookeeper_client as zk;

use crate::contender::password::password;
use crate::contender::protocol::{Command, Hello, Report, fail_name};
use crate::contender::serve::{self, Served, czxid, failure, panicked, say};
use crate::executor;
use crate::session::CLOSE_WAIT;

/// Curator's `InterProcessMutex` lock name, the middle of its nodes' names.
const LOCK_NAME: &str = "lock-";
/// How long the contender waits between failed connection attempts.
const RETRY_CONNECT: Duration = Duration::from_millis(100);

/// Runs the contender on [`executor`]'s one-thread executor: exits 0 once stdin ends, 2 with
/// one line on stderr when a line is not a command or the crate cannot connect.
pub fn serve() -> ExitCode {
    serve::serve::<Contender>(executor::block_on)
}

/// The `failed` report of the crate's `error`.
fn failed(error: &zk::Error) -> Report {
    let reason = programs::zookeeper_error(error).map_or(FailReason::Library, FailReason::Zk);
    failure(&fail_name(reason), &error.to_string())
}

/// One contender: the crate's client and the lock it holds.
struct Contender {
    hello: Hello,
    client: zk::Client,
    /// A lock is held: session states are reported.
    holding: Rc<Cell<bool>>,
    /// The lock held.
    lock: Option<zk::OwnedLockClient>,
}

impl Served for Contender {
    /// Connects, reports `ready` and listens to the client's session states.
    async fn start(hello: Hello) -> Result<Contender, String> {
        let client = connect(&hello)
            .await
            .map_err(|e| format!("connect {}: {e}", hello.connect))?;
        let session = client.session().id().0;
        say(Report::Ready {
            session_id: session,
            password: password(session),
        });
        let contender = Contender {
            hello,
            client,
            holding: Rc::new(Cell::new(false)),
            lock: None,
        };
        contender.listen();
        Ok(contender)
    }

    async fn answer(&mut self, command: Command) {
        match command {
            Command::Acquire { mode, timeout_ms } if mode.is_exclusive() => {
                self.acquire(timeout_ms.map(Duration::from_millis)).await;
            }
            Command::Release { mode } if mode.is_exclusive() => self.release(),
            Command::Acquire { .. } | Command::Release { .. } => say(failure(
                "unsupported",
                "zookeeper-client's Client::lock is exclusive: it has no other mode",
            )),
            Command::Start
            | Command::Requeue
            | Command::Relinquish
            | Command::Close { .. }
            | Command::Await { .. }
            | Command::HasLeadership => say(failure(
                "unsupported",
                "zookeeper-client has no leader election: the contender runs Client::lock",
            )),
            // Answered by the protocol's loop.
            Command::Read { .. } | Command::Write { .. } | Command::Hello(_) => {}
        }
    }

    /// Drops the lock (its node deleted on a task of its own) and the client, which closes
    /// the session once the delete is done; waits for the close, bounded by [`CLOSE_WAIT`].
    async fn end(self) {
        self.holding.set(false);
        let mut states = self.client.state_watcher();
        drop(self.lock);
        drop(self.client);
        let closed = async {
            while !states.peek_state().is_terminated() {
                states.changed().await;
            }
        };
        executor::within(CLOSE_WAIT, closed).await;
    }
}

impl Contender {
    /// Reports the client's session states while the contender holds, on a task of its own,
    /// until the session ends.
    fn listen(&self) {
        let mut states = self.client.state_watcher();
        let holding = self.holding.clone();
        drop(executor::spawn(async move {
            loop {
                let state = states.changed().await;
                let report = match state {
                    zk::SessionState::Disconnected => Some(Report::Suspended),
                    zk::SessionState::SyncConnected => Some(Report::Reconnected),
                    zk::SessionState::Expired => Some(Report::Lost),
                    // Its own end, and states of what the contender never asks for.
                    zk::SessionState::Closed
                    | zk::SessionState::AuthFailed
                    | zk::SessionState::ConnectedReadOnly => None,
                };
                if let Some(report) = report.filter(|_| holding.get()) {
                    say(report);
                }
                if state.is_terminated() {
                    return;
                }
            }
        }));
    }

    /// `Client::lock`, its token read, within `timeout` when given; on a new session first
    /// when the client's has ended.
    async fn acquire(&mut self, timeout: Option<Duration>) {
        if let Err(e) = self.renew().await {
            return say(failed(&e));
        }
        let taking = AssertUnwindSafe(self.take()).catch_unwind();
        let taken = match timeout {
            Some(limit) => executor::within(limit, taking).await,
            None => Some(taking.await),
        };
        match taken {
            None => say(Report::TimedOut),
            Some(Err(_)) => say(panicked("Client::lock panicked")),
            Some(Ok(Err(e))) => say(failed(&e)),
            Some(Ok(Ok((lock, token)))) => {
                self.lock = Some(lock);
                self.holding.set(true);
                say(Report::Acquired {
                    token,
                    mode: Mode::Exclusive,
                });
            }
        }
    }

    /// The lock and its token: its node's czxid. A node gone before it is read is `NoNode`
    /// (the lock, dropped, is given back).
    async fn take(&self) -> Result<(zk::OwnedLockClient, u64), zk::Error> {
        let prefix = zk::LockPrefix::new_curator(&self.hello.lock_path, LOCK_NAME)?;
        let parents = zk::CreateMode::Container.with_acls(zk::Acls::anyone_all());
        let options =
            zk::LockOptions::new(zk::Acls::anyone_all()).with_ancestor_options(parents)?;
        let lock = self.client.lock(prefix, b"", options).await?.into_owned();
        let stat = self.client.check_stat(lock.lock_path()).await?;
        let stat = stat.ok_or(zk::Error::NoNode)?;
        Ok((lock, czxid(stat.czxid)))
    }

    /// A new client, reported as a `session`, when the current one's session has ended
    /// (expired: the crate does not connect again by itself).
    async fn renew(&mut self) -> Result<(), zk::Error> {
        if !self.client.state().is_terminated() {
            return Ok(());
        }
        self.client = connect(&self.hello).await?;
        let session = self.client.session().id().0;
        say(Report::Session {
            session_id: session,
            password: password(session),
        });
        self.listen();
        Ok(())
    }

    /// Drops the lock: the crate deletes its node on a task of its own.
    fn release(&mut self) {
        match self.lock.take() {
            Some(lock) => {
                self.holding.set(false);
                drop(lock);
                say(Report::Released {
                    mode: Mode::Exclusive,
                });
            }
            None => say(failure("not_held", "no lock held")),
        }
    }
}

/// A client on a new session with the hello's session timeout, tried again every
/// [`RETRY_CONNECT`] for the hello's connection timeout: the last attempt's error then.
async fn connect(hello: &Hello) -> Result<zk::Client, zk::Error> {
    let deadline = Instant::now() + Duration::from_millis(hello.connection_timeout_ms);
    loop {
        let connecting = zk::Client::connector()
            .with_session_timeout(Duration::from_millis(hello.session_timeout_ms))
            .connect(&hello.connect);
        match connecting.await {
            Ok(client) => return Ok(client),
            Err(e) if Instant::now() >= deadline => return Err(e),
            Err(_) => async_io::Timer::after(RETRY_CONNECT).await,
        };
    }
}
