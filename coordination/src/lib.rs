//! splitbrain's lock layer: ZooKeeper coordination recipes written once, as sans-IO state
//! machines, and run unchanged by the model checker, the simulator and a real ZooKeeper.
//!
//! Layers, bottom up:
//! - [`zk`]: ZooKeeper's vocabulary and [`zk::tree`], the one pure data tree.
//! - [`session`]: the executor's interface to one raw ZooKeeper session.
//! - [`recipe`] and [`framework`]: the recipe contract, and Curator's connection-state and
//!   retry machinery as a sans-IO layer composed into every recipe ([`client::Client`]);
//!   [`retry`]: Curator's retry policies, which the framework runs.
//! - [`recipes`]: the lock recipes, good and known-bad, and the parts they are made of
//!   ([`recipes::kit`]); [`fencing`]: tokens and the resource that checks them.
//! - [`driver`]: runs any client over any `Coordination`; [`memory`]: an in-memory,
//!   fault-free `Coordination` for tests; [`world`]: the step world (the server over the
//!   shared tree and each session's ordered queues) that the model checker and the recipe
//!   unit tests step by hand; [`harness`]: that stepping, for the unit tests of the
//!   built-ins and of a recipe of yours.
//!
//! A recipe's author imports [`prelude`]: `use coordination::prelude::*;`.
//!
//! Nothing here reads a clock, draws a random number or does I/O except through the
//! `Coordination` the driver is given.

// `#[derive(Relabel)]` names this crate `::coordination`, here as in a user's crate.
extern crate self as coordination;

pub mod client;
pub mod driver;
pub mod fencing;
pub mod framework;
pub mod harness;
pub mod ids;
pub mod memory;
pub mod prelude;
pub mod recipe;
pub mod recipes;
pub mod relabel;
pub mod retry;
pub mod session;
pub mod world;
pub mod zk;
