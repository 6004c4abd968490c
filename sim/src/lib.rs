//! The simulated ZooKeeper on madsim: a server over the shared data tree (sessions, expiry,
//! container sweeps, restarts with downtime), raw clients implementing
//! [`coordination::session::Coordination`] with ZooKeeper 3.8's reconnect timing over a wire that
//! retransmits as TCP does, fault injection on simulated time, and [`Sim`], which runs N
//! clients with a recipe and a workload under a fault schedule and returns the trace.
//!
//! Everything here only compiles with `--cfg madsim` (the workspace's `.cargo/config.toml`
//! sets it), and every run is reproducible from its seed.

#[cfg(not(madsim))]
compile_error!(
    "splitbrain-sim needs the madsim simulator: build with `--cfg madsim`. The workspace's \
     .cargo/config.toml sets `[build] rustflags = [\"--cfg\", \"madsim\"]`; a RUSTFLAGS \
     environment variable replaces it, so use RUSTFLAGS=\"--cfg madsim\" (plus your flags) \
     or unset RUSTFLAGS."
);

mod alarm;
pub mod client;
pub mod faults;
pub mod links;
pub mod net;
mod pauses;
mod recipe_code;
pub mod recorder;
mod run;
pub mod server;
pub mod servers;
mod settings;
pub mod stream;
pub mod time;
mod trigger;
pub mod wire;
mod workload;

pub use recipe_code::{ClientMain, RecipeCode, RunScope, SimWork};
pub use run::{Sim, SimError, in_fresh_runtime, panic_message};
