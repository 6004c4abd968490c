//! splitbrain's third executor, on a real ZooKeeper: [`local`] starts Debian's `zookeeper`
//! package on 127.0.0.1 (a standalone server or an ensemble, its servers linked through
//! [`peers`]' proxies) and stops it by PID;
//! [`session`] implements `coordination`'s `Coordination` and `Connector` over a real server with
//! the `zookeeper-client` crate, each session on a thread of its own or its caller's with
//! [`executor`]'s one-thread executor (on the real `async-io` reactor, not madsim's), so the
//! same recipes and driver run against it; [`run()`] runs a scenario's clients, workload and
//! faults there ([`target`]: on which server; [`faults`]: which faults can run), each client
//! an OS process of its own ([`client`]: what such a process runs, [`ClientLauncher`]: how
//! it is started), and returns its trace; [`run_program`] does the same with a user's program
//! ([`programs::Program`]) as the clients' code, in processes of a binary of the user's that
//! serves it ([`program_client`]); [`run_with_curator`] runs Apache Curator's own
//! `InterProcessMutex` in Java processes beside them on the same lock path ([`curator`]), each
//! a contender driven over the contender protocol ([`contender`]), as Kazoo's recipes in
//! Python processes are ([`kazoo`]), `zookeeper-async`'s and `zookeeper-client`'s in Rust
//! processes of this crate's own ([`zookeeper_async`], [`zookeeper_client`]), and a user's own
//! contender program ([`contender::user`]),
//! [`wakeups`] counts the waiters each release wakes from the server's side, and [`bench`](mod@bench)
//! measures our locks and latches beside Curator's (`splitbrain bench --real`); [`testing`]
//! keeps tests that run real servers from running at once.
//!
//! This crate never runs inside a madsim runtime: a `--cfg madsim` build is fine (madsim's
//! libc overrides fall through when no simulation runs), a madsim runtime is not.

pub mod bench;
pub mod client;
pub mod clock;
pub mod contender;
pub mod curator;
pub mod executor;
mod expire;
pub mod faults;
mod frames;
pub mod kazoo;
pub mod local;
mod pause;
pub mod peers;
mod processes;
pub mod program_client;
mod proxy;
mod resource;
mod run;
mod server_log;
mod server_stops;
pub mod session;
mod snapshot;
pub mod target;
pub mod testing;
pub mod wakeups;
mod watch_list;
mod wire;
pub mod zookeeper_async;
pub mod zookeeper_client;

pub use processes::ClientLauncher;
pub use run::{
    CuratorPlacement, INTERRUPTED, RunFailure, curator_refusal, in_place_refusal, run, run_program,
    run_with_contenders, run_with_curator,
};
