//! [`run`]: one run of a scenario on a real ZooKeeper — the scenario's clients, each with its
//! own real session, running the same recipe, framework layer and workload as the simulator's
//! ([`scenarios::drive`]), its faults that have a real counterpart ([`crate::faults`]), and
//! the trace, in the simulator's format with `meta.source = "real"`.
//!
//! The clients are tasks of this process on one current-thread tokio runtime (each session
//! runs its own thread, see [`crate::session`]), not a process each: a fault that needs one
//! client to stop alone (`pause`, `crash`) is refused. Every event is stamped by one
//! monotonic clock, in nanoseconds since the clients started; the protected resource is one
//! in-process [`FencedResource`] that every client reads and writes, checked as in the
//! simulator. The run ends when every workload is done and its session closed, or at the
//! scenario's horizon (real time), and records a snapshot of the lock path's subtree read
//! through a fresh session (see [`crate::snapshot`] for the recipe's containers). The trace has no server-side events (`op_applied`,
//! `watch_fired`, server sessions): the checkers that read them have nothing to judge there.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::{join_all, pending};
use futures::{FutureExt, select_biased};
use lock::coordination::Coordination;
use lock::fencing::FencedResource;
use lock::framework::Framework;
use lock::ids::ClientSlot;
use scenarios::drive::ClientWork;
use scenarios::fault::ScheduledFault;
use scenarios::recipes::RecipeKind;
use scenarios::rng::SplitMix64;
use scenarios::scenario::Scenario;
use scenarios::trace::{Meta, Source, Trace};
use serde_json::json;

use crate::clock::{RealClock, RealExecutor, Recorder};
use crate::faults::{Injector, refusal};
use crate::session::RealConnector;
use crate::snapshot::{connect_within, snapshot};
use crate::target::Target;

/// The stream of the run's seed that real clients draw from (the scenario's faults use
/// stream 1).
const CLIENT_STREAM: u64 = 2;

/// A run that did not end as it should: one line saying why, and the trace recorded until
/// then (`None` when the run never started).
#[derive(Debug)]
pub struct RunFailure {
    /// What went wrong.
    pub message: String,
    /// The partial trace, when clients had started.
    pub trace: Option<Box<Trace>>,
}

impl fmt::Display for RunFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RunFailure {}

impl RunFailure {
    fn before_start(message: String) -> RunFailure {
        RunFailure {
            message,
            trace: None,
        }
    }
}

/// Checks that every fault of `seed`'s schedule of `scenario` has a real counterpart on
/// `target`, then runs the scenario's clients and faults there and returns the trace. Fails
/// at once with one line when a fault is refused or no server answers within the session
/// timeout (at least a second); with the partial trace when a fault cannot be carried out or
/// the tree cannot be read at the end.
pub fn run(scenario: &Scenario, seed: u64, target: &Target) -> Result<Trace, RunFailure> {
    let Some(recipe) = scenario.recipe.built_in() else {
        return Err(RunFailure::before_start(format!(
            "recipe: expected a recipe of splitbrain's table, found `{}`, a recipe of your own \
             (real runs of those are not supported yet)",
            scenario.recipe
        )));
    };
    let schedule = scenario.fault_schedule(seed);
    if let Some(refused) = refusal(scenario, seed, &schedule, target.is_local()) {
        return Err(RunFailure::before_start(refused));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| RunFailure::before_start(format!("cannot build a tokio runtime: {e}")))?;
    let real = RealRun {
        scenario,
        recipe,
        seed,
        target,
        target_kind: target.kind(),
        schedule,
    };
    runtime.block_on(real.execute())
}

/// One run being carried out.
struct RealRun<'a> {
    scenario: &'a Scenario,
    /// The scenario's recipe, a row of the table.
    recipe: RecipeKind,
    seed: u64,
    target: &'a Target,
    /// What the target is, read once (a restart holds the local server meanwhile).
    target_kind: String,
    schedule: Vec<ScheduledFault>,
}

impl RealRun<'_> {
    async fn execute(&self) -> Result<Trace, RunFailure> {
        let timeout = Duration::from_millis(self.scenario.server.session_timeout_ms);
        let within = timeout.max(Duration::from_secs(1));
        let connector = || RealConnector::new(self.target.connect_string(), timeout);
        let observer = connector();
        let probe = connect_within(&observer, within)
            .await
            .map_err(RunFailure::before_start)?;
        probe.close().await;

        let clock = RealClock::start();
        let recorder = Recorder::new(clock);
        let resource = Arc::new(Mutex::new(FencedResource::new(
            self.scenario.workload.fenced,
        )));
        let connectors: Vec<RealConnector> =
            (0..self.scenario.clients).map(|_| connector()).collect();
        let works: Vec<_> = (0..self.scenario.clients)
            .map(|i| self.client(ClientSlot(i), &recorder, &resource))
            .collect();
        let clients = join_all(works.iter().zip(&connectors).map(|(work, connector)| {
            let nonce = work.executor.next_u32();
            let framework = Framework::new(self.scenario.framework, work.slot, nonce);
            work.run(framework, connector)
        }));
        let injector = Injector {
            connectors: &connectors,
            restarter: self.target.restarter(),
            recorder: recorder.clone(),
        };
        let faults = async {
            match injector.run(clock.origin(), &self.schedule).await {
                Err(why) => why,
                Ok(()) => pending().await,
            }
        };
        let horizon = clock.origin() + Duration::from_millis(self.scenario.horizon_ms);
        // Ctrl-C ends the run as a failure does: the partial trace is kept, and the local
        // servers are stopped when the target is dropped.
        let interrupted = async {
            match tokio::signal::ctrl_c().await {
                Ok(()) => "interrupted (Ctrl-C)".to_owned(),
                Err(_) => pending().await,
            }
        };
        let failed = select_biased! {
            why = interrupted.fuse() => Some(why),
            _ = clients.fuse() => None,
            why = faults.fuse() => Some(why),
            () = tokio::time::sleep_until(horizon.into()).fuse() => None,
        };
        if let Some(why) = failed {
            return Err(self.partial(&recorder, why));
        }
        let tree = async {
            let session = connect_within(&observer, within).await?;
            let tree = snapshot(&session, self.recipe, &self.scenario.lock_path).await;
            session.close().await;
            tree
        };
        match tree.await {
            Ok(tree) => recorder.record(None, tree),
            Err(why) => {
                let why = format!("the run ended, but the lock's tree could not be read: {why}");
                return Err(self.partial(&recorder, why));
            }
        }
        Ok(self.trace(&recorder))
    }

    /// Client `slot`'s share of the run.
    fn client(
        &self,
        slot: ClientSlot,
        recorder: &Recorder,
        resource: &Arc<Mutex<FencedResource>>,
    ) -> ClientWork<RealClock, RealExecutor> {
        let rng = SplitMix64::for_stream(self.seed, &[CLIENT_STREAM, u64::from(slot.0)]);
        ClientWork {
            slot,
            recipe: self.scenario.recipe.clone(),
            lock_path: self.scenario.lock_path.clone(),
            workload: self.scenario.workload.clone(),
            settings: self.scenario.recipe_settings,
            recorder: recorder.clone(),
            resource: resource.clone(),
            started: Arc::default(),
            executor: RealExecutor::new(rng),
        }
    }

    fn partial(&self, recorder: &Recorder, message: String) -> RunFailure {
        RunFailure {
            message,
            trace: Some(Box::new(self.trace(recorder))),
        }
    }

    fn trace(&self, recorder: &Recorder) -> Trace {
        let settings = json!({
            "target": self.target_kind,
            "connect_string": self.target.connect_string(),
            "session_timeout_ms": self.scenario.server.session_timeout_ms,
        });
        Trace {
            meta: Meta {
                scenario: self.scenario.name.clone(),
                seed: self.seed,
                source: Source::Real,
                build: format!("splitbrain-real {}", env!("CARGO_PKG_VERSION")),
                recipe: self.scenario.recipe.clone(),
                clients: self.scenario.clients,
                settings,
                fault_schedule: self.schedule.clone(),
                scenario_spec: Some(Box::new(self.scenario.clone())),
                model_spec: None,
                shrunk_from: None,
            },
            events: recorder.take_events(),
        }
    }
}
