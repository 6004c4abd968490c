//! Contenders: programs in any language that run a ZooKeeper recipe library's own lock or
//! election on a run's lock path, driven by the executor over the contender protocol
//! ([`protocol`]; book: `reference/contender-protocol.md`).
//!
//! `Contenders::start` starts each contender of a run as its own process ([`Program`]),
//! after the Rust clients' clock has started, says hello (where to connect, as which client)
//! and waits until each is ready with its session. `Contenders::ended` then drives each
//! through the scenario's workload (`drive.rs`): the executor tells it when to acquire and
//! release (or start, await and close), with hold and think times drawn from the seed as a
//! Rust client in its slot draws them, and turns its reports into trace events on its client
//! slot, placed on the run's clock by the contender's `CLOCK_MONOTONIC` stamps; its reads and
//! writes of the run's fenced resource are made as its reports of them arrive. So a mixed run
//! is one trace, checked and reported like any other. In the clients' place, the scenario's
//! faults on a client reach its contender (`handle.rs`): paused, crashed and started again,
//! its session expired.
//!
//! The libraries whose contender programs come with this crate declare themselves as
//! [`packaged::Packaging`]; the two Rust crates' programs share the protocol's loop
//! ([`serve`]) and the session password the server derives ([`password`]).

mod drive;
mod handle;
pub mod packaged;
pub mod password;
mod process;
pub mod protocol;
pub mod serve;
#[cfg(test)]
mod tests;
pub mod user;

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command as OsCommand;
use std::sync::Arc;
use std::time::Duration;

use coordination::ids::ClientSlot;
use futures::channel::mpsc::UnboundedReceiver;
use futures::future::{join_all, try_join_all};
use recipe_table::family::Family;
use runtime::resource::SharedResource;
use scenarios::scenario::Scenario;

use crate::clock::{RealClock, Recorder};
use drive::{Driver, Respawn};
pub(crate) use handle::Handle;
use process::{Output, Process};
use protocol::{Hello, retry_spec};
use recipe_table::recipes::RecipeKind;

/// How long contenders may take to start and connect, however loaded the machine.
const READY_WITHIN: std::time::Duration = std::time::Duration::from_secs(120);

/// How to start a contender: a program and its arguments.
#[derive(Clone, Debug)]
pub struct Program {
    /// What messages call its contenders (`curator`: "curator contender 3").
    pub name: String,
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Where each contender's stderr is kept (`contender-<slot>.stderr`).
    pub logs: PathBuf,
}

impl Program {
    fn command(&self) -> OsCommand {
        let mut command = OsCommand::new(&self.program);
        command.args(&self.args);
        command
    }

    /// Starts the contender on `slot` after `restarts` crashes of it, its stderr kept in
    /// `contender-<slot>.stderr` (`contender-<slot>.<restarts>.stderr` after a crash).
    fn spawn(
        &self,
        slot: ClientSlot,
        restarts: u32,
    ) -> Result<(Process, UnboundedReceiver<Output>), String> {
        let name = format!("{} contender {}", self.name, slot.0);
        let log = match restarts {
            0 => format!("contender-{}.stderr", slot.0),
            _ => format!("contender-{}.{restarts}.stderr", slot.0),
        };
        Process::spawn(name, self.command(), self.logs.join(log))
    }
}

/// A recipe of splitbrain's table that a library's contenders run, with the library's own
/// name for what runs it (Curator's `InterProcessMutex` for `mutex`). Each library declares
/// its own list (`curator::SERVES`, `kazoo::SERVES`), and refuses the other recipes from it
/// ([`recipe_refusal`]).
pub type Counterpart = (RecipeKind, &'static str);

/// Why the contenders of `library`, which serve the recipes of `serves`, cannot run
/// `scenario`'s recipe, if they cannot: one line naming what they serve.
pub fn recipe_refusal(
    library: &str,
    serves: &[Counterpart],
    scenario: &Scenario,
) -> Option<String> {
    let recipe = scenario.recipe.built_in();
    if serves.iter().any(|&(kind, _)| Some(kind) == recipe) {
        return None;
    }
    let runs = one_of(serves.iter().map(|(_, runs)| (*runs).to_owned()));
    let names = one_of(serves.iter().map(|(kind, _)| format!("`{}`", kind.name())));
    Some(format!(
        "recipe: {library} contenders run {runs}, so the recipe must be {names}, found `{}`",
        scenario.recipe
    ))
}

/// `a`, `a or b`, `a, b or c`.
fn one_of(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A recipe library whose contenders a run can start, beside the scenario's clients or in
/// their place ([`crate::run_with_contenders`]). `Sync`: the parallel runs of a sweep share one.
pub trait Library: Sync {
    /// Its name in messages and in the trace's settings (`Curator`: `curator_contenders`).
    fn name(&self) -> &str;

    /// How to start one of its contenders.
    fn program(&self) -> Program;

    /// How many contenders a run starts.
    fn count(&self) -> u16;

    /// Why its contenders cannot run `scenario`, if they cannot: one line naming the
    /// scenario's field.
    fn refusal(&self, scenario: &Scenario) -> Option<String>;

    /// Why its contenders cannot run beside the scenario's clients, on their lock path, if
    /// they cannot (a library that does not see the others' nodes).
    fn beside_refusal(&self) -> Option<String> {
        None
    }
}

/// What the contenders of one run need to know.
pub(crate) struct ContenderRun<'a> {
    /// The scenario they run.
    pub scenario: &'a Scenario,
    /// Where each contender connects, in slot order: the server, or the contender's own
    /// proxy in a run whose faults cut the contenders off.
    pub connect_strings: Vec<String>,
    /// The run's seed.
    pub seed: u64,
    /// The slot of the first contender (the one after the last Rust client, or 0 when the
    /// contenders are the scenario's clients).
    pub first_slot: u16,
    /// The run's recorder.
    pub recorder: Recorder,
    /// The run's clock.
    pub clock: RealClock,
    /// The run's protected resource.
    pub resource: Arc<dyn SharedResource>,
    /// The servers' connect string, where a contender's session is expired.
    pub servers: String,
}

/// The contenders of a run, SIGKILLed when dropped before they end.
pub(crate) struct Contenders {
    running: Vec<Driver>,
}

impl Contenders {
    /// Starts one contender of `program` per connect string of `run`, says hello to each and
    /// waits until each has its session.
    pub(crate) async fn start(program: &Program, run: ContenderRun<'_>) -> Result<Self, String> {
        let scenario = run.scenario;
        let mut running = Vec::new();
        for (i, connect) in run.connect_strings.iter().enumerate() {
            let slot = ClientSlot(run.first_slot + u16::try_from(i).expect("a u16 of clients"));
            let (process, outputs) = program.spawn(slot, 0)?;
            let timeout = Duration::from_millis(scenario.server.session_timeout_ms);
            let name = process.name().to_owned();
            let handle = Handle::new(name, process.child(), run.servers.clone(), timeout);
            let respawn = Respawn {
                program: program.clone(),
                hello: hello(scenario, slot, connect),
                recipe: scenario.recipe.clone(),
                recipe_settings: scenario.recipe_settings,
                seed: run.seed,
            };
            let settings = &scenario.workload;
            running.push(Driver {
                slot,
                process,
                handle: Arc::new(handle),
                outputs,
                workload: respawn.workload(slot, settings, settings.acquisitions),
                settings: settings.clone(),
                executor: respawn.executor(slot, 0),
                recorder: run.recorder.clone(),
                clock: run.clock,
                resource: run.resource.clone(),
                held: VecDeque::new(),
                respawn,
                restarts: 0,
            });
        }
        let ready = (running.iter_mut()).map(|driver| driver.hello(driver.respawn.hello.clone()));
        let ready = tokio::time::timeout(READY_WITHIN, join_all(ready)).await;
        let ready = ready.map_err(|_| {
            format!(
                "{} contenders: not all ready (connected) within {READY_WITHIN:?}",
                program.name
            )
        })?;
        ready.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok(Contenders { running })
    }

    /// What the run's faults reach of each contender, in slot order.
    pub(crate) fn handles(&self) -> Vec<Arc<Handle>> {
        (self.running.iter())
            .map(|driver| driver.handle.clone())
            .collect()
    }

    /// Drives every contender through its workload until each has ended; the first failure,
    /// naming the contender and its session.
    pub(crate) async fn ended(&mut self) -> Result<(), String> {
        let runs = (self.running.iter_mut()).map(|driver| async move {
            let ran = driver.run().await;
            ran.map_err(|why| match driver.handle.session_id() {
                Some(session) => format!("{why} (its session: {session:#x})"),
                None => why,
            })
        });
        try_join_all(runs).await.map(drop)
    }
}

/// The hello of the contender on `slot` of `scenario`, which connects to `connect`.
fn hello(scenario: &Scenario, slot: ClientSlot, connect: &str) -> Hello {
    let framework = &scenario.framework;
    Hello {
        client: slot.0,
        recipe: scenario.recipe.to_string(),
        connect: connect.to_owned(),
        lock_path: scenario.lock_path.as_str().to_owned(),
        max_leases: (scenario.recipe.family() == Family::Semaphore)
            .then_some(scenario.recipe_settings.max_leases),
        session_timeout_ms: scenario.server.session_timeout_ms,
        connection_timeout_ms: framework.connection_timeout_ms.into(),
        retry: retry_spec(framework.retry),
    }
}
