//! Partial-order reduction: of the interleavings of steps that do not affect each other, the
//! exhaustive search explores one.
//!
//! In a state where some client's only steps are handling the next event of its session's
//! stream ([`Action::Deliver`]) — no timer of its own pending, no workload step, no fault on
//! it still possible — and handling that event is *local and invisible*, the search takes
//! that one step and leaves every other enabled action to the state after it. A step is
//! local and invisible when it changes nothing but the client's own recipe and framework
//! state, its timers and its session's queues (the event taken off the front, requests added
//! at the back), and the client observes nothing a property monitor reads but that it
//! handled an input (no call, notice or session event): typically a reply that makes a waiter
//! send its next read.
//!
//! Why this finds every counterexample the full search finds (the persistent-set argument,
//! with the three conditions of Clarke, Grumberg and Peled's *Model Checking*, ch. 10):
//!
//! - **Persistence.** The chosen step `d` of client `c` is independent of every step that can
//!   happen before it: another client's own steps touch other clients' state; the server's
//!   application of a request (of `c`'s on a cut-off follower, a read answered from the
//!   follower's tree in `c`'s handle, which `d` leaves alone), the close of another client's session when its workload is
//!   done, an orphan's expiry, a sweep of the empty containers (a write to the tree that
//!   fires watches: dependent with every step that touches the tree, which `d` does not)
//!   and another client's faults (a follower cut among them: it ends that client's session
//!   and fires the watches an expiry fires; its follower's giving up touches that client's
//!   handle alone) only append to `c`'s event stream (`d` takes from its
//!   front, which is not empty) or take `c`'s requests from the front (`d` only appends),
//!   and they read of `c` only its session and what the monitors hold of it, which `d`
//!   leaves alone. (`c`'s own workload is not done: the application of a done client's last
//!   request closes its session and drops its stream, `d`'s event with it.) Nothing but
//!   `c`'s own steps can make a timer of `c` or its workload step pending, fault budgets
//!   (the sweeps' too) only shrink, and `d` leaves the tree, so what a sweep would delete,
//!   alone, so no step dependent on `d` becomes possible while `d` waits.
//!   What `c` does with the event depends on `c`'s state and the event alone, so `d` stays
//!   local and invisible wherever it is taken later.
//! - **Invisibility.** Every property reads the monitors, the resource, the workloads, the
//!   tree or what can happen next; `d` changes none of the first four, so a state violates an
//!   invariant exactly when the state after `d` does. `progress` and `no_orphans` judge only
//!   states where nothing but a fault can happen, and such a state can never be skipped: a
//!   path to it must contain `d` (else `d` would still be possible there), and `d` commutes
//!   to the front of it.
//! - **No ignoring.** Each reduced step takes one event off a stream and adds none, so
//!   reduced steps cannot follow each other forever: every action put off is eventually taken
//!   in a fully expanded state.
//!
//! The symmetry reduction combines with it: the argument holds state by state, and a state
//! skipped because its representative was seen is explored from a symmetric state with the
//! same properties. The test `the_reduction_finds_what_the_full_search_finds` runs every row
//! of the recipe table, the known-bad ones included, under several budgets with and without
//! the reduction and requires the same verdicts.

use coordination::ids::ClientSlot;
use coordination::world::Handle;

use crate::model::{Action, LockModel, Recorder};
use crate::state::{Peer, State};
use properties::monitor::Observation;
use recipe_table::recipes::Testable;
use runtime::workload::Phase;
use trace::EventKind;

impl<R: Testable> LockModel<R> {
    /// Puts in `out` the actions to explore from `state`: one local, invisible event delivery
    /// when some client has one and nothing else of its own to do, else every enabled action.
    /// When it took one delivery, returns its [`LockModel::step`] (the trial that showed the
    /// delivery local), for [`LockModel::renumbered`].
    pub(crate) fn reduce(&self, state: &State<R>, out: &mut Vec<Action>) -> Option<State<R>> {
        self.enabled(state, out);
        if !self.reduces() {
            return None;
        }
        let (slot, stepped) = (0..state.peers.len())
            .map(|slot| ClientSlot(slot as u16))
            .filter(|&slot| only_delivers(out, slot))
            .find_map(|slot| Some((slot, self.local_delivery(state, slot)?)))?;
        out.clear();
        out.push(Action::Deliver(slot));
        Some(stepped)
    }

    /// The state after `slot` handles its next event, when that changes only `slot`'s own
    /// state and queues and shows nothing to a property monitor. Never for a client whose
    /// workload is done: the server's application of its last request closes its session and
    /// drops the events still queued for it, so that application and the delivery do not
    /// commute.
    fn local_delivery(&self, state: &State<R>, slot: ClientSlot) -> Option<State<R>> {
        if state.peer(slot).workload.phase() == Phase::Done {
            return None;
        }
        let mut seen = Sees {
            client: slot,
            any: false,
        };
        // The same step as `next`'s: the recorder only watches.
        let next = self.step(state, Action::Deliver(slot), &mut seen)?;
        (!seen.any && only_own_state_moved(state, &next, usize::from(slot.0))).then_some(next)
    }
}

/// Whether, of `slot`'s own actions in `enabled`, there is a delivery and nothing else but the
/// server's application of its requests: no timer of its own, no workload step, no fault.
/// A cut of the client's follower and the follower's giving up count as the client's own
/// faults, conservatively: a client that may still be cut, or whose follower may still give
/// up, is never reduced, so the soundness argument needs nothing of what these steps do to the
/// client itself (of another client, they commute with the delivery as its expiry does).
fn only_delivers(enabled: &[Action], slot: ClientSlot) -> bool {
    let mut delivers = false;
    for action in enabled {
        match *action {
            Action::Deliver(client) if client == slot => delivers = true,
            Action::Work(client)
            | Action::Fire(client, _)
            | Action::Expire(client)
            | Action::Crash(client)
            | Action::LoseConnection { client, .. }
            | Action::FailAttempt(client)
            | Action::CutFollower(client)
            | Action::FollowerGivesUp(client)
                if client == slot =>
            {
                return false;
            }
            _ => {}
        }
    }
    delivers
}

/// Whether `next` differs from `state` only in client `index`'s recipe and framework state,
/// its timers and its session's queues, where one event was taken off the front of the stream
/// and requests may have been added behind those already queued.
fn only_own_state_moved<R: PartialEq>(state: &State<R>, next: &State<R>, index: usize) -> bool {
    let shared = state.server == next.server
        && state.resource == next.resource
        && state.used == next.used
        && state.beliefs == next.beliefs
        && state.waits == next.waits
        && state.herds == next.herds
        && state.revokes == next.revokes;
    let others = (state.peers.iter().zip(&next.peers).enumerate())
        .all(|(at, (before, after))| at == index || before == after);
    shared && others && own_queues_moved(&state.peers[index], &next.peers[index])
}

fn own_queues_moved<R>(before: &Peer<R>, after: &Peer<R>) -> bool {
    let same_role = before.workload == after.workload
        && before.restarts == after.restarts
        && before.incarnation == after.incarnation
        && before.class == after.class;
    let queues = match (&before.handle, &after.handle) {
        (Some(before), Some(after)) => one_taken_some_sent(before, after),
        _ => false,
    };
    same_role && queues
}

/// The same session, link and follower; the stream without its first event; the requests
/// extended.
fn one_taken_some_sent(before: &Handle, after: &Handle) -> bool {
    before.session == after.session
        && before.link == after.link
        && before.cut == after.cut
        && before.events.iter().skip(1).eq(after.events.iter())
        && after.requests.len() >= before.requests.len()
        && before
            .requests
            .iter()
            .eq(after.requests.iter().take(before.requests.len()))
}

/// A recorder that notes whether a step of `client` showed a property monitor anything but
/// that the client handled an input ([`Observation::Input`]). That one only turns what the client
/// owed at its last session event into overdue, and only its own session events, calls and
/// notices add to what it owes: so where it changes no monitor state, as
/// [`only_own_state_moved`] requires, it changes none wherever the step is taken later.
struct Sees {
    client: ClientSlot,
    any: bool,
}

impl Recorder for Sees {
    fn record(&mut self, client: Option<ClientSlot>, kind: impl FnOnce() -> EventKind) {
        let seen = client.and_then(|c| Observation::of_event(Some(c), &kind()));
        if client != Some(self.client)
            || seen.is_some_and(|seen| seen != Observation::Input(self.client))
        {
            self.any = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use recipe_table::recipes::{RecipeDef, RecipeKind, Testable, Visitor};

    use crate::budget::ModelSpec;
    use crate::check::{Options, Outcome, check};

    /// The configurations a row is checked under: the defaults, timeouts and a sweep of the
    /// empty containers for every row; for the mutexes, which the faults reach most, a crash,
    /// a second cycle, revocation and an unfenced resource too, a follower cut for the mutex,
    /// and a connection loss for the smallest of them (a connection loss multiplies most rows' spaces past what a test
    /// affords without the reduction).
    fn configs(kind: RecipeKind, clients: u16) -> Vec<ModelSpec> {
        let base = ModelSpec::new(clients);
        let mut timeouts = base;
        timeouts.timeouts = true;
        let mut swept = base;
        swept.budgets.reaps = 1;
        let mut configs = vec![base, timeouts, swept];
        let mutexes = [
            RecipeKind::Mutex,
            RecipeKind::TrustingWakeupMutex,
            RecipeKind::NaiveHerdMutex,
        ];
        if clients == 2 && mutexes.contains(&kind) {
            let mut crashes = base;
            crashes.budgets.crashes = 1;
            let mut cycles = base;
            cycles.budgets.cycles = 2;
            let mut unfenced = base;
            unfenced.fenced = false;
            let mut revocable = base;
            revocable.settings.revocable = kind == RecipeKind::Mutex;
            configs.extend([crashes, cycles, unfenced, revocable]);
        }
        if clients == 2 && kind == RecipeKind::Mutex {
            let mut cut = base;
            cut.budgets.expiries = 0;
            cut.budgets.follower_cuts = 1;
            configs.push(cut);
        }
        if clients == 2 && kind == RecipeKind::NaiveHerdMutex {
            let mut losses = base;
            losses.budgets.connection_losses = 1;
            configs.push(losses);
        }
        configs
    }

    /// Checks a row under every configuration with and without the reduction, and returns
    /// the unique states of both (summed over the configurations) once the verdicts agree.
    struct SameVerdicts(RecipeKind, u16);

    impl Visitor for SameVerdicts {
        type Output = (usize, usize);

        fn visit<R: Testable>(self, def: &'static RecipeDef<R>) -> (usize, usize) {
            let run = |config: ModelSpec, reduction: bool| {
                let options = Options {
                    paths: false,
                    reduction,
                    ..Options::default()
                };
                check(def, config, options)
            };
            let holds = |outcome: &Outcome| -> Vec<(&'static str, bool)> {
                (outcome.verdicts.iter())
                    .map(|v| (v.property.name(), v.holds))
                    .collect()
            };
            let mut states = (0, 0);
            for config in configs(self.0, self.1) {
                let reduced = run(config, true);
                let full = run(config, false);
                assert!(reduced.complete && full.complete);
                assert_eq!(holds(&reduced), holds(&full), "{}: {config:?}", def.name);
                states.0 += reduced.unique_states;
                states.1 += full.unique_states;
            }
            states
        }
    }

    #[test]
    fn the_reduction_finds_what_the_full_search_finds() {
        let mut reduced = 0;
        let mut full = 0;
        for kind in RecipeKind::ALL {
            let (with, without) = kind.visit(SameVerdicts(*kind, 2));
            assert!(with <= without, "{kind}: {with} > {without}");
            reduced += with;
            full += without;
        }
        assert!(
            reduced < full,
            "the reduction reduces nothing: {reduced} states"
        );
    }

    #[test]
    fn with_three_clients_the_mutexes_get_the_same_verdicts_with_the_reduction() {
        for kind in [RecipeKind::Mutex, RecipeKind::TrustingWakeupMutex] {
            let (with, without) = kind.visit(SameVerdicts(kind, 3));
            assert!(with < without, "{kind}: {with} !< {without}");
        }
    }
}
