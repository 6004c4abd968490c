//! [`Sim`]: one simulated run — a server, N clients running a recipe and a workload, a fault
//! schedule, a horizon and a seed — and the trace it records.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use coordination::framework::FrameworkConfig;
use coordination::ids::ClientSlot;
use futures::channel::mpsc::unbounded;
use futures::{FutureExt, StreamExt, select_biased};
use madsim::runtime::{Handle, Runtime};
use madsim::time::{Instant, sleep, sleep_until};
use runtime::drive::{ClientWork, Started};
use runtime::resource::{Recorded, SharedResource};
use scenarios::fault::{Fault, Node, ScheduledFault, ServerSelector};
use serde::Serialize;
use trace::{EventKind, Meta, Source, Trace};

use crate::faults::Injector;
use crate::net::Network;
use crate::recipe_code::RecipeCode;
use crate::recorder::{Recorder, SimClock, SimExecutor};
use crate::servers::Servers;
use crate::settings::tick;
use crate::wire::node_ip;
use crate::workload::ClientNode;
use coordination::zk::Path;
use recipe_table::family::RecipeSettings;
use recipe_table::recipe_ref::RecipeRef;
use scenarios::scenario::{RecipeKind, Scenario, ServerSettings, Span, Workload};

/// A run's description. Build with [`Sim::new`] (or [`Sim::from_scenario`]) and the setters,
/// then [`Sim::run`]. The same nodes and tasks run whatever the caller does with the trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[must_use = "a Sim does nothing until `run` is called"]
pub struct Sim {
    scenario: String,
    seed: u64,
    server: ServerSettings,
    clients: u16,
    recipe: RecipeRef,
    #[serde(skip)]
    code: Option<RecipeCode>,
    recipe_settings: RecipeSettings,
    lock_path: Path,
    workload: Workload,
    framework: FrameworkConfig,
    horizon_ms: u64,
    #[serde(skip)]
    faults: Vec<ScheduledFault>,
    #[serde(skip)]
    spec: Option<Box<Scenario>>,
}

/// A run that cannot start: a setting is out of range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError {
    /// The setting, as a path (`faults[2].client`, `server.tick_ms`, ...).
    pub field: String,
    /// What it must be.
    pub expected: String,
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: expected {}", self.field, self.expected)
    }
}

impl std::error::Error for SimError {}

impl Sim {
    /// A run named `scenario` with defaults: seed 0, 2 clients on `Mutex` at
    /// `/locks/splitbrain`, the default server settings, 3 fenced acquisitions per client
    /// (hold 100 ms, think 50 ms), no faults, a 60 s horizon.
    pub fn new(scenario: impl Into<String>) -> Sim {
        Sim {
            scenario: scenario.into(),
            seed: 0,
            server: ServerSettings::default(),
            clients: 2,
            recipe: RecipeKind::Mutex.into(),
            code: Some(RecipeCode::built_in(RecipeKind::Mutex)),
            recipe_settings: RecipeSettings::default(),
            lock_path: Path::new("/locks/splitbrain").expect("a valid path"),
            workload: Workload {
                acquisitions: 3,
                hold_ms: Span::fixed(100),
                think_ms: Span::fixed(50),
                acquire_timeout_ms: None,
                fenced: true,
                stagger_ms: 0,
                reentrant: 1,
            },
            framework: FrameworkConfig::default(),
            horizon_ms: 60_000,
            faults: Vec::new(),
            spec: None,
        }
    }

    /// The run of `scenario` with `seed` and the fault schedule `faults` (the scenario's
    /// schedule for that seed, or a shrunk one); the trace's meta carries the scenario.
    pub fn from_scenario(scenario: &Scenario, seed: u64, faults: Vec<ScheduledFault>) -> Sim {
        Sim {
            scenario: scenario.name.clone(),
            seed,
            server: scenario.server,
            clients: scenario.clients,
            recipe: scenario.recipe.clone(),
            code: RecipeCode::of_table(&scenario.recipe),
            recipe_settings: scenario.recipe_settings,
            lock_path: scenario.lock_path.clone(),
            workload: scenario.workload.clone(),
            framework: scenario.framework,
            horizon_ms: scenario.horizon_ms,
            faults,
            spec: Some(Box::new(scenario.clone())),
        }
    }

    /// The seed of madsim's RNG (scheduling, latency, random draws).
    pub fn seed(mut self, seed: u64) -> Sim {
        self.seed = seed;
        self
    }

    /// The server's settings.
    pub fn server(mut self, server: ServerSettings) -> Sim {
        self.server = server;
        self
    }

    /// The number of clients.
    pub fn clients(mut self, clients: u16) -> Sim {
        self.clients = clients;
        self
    }

    /// The recipe every client runs, a row of the table.
    pub fn recipe(mut self, kind: RecipeKind) -> Sim {
        self.recipe = kind.into();
        self.code = Some(RecipeCode::built_in(kind));
        self
    }

    /// The code of the recipe the run names: what a run of a scenario that names a recipe of
    /// your own needs (`RecipeCode::of(&DEF)`). A row of the table has its code already.
    pub fn recipe_code(mut self, code: RecipeCode) -> Sim {
        self.code = Some(code);
        self
    }

    /// The recipe's settings (`max_leases`, `writers`).
    pub fn recipe_settings(mut self, settings: RecipeSettings) -> Sim {
        self.recipe_settings = settings;
        self
    }

    /// The lock path the recipe uses.
    pub fn lock_path(mut self, lock_path: Path) -> Sim {
        self.lock_path = lock_path;
        self
    }

    /// What every client does.
    pub fn workload(mut self, workload: Workload) -> Sim {
        self.workload = workload;
        self
    }

    /// The framework layer's settings.
    pub fn framework(mut self, framework: FrameworkConfig) -> Sim {
        self.framework = framework;
        self
    }

    /// The faults to inject.
    pub fn faults(mut self, faults: Vec<ScheduledFault>) -> Sim {
        self.faults = faults;
        self
    }

    /// The run stops at this simulated time even if clients are still busy.
    pub fn horizon_ms(mut self, horizon_ms: u64) -> Sim {
        self.horizon_ms = horizon_ms;
        self
    }

    /// Checks the settings, then runs the simulation on a fresh OS thread (madsim seeds
    /// per-thread state, so a thread per run is what makes a seed reproducible) and returns
    /// the trace. A panic inside the run is re-raised after printing the seed.
    pub fn run(&self) -> Result<Trace, SimError> {
        self.run_then(|trace| trace)
    }

    /// [`Sim::run`], then `then` with the trace, still on the run's own thread. Memory is
    /// freed fastest by the thread that allocated it: a trace dropped on another thread once
    /// its run's thread has ended costs the allocator a cross-thread free per allocation
    /// (about a tenth of a hunt's CPU on the bench scenario), so a caller that keeps less than
    /// the whole trace should take what it keeps here.
    pub fn run_then<R: Send>(&self, then: impl FnOnce(Trace) -> R + Send) -> Result<R, SimError> {
        let code = self.validate()?;
        in_fresh_runtime(self.seed, |runtime| {
            let scope = code.enter_run_thread();
            let trace = runtime.block_on(self.clone().simulate());
            drop(runtime);
            drop(scope);
            trace.map(then)
        })
    }

    /// Checks the settings; the recipe's code, when they hold.
    fn validate(&self) -> Result<RecipeCode, SimError> {
        let fail = |field: String, expected: &str| {
            Err(SimError {
                field,
                expected: expected.to_owned(),
            })
        };
        if self.server.tick_ms == 0 {
            return fail("server.tick_ms".into(), "at least 1");
        }
        if self.server.container_sweep_ms == 0 {
            return fail("server.container_sweep_ms".into(), "at least 1");
        }
        if self.clients == 0 {
            return fail("clients".into(), "at least 1");
        }
        let Some(code) = &self.code else {
            return fail(
                "recipe".into(),
                &format!(
                    "a recipe of splitbrain's table, or the code of one of your own \
                     (Sim::recipe_code), found `{}` without its code",
                    self.recipe
                ),
            );
        };
        if code.recipe().name() != self.recipe.name() {
            return fail(
                "recipe".into(),
                &format!(
                    "the code of `{}`, the recipe the run names, found the code of `{}`",
                    self.recipe,
                    code.recipe()
                ),
            );
        }
        for (field, span) in [
            ("workload.hold_ms", self.workload.hold_ms),
            ("workload.think_ms", self.workload.think_ms),
        ] {
            if span.min > span.max {
                return fail(format!("{field}.min"), "at most max");
            }
        }
        if self.server.is_ensemble() && code.is_program() {
            return fail(
                "recipe".into(),
                "a recipe in an ensemble (programs connect to a standalone server only)",
            );
        }
        let clients = self.clients;
        let known = |node: Node| match node {
            Node::Server => true,
            Node::Client(i) => i < clients,
        };
        for (i, scheduled) in self.faults.iter().enumerate() {
            let field = |name: &str| format!("faults[{i}].{name}");
            let client_range = format!("a client index below {clients}");
            match scheduled.fault {
                Fault::Pause { client, .. }
                | Fault::ExpireSession { client }
                | Fault::Crash { client }
                | Fault::CutFromServer { client, .. }
                    if client >= clients =>
                {
                    return fail(field("client"), &client_range);
                }
                Fault::Partition { a, b, .. } if !known(a) || !known(b) => {
                    return fail(field("a/b"), &format!("server or {client_range}"));
                }
                Fault::Isolate { node, .. } if !known(node) => {
                    return fail(field("node"), &format!("server or {client_range}"));
                }
                Fault::Delay { from, to, .. } | Fault::Drop { from, to, .. }
                    if !known(from) || !known(to) =>
                {
                    return fail(field("from/to"), &format!("server or {client_range}"));
                }
                Fault::Delay { min_ms, max_ms, .. } if min_ms > max_ms => {
                    return fail(field("min_ms"), "at most max_ms");
                }
                Fault::Drop { percent, .. } if percent > 100 => {
                    return fail(field("percent"), "0..=100");
                }
                Fault::SplitServers { .. } | Fault::SlowServerLinks { .. }
                    if !self.server.is_ensemble() =>
                {
                    return fail(
                        field("kind"),
                        "a fault on the links between the servers of an ensemble \
                         (server.ensemble at least 2)",
                    );
                }
                Fault::SplitServers { ref groups, .. } if !groups.split(self.server.ensemble) => {
                    return fail(
                        field("groups"),
                        "at least two groups holding each server exactly once, or random halves",
                    );
                }
                Fault::SlowServerLinks { min_ms, max_ms, .. } if min_ms > max_ms => {
                    return fail(field("min_ms"), "at most max_ms");
                }
                Fault::SlowServerLinks { loss_percent, .. } if loss_percent >= 100 => {
                    return fail(field("loss_percent"), "0..=99");
                }
                Fault::RestartServer { .. } if self.server.is_ensemble() => {
                    return fail(
                        field("kind"),
                        "a fault the ensemble models (crash_server restarts one of its servers)",
                    );
                }
                _ if (scheduled.fault.server_selector()).is_some_and(|s| !self.selects(s)) => {
                    return fail(
                        field("server"),
                        &format!(
                            "a server of an ensemble of {} (server.ensemble at least 2) or a \
                             client below {clients}",
                            self.server.ensemble
                        ),
                    );
                }
                _ => {}
            }
            if scheduled.on_request.is_some() && !scheduled.fault.may_start_at_request() {
                return fail(
                    field("on_request"),
                    "only on a partition between one client and the server, an isolation of one \
                     client or a crash_server",
                );
            }
        }
        Ok(code.clone())
    }

    /// Whether `selector` names a server of this run's ensemble.
    fn selects(&self, selector: ServerSelector) -> bool {
        let servers = self.server.ensemble;
        self.server.is_ensemble()
            && match selector {
                ServerSelector::Server(n) => n < servers,
                ServerSelector::Follower(k) => k < servers - 1,
                ServerSelector::Leader => true,
                ServerSelector::ServerOf(client) => client < self.clients,
            }
    }

    /// Checks the settings and runs inside the current madsim runtime, which must be fresh
    /// and seeded with this run's seed (what [`Sim::run`] sets up; madsim's
    /// `Runtime::check_determinism` is the other caller).
    pub async fn simulate(self) -> Result<Trace, SimError> {
        let code = self.validate()?;
        let start = Instant::now();
        let handle = Handle::current();
        let time = crate::time::SimTime::current();
        let recorder = Recorder::new(SimClock::start(time.clone()));
        recorder.reserve(self.expected_events());
        let network = Network::new(time);
        // The servers listen before any client starts.
        let servers = Servers::start(self.server, &recorder, &network).await;
        let addresses = Servers::addresses(&self.server);
        let resource: Arc<dyn SharedResource> =
            Arc::new(Recorded::new(self.workload.fenced, recorder.clone()));
        let (done_tx, mut done_rx) = unbounded();
        let client_nodes = (0..self.clients)
            .map(|i| {
                let work = ClientWork {
                    slot: ClientSlot(i),
                    recipe: self.recipe.clone(),
                    lock_path: self.lock_path.clone(),
                    workload: self.workload.clone(),
                    settings: self.recipe_settings,
                    recorder: recorder.clone(),
                    resource: resource.clone(),
                    started: Started::default(),
                    executor: SimExecutor,
                };
                let node = ClientNode {
                    work,
                    code: code.clone(),
                    server: self.server,
                    servers: addresses.clone(),
                    framework: self.framework,
                    network: network.clone(),
                    done: done_tx.clone(),
                };
                handle
                    .create_node()
                    .name(format!("client-{i}"))
                    .ip(node_ip(Node::Client(i)))
                    .init(move || node.clone().run())
                    .build()
                    .id()
            })
            .collect::<Vec<_>>();
        let server_nodes = servers.nodes();
        let injector = Injector {
            handle: handle.clone(),
            client_nodes: client_nodes.clone(),
            servers,
            network,
            recorder: recorder.clone(),
        };
        let servers = injector.servers.clone();
        let faults = madsim::task::spawn(injector.run(start, self.faults.clone()));
        let clients = usize::from(self.clients);
        let settled = async {
            // Every client's workload done, its session closed (a crashed client restarts and
            // reports again, so count clients, not reports)...
            let mut finished = BTreeSet::new();
            while finished.len() < clients {
                match done_rx.next().await {
                    Some(slot) => finished.insert(slot),
                    None => break,
                };
            }
            // ... and every other session (of crashed clients) gone.
            while !servers.sessions().is_empty() {
                sleep(tick(&self.server)).await;
            }
        };
        let horizon = start + Duration::from_millis(self.horizon_ms);
        select_biased! {
            () = settled.fuse() => {},
            () = sleep_until(horizon).fuse() => {},
        }
        recorder.record(None, EventKind::tree_snapshot(&servers.tree()));
        let events = recorder.take_events();
        // Tasks still waiting at the horizon hold one another (and the runtime's handle) in
        // cycles that dropping the runtime cannot break: cancel them so that the runtime
        // drops their futures, or every run leaks its server, clients and wire.
        faults.abort();
        for node in client_nodes.into_iter().chain(server_nodes) {
            handle.kill(node);
        }
        Ok(Trace {
            meta: self.meta(),
            events,
        })
    }

    /// About as many events as a run records (the bench scenario's record 24 per acquisition
    /// on average, more under heavy faults), at most 65,536.
    fn expected_events(&self) -> usize {
        let acquisitions = usize::from(self.clients) * self.workload.acquisitions as usize;
        acquisitions
            .saturating_mul(32)
            .saturating_add(256)
            .min(1 << 16)
    }

    fn meta(&self) -> Meta {
        Meta {
            scenario: self.scenario.clone(),
            seed: self.seed,
            source: Source::Sim,
            build: format!("splitbrain-sim {}", env!("CARGO_PKG_VERSION")),
            recipe: self.recipe.clone(),
            clients: self.clients,
            settings: serde_json::to_value(self).expect("settings serialize"),
            fault_schedule: self.faults.clone(),
            scenario_spec: self.spec.clone(),
            model_spec: None,
            shrunk_from: None,
        }
    }
}

/// Runs `run` with a fresh madsim runtime seeded with `seed`, on a fresh thread (a run's
/// thread-locals never carry over from another run), and returns what it returns. A panic is
/// passed on after a line naming the seed that reproduces it.
pub fn in_fresh_runtime<R: Send>(seed: u64, run: impl FnOnce(Runtime) -> R + Send) -> R {
    let joined = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                run(Runtime::with_seed_and_config(
                    seed,
                    madsim::Config::default(),
                ))
            })
            .join()
    });
    joined.unwrap_or_else(|panic| {
        eprintln!("the simulation panicked; rerun with seed {seed} to reproduce");
        std::panic::resume_unwind(panic)
    })
}

/// The text of a panic payload: its message when it is text.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}
