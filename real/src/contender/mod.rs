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
//! is one trace, checked and reported like any other.

mod drive;
mod handle;
mod process;
pub mod protocol;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command as OsCommand;
use std::sync::Arc;
use std::time::Duration;

use coordination::ids::ClientSlot;
use futures::future::{join_all, try_join_all};
use recipe_table::recipe_ref::RecipeRef;
use runtime::drive::workload_of;
use runtime::resource::SharedResource;
use scenarios::scenario::Scenario;

use crate::clock::{RealClock, RealExecutor, Recorder};
use drive::Driver;
pub(crate) use handle::Handle;
use process::Process;
use protocol::{Hello, retry_spec};

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
}

/// A recipe library whose contenders a run can start, beside the scenario's clients or in
/// their place ([`crate::run_with_contenders`]).
pub trait Library {
    /// Its name in messages and in the trace's settings (`Curator`: `curator_contenders`).
    fn name(&self) -> &'static str;

    /// The language its contenders are written in (`Java`).
    fn language(&self) -> &'static str;

    /// How to start one of its contenders.
    fn program(&self) -> Program;

    /// How many contenders a run starts.
    fn count(&self) -> u16;

    /// Why its contenders cannot run `scenario`, if they cannot: one line naming the
    /// scenario's field.
    fn refusal(&self, scenario: &Scenario) -> Option<String>;
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
    /// Each one's session id, in slot order.
    sessions: Vec<i64>,
}

impl Contenders {
    /// Starts one contender of `program` per connect string of `run`, says hello to each and
    /// waits until each has its session.
    pub(crate) async fn start(program: &Program, run: ContenderRun<'_>) -> Result<Self, String> {
        let scenario = run.scenario;
        let mut running = Vec::new();
        let mut hellos = Vec::new();
        for (i, connect) in run.connect_strings.iter().enumerate() {
            let slot = ClientSlot(run.first_slot + u16::try_from(i).expect("a u16 of clients"));
            let name = format!("{} contender {}", program.name, slot.0);
            let stderr = program.logs.join(format!("contender-{}.stderr", slot.0));
            let (process, outputs) = Process::spawn(name.clone(), program.command(), stderr)?;
            let timeout = Duration::from_millis(scenario.server.session_timeout_ms);
            let handle = Handle::new(name, process.child(), run.servers.clone(), timeout);
            let recipe: &RecipeRef = &scenario.recipe;
            running.push(Driver {
                slot,
                process,
                handle: Arc::new(handle),
                outputs,
                workload: workload_of(
                    recipe,
                    slot,
                    &scenario.recipe_settings,
                    &scenario.workload,
                    scenario.workload.acquisitions,
                ),
                settings: scenario.workload.clone(),
                executor: RealExecutor::for_client(run.seed, slot, 0),
                recorder: run.recorder.clone(),
                clock: run.clock,
                resource: run.resource.clone(),
                held: VecDeque::new(),
            });
            hellos.push(hello(scenario, slot, connect));
        }
        let ready = (running.iter_mut().zip(hellos)).map(|(driver, hello)| driver.hello(hello));
        let ready = tokio::time::timeout(READY_WITHIN, join_all(ready)).await;
        let ready = ready.map_err(|_| {
            format!(
                "{} contenders: not all ready (connected) within {READY_WITHIN:?}",
                program.name
            )
        })?;
        let sessions = ready.into_iter().collect::<Result<_, _>>()?;
        Ok(Contenders { running, sessions })
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
        let runs =
            (self.running.iter_mut().zip(&self.sessions)).map(|(driver, session)| async move {
                let ran = driver.run().await;
                ran.map_err(|why| format!("{why} (its session: {session:#x})"))
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
        session_timeout_ms: scenario.server.session_timeout_ms,
        connection_timeout_ms: framework.connection_timeout_ms.into(),
        retry: retry_spec(framework.retry),
    }
}
