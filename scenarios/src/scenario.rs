//! A scenario: a named run setup (recipe, clients, workload, server settings, horizon, faults,
//! seeds) and what each property must do over its seeds. Scenario files are JSON; see
//! [`Scenario::from_json`] for the one-line errors and `catalog/` for examples.
//!
//! ```json
//! {
//!   "name": "gc-pause-split-brain",
//!   "description": "A holder pauses past its session timeout; a second client takes the lock",
//!   "recipe": "mutex",
//!   "lock_path": "/locks/resource",
//!   "clients": 2,
//!   "workload": { "acquisitions": 2, "hold_ms": 3000, "think_ms": { "min": 10, "max": 50 },
//!                 "acquire_timeout_ms": null, "fenced": false },
//!   "server": { "tick_ms": 100, "session_timeout_ms": 1000, "container_sweep_ms": 500 },
//!   "horizon_ms": 20000,
//!   "faults": [ { "at_ms": 500, "fault": { "kind": "pause", "client": 0, "for_ms": 2500 } } ],
//!   "random_faults": [ { "count": { "min": 0, "max": 3 }, "at_ms": { "min": 0, "max": 8000 },
//!                        "pick": [ { "kind": "pause", "client": "any", "for_ms": { "min": 100, "max": 3000 } } ] } ],
//!   "seeds": "0..200",
//!   "properties": { "mutual_exclusion_belief": "violated", "progress": "holds" }
//! }
//! ```
//!
//! Sizes are bounded, so that a typo cannot ask for a run that takes minutes: at most
//! [`MAX_CLIENTS`] (64) clients, [`MAX_ACQUISITIONS`] (1,000) acquisitions per client, a
//! horizon of [`MAX_HORIZON_MS`] (3,600,000 ms, one simulated hour), and [`MAX_FAULTS`] (256)
//! faults per seed (the fixed faults plus the most each `random_faults` generator can draw).
//! The catalog's largest scenarios have 6 clients, 3 acquisitions, 30,000 ms and 8 faults;
//! the simulator benchmark's has 5 clients, 20 acquisitions, 60,000 ms and 8 faults.

mod parse;
mod random;
mod span;
mod validate;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use coordination::framework::FrameworkConfig;
use coordination::zk::Path;
use serde::{Deserialize, Serialize};

use crate::fault::ScheduledFault;
use crate::rng::SplitMix64;
use recipe_table::family::RecipeSettings;
use recipe_table::property::{Expectation, Property};

pub use recipe_table::recipe_ref::RecipeRef;
pub use recipe_table::recipes::RecipeKind;

pub use parse::{ScenarioError, parse_json};
pub use random::{ClientPick, FaultTemplate, NodePick, RandomFaults};
pub use span::Span;
pub use validate::{MAX_ACQUISITIONS, MAX_CLIENTS, MAX_FAULTS, MAX_HORIZON_MS};

/// A named run setup and its expectations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Kebab-case name, unique in a catalog.
    pub name: String,
    /// One line saying what the scenario shows.
    pub description: String,
    /// The recipe every client runs: a name of the table, or a user's recipe with its family
    /// ([`RecipeRef`]).
    pub recipe: RecipeRef,
    /// Settings of the recipe (`max_leases` of a semaphore, `writers` of a read-write lock).
    #[serde(default, skip_serializing_if = "RecipeSettings::is_default")]
    pub recipe_settings: RecipeSettings,
    /// The lock path the recipe uses.
    #[serde(with = "lock_path")]
    pub lock_path: Path,
    /// Number of clients (indices `0..clients`).
    pub clients: u16,
    /// What each client does.
    pub workload: Workload,
    /// The simulated server's settings.
    #[serde(default)]
    pub server: ServerSettings,
    /// The framework layer's settings (error policy, session-expiration percent); left out
    /// when they are Curator's defaults.
    #[serde(default, skip_serializing_if = "FrameworkConfig::is_default")]
    pub framework: FrameworkConfig,
    /// Simulated time the run lasts at most, in ms.
    pub horizon_ms: u64,
    /// Faults at fixed instants.
    #[serde(default)]
    pub faults: Vec<ScheduledFault>,
    /// Faults drawn per seed.
    #[serde(default)]
    pub random_faults: Vec<RandomFaults>,
    /// The seeds `hunt` runs by default.
    #[serde(default)]
    pub seeds: SeedRange,
    /// What each property must do over the seeds; absent ones are unchecked.
    #[serde(default, deserialize_with = "properties::deserialize")]
    pub properties: BTreeMap<Property, Expectation>,
}

/// What each client does: `acquisitions` times acquire → hold → release → think. While it
/// holds, a client reads the protected counter, waits `hold_ms`, then writes it plus one,
/// presenting its fencing token both times. The simulator draws hold and think times from
/// the run's seeded source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Acquisitions per client.
    pub acquisitions: u32,
    /// How long a client holds the lock, in ms (drawn per acquisition from the seed).
    pub hold_ms: Span,
    /// How long a client waits between a release and its next acquire, in ms.
    pub think_ms: Span,
    /// How long an acquire waits at most, in ms; `None` waits forever.
    #[serde(default)]
    pub acquire_timeout_ms: Option<u64>,
    /// Whether the protected resource rejects stale tokens.
    pub fenced: bool,
    /// Client `i` makes its first acquire `i × stagger_ms` after the start (0: all at once),
    /// so that scenarios can know who holds first.
    #[serde(default)]
    pub stagger_ms: u64,
    /// Acquires per hold: a client acquires this many times (reentrantly) before it uses the
    /// resource, and releases as many times (1: one acquire and one release per hold).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub reentrant: u32,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// The simulated ZooKeeper server's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    /// ZooKeeper's tickTime, in ms: the negotiated session timeout lies in [2, 20] ticks.
    pub tick_ms: u64,
    /// The session timeout clients ask for, in ms. A client paused longer than this has its
    /// session expired by the server.
    pub session_timeout_ms: u64,
    /// How often the server reaps empty containers, in ms.
    pub container_sweep_ms: u64,
    /// How many servers: 1 (the default) is a standalone server; more make an ensemble
    /// (see `book/src/reference/scenario-format.md`): a leader that orders one committed log
    /// and followers that apply it, each serving its own clients.
    #[serde(default = "one_server", skip_serializing_if = "is_one_server")]
    pub ensemble: u16,
    /// ZooKeeper's syncLimit, in ticks: a follower that has not heard the leader for this
    /// long drops its clients and stops serving until it hears it again. Read only by an
    /// ensemble.
    #[serde(
        default = "default_sync_limit",
        skip_serializing_if = "is_default_sync_limit"
    )]
    pub sync_limit: u64,
}

/// ZooKeeper's sample configuration's syncLimit (`conf/zoo_sample.cfg`), in ticks.
pub const DEFAULT_SYNC_LIMIT: u64 = 5;

fn one_server() -> u16 {
    1
}

fn is_one_server(servers: &u16) -> bool {
    *servers == 1
}

fn default_sync_limit() -> u64 {
    DEFAULT_SYNC_LIMIT
}

fn is_default_sync_limit(ticks: &u64) -> bool {
    *ticks == DEFAULT_SYNC_LIMIT
}

impl ServerSettings {
    /// A standalone server's settings (see the fields).
    pub const fn standalone(
        tick_ms: u64,
        session_timeout_ms: u64,
        container_sweep_ms: u64,
    ) -> ServerSettings {
        ServerSettings {
            tick_ms,
            session_timeout_ms,
            container_sweep_ms,
            ensemble: 1,
            sync_limit: DEFAULT_SYNC_LIMIT,
        }
    }

    /// Whether the settings describe an ensemble (more than one server).
    pub fn is_ensemble(&self) -> bool {
        self.ensemble > 1
    }
}

impl Default for ServerSettings {
    fn default() -> ServerSettings {
        ServerSettings::standalone(100, 1000, 500)
    }
}

/// A half-open range of seeds `start..end`, written `"A..B"` in files and on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeedRange {
    /// First seed.
    pub start: u64,
    /// One past the last seed.
    pub end: u64,
}

impl SeedRange {
    /// The default range of a scenario: seeds 0..200.
    pub const DEFAULT: SeedRange = SeedRange { start: 0, end: 200 };

    /// The seeds, in increasing order.
    pub fn iter(self) -> std::ops::Range<u64> {
        self.start..self.end
    }

    /// Number of seeds.
    pub fn len(self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    /// True when the range has no seed.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }
}

impl Default for SeedRange {
    fn default() -> SeedRange {
        SeedRange::DEFAULT
    }
}

impl fmt::Display for SeedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

impl FromStr for SeedRange {
    type Err = String;

    /// Parses `"A..B"` (B excluded) with `A < B`.
    fn from_str(text: &str) -> Result<SeedRange, String> {
        let expected = || format!("expected a seed range like \"0..200\", found {text:?}");
        let (start, end) = text.split_once("..").ok_or_else(expected)?;
        let start: u64 = start.trim().parse().map_err(|_| expected())?;
        let end: u64 = end.trim().parse().map_err(|_| expected())?;
        if start >= end {
            return Err(format!(
                "expected a non-empty seed range (start < end), found {text:?}"
            ));
        }
        Ok(SeedRange { start, end })
    }
}

impl Serialize for SeedRange {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SeedRange {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<SeedRange, D::Error> {
        use serde::de::{Error, Unexpected};
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(|_| {
            Error::invalid_value(
                Unexpected::Str(&text),
                &"a non-empty seed range like \"0..200\"",
            )
        })
    }
}

/// Serde for the lock path, with an "expected X, found Y" error for a bad one.
mod lock_path {
    use coordination::zk::Path;
    use serde::de::{Error, Unexpected};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
        path.serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Path, D::Error> {
        let text = String::deserialize(deserializer)?;
        Path::new(&text).map_err(|error| {
            Error::invalid_value(
                Unexpected::Str(&text),
                &format!("a ZooKeeper path like \"/locks/name\" ({})", error.reason).as_str(),
            )
        })
    }
}

/// Deserializes the property table so that a mistake in a key or a value is reported at
/// `/properties/<key>`: the key is checked while its value is read.
mod properties {
    use std::collections::BTreeMap;
    use std::fmt;

    use serde::de::{DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
    use serde::{Deserialize, Deserializer};

    use recipe_table::property::{Expectation, Property};

    type Table = BTreeMap<Property, Expectation>;

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Table, D::Error> {
        deserializer.deserialize_map(TableVisitor)
    }

    struct TableVisitor;

    impl<'de> Visitor<'de> for TableVisitor {
        type Value = Table;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map from property names to holds, violated or unchecked")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Table, A::Error> {
            let mut table = Table::new();
            while let Some(key) = map.next_key::<String>()? {
                let (property, expectation) = map.next_value_seed(Entry { key })?;
                if table.insert(property, expectation).is_some() {
                    return Err(serde::de::Error::custom(format_args!(
                        "duplicate field `{property}`"
                    )));
                }
            }
            Ok(table)
        }
    }

    /// One entry's value, parsed together with its key.
    struct Entry {
        key: String,
    }

    impl<'de> DeserializeSeed<'de> for Entry {
        type Value = (Property, Expectation);

        fn deserialize<D: Deserializer<'de>>(self, value: D) -> Result<Self::Value, D::Error> {
            let key: serde::de::value::StrDeserializer<'_, D::Error> =
                self.key.as_str().into_deserializer();
            let property = Property::deserialize(key)?;
            Ok((property, Expectation::deserialize(value)?))
        }
    }
}

/// The stream of the run's seed that randomized faults are drawn from.
const FAULT_STREAM: u64 = 1;

impl Scenario {
    /// What the scenario expects of `property` (`Unchecked` when it says nothing).
    pub fn expectation(&self, property: Property) -> Expectation {
        self.properties
            .get(&property)
            .copied()
            .unwrap_or(Expectation::Unchecked)
    }

    /// The concrete fault schedule of `seed`: the fixed faults plus the randomized ones drawn
    /// from the seed, ordered by time (fixed before drawn at one instant).
    pub fn fault_schedule(&self, seed: u64) -> Vec<ScheduledFault> {
        let mut rng = SplitMix64::for_stream(seed, &[FAULT_STREAM]);
        let mut schedule = self.faults.clone();
        for random in &self.random_faults {
            random.draw(self.clients, &mut rng, &mut schedule);
        }
        schedule.sort_by_key(|fault| fault.at_ms);
        schedule
    }

    /// How long after the last fault has healed every waiter must have been served (the
    /// `progress` property's grace): two session timeouts for expiries and reconnects, plus
    /// one longest hold and think per client ahead in the queue.
    pub fn progress_grace_ms(&self) -> u64 {
        let per_client = self.workload.hold_ms.max + self.workload.think_ms.max;
        2 * self.server.session_timeout_ms + u64::from(self.clients) * per_client
    }
}

#[cfg(test)]
mod tests;
