//! The settings of a simulated run: the server's, the workload's, the recipe's. Durations
//! are milliseconds of simulated time, as in scenario files.

use std::time::Duration;

use lock::zk::Path;
use serde::{Deserialize, Serialize};

/// The simulated ZooKeeper server's settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerSettings {
    /// ZooKeeper's tickTime: the unit of the session-timeout bounds and the granularity of
    /// the expiry check.
    pub tick_ms: u64,
    /// The session timeout clients ask for; the server clamps it to [2, 20] ticks.
    pub session_timeout_ms: u64,
    /// How often the server reaps empty containers.
    pub container_sweep_ms: u64,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            tick_ms: 200,
            session_timeout_ms: 2_000,
            container_sweep_ms: 1_000,
        }
    }
}

impl ServerSettings {
    /// The tick.
    pub fn tick(&self) -> Duration {
        Duration::from_millis(self.tick_ms)
    }

    /// The timeout the server grants for a request of `asked`: within [2, 20] ticks.
    pub fn negotiate(&self, asked: Duration) -> Duration {
        asked.clamp(self.tick() * 2, self.tick() * 20)
    }

    /// The timeout clients get: the one they ask for, negotiated.
    pub fn session_timeout(&self) -> Duration {
        self.negotiate(Duration::from_millis(self.session_timeout_ms))
    }
}

/// Which lock recipe the clients run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecipeKind {
    /// `lock::recipes::Mutex` (Curator's InterProcessMutex).
    Mutex,
    /// `lock::recipes::NaiveHerdMutex` (the known-bad herd lock).
    NaiveHerdMutex,
}

impl RecipeKind {
    /// The kebab-case name used in traces and scenario files.
    pub fn name(self) -> &'static str {
        match self {
            RecipeKind::Mutex => "mutex",
            RecipeKind::NaiveHerdMutex => "naive-herd-mutex",
        }
    }
}

/// A closed range of milliseconds, drawn from uniformly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MsRange {
    /// Smallest value.
    pub min_ms: u64,
    /// Largest value.
    pub max_ms: u64,
}

impl MsRange {
    /// Always `ms`.
    pub fn fixed(ms: u64) -> MsRange {
        MsRange {
            min_ms: ms,
            max_ms: ms,
        }
    }

    /// A draw from the run's seeded RNG.
    pub fn draw(self) -> Duration {
        use madsim::rand::Rng;
        let ms = madsim::rand::thread_rng().gen_range(self.min_ms..=self.max_ms.max(self.min_ms));
        Duration::from_millis(ms)
    }
}

/// What every client does: `acquisitions` times acquire, read the resource with the token,
/// hold, write value + 1 with the token, release, think.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workload {
    /// The lock path.
    pub lock_path: Path,
    /// Acquisitions per client.
    pub acquisitions: u32,
    /// How long a holder holds.
    pub hold: MsRange,
    /// Pause after each release (or failed acquire) before the next acquire.
    pub think: MsRange,
    /// Give up an acquire after this long (`None`: wait for ever).
    pub acquire_timeout_ms: Option<u64>,
    /// The resource rejects stale tokens.
    pub fenced: bool,
    /// Client `i` starts its first acquire `i × stagger_ms` after the start (0: all at once).
    #[serde(default)]
    pub stagger_ms: u64,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            lock_path: Path::new("/locks/splitbrain").expect("a valid path"),
            acquisitions: 3,
            hold: MsRange::fixed(100),
            think: MsRange::fixed(50),
            acquire_timeout_ms: None,
            fenced: true,
            stagger_ms: 0,
        }
    }
}
