//! Simulation tests of the simulated ZooKeeper, its client and its faults: determinism,
//! the GC-pause split brain, session semantics, herd behaviour and the workload's paths.
//! Every run has a pinned seed; assertions read the trace's events directly.

mod byte_streams;
mod catalog;
mod client_cut;
mod determinism;
mod elections;
mod ensemble;
mod failover;
mod herd;
mod lag;
mod leader_latch;
mod leader_selector;
mod live_sessions;
mod moved;
mod multi_lock;
mod peer_links;
mod query;
mod read_write_lock;
mod revocation;
mod semaphore;
mod sessions;
mod split_brain;
mod triggers;
mod wakeups;
mod workload;
