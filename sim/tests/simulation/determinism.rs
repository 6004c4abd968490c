//! Same seed, same trace: byte for byte, over many seeds, in one process.

use madsim::runtime::Runtime;
use scenarios::fault::{Fault, Node};
use scenarios::scenario::{Span, Workload};
use sim::Sim;

use crate::query::{T_MS, at, sim};

/// A small run with a pause and a partition.
fn small() -> Sim {
    let workload = Workload {
        hold_ms: Span { min: 20, max: 80 },
        think_ms: Span { min: 0, max: 40 },
        stagger_ms: 0,
        ..crate::query::workload(2, 50)
    };
    let faults = vec![
        at(
            100,
            Fault::Pause {
                client: 0,
                for_ms: T_MS + 500,
            },
        ),
        at(
            200,
            Fault::Isolate {
                node: Node::Client(1),
                for_ms: Some(700),
            },
        ),
    ];
    sim("determinism", 3, workload)
        .faults(faults)
        .horizon_ms(15_000)
}

fn serialized(seed: u64) -> String {
    let trace = small().seed(seed).run().expect("valid settings");
    serde_json::to_string(&trace).expect("serializable")
}

#[test]
fn the_same_seed_gives_the_same_trace_over_200_seeds() {
    let seeds: Vec<u64> = (0..200).collect();
    let first: Vec<String> = seeds.iter().map(|&s| serialized(s)).collect();
    for &seed in seeds.iter().rev() {
        assert!(
            serialized(seed) == first[seed as usize],
            "seed {seed} gave two different traces"
        );
    }
    let distinct: std::collections::BTreeSet<&String> = first.iter().collect();
    assert!(
        distinct.len() > 150,
        "seeds matter: {} distinct",
        distinct.len()
    );
}

#[test]
fn madsim_finds_no_nondeterminism() {
    Runtime::check_determinism(42, madsim::Config::default(), || async {
        small().seed(42).simulate().await.expect("valid settings")
    });
}
