//! Running a check: one exhaustive DFS (with symmetry reduction) for the verdicts and the
//! state counts, and one breadth-first search for the shortest path to each discovery.
//!
//! The path search starts beside the DFS, on its own thread, for the discoveries the recipe
//! table expects (the violations expected and the examples of `sometimes` properties); once
//! the verdicts are in it is told which of those the DFS found, and ends when it has their
//! paths. Each path is the first state of the breadth-first order that shows its property,
//! whichever other properties the search also looks for, so the paths are the ones a search
//! started after the DFS finds; only the wall time changes (a 3-client semaphore's 45-step
//! `herd_free` path needs most of its space breadth-first, more than the DFS takes). A
//! discovery nobody expected (a finding) gets its search after the DFS, as before.
//!
//! stateright 0.31 keeps the *last* discovery it sees, not the shortest, and BFS ignores
//! symmetry. So the counterexamples are searched for separately, with a single-threaded BFS
//! over the same reduced space (symmetry and the partial-order reduction) that ends when every
//! property the DFS discovered has its path ([`shortest`]); each path is then minimized: cut at
//! the first state that shows it, and single steps dropped while the rest still replays and
//! still shows it. In a large space that search can cost more than the check itself: past
//! [`SHORTEST_BUDGET`] states it gives up, and the DFS's own discovery, minimized, is the
//! counterexample (shorter than it was, not always the shortest).
//!
//! A shortest path of the reduced space need not be a shortest path of the full one: where
//! the reduction takes a client's local, invisible delivery alone, a path that never needed
//! that delivery takes it anyway. Minimizing drops such a step when the path still shows the
//! discovery without it. Measured against the BFS over every interleaving (which the search
//! was until this was written, at twice the cost): the same lengths on every configuration
//! compared (see `the_counterexample_paths_are_as_short_as_the_full_searchs`).

use std::collections::BTreeSet;
use std::hash::Hash;
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use recipe_table::property::Expectation;
use serde::Serialize;
use stateright::{Checker, HasDiscoveries, Model, Representative};

use crate::budget::{Budgets, ModelSpec};
use crate::model::{Action, Cutoff, LockModel};
use crate::predicates::{Checked, Kind};
use crate::replay::states;
use crate::state::State;
use recipe_table::family::Family;
use recipe_table::recipes::{RecipeDef, Testable};

/// How to run the exhaustive search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Checker threads.
    pub threads: usize,
    /// Use symmetry reduction (DFS either way).
    pub symmetry: bool,
    /// Give up after this long (the result is then not complete).
    pub timeout: Option<Duration>,
    /// Search and minimize a path for each discovery.
    pub paths: bool,
    /// Use the partial-order reduction.
    pub reduction: bool,
}

impl Default for Options {
    /// One thread, symmetry, partial-order reduction, no timeout, paths.
    fn default() -> Self {
        Options {
            threads: 1,
            symmetry: true,
            timeout: None,
            paths: true,
            reduction: true,
        }
    }
}

/// The verdict on one property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The property.
    pub property: Checked,
    /// What the recipe declares.
    pub expectation: Expectation,
    /// Whether the property holds (for `sometimes`: whether an example exists).
    pub holds: bool,
    /// The minimized path to the counterexample (or example), when searched for.
    pub path: Option<Vec<Action>>,
}

impl Verdict {
    /// Whether the verdict is the declared one.
    pub fn met(&self) -> bool {
        self.expectation.is_met(!self.holds)
    }
}

/// The result of a check.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The recipe's name.
    pub recipe: &'static str,
    /// What was checked.
    pub config: ModelSpec,
    /// States generated (with repetitions).
    pub states: usize,
    /// Distinct states (representatives, under symmetry).
    pub unique_states: usize,
    /// The longest path explored.
    pub max_depth: usize,
    /// Wall time of the exhaustive search.
    pub seconds: f64,
    /// The search ran out (no timeout hit).
    pub complete: bool,
    /// One verdict per property the recipe is checked for, in [`Checked::of`] order.
    pub verdicts: Vec<Verdict>,
}

impl Outcome {
    /// Whether every verdict is the declared one (and the search was complete).
    pub fn all_met(&self) -> bool {
        self.complete && self.verdicts.iter().all(Verdict::met)
    }

    /// States per second of the exhaustive search.
    pub fn states_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.states as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// The verdict on `property` (a shared one, or `someone_acquires`).
    pub fn verdict(&self, property: impl Into<Checked>) -> &Verdict {
        let property = property.into();
        self.verdicts
            .iter()
            .find(|v| v.property == property)
            .expect("every property has a verdict")
    }

    /// The `--json` document; `reports` gives each property's report file, if one was written.
    pub fn summary(&self, reports: impl Fn(Checked) -> Option<String>) -> Summary {
        Summary {
            recipe: self.recipe,
            clients: self.config.clients,
            budgets: self.config.budgets,
            states: self.states,
            unique_states: self.unique_states,
            max_depth: self.max_depth,
            seconds: self.seconds,
            states_per_second: self.states_per_second(),
            complete: self.complete,
            properties: self
                .verdicts
                .iter()
                .map(|v| PropertySummary {
                    name: v.property.name(),
                    kind: v.property.kind(),
                    expectation: v.expectation,
                    verdict: if v.holds {
                        Expectation::Holds
                    } else {
                        Expectation::Violated
                    },
                    met: v.met(),
                    counterexample_steps: v.path.as_ref().map(Vec::len),
                    report: reports(v.property),
                })
                .collect(),
            all_met: self.all_met(),
        }
    }
}

/// The `--json` output of `splitbrain check`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// The recipe's name.
    pub recipe: &'static str,
    /// Number of clients.
    pub clients: u16,
    /// The budgets checked under.
    pub budgets: Budgets,
    /// States generated.
    pub states: usize,
    /// Distinct states.
    pub unique_states: usize,
    /// Longest path.
    pub max_depth: usize,
    /// Wall time.
    pub seconds: f64,
    /// Throughput.
    pub states_per_second: f64,
    /// The search was exhaustive.
    pub complete: bool,
    /// Per property.
    pub properties: Vec<PropertySummary>,
    /// Every expectation met.
    pub all_met: bool,
}

/// One property in [`Summary`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PropertySummary {
    /// The property's name.
    pub name: &'static str,
    /// `always` or `sometimes`.
    pub kind: Kind,
    /// `holds` or `violated`, as declared.
    pub expectation: Expectation,
    /// `holds` or `violated`, as found.
    pub verdict: Expectation,
    /// Whether the two agree.
    pub met: bool,
    /// The minimized path's length, if there is one.
    pub counterexample_steps: Option<usize>,
    /// The HTML report written for it, if any.
    pub report: Option<String>,
}

/// The verdict `def`'s recipe is expected to get on `property` under `config`: the row's
/// expectation for the shared properties; someone acquires unless nobody can (no client, no
/// cycle, a semaphore without leases).
pub fn expectation<R>(def: &RecipeDef<R>, property: Checked, config: &ModelSpec) -> Expectation {
    match property.shared() {
        Some(shared) => (def.expectation)(shared, config),
        None => {
            let no_lease = def.family == Family::Semaphore && config.settings.max_leases == 0;
            let nobody = config.clients == 0 || config.budgets.cycles == 0 || no_lease;
            recipe_table::recipes::violated_if(nobody)
        }
    }
}

/// A path (the actions from the initial state) for each of some properties, `None` where none
/// was found.
pub type Paths = Vec<Option<Vec<Action>>>;

/// A discovery name that no property has: the search never stops early.
const EXHAUSTIVE: &str = "(explore everything)";

/// Checks recipe `R` under `config`.
pub fn check<R: Testable>(
    def: &'static RecipeDef<R>,
    config: ModelSpec,
    options: Options,
) -> Outcome {
    let model = LockModel::new(def, config).with_reduction(options.reduction);
    let cutoff = model.cutoff().clone();
    let mut builder = model
        .checker()
        .threads(options.threads.max(1))
        .finish_when(HasDiscoveries::AllOf(BTreeSet::from([EXHAUSTIVE])));
    if options.symmetry {
        builder = builder.symmetry();
    }
    let started = Instant::now();
    // stateright's own timeout is read only when a thread runs out of work, which one thread
    // never does before the end: the model's cutoff stops any search on time.
    let timer = options
        .timeout
        .map(|timeout| stop_after(timeout, cutoff.clone()));
    let properties = Checked::of(def.family);
    let expected: Vec<Checked> = (properties.iter().copied())
        .filter(|property| options.paths && discovery_expected(def, *property, &config))
        .collect();
    let told = Told::default();
    let (checker, seconds, complete, early) = std::thread::scope(|scope| {
        let early = (!expected.is_empty()).then(|| {
            scope.spawn(|| {
                let model = LockModel::new(def, config).with_reduction(options.reduction);
                let budget = SHORTEST_BUDGET;
                search_shortest(&model, &expected, budget, options.threads, Some(&told))
            })
        });
        let checker = builder.spawn_dfs().join();
        let seconds = started.elapsed().as_secs_f64();
        drop(timer);
        let complete = !cutoff.cut_short();
        let discovered = checker.discoveries();
        let early = early.map(|search| {
            let found = |property: &Checked| discovered.contains_key(property.name());
            let unexpected = (properties.iter()).any(|p| found(p) && !expected.contains(p));
            told.tell(if complete && !unexpected {
                expected.iter().map(found).collect()
            } else {
                vec![false; expected.len()]
            });
            let paths = search.join().expect("the path search panicked");
            (complete && !unexpected).then_some(paths)
        });
        (checker, seconds, complete, early.flatten())
    });
    let mut discovered = checker.discoveries();
    let discoveries: Vec<_> = properties
        .iter()
        .map(|property| discovered.remove(property.name()))
        .collect();
    let early = early.map(|paths| (expected.as_slice(), paths));
    let paths = (options.paths).then(|| {
        paths(
            def,
            config,
            options,
            complete,
            &properties,
            &discoveries,
            early,
        )
    });
    let verdicts = properties
        .into_iter()
        .zip(discoveries)
        .enumerate()
        .map(|(index, (property, discovery))| {
            let found = discovery.is_some();
            let holds = match property.kind() {
                Kind::Always => !found,
                Kind::Sometimes => found,
            };
            Verdict {
                property,
                expectation: expectation(def, property, &config),
                holds,
                path: paths.as_ref().and_then(|paths| paths[index].clone()),
            }
        })
        .collect();
    Outcome {
        recipe: def.name,
        config,
        states: checker.state_count(),
        unique_states: checker.unique_state_count(),
        max_depth: checker.max_depth(),
        seconds,
        complete,
        verdicts,
    }
}

/// Whether the recipe table expects `property` to have a discovery under `config`: a
/// violation expected, or an example of a `sometimes` property expected to hold.
fn discovery_expected<R>(def: &RecipeDef<R>, property: Checked, config: &ModelSpec) -> bool {
    matches!(
        (property.kind(), expectation(def, property, config)),
        (Kind::Always, Expectation::Violated) | (Kind::Sometimes, Expectation::Holds)
    )
}

/// The path to show for each discovery (`None` where there is none): the shortest, found by
/// one breadth-first search for all of them when the check was complete and the search stays
/// within [`SHORTEST_BUDGET`]; otherwise the DFS's own path, minimized. A search cut short by
/// the timeout, or a space past that budget, would not finish breadth-first either. `early`
/// is the search that ran beside the DFS (its properties and paths), when it covers every
/// discovery.
fn paths<R: Testable>(
    def: &'static RecipeDef<R>,
    config: ModelSpec,
    options: Options,
    complete: bool,
    properties: &[Checked],
    discoveries: &[Option<stateright::Path<State<R>, Action>>],
    early: Option<(&[Checked], Paths)>,
) -> Paths {
    let model = LockModel::new(def, config).with_reduction(options.reduction);
    let wanted: Vec<Checked> = properties
        .iter()
        .zip(discoveries)
        .filter(|(_, discovery)| discovery.is_some())
        .map(|(property, _)| *property)
        .collect();
    let mut shortest = match early {
        Some((searched, paths)) => (wanted.iter())
            .map(|property| {
                let at = searched.iter().position(|p| p == property);
                at.and_then(|at| paths[at].clone())
            })
            .collect(),
        None if complete && !wanted.is_empty() => {
            shortest(&model, &wanted, SHORTEST_BUDGET, options.threads)
        }
        None => vec![None; wanted.len()],
    }
    .into_iter();
    discoveries
        .iter()
        .zip(properties)
        .map(|(discovery, property)| {
            let discovery = discovery.as_ref()?;
            let found = shortest.next().flatten();
            Some(
                found.unwrap_or_else(|| {
                    minimize(&model, *property, discovery.clone().into_actions())
                }),
            )
        })
        .collect()
}

/// Stops `cutoff` once `timeout` has passed, unless the returned sender is dropped first (the
/// search ended).
fn stop_after(timeout: Duration, cutoff: Cutoff) -> mpsc::Sender<()> {
    let (done, ended) = mpsc::channel::<()>();
    if timeout.is_zero() {
        cutoff.stop();
        return done;
    }
    std::thread::spawn(move || {
        if ended.recv_timeout(timeout) == Err(mpsc::RecvTimeoutError::Timeout) {
            cutoff.stop();
        }
    });
    done
}

/// The most states [`check`]'s search for the shortest paths reaches before it gives up. The
/// search keeps two levels of whole states: a 3-client semaphore's stayed under this budget
/// and still took minutes and 2 GB after a one-minute check (when each property had a search
/// of its own).
pub const SHORTEST_BUDGET: usize = 1_000_000;

/// The shortest path to a discovery of each of `properties`, minimized (a no-op on a true
/// shortest path; it guards the result against fingerprint collisions), in their order;
/// `None` for a property with no discovery, or for those not yet found when the search
/// reached `budget` states ([`check`] gives it [`SHORTEST_BUDGET`]).
///
/// This is our own breadth-first search, one for all the properties, ending when each has its
/// path: stateright's BFS checks its stop condition only every 1,500 states and overwrites the
/// discovery meanwhile, which gave a 12-step path where 7 steps suffice. States are
/// deduplicated by the fingerprint of their symmetry representative (every property is
/// symmetric in the clients, so a shortest path in the reduced space is a shortest path).
///
/// Each level is expanded on `threads` threads, each taking a contiguous share of the level;
/// the successors are then deduplicated and judged in the level's order, so the paths found
/// are the same whatever the number of threads.
pub fn shortest<R: Testable>(
    model: &LockModel<R>,
    properties: &[Checked],
    budget: usize,
    threads: usize,
) -> Paths {
    search_shortest(model, properties, budget, threads, None)
}

/// What a check tells the path search running beside its DFS once the verdicts are in: which
/// of the search's properties the DFS found, so still wanted (all `false`: stop).
#[derive(Default)]
struct Told(Mutex<Option<Vec<bool>>>);

impl Told {
    fn tell(&self, wanted: Vec<bool>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(wanted);
    }

    /// Whether every property still wanted has its path in `found` (never before the check
    /// has told).
    fn settled(&self, found: &[Option<Vec<Action>>]) -> bool {
        let told = self.0.lock().unwrap_or_else(|e| e.into_inner());
        (told.as_ref()).is_some_and(|wanted| {
            (wanted.iter().zip(found)).all(|(wanted, found)| !wanted || found.is_some())
        })
    }
}

/// [`shortest`], also ending at a level's end once `told` says every path still wanted is found.
fn search_shortest<R: Testable>(
    model: &LockModel<R>,
    properties: &[Checked],
    budget: usize,
    threads: usize,
    told: Option<&Told>,
) -> Paths {
    let mut search = Shortest {
        model,
        properties,
        found: vec![None; properties.len()],
        missing: properties.len(),
    };
    let init = model.initial_canonical();
    if search.shows(&init, Vec::new) {
        return search.found;
    }
    let mut seen = BTreeSet::from([fingerprint(&init.representative())]);
    // Every state reached, as the index of its parent and the action from it; only the states
    // of the level being expanded and of the next one are kept (a whole state space of states
    // would not fit: millions of them for a semaphore with 3 clients).
    let mut reached: Vec<(usize, Option<Action>)> = vec![(0, None)];
    let mut level: Vec<(usize, State<R>)> = vec![(0, init)];
    while !level.is_empty() {
        let successors = expand(model, level, &seen, threads);
        let mut next_level = Vec::new();
        let mut over_budget = false;
        for (parent, action, next, print) in successors.into_iter().flatten() {
            if !seen.insert(print) {
                continue;
            }
            if reached.len() == budget {
                over_budget = true;
                break;
            }
            reached.push((parent, Some(action)));
            next_level.push((reached.len() - 1, next));
        }
        let showing = in_order(&next_level, threads, |(_, state)| search.showing(state));
        for ((index, state), showing) in next_level.iter().zip(showing) {
            if showing && search.shows(state, || path_to(&reached, *index)) {
                return search.found;
            }
        }
        let settled = told.is_some_and(|told| told.settled(&search.found));
        if over_budget || settled {
            return search.found;
        }
        level = next_level;
    }
    search.found
}

/// A successor found by [`expand`]: its parent's index, the action, the state and the
/// fingerprint of its representative.
type Successor<R> = (usize, Action, State<R>, u64);

/// The successors of `level`'s states (each with its parent's index), in the level's order,
/// computed on `threads` threads, each taking a contiguous share of the level. A thread leaves
/// out the states seen on earlier levels and all but the first of those its share reaches more
/// than once, and drops each parent once it is expanded, so that the states kept at once are
/// few: a level of a 3-client semaphore holds tens of thousands, and a heap of whole states
/// makes every allocation dear. Left for the caller: the states two shares both reach.
fn expand<R: Testable>(
    model: &LockModel<R>,
    level: Vec<(usize, State<R>)>,
    seen: &BTreeSet<u64>,
    threads: usize,
) -> Vec<Vec<Successor<R>>> {
    let expand_share = |share: Vec<(usize, State<R>)>| {
        let mut here = BTreeSet::new();
        let mut actions = Vec::new();
        let mut out = Vec::new();
        for (index, state) in share {
            let siblings = out.len();
            actions.clear();
            // The reduction's one delivery is stepped already.
            let mut stepped = model.reduce(&state, &mut actions);
            for &action in &actions {
                let next = match stepped.take() {
                    Some(stepped) => Some(model.renumbered(&state, action, stepped)),
                    None => model.next(&state, action),
                };
                let Some(next) = next else {
                    continue;
                };
                let print = fingerprint(&next.representative());
                if !seen.contains(&print) && here.insert(print) {
                    out.push((index, action, next, print));
                }
            }
            // The images kept for the siblings would otherwise stay with the next level.
            for (_, _, next, _) in &out[siblings..] {
                next.forget_images();
            }
        }
        out
    };
    in_shares(level, threads, expand_share)
}

/// `f` of each contiguous share of `items`, one share per thread (one share when `items` are
/// few), each on its own thread; the outputs in the shares' order.
fn in_shares<T: Send, U: Send>(
    items: Vec<T>,
    threads: usize,
    f: impl Fn(Vec<T>) -> U + Sync,
) -> Vec<U> {
    let share = items.len().div_ceil(threads.max(1)).max(1);
    if items.len() <= share {
        return vec![f(items)];
    }
    let mut items = items.into_iter();
    let shares: Vec<Vec<T>> = std::iter::from_fn(|| {
        let share: Vec<T> = items.by_ref().take(share).collect();
        (!share.is_empty()).then_some(share)
    })
    .collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (shares.into_iter())
            .map(|share| scope.spawn(|| f(share)))
            .collect();
        (workers.into_iter())
            .map(|worker| worker.join().expect("a search thread panicked"))
            .collect()
    })
}

/// `f` of each of `items`, in their order, computed on `threads` threads (each a contiguous
/// share of the items).
fn in_order<T: Sync, U: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> U + Sync) -> Vec<U> {
    let items: Vec<&T> = items.iter().collect();
    let outputs = in_shares(items, threads, |share| {
        share.into_iter().map(&f).collect::<Vec<U>>()
    });
    outputs.into_iter().flatten().collect()
}

/// The properties [`shortest`] looks for, and the paths it found so far.
struct Shortest<'a, R: Testable> {
    model: &'a LockModel<R>,
    properties: &'a [Checked],
    found: Paths,
    missing: usize,
}

impl<R: Testable> Shortest<'_, R> {
    /// Whether `state` shows some property still missing.
    fn showing(&self, state: &State<R>) -> bool {
        (self.properties.iter().zip(&self.found))
            .any(|(property, found)| found.is_none() && shows(self.model, *property, state))
    }

    /// Records the path (from `path`) for every property still missing that `state` shows;
    /// whether none is missing any more.
    fn shows(&mut self, state: &State<R>, path: impl Fn() -> Vec<Action>) -> bool {
        for (property, found) in self.properties.iter().zip(&mut self.found) {
            if found.is_none() && shows(self.model, *property, state) {
                *found = Some(minimize(self.model, *property, path()));
                self.missing -= 1;
            }
        }
        self.missing == 0
    }
}

/// A value's 64-bit hash: what the model's own searches deduplicate states by. aHash with
/// fixed keys, as stateright's own fingerprint is: the same value on every run, at a third of
/// SipHash's cost (SipHash was a tenth of the shortest-path search's time).
pub(crate) fn fingerprint<T: Hash>(value: &T) -> u64 {
    ahash::RandomState::with_seeds(0x5350_4c49, 0x5442_5241, 0x494e_0000, 0x4d4f_4445)
        .hash_one(value)
}

/// The actions from the initial state to `reached[index]`.
fn path_to(reached: &[(usize, Option<Action>)], mut index: usize) -> Vec<Action> {
    let mut path = Vec::new();
    while let (parent, Some(action)) = &reached[index] {
        path.push(*action);
        index = *parent;
    }
    path.reverse();
    path
}

/// Cuts `actions` at the first state that shows `property`'s discovery, then drops single
/// steps while the path still replays and still shows it, until no step can go.
pub fn minimize<R: Testable>(
    model: &LockModel<R>,
    property: Checked,
    actions: Vec<Action>,
) -> Vec<Action> {
    let mut best = cut(model, property, &actions).unwrap_or(actions);
    let mut index = 0;
    while index < best.len() {
        let mut candidate = best.clone();
        candidate.remove(index);
        match cut(model, property, &candidate) {
            Some(shorter) => {
                best = shorter;
                index = 0;
            }
            None => index += 1,
        }
    }
    best
}

/// `actions` up to the first state showing the discovery, if they replay and show it.
fn cut<R: Testable>(
    model: &LockModel<R>,
    property: Checked,
    actions: &[Action],
) -> Option<Vec<Action>> {
    let visited = states(model, actions).ok()?;
    let first = visited
        .iter()
        .position(|state| shows(model, property, state))?;
    Some(actions[..first].to_vec())
}

/// Whether `state` is a discovery of `property`.
pub fn shows<R: Testable>(model: &LockModel<R>, property: Checked, state: &State<R>) -> bool {
    let satisfied = property.holds_in(model, state);
    match property.kind() {
        Kind::Always => !satisfied,
        Kind::Sometimes => satisfied,
    }
}
