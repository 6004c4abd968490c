//! What one client of a run does, the same on every executor that runs in time (the simulator
//! and a real ZooKeeper): the workload state machine that asks for holds, uses them and gives
//! them back ([`workload`]); the loop that drives it beside its recipe and records the trace
//! ([`drive`]); and the protected resource as the workload reaches it ([`resource`]).

pub mod drive;
pub mod resource;
pub mod workload;
