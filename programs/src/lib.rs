//! Unmodified `zookeeper-client` programs on simulated client nodes.
//!
//! The client takes its runtime from its environment: a spawner in a thread-local
//! (`spawns-core`, for its session task and background deletes), a thread-local random
//! generator (`fastrand`, for its endpoint shuffle and reconnect jitter), and, through the
//! shims of `shims/`, the clock and the network. [`on_client_node`] gives a program all of
//! them from the simulation: tasks it spawns run on its node (so a pause or crash of the
//! node stops them too), its random draws follow the run's seed, and its connections are
//! made by the node's dialer.
//!
//! A program under test is an async function per client that drives its code through a
//! `zookeeper_client::Client` and tells what it believes through its [`Contender`];
//! [`program`] makes it the code of a run's clients, so a scenario's hunt, its checkers,
//! reports and replay by seed serve it as they serve a recipe (`splitbrain::testing::hunt`).
//! The model checker does not: it explores sans-IO recipes, whose every step it can take
//! apart, and a program's steps are the client library's own.

mod contender;
mod idle;
mod in_simulation;
mod node;
mod program;
mod requests;
pub mod simulated;

pub use contender::{Backend, Contender, Place, zookeeper_error};
pub use idle::{IDLE_SESSION, idle_session};
pub use node::{
    Task, dead_processes_spawn_nothing, on_client_node, with_dead_processes_spawning_nothing,
    with_environment,
};
pub use program::{Program, program};
pub use requests::{Recording, SessionKeys};
/// The client whose programs run here, at the version the shims serve (`shims/README.md`).
pub use zookeeper_client;
