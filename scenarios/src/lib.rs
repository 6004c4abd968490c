//! What a splitbrain run is: the scenario format ([`scenario`]) and the embedded catalog
//! ([`catalog`]), the fault vocabulary ([`fault`]), the seeded source every random draw of a
//! run comes from ([`rng`]), and the minimizer that shrinks a violating fault schedule
//! ([`shrink`]).
//!
//! What a run must satisfy lives in `splitbrain-properties`; what it records, in
//! `splitbrain-trace`.

pub mod catalog;
pub mod fault;
pub mod rng;
pub mod scenario;
pub mod shrink;
