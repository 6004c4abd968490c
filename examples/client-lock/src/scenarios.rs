//! The scenarios the programs are hunted under (the files of `scenarios/`), each with the
//! program of a prefix as its recipe: the same scenario in the simulator and on a real
//! ZooKeeper.

use splitbrain::recipe_table::family::Family;
use splitbrain::scenarios::scenario::Scenario;

use crate::Prefix;

/// The scenario of `file` (under `scenarios/`, its text `text`) with the program of `prefix`.
///
/// # Panics
/// When the file is not a valid scenario (a test of this crate shows they all are).
fn with_program(file: &str, text: &str, prefix: Prefix) -> Scenario {
    let mut scenario = Scenario::from_json(&format!("scenarios/{file}"), text)
        .unwrap_or_else(|error| panic!("{error}"));
    scenario.recipe = prefix.program().recipe().clone();
    scenario
}

/// A GC pause of a holder (or leader) longer than its session.
pub fn gc_pause(prefix: Prefix) -> Scenario {
    match prefix.family() {
        Family::Latch => with_program(
            "latch-gc-pause.json",
            include_str!("../scenarios/latch-gc-pause.json"),
            prefix,
        ),
        _ => with_program(
            "gc-pause.json",
            include_str!("../scenarios/gc-pause.json"),
            prefix,
        ),
    }
}

/// The catalog's random faults, on the lock or on the election.
pub fn random_faults(prefix: Prefix) -> Scenario {
    match prefix.family() {
        Family::Latch => with_program(
            "latch-random-faults.json",
            include_str!("../scenarios/latch-random-faults.json"),
            prefix,
        ),
        _ => with_program(
            "random-faults.json",
            include_str!("../scenarios/random-faults.json"),
            prefix,
        ),
    }
}

/// Acquires with a timeout under contention (for a lock's prefixes).
pub fn timed_acquire(prefix: Prefix) -> Scenario {
    with_program(
        "timed-acquire.json",
        include_str!("../scenarios/timed-acquire.json"),
        prefix,
    )
}
