//! The follower cut (`--follower-cuts`): a client whose server, a follower, is cut off from
//! the leader stays connected and is served reads from the follower's tree while the leader
//! expires its session, and learns of it only when the follower gives up on the leader.

use coordination::ids::{ClientSlot, OpId};
use coordination::recipe::SessionEvent;
use coordination::recipes::Notice;
use coordination::session::{RawEvent, RawState};
use coordination::zk::{OpOk, Request, ZkError};
use model::check::{Options, check};
use model::model::Silent;
use model::replay::{actions_from_indices, indices_of, states, trace};
use model::state::{State, session_id};
use model::{Action, Budgets, LockModel, ModelSpec};
use recipe_table::property::Property;
use recipe_table::recipes::{MUTEX, RecipeDef, RecipeKind, Testable};
use scenarios::fault::{Fault, ServerSelector};
use trace::EventKind;

/// `clients` clients, one cycle each, one follower cut and no other fault.
fn one_cut(clients: u16) -> ModelSpec {
    ModelSpec {
        budgets: Budgets {
            expiries: 0,
            follower_cuts: 1,
            ..Budgets::default()
        },
        ..ModelSpec::new(clients)
    }
}

/// With a follower cut as the only fault, the mutex has two holders by belief (the fence
/// holding): the cut client's session expires on the leader, its node is deleted and the
/// waiter acquires, while the cut client, still connected, has heard neither `Disconnected`
/// nor anything else of it. Without the cut nothing breaks exclusion.
#[test]
fn a_follower_cut_alone_gives_the_mutex_two_holders_by_belief_and_the_fence_holds() {
    let config = one_cut(2);
    let outcome = check(&MUTEX, config, Options::default());
    assert!(outcome.complete && outcome.all_met(), "{outcome:?}");
    let belief = outcome.verdict(Property::MutualExclusionBelief);
    assert!(!belief.holds);
    assert!(outcome.verdict(Property::MutualExclusionFenced).holds);
    assert!(outcome.verdict(Property::LiveSessionExclusion).holds);
    let path = belief.path.clone().expect("a counterexample");
    let cut = path
        .iter()
        .find_map(|action| match *action {
            Action::CutFollower(slot) => Some(slot),
            _ => None,
        })
        .expect("the path cuts a follower off");
    let model = LockModel::new(&MUTEX, config);
    let run = trace(&model, &path, "follower cut").unwrap();
    let at = |found: &dyn Fn(&trace::Event) -> bool| run.events.iter().position(found);
    let cut_at = at(&|e| {
        matches!(&e.kind, EventKind::FaultStart { fault: Fault::IsolateFromPeers {
            server: ServerSelector::ServerOf(client), ..
        } } if *client == cut.0)
    })
    .expect("the trace records the cut");
    let granted = at(&|e| {
        e.client != Some(cut)
            && matches!(
                e.kind,
                EventKind::Notice {
                    notice: Notice::Acquired { .. }
                }
            )
    })
    .expect("the other client acquires");
    assert!(cut_at < granted, "cut before the second grant: {path:?}");
    let heard_of_it = at(&|e| {
        e.client == Some(cut)
            && matches!(
                e.kind,
                EventKind::RawSession {
                    state: RawState::Disconnected | RawState::Expired
                } | EventKind::Session {
                    event: SessionEvent::Suspended | SessionEvent::Lost { .. }
                }
            )
    });
    assert!(
        heard_of_it.is_none_or(|heard| heard > granted),
        "the cut client hears nothing before the grant: {path:?}"
    );
    let step = usize::try_from(run.events[granted].t).unwrap();
    let at_grant = &states(&model, &path).unwrap()[step];
    let handle = at_grant.peer(cut).handle.as_ref().expect("still connected");
    let disconnected = RawEvent::State {
        state: RawState::Disconnected,
    };
    assert!(
        handle.cut.is_some() && !handle.events.contains(&disconnected),
        "nothing even queued for it: {:?}",
        handle.events
    );
    let cx = properties::check::Context {
        lock_path: model.lock_path().clone(),
        horizon: u64::MAX,
        progress_grace: 0,
        max_leases: 1,
        error_policy: Default::default(),
    };
    let found = properties::check::check(&run, Property::MutualExclusionBelief, &cx);
    assert!(!found.is_empty(), "the trace checker confirms it");
    let indices = indices_of(&model, &path).unwrap();
    assert_eq!(actions_from_indices(&model, &indices).unwrap(), path);
    let none = ModelSpec {
        budgets: Budgets {
            follower_cuts: 0,
            ..config.budgets
        },
        ..config
    };
    let uncut = check(&MUTEX, none, Options::default());
    assert!(uncut.verdict(Property::MutualExclusionBelief).holds);
}

/// The state after `action`, which must be enabled.
fn after<R: Testable>(model: &LockModel<R>, state: &State<R>, action: Action) -> State<R> {
    let mut enabled = Vec::new();
    model.enabled(state, &mut enabled);
    assert!(enabled.contains(&action), "{action:?} in {enabled:?}");
    model.step(state, action, &mut Silent).unwrap()
}

/// The cut, step by step: the holder's node is deleted on the server and the session ended,
/// but a read the cut client sends is answered from its follower's tree, where the node is
/// still there; its release (a write) waits, and a write held fails with `ConnectionLoss`
/// once the follower gives up, followed by `Disconnected` and `Expired`.
#[test]
fn a_cut_client_reads_its_deleted_node_from_its_follower_and_its_writes_wait() {
    let model = LockModel::new(&MUTEX, one_cut(1));
    let c0 = ClientSlot(0);
    let acquire = [
        Action::Work(c0),
        Action::Apply(c0),
        Action::Deliver(c0),
        Action::Apply(c0),
        Action::Deliver(c0),
    ];
    let held = states(&model, &acquire).unwrap().pop().unwrap();
    assert!(held.beliefs.believed().next().is_some(), "c0 holds");
    let session = session_id(c0, 0);
    let (node, _) = (held.server.tree.nodes())
        .find(|(_, node)| node.stat.ephemeral_owner == Some(session))
        .expect("c0's lock node");
    let node = node.clone();
    let mut cut = after(&model, &held, Action::CutFollower(c0));
    assert!(
        cut.server.tree.get(&node).is_none(),
        "the leader deleted it"
    );
    assert!(!cut.server.live.contains(&session));
    let handle = cut.peer(c0).handle.as_ref().unwrap();
    assert!(handle.events.is_empty(), "nothing queued: no Disconnected");
    let read = Request::Exists {
        path: node.clone(),
        watch: true,
    };
    let handle = cut.peer_mut(c0).handle.as_mut().unwrap();
    assert!(handle.send(OpId(99), read));
    let answered = after(&model, &cut, Action::Apply(c0));
    let handle = answered.peer(c0).handle.as_ref().unwrap();
    assert!(
        matches!(
            handle.events.back(),
            Some(RawEvent::Reply {
                op: OpId(99),
                result: Ok(OpOk::Exists { stat: Some(_) })
            })
        ),
        "its own node, read from its follower: {:?}",
        handle.events
    );
    let released = after(&model, &answered, Action::Work(c0));
    let handle = released.peer(c0).handle.as_ref().unwrap();
    assert!(matches!(
        handle.requests.front(),
        Some((_, Request::Delete { .. }))
    ));
    let mut enabled = Vec::new();
    model.enabled(&released, &mut enabled);
    assert!(!enabled.contains(&Action::Apply(c0)), "the release waits");
    // The same write sent while the client still holds, so that its workload, not done,
    // keeps the session open to hear how it ends.
    let mut holding = answered;
    let delete = Request::Delete {
        path: node.clone(),
        version: None,
    };
    let handle = holding.peer_mut(c0).handle.as_mut().unwrap();
    assert!(handle.send(OpId(100), delete));
    enabled.clear();
    model.enabled(&holding, &mut enabled);
    assert!(!enabled.contains(&Action::Apply(c0)), "the write waits");
    let given_up = after(&model, &holding, Action::FollowerGivesUp(c0));
    let handle = given_up.peer(c0).handle.as_ref().unwrap();
    let tail: Vec<&RawEvent> = handle.events.iter().rev().take(3).collect();
    assert!(
        matches!(
            tail[..],
            [
                RawEvent::State {
                    state: RawState::Expired
                },
                RawEvent::State {
                    state: RawState::Disconnected
                },
                RawEvent::Reply {
                    op: OpId(100),
                    result: Err(ZkError::ConnectionLoss),
                }
            ]
        ),
        "{:?}",
        handle.events
    );
    assert!(handle.cut.is_none() && handle.requests.is_empty());
    enabled.clear();
    model.enabled(&given_up, &mut enabled);
    assert!(!enabled.contains(&Action::FollowerGivesUp(c0)), "once");
    assert!(!enabled.contains(&Action::CutFollower(c0)), "one cut");
}

/// Checks a row of the recipe table under a config (symmetry, no paths).
struct CheckRow(ModelSpec);

impl recipe_table::recipes::Visitor for CheckRow {
    type Output = model::check::Outcome;

    fn visit<R: Testable>(self, def: &'static RecipeDef<R>) -> Self::Output {
        let options = Options {
            paths: false,
            ..Options::default()
        };
        check(def, self.0, options)
    }
}

/// Every row gets the verdicts the recipe table expects under a follower cut alone, which
/// counts as an expiry there ([`Budgets::session_expiries`]): every verdict an expiry changes, the cut
/// changes alike with two clients.
#[test]
fn every_row_checks_with_every_expectation_met_under_one_follower_cut() {
    for kind in RecipeKind::ALL {
        let outcome = kind.visit(CheckRow(one_cut(2)));
        assert!(outcome.complete && outcome.all_met(), "{kind}: {outcome:?}");
    }
}
