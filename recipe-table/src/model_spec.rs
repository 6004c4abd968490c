//! What produced a trace, recorded in it so that one function (`properties::verdict`) can judge
//! any trace whatever its source: the scenario a simulated (or real) run ran, or the model
//! checker's configuration — the recipe's clients, its workload and fault budgets.

use std::fmt;

use coordination::framework::FrameworkConfig;
use coordination::zk::Path;
use serde::{Deserialize, Serialize};

use crate::family::RecipeSettings;

/// The lock path of every model check.
pub const MODEL_LOCK_PATH: &str = "/lock";

/// The model checker's lock path, as a [`Path`].
pub fn model_lock_path() -> Path {
    Path::new(MODEL_LOCK_PATH).expect("a valid constant path")
}

/// Bounds on the workload and on the faults the environment may inject. Every counter in the
/// model (zxids, sequence numbers, session incarnations) stays bounded through them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Budgets {
    /// Workload cycles per client: ask for a hold (acquire, start), use it, give it back.
    pub cycles: u8,
    /// Session expiries of a paused or cut-off client, over the whole run.
    pub expiries: u8,
    /// Client crashes (the process restarts; its old session lives on until it expires).
    pub crashes: u8,
    /// Connection losses (with the in-flight request applied or not).
    pub connection_losses: u8,
    /// Failed connection attempts of a client not yet (re)connected, over the whole run
    /// (each fails what the ZooKeeper client had queued).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_attempts: u8,
    /// Sweeps of the server that delete the empty containers (those that have had children
    /// and have none left, as ZooKeeper's `ContainerManager` does every few seconds), over
    /// the whole run. A trace without the field had none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reaps: u8,
    /// Cuts of a client's server, a follower, off from the leader, over the whole run: the
    /// follower keeps the client connected and serves its reads from its own tree while the
    /// leader expires the session, until it gives up on the leader and drops the client (an
    /// ensemble's split brain without a client fault). A trace without the field had none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub follower_cuts: u8,
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

impl Default for Budgets {
    /// One cycle per client and one session expiry; no crash, no connection loss, no sweep of
    /// the empty containers, no follower cut.
    fn default() -> Self {
        Budgets {
            cycles: 1,
            expiries: 1,
            crashes: 0,
            connection_losses: 0,
            failed_attempts: 0,
            reaps: 0,
            follower_cuts: 0,
        }
    }
}

impl Budgets {
    /// The faults that end a session at the server while its client goes on acting on it:
    /// expiries, and follower cuts (the leader expires the session of a client that its
    /// cut-off follower still serves). The recipe table's expectations count them alike.
    pub fn session_expiries(&self) -> u8 {
        self.expiries.saturating_add(self.follower_cuts)
    }

    /// The faults that break a client's hold on its session: the session expiries above and
    /// the connection losses.
    pub fn session_breaks(&self) -> u32 {
        u32::from(self.session_expiries()) + u32::from(self.connection_losses)
    }
}

impl fmt::Display for Budgets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "--cycles {} --expiries {} --crashes {} --connection-losses {}",
            self.cycles, self.expiries, self.crashes, self.connection_losses
        )?;
        if self.failed_attempts > 0 {
            write!(f, " --failed-attempts {}", self.failed_attempts)?;
        }
        if self.reaps > 0 {
            write!(f, " --reaps {}", self.reaps)?;
        }
        if self.follower_cuts > 0 {
            write!(f, " --follower-cuts {}", self.follower_cuts)?;
        }
        Ok(())
    }
}

/// One model-checking configuration: what `splitbrain check` explores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ModelSpec {
    /// Number of clients (each with its own session and one owner).
    pub clients: u16,
    /// Workload and fault budgets.
    pub budgets: Budgets,
    /// Whether the protected resource checks fencing tokens.
    pub fenced: bool,
    /// The recipe's settings (`max_leases` of a semaphore, `writers` of a read-write lock,
    /// `revocable`: each cycle makes the lock revocable and asks the holder to give way).
    pub settings: RecipeSettings,
    /// Each acquire carries a timeout, whose timer may fire at any point (so a waiter may
    /// give up at any moment).
    #[serde(default)]
    pub timeouts: bool,
    /// The framework layer's settings (the error policy; the model fires the LOST timer at
    /// any point, so the session-expiration percent changes no state it explores).
    #[serde(default, skip_serializing_if = "FrameworkConfig::is_default")]
    pub framework: FrameworkConfig,
}

impl ModelSpec {
    /// `clients` clients with the default budgets, a fenced resource and the default recipe
    /// settings.
    pub fn new(clients: u16) -> ModelSpec {
        ModelSpec {
            clients,
            budgets: Budgets::default(),
            fenced: true,
            settings: RecipeSettings::default(),
            timeouts: false,
            framework: FrameworkConfig::default(),
        }
    }
}
