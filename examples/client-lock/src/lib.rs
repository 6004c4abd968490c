//! A user's program on `zookeeper-client` 0.11: its own lock, `Client::lock`, taken as its
//! documentation shows (a timed acquire is the lock future raced against a timer, which the
//! documentation says is cancellation safe), with each of the three lock-path prefixes it
//! offers, and an election on its `latch-` prefix (Curator's `LeaderLatch` names: whoever
//! holds the lock leads). Nothing here knows it runs in a simulation: the connections, timers and spawns are
//! the client's own, served by splitbrain's shims. The program tells splitbrain what it
//! believes through its [`Contender`], and uses the run's fenced resource with the lock
//! node's czxid as its token.
//!
//! What the program does on trouble is what a careful user of this API can do: a failed
//! acquire ends the session (the client is dropped) and the next attempt starts a new one. The lock
//! itself gives no signal when its session is lost while it is held.

pub mod scenarios;

use std::time::Duration;

use futures::{FutureExt, select_biased};
use splitbrain::programs::{Contender, Program, program};
use splitbrain::recipe_table::family::Family;
use zookeeper_client as zk;

/// Which of `Client::lock`'s prefixes the program locks with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prefix {
    /// `LockPrefix::new_curator(dir, "lock-")`: Curator's `_c_<uuid>-lock-` names, found again
    /// after a connection loss by their uuid.
    Curator,
    /// `LockPrefix::new_shared("<dir>/lock-")`: one prefix for every contender, found again by
    /// the node's ephemeral owner.
    Shared,
    /// `LockPrefix::new_custom("<dir>/x-<session>-", "x-")`: ZooKeeper's own `WriteLock`
    /// names.
    Custom,
    /// `LockPrefix::new_curator(dir, "latch-")` as an election: the holder leads (it starts,
    /// leads with the node's czxid as its token, and closes to step down).
    Latch,
}

impl Prefix {
    /// Every prefix: the three of the lock, and the election.
    pub const ALL: [Prefix; 4] = [
        Prefix::Curator,
        Prefix::Shared,
        Prefix::Custom,
        Prefix::Latch,
    ];

    /// The program's name in scenarios and traces.
    pub fn name(self) -> &'static str {
        match self {
            Prefix::Curator => "client-lock-curator",
            Prefix::Shared => "client-lock-shared",
            Prefix::Custom => "client-lock-custom",
            Prefix::Latch => "client-latch",
        }
    }

    /// What the checkers judge the program as: a lock, or a latch for [`Prefix::Latch`].
    pub fn family(self) -> Family {
        match self {
            Prefix::Latch => Family::Latch,
            Prefix::Curator | Prefix::Shared | Prefix::Custom => Family::Lock,
        }
    }

    /// The program that locks with this prefix.
    pub fn program(self) -> Program {
        program(self.name(), self.family(), move |contender| {
            lock_user(contender, self)
        })
    }

    /// Tells that the program asks for the lock (or joins the election).
    fn begin(self, contender: &Contender) {
        match self {
            Prefix::Latch => contender.starting(),
            _ => contender.acquiring(),
        }
    }

    /// Tells that the program holds (or leads) with `token`.
    fn granted(self, contender: &Contender, token: u64) {
        match self {
            Prefix::Latch => contender.leading(token),
            _ => contender.acquired(token),
        }
    }

    /// Tells that the program gives the lock back (or leaves the election).
    fn end(self, contender: &Contender) {
        match self {
            Prefix::Latch => contender.closing(),
            _ => contender.releasing(),
        }
    }

    /// Tells that the program has given the lock back (or left the election).
    fn ended(self, contender: &Contender) {
        match self {
            Prefix::Latch => contender.closed(),
            _ => contender.released(),
        }
    }
}

/// How one acquire ended.
enum Attempt {
    /// The program held the lock, used the resource and released.
    Held,
    /// The acquire gave up after the workload's timeout.
    TimedOut,
    /// The acquire failed: the session is given up, and the acquire tried again on a new one.
    Failed,
}

/// Acquires as many times as the workload asks, holding the lock while using the fenced
/// resource; after a failed acquire, a new session and the same acquire again.
pub async fn lock_user(contender: Contender, prefix: Prefix) -> Result<(), zk::Error> {
    let mut client = connect(&contender).await;
    contender.stagger().await;
    let mut acquisitions = 0;
    while acquisitions < contender.acquisitions() {
        let attempt = acquire_once(&contender, &client, prefix).await?;
        contender.think().await;
        match attempt {
            Attempt::Held | Attempt::TimedOut => acquisitions += 1,
            Attempt::Failed => {
                drop(client);
                client = connect(&contender).await;
            }
        }
    }
    Ok(())
}

/// A new session, asking for the scenario's session timeout; tries again until one is made.
async fn connect(contender: &Contender) -> zk::Client {
    loop {
        let connected = zk::Client::connector()
            .with_session_timeout(contender.session_timeout())
            .connect(&contender.server())
            .await;
        match connected {
            Ok(client) => {
                return client;
            }
            Err(_) => async_io::Timer::after(Duration::from_millis(100)).await,
        };
    }
}

/// One acquire and, if it succeeds, a hold and its release. `Err` only for a mistake of the
/// program's own (a prefix the client refuses).
async fn acquire_once(
    contender: &Contender,
    client: &zk::Client,
    prefix: Prefix,
) -> Result<Attempt, zk::Error> {
    let dir = contender.lock_path();
    let shared = format!("{dir}/lock-");
    let lock_prefix = match prefix {
        Prefix::Curator => zk::LockPrefix::new_curator(dir, "lock-")?,
        Prefix::Latch => zk::LockPrefix::new_curator(dir, "latch-")?,
        Prefix::Shared => zk::LockPrefix::new_shared(&shared)?,
        Prefix::Custom => {
            let custom = format!("{dir}/x-{:x}-", client.session_id().0);
            zk::LockPrefix::new_custom(custom, "x-")?
        }
    };
    let options = zk::LockOptions::new(zk::Acls::anyone_all())
        .with_ancestor_options(zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all()))?;
    prefix.begin(contender);
    // The acquire includes reading the fencing token (the lock node's czxid), so the timeout
    // bounds both.
    let acquire = async {
        let lock = client.lock(lock_prefix, b"", options).await?;
        let stat = client.check_stat(lock.lock_path()).await?;
        Ok((lock, stat.ok_or(zk::Error::NoNode)?))
    };
    let acquired: Result<_, zk::Error> = select_biased! {
        acquired = acquire.fuse() => acquired,
        () = timer(contender.acquire_timeout()).fuse() => {
            contender.timed_out();
            return Ok(Attempt::TimedOut);
        }
    };
    let (lock, stat) = match acquired {
        Ok(acquired) => acquired,
        Err(error) => {
            contender.failed(&error);
            return Ok(Attempt::Failed);
        }
    };
    let token = stat.czxid as u64;
    prefix.granted(contender, token);
    contender.use_resource(token).await;
    prefix.end(contender);
    drop(lock);
    prefix.ended(contender);
    Ok(Attempt::Held)
}

/// Fires after `timeout`, or never.
async fn timer(timeout: Option<Duration>) {
    match timeout {
        Some(timeout) => drop(async_io::Timer::after(timeout).await),
        None => futures::future::pending().await,
    }
}
