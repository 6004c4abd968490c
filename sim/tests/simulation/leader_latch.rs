//! LeaderLatch under the simulator: what Curator's TestLeaderLatch checks (one leader,
//! leadership passing in order, Suspended dropping leadership, a killed session passing it
//! on, a server restart) on the catalog's leader-latch scenarios, varied per test.

use std::collections::BTreeMap;

use lock::fencing::Token;
use lock::recipes::Notice;
use lock::zk::{EventKind as WatchKind, Request, Zxid};
use scenarios::catalog::Catalog;
use scenarios::check::{Context, check, check_all};
use scenarios::fault::{Fault, Node, ScheduledFault};
use scenarios::property::Property;
use scenarios::scenario::{Scenario, Span};
use scenarios::trace::{EventKind, Source, Trace};
use sim::Sim;

use crate::query::{notice, on};

/// A catalog leader-latch scenario (`leader-latch-<name>`), `clients` participants leading
/// once each, for `hold_ms` each, with `faults`.
fn latch(name: &str, clients: u16, hold_ms: u64, faults: Vec<ScheduledFault>) -> Scenario {
    let catalog = Catalog::builtin().expect("the embedded catalog parses");
    let mut scenario = catalog
        .get(&format!("leader-latch-{name}"))
        .expect("a leader-latch scenario")
        .clone();
    scenario.clients = clients;
    scenario.workload.acquisitions = 1;
    scenario.workload.hold_ms = Span::fixed(hold_ms);
    scenario.workload.stagger_ms = 100;
    scenario.faults = faults;
    scenario
}

fn run(scenario: &Scenario, seed: u64) -> Trace {
    Sim::from_scenario(scenario, seed, scenario.faults.clone())
        .run()
        .expect("valid settings")
}

/// The violations of `property` in `trace`.
fn violations(scenario: &Scenario, trace: &Trace, property: Property) -> usize {
    check(
        trace,
        property,
        &Context::for_scenario(scenario, Source::Sim),
    )
    .len()
}

/// Every property of the latch family holds in `trace`.
fn assert_all_hold(scenario: &Scenario, trace: &Trace) {
    let cx = Context::for_scenario(scenario, Source::Sim);
    let found = check_all(trace, scenario.recipe.properties(), &cx);
    assert!(found.is_empty(), "{found:#?}");
}

/// The IsLeader notices, in trace order: (client, token).
fn leaderships(trace: &Trace) -> Vec<(u16, Token)> {
    (trace.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Notice {
                notice: Notice::IsLeader { token, .. },
            } => Some((e.client?.0, *token)),
            _ => None,
        })
        .collect()
}

/// Client `client`'s listener notices: `Some(token)` for IsLeader, `None` for NotLeader.
fn listener(trace: &Trace, client: u16) -> Vec<Option<Token>> {
    (trace.events.iter())
        .filter_map(|e| match notice(e, client)? {
            Notice::IsLeader { token, .. } => Some(Some(token)),
            Notice::NotLeader { .. } => Some(None),
            _ => None,
        })
        .collect()
}

fn at(at_ms: u64, fault: Fault) -> ScheduledFault {
    ScheduledFault { at_ms, fault }
}

#[test]
fn leadership_passes_in_start_order_with_increasing_tokens() {
    let scenario = latch("fault-free", 4, 200, Vec::new());
    let trace = run(&scenario, 3);
    let leaders = leaderships(&trace);
    let clients: Vec<u16> = leaders.iter().map(|(c, _)| *c).collect();
    assert_eq!(clients, [0, 1, 2, 3]);
    assert!(leaders.windows(2).all(|w| w[0].1 < w[1].1), "{leaders:?}");
    assert_all_hold(&scenario, &trace);
}

#[test]
fn each_close_wakes_at_most_the_next_participant() {
    let mut scenario = latch("fault-free", 10, 50, Vec::new());
    scenario.workload.stagger_ms = 0;
    let trace = run(&scenario, 21);
    let latch_deletes: Vec<Zxid> = (trace.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::OpApplied {
                request: Request::Delete { path, .. },
                zxid: Some(zxid),
                ..
            } if path.name().contains(lock::recipes::LATCH_NAME) => Some(*zxid),
            _ => None,
        })
        .collect();
    assert_eq!(latch_deletes.len(), 10, "every participant closed");
    let mut woken: BTreeMap<Zxid, usize> = BTreeMap::new();
    for event in &trace.events {
        if let EventKind::WatchFired {
            event,
            zxid: Some(zxid),
            ..
        } = &event.kind
            && event.kind == WatchKind::NodeDeleted
        {
            *woken.entry(*zxid).or_default() += 1;
        }
    }
    let most = latch_deletes
        .iter()
        .map(|z| woken.get(z).copied().unwrap_or(0))
        .max();
    assert_eq!(
        most,
        Some(1),
        "a close wakes one participant, never the herd"
    );
    assert_all_hold(&scenario, &trace);
}

#[test]
fn a_paused_leader_still_believes_while_the_next_leads_and_its_write_is_rejected() {
    let scenario = latch(
        "gc-pause",
        2,
        1_000,
        vec![at(
            300,
            Fault::Pause {
                client: 0,
                for_ms: 2_500,
            },
        )],
    );
    let trace = run(&scenario, 7);
    let leaders = leaderships(&trace);
    assert_eq!(leaders.iter().map(|(c, _)| *c).collect::<Vec<_>>(), [0, 1]);
    let (old, new) = (leaders[0].1, leaders[1].1);
    assert!(new > old);
    let stale = trace.events.iter().find(|e| {
        on(e, 0) && matches!(e.kind, EventKind::ResourceWrite { token, .. } if token == old)
    });
    assert!(
        matches!(
            stale.map(|e| &e.kind),
            Some(EventKind::ResourceWrite {
                accepted: false,
                ..
            })
        ),
        "the paused leader's write is rejected: {stale:?}"
    );
    assert!(violations(&scenario, &trace, Property::LeaderUniqueBelief) >= 1);
    assert_eq!(
        violations(&scenario, &trace, Property::LeaderUniqueFenced),
        0
    );
}

#[test]
fn a_cut_off_leader_steps_down_at_once_and_leads_again_with_the_same_token() {
    // Disconnected after 2/3 of the 1 s session timeout without a word from the server,
    // back before the server's 1 s are up: the session survives, the latch node stays first,
    // and nobody else leads meanwhile.
    let partition = Fault::Partition {
        a: Node::Client(0),
        b: Node::Server,
        oneway: false,
        for_ms: Some(600),
    };
    let scenario = latch("partition", 2, 2_000, vec![at(200, partition)]);
    let trace = run(&scenario, 5);
    let token = leaderships(&trace)[0].1;
    assert_eq!(listener(&trace, 0), [Some(token), None, Some(token)]);
    let second = leaderships(&trace)[2];
    assert_eq!(second.0, 1, "c1 leads only after c0 closes");
    assert_all_hold(&scenario, &trace);
}

#[test]
fn an_expired_leader_hears_not_leader_once_and_the_next_one_leads() {
    let expire = Fault::ExpireSession { client: 0 };
    let scenario = latch("session-expiry", 2, 2_000, vec![at(500, expire)]);
    let trace = run(&scenario, 11);
    let leaders = leaderships(&trace);
    assert_eq!(leaders.iter().map(|(c, _)| *c).collect::<Vec<_>>(), [0, 1]);
    assert!(leaders[1].1 > leaders[0].1);
    assert_eq!(listener(&trace, 0), [Some(leaders[0].1), None]);
    assert_all_hold(&scenario, &trace);
}

#[test]
fn after_a_server_restart_the_same_leader_leads_again() {
    let scenario = latch(
        "server-restart",
        3,
        2_000,
        vec![at(500, Fault::RestartServer)],
    );
    let trace = run(&scenario, 2);
    let leaders = leaderships(&trace);
    let token = leaders[0].1;
    assert_eq!(leaders[..2], [(0, token), (0, token)], "{leaders:?}");
    assert_eq!(
        leaders[2..].iter().map(|(c, _)| *c).collect::<Vec<_>>(),
        [1, 2]
    );
    assert_all_hold(&scenario, &trace);
}
