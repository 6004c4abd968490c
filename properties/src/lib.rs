//! What a run must satisfy. Each property is an incremental monitor over what the clients and
//! the server do ([`monitor`]); the trace checkers fold the monitors over a finished trace and
//! explain each violation ([`check`]); and one function gives the verdicts of any trace,
//! whatever executor wrote it ([`verdict`]).
//!
//! The property names are the recipe table's vocabulary (`table::property`); splitbrain's
//! checks of its own framework layer live apart, in `splitbrain-conformance`.

pub mod check;
pub mod monitor;
pub mod verdict;
