//! Unmodified `zookeeper-client` programs on simulated client nodes.
//!
//! The client takes its runtime from its environment: a spawner in a thread-local
//! (`spawns-core`, for its session task and background deletes), a thread-local random
//! generator (`fastrand`, for its endpoint shuffle and reconnect jitter), and, through the
//! shims of `shims/`, the clock and the network. [`on_client_node`] gives a program all of
//! them from the simulation: tasks it spawns run on its node (so a pause or crash of the
//! node stops them too), its random draws follow the run's seed, and its connections are
//! made by the node's dialer.

mod node;
pub mod simulated;

pub use node::{on_client_node, with_dead_processes_spawning_nothing};
