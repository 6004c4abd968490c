//! splitbrain's driving layer: runs a scenario's seed on the simulator and checks its trace
//! ([`run`]), sweeps seeds in parallel with results in seed order ([`sweep`]), and writes
//! files atomically ([`files`]). The `splitbrain` binary's commands are built on these.

pub mod files;
pub mod run;
pub mod sweep;
