//! Which parts of the state split states that behave alike: a measuring tool for developers
//! (`cargo run --release -p splitbrain-model --example components -- CLIENTS`).
//!
//! It explores the reachable representatives (symmetry reduced, as `check` does) and, for
//! each component of the state, counts how many unique states would remain if that
//! component were forgotten (erased, or its numbers masked). A component whose erasure
//! collapses many states either carries information the properties need, or splits states
//! that behave alike — canonical ids and counters are the remedy for the latter. The masks
//! work on the `Debug` rendering of the state, so they reach ids wherever they are nested.

use std::collections::BTreeSet;

use stateright::Representative;

use crate::check::fingerprint;
use crate::model::LockModel;
use crate::state::{Peer, State};
use recipe_table::recipes::Testable;

/// One row of the table: a component and what forgetting it leaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentCount {
    /// The component.
    pub component: &'static str,
    /// Distinct values the component takes over the reachable states.
    pub values: usize,
    /// Unique states left once the component is forgotten.
    pub states_without: usize,
}

/// How one component is forgotten: its rendering, and the state's rendering without it.
struct Component<R> {
    name: &'static str,
    render: fn(&State<R>) -> String,
    forget: fn(&State<R>) -> String,
}

/// The reachable representatives of `model` (at most `limit` of them) and, per component,
/// its distinct values and the unique states left without it. The first row is the whole
/// state (nothing forgotten).
pub fn component_counts<R: Testable>(model: &LockModel<R>, limit: usize) -> Vec<ComponentCount> {
    let states = reachable(model, limit);
    components::<R>()
        .iter()
        .map(|component| ComponentCount {
            component: component.name,
            values: distinct(states.iter().map(|s| (component.render)(s))),
            states_without: distinct(states.iter().map(|s| (component.forget)(s))),
        })
        .collect()
}

fn distinct(values: impl Iterator<Item = String>) -> usize {
    values
        .map(|v| fingerprint(&v))
        .collect::<BTreeSet<_>>()
        .len()
}

/// Breadth-first, over symmetry representatives.
pub(crate) fn reachable<R: Testable>(model: &LockModel<R>, limit: usize) -> Vec<State<R>> {
    let init = model.initial_canonical().representative();
    let mut seen = BTreeSet::from([fingerprint(&init)]);
    let mut found = vec![init];
    let mut next = 0;
    let mut actions = Vec::new();
    while next < found.len() && found.len() < limit {
        actions.clear();
        model.enabled(&found[next], &mut actions);
        for &action in &actions {
            let Some(state) = model.next(&found[next], action) else {
                continue;
            };
            let state = state.representative();
            if seen.insert(fingerprint(&state)) {
                found.push(state);
            }
        }
        next += 1;
    }
    found
}

/// `text` with the number after every `marker` replaced by `_`.
fn mask(text: &str, marker: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let end = at + marker.len();
        out.push_str(&rest[..end]);
        rest = rest[end..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push('_');
    }
    out.push_str(rest);
    out
}

/// `text` with every run of digits inside a quoted name (sequence numbers, protection ids)
/// replaced by `_`.
fn mask_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quoted = false;
    let mut digits = false;
    for c in text.chars() {
        if c == '"' {
            quoted = !quoted;
        }
        if quoted && c.is_ascii_hexdigit() && c.is_ascii_digit() {
            if !digits {
                out.push('_');
            }
            digits = true;
            continue;
        }
        digits = false;
        out.push(c);
    }
    out
}

fn whole<R: Testable>(state: &State<R>) -> String {
    format!("{state:?}")
}

fn masked<R: Testable>(state: &State<R>, markers: &[&str]) -> String {
    markers
        .iter()
        .fold(whole(state), |text, marker| mask(&text, marker))
}

fn without<R: Testable>(state: &State<R>, erase: impl FnOnce(&mut State<R>)) -> String {
    let mut state = state.clone();
    erase(&mut state);
    whole(&state)
}

const ZXIDS: &[&str] = &["Zxid(", "version: ", "cversion: "];

fn components<R: Testable>() -> Vec<Component<R>> {
    vec![
        Component {
            name: "(whole state)",
            render: whole,
            forget: whole,
        },
        Component {
            name: "tree",
            render: |s| format!("{:?}", s.server.tree),
            forget: |s| without(s, |s| s.server_mut().tree = Default::default()),
        },
        Component {
            name: "zxids, versions, cversions",
            render: |s| format!("{:?}", s.server.tree.zxid()),
            forget: |s| masked(s, ZXIDS),
        },
        Component {
            name: "sequence numbers and protection ids in names",
            render: |s| mask(&format!("{:?}", s.server.tree), "Zxid("),
            forget: |s| mask_names(&whole(s)),
        },
        Component {
            name: "session ids",
            render: |s| format!("{:?}", s.server.live),
            forget: |s| masked(s, &["SessionId("]),
        },
        Component {
            name: "op ids",
            render: |s| ops(s),
            forget: |s| masked(s, &["OpId("]),
        },
        Component {
            name: "timer ids",
            render: |s| {
                format!(
                    "{:?}",
                    s.peers.iter().map(|p| &p.timers).collect::<Vec<_>>()
                )
            },
            forget: |s| masked(s, &["TimerId("]),
        },
        Component {
            name: "framework counters (next op/timer/protection)",
            render: |s| counters(s),
            forget: |s| masked(s, &["next_op: ", "next_timer: ", "next_protection: "]),
        },
        Component {
            name: "all ids and counters above",
            render: |s| counters(s),
            forget: |s| {
                let ids = [
                    "SessionId(",
                    "OpId(",
                    "TimerId(",
                    "next_op: ",
                    "next_timer: ",
                    "next_protection: ",
                    "serial: ",
                ];
                mask_names(&masked(s, &[ZXIDS, &ids].concat()))
            },
        },
        Component {
            name: "request and event queues",
            render: |s| {
                format!(
                    "{:?}",
                    s.peers.iter().map(|p| &p.handle).collect::<Vec<_>>()
                )
            },
            forget: |s| {
                without(s, |s| {
                    for peer in &mut s.peers {
                        if let Some(handle) = &mut Peer::make_mut(peer).handle {
                            handle.requests.clear();
                            handle.events.clear();
                        }
                    }
                })
            },
        },
        Component {
            name: "recipe states",
            render: |s| per_peer(s, |p| p.client.recipe().clone()),
            forget: |s| without_per_peer(s, "recipe", |p| p.client.recipe().clone()),
        },
        Component {
            name: "framework states",
            render: |s| per_peer(s, |p| p.client.framework().clone()),
            forget: |s| without_per_peer(s, "framework", |p| p.client.framework().clone()),
        },
        Component {
            name: "workloads",
            render: |s| per_peer(s, |p| p.workload),
            forget: |s| without_per_peer(s, "workload", |p| p.workload),
        },
        Component {
            name: "monitors (beliefs, herds)",
            render: |s| format!("{:?} {:?}", s.beliefs, s.herds),
            forget: |s| {
                without(s, |s| {
                    s.beliefs = properties::monitor::Beliefs::new(Default::default());
                    s.herds = Default::default();
                })
            },
        },
        Component {
            name: "resource",
            render: |s| format!("{:?}", s.resource),
            forget: |s| mask(&mask(&whole(s), "writes: "), "Token("),
        },
        Component {
            name: "restarts and incarnations",
            render: |s| {
                format!(
                    "{:?}",
                    s.peers
                        .iter()
                        .map(|p| (p.restarts, p.incarnation))
                        .collect::<Vec<_>>()
                )
            },
            forget: |s| mask(&mask(&whole(s), "restarts: "), "incarnation: "),
        },
    ]
}

/// Every peer's `part`, rendered.
fn per_peer<R: Testable, T: std::fmt::Debug>(state: &State<R>, part: fn(&Peer<R>) -> T) -> String {
    format!(
        "{:?}",
        state
            .peers
            .iter()
            .map(|peer| part(peer))
            .collect::<Vec<_>>()
    )
}

/// The state's rendering with every peer's `label: part` left out.
fn without_per_peer<R: Testable, T: std::fmt::Debug>(
    state: &State<R>,
    label: &str,
    part: fn(&Peer<R>) -> T,
) -> String {
    let mut text = whole(state);
    for peer in &state.peers {
        text = text.replace(&format!("{label}: {:?}", part(peer)), label);
    }
    text
}

fn ops<R: Testable>(state: &State<R>) -> String {
    let text = whole(state);
    let mut ids = BTreeSet::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("OpId(") {
        rest = &rest[at + 5..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        ids.insert(digits);
    }
    format!("{ids:?}")
}

fn counters<R: Testable>(state: &State<R>) -> String {
    let text = whole(state);
    ["next_op: ", "next_timer: ", "next_protection: "]
        .iter()
        .map(|marker| {
            text.match_indices(marker)
                .map(|(at, _)| {
                    text[at + marker.len()..]
                        .chars()
                        .take_while(char::is_ascii_digit)
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join(" ")
}
