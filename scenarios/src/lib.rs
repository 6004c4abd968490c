//! What a splitbrain run is and what it must satisfy: the fault vocabulary, the trace schema
//! shared by the simulator, the model checker and real runs, and (as they land) the scenario
//! format, the property vocabulary and the trace checkers.

pub mod fault;
pub mod property;
pub mod rng;
pub mod scenario;
pub mod trace;
