//! [`run`]: one run of a scenario on a real ZooKeeper — the scenario's clients, each with its
//! own real session, running the same recipe, framework layer and workload as the simulator's
//! ([`runtime::drive`]), its faults that have a real counterpart ([`crate::faults`]), and
//! the trace, in the simulator's format with `meta.source = "real"`.
//!
//! Each client is an OS process of its own ([`crate::client`], started by
//! [`crate::processes`]) with its own sessions, so a fault can stop one alone (`pause`:
//! SIGSTOP, then SIGCONT) or kill it and start another in its place (`crash`); when the schedule has network faults, each client reaches the
//! servers through its own blackholing proxies ([`crate::proxy`]). Every event is stamped
//! by the system's monotonic clock, in nanoseconds since the run's time zero, which the
//! parent gives each client; the parent merges the events the clients report into one trace
//! in time order. The scenario's timeline (workload timers, faults, horizon) starts once
//! every client process reports ready, so trace times run a few ms (process start) ahead of
//! the scenario's. The protected resource is one [`runtime::resource::Recorded`] resource
//! in the parent, served to the clients on a local socket ([`crate::resource`]) and checked
//! as in the simulator. The run ends when every workload is done and its session closed, or
//! at the scenario's horizon (real time), and records the watches the servers list then, before
//! any client is stopped ([`crate::watch_list`]), and a snapshot of the lock path's subtree
//! read through a fresh session (see [`crate::snapshot`] for the recipe's containers); a
//! client process that dies before its workload is done (other than by a `crash` fault)
//! ends the run with how it died.
//! Every client process is killed when the run ends, however it ends. The trace's only
//! server-side events are the session expiries a local server logs ([`crate::server_log`]);
//! it has no `op_applied` or `watch_fired`: the checkers that read them have nothing to
//! judge there.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use coordination::ids::ClientSlot;
use coordination::session::Coordination;
use futures::channel::mpsc::{UnboundedReceiver, unbounded};
use futures::channel::oneshot;
use futures::future::{pending, try_join};
use futures::{FutureExt, StreamExt, select_biased};
use recipe_table::recipes::RecipeKind;
use scenarios::fault::{Fault, ScheduledFault, ServerSelector};
use scenarios::scenario::Scenario;
use serde_json::json;
use trace::{EventKind, Meta, Source, Trace};

use crate::clock::{RealClock, Recorder};
use crate::contender::Library;
use crate::contender::{self, ContenderRun};
use crate::curator::Curator;
use crate::faults::{Client, Injector, refusal};
use crate::processes::{ClientLauncher, ClientProcess, Progress};
use crate::proxy::Proxies;
use crate::resource::ResourceServer;
use crate::server_log::ExpiryLog;
use crate::session::RealConnector;
use crate::snapshot::{connect_within, containers_created, directories, snapshot};
use crate::target::Target;
use crate::watch_list::{say_unlisted, watch_snapshot};
use crate::wire::ClientSpec;

/// How a run that Ctrl-C ended says so ([`RunFailure::message`]): a sweep of runs stops there.
pub const INTERRUPTED: &str = "interrupted (Ctrl-C)";

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
/// timeout (at least a second; ten times that for servers the harness started); with the
/// partial trace when a fault cannot be carried out or
/// the tree cannot be read at the end.
pub fn run(
    scenario: &Scenario,
    seed: u64,
    target: &Target,
    launcher: &ClientLauncher,
) -> Result<Trace, RunFailure> {
    run_beside(scenario, seed, target, launcher, Contenders::None)
}

/// As [`run()`], for a scenario whose recipe is a user's program ([`programs::Program`]):
/// `launcher` starts a binary of the user's that serves it
/// ([`crate::program_client::serve`]). Refused before the run when the recipe is a row of
/// the table.
pub fn run_program(
    scenario: &Scenario,
    seed: u64,
    target: &Target,
    launcher: &ClientLauncher,
) -> Result<Trace, RunFailure> {
    run_beside(scenario, seed, target, launcher, Contenders::Programs)
}

/// As [`run()`], with `curator`'s contenders running Curator's own counterpart of the recipe
/// ([`crate::curator::SERVES`]) on the same lock path, with the same workload and
/// resource (see [`crate::curator`]), placed as `placement` says:
///
/// - [`CuratorPlacement::Beside`] the scenario's clients: they are the trace's clients after
///   the scenario's.
/// - [`CuratorPlacement::InPlace`] of them: contender `i` is client `i`, through its own
///   proxy, so that the scenario's partitions cut Curator's own client off.
///
/// Refused before the run unless the recipe has a Curator counterpart, without acquire
/// timeouts or reentrant holds (the contenders acquire plainly) and, in place, unless there
/// is one contender per client and no fault expires a session an earlier fault may have
/// ended (see [`in_place_refusal`]): a pause stops a contender's process (`SIGSTOP`,
/// then `SIGCONT`), an expiry ends its session from the executor, a crash SIGKILLs it and
/// starts another in its place.
pub fn run_with_curator(
    scenario: &Scenario,
    seed: u64,
    target: &Target,
    launcher: &ClientLauncher,
    curator: &Curator,
    placement: CuratorPlacement,
) -> Result<Trace, RunFailure> {
    run_with_contenders(scenario, seed, target, launcher, curator, placement)
}

/// As [`run_with_curator`], with the contenders of any `library` (see [`crate::contender`]),
/// refused before the run as `library` says ([`Library::refusal`]) and, in place, under the
/// same conditions.
pub fn run_with_contenders(
    scenario: &Scenario,
    seed: u64,
    target: &Target,
    launcher: &ClientLauncher,
    library: &dyn Library,
    placement: CuratorPlacement,
) -> Result<Trace, RunFailure> {
    let contenders = match placement {
        CuratorPlacement::Beside => Contenders::Beside(library),
        CuratorPlacement::InPlace => Contenders::InPlace(library),
    };
    run_beside(scenario, seed, target, launcher, contenders)
}

/// Where a library's contenders run ([`run_with_contenders`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CuratorPlacement {
    /// Beside the scenario's clients, on the same lock path.
    Beside,
    /// In the place of the scenario's clients, one contender per client.
    InPlace,
}

/// Why `library`'s contenders cannot take the place of the clients of a scenario whose seed
/// draws `schedule`, if they cannot: one line naming the first fault they cannot take. A
/// contender is paused, crashed and started again as a client's process is, and its session
/// expired from the executor ([`crate::faults`]); the session expired is the one it reported
/// `ready` with last, so an expiry after an earlier fault that may have ended its first
/// session (a pause, expiry or crash of that contender, a cut, a server restart) is refused:
/// its library may have a new session the contender protocol does not name.
pub fn in_place_refusal(library: &str, schedule: &[ScheduledFault], seed: u64) -> Option<String> {
    for (i, scheduled) in schedule.iter().enumerate() {
        let Fault::ExpireSession { client } = scheduled.fault else {
            continue;
        };
        let earlier = schedule[..i]
            .iter()
            .find(|e| may_end_session(&e.fault, client));
        if let Some(earlier) = earlier {
            return Some(format!(
                "faults: {library} contenders in place of the clients have the session they \
                 reported ready with expired, so an expire_session must come before any fault \
                 that may end that session, found expire_session of client {client} at {} ms \
                 after {} at {} ms (seed {seed})",
                scheduled.at_ms,
                earlier.fault.kind(),
                earlier.at_ms
            ));
        }
    }
    None
}

/// Whether `fault` may end the session of `client`: a pause, expiry or crash of it, or a
/// fault of the network or the server.
fn may_end_session(fault: &Fault, client: u16) -> bool {
    match *fault {
        Fault::Pause { client: c, .. }
        | Fault::ExpireSession { client: c }
        | Fault::Crash { client: c } => c == client,
        Fault::Partition { .. } | Fault::Isolate { .. } | Fault::RestartServer { .. } => true,
        Fault::IsolateFromPeers { .. }
        | Fault::LagServer { .. }
        | Fault::SplitServers { .. }
        | Fault::SlowServerLinks { .. }
        | Fault::CutFromServer { .. }
        | Fault::CrashServer { .. }
        | Fault::PauseServer { .. } => true,
        Fault::Heal | Fault::Delay { .. } | Fault::Drop { .. } => false,
    }
}

/// Who runs the scenario's workload.
#[derive(Clone, Copy)]
enum Contenders<'a> {
    /// splitbrain's clients alone.
    None,
    /// splitbrain's client processes, running a user's program.
    Programs,
    /// splitbrain's clients, and a library's contenders beside them.
    Beside(&'a dyn Library),
    /// A library's contenders, as the scenario's clients.
    InPlace(&'a dyn Library),
}

impl<'a> Contenders<'a> {
    fn library(self) -> Option<&'a dyn Library> {
        match self {
            Contenders::None | Contenders::Programs => None,
            Contenders::Beside(library) | Contenders::InPlace(library) => Some(library),
        }
    }

    /// How many of splitbrain's clients run.
    fn rust_clients(self, scenario: &Scenario) -> u16 {
        match self {
            Contenders::InPlace(_) => 0,
            _ => scenario.clients,
        }
    }

    /// Why these contenders cannot run `scenario` under the faults of `seed`, its
    /// `schedule`, if they cannot: one line.
    fn refusal(
        self,
        scenario: &Scenario,
        seed: u64,
        schedule: &[ScheduledFault],
    ) -> Option<String> {
        match self {
            Contenders::None | Contenders::Programs => None,
            Contenders::Beside(library) => library
                .refusal(scenario)
                .or_else(|| library.beside_refusal()),
            Contenders::InPlace(library) => library
                .refusal(scenario)
                .or_else(|| in_place_refusal(library.name(), schedule, seed))
                .or_else(|| {
                    (library.count() != scenario.clients).then(|| {
                        format!(
                            "clients: {} contenders in place of the clients take one per \
                             client, so expected {} contender(s), found {}",
                            library.name(),
                            scenario.clients,
                            library.count()
                        )
                    })
                }),
        }
    }
}

/// Why Curator contenders cannot run beside `scenario`'s clients, if they cannot: one line
/// naming the scenario's field.
pub fn curator_refusal(scenario: &Scenario) -> Option<String> {
    let workload = &scenario.workload;
    if let Some(refused) = contender::recipe_refusal("Curator", crate::curator::SERVES, scenario) {
        Some(refused)
    } else if workload.acquire_timeout_ms.is_some() || workload.reentrant != 1 {
        Some(
            "workload: Curator contenders acquire without a timeout and once per hold, so \
             acquire_timeout_ms must be absent and reentrant 1"
                .into(),
        )
    } else {
        revocation_refusal("Curator", scenario)
    }
}

/// Why `library`'s contenders, which acquire once per hold (the contender protocol has no
/// reentrant holds nor revocation), cannot run `scenario`, if they cannot.
pub(crate) fn protocol_refusal(library: &str, scenario: &Scenario) -> Option<String> {
    if scenario.workload.reentrant != 1 {
        Some(format!(
            "workload: {library} contenders acquire once per hold, so reentrant must be 1"
        ))
    } else {
        revocation_refusal(library, scenario)
    }
}

/// Why `library`'s contenders cannot run `scenario` when its locks are revocable: the contender
/// protocol has no revocation.
pub(crate) fn revocation_refusal(library: &str, scenario: &Scenario) -> Option<String> {
    scenario.recipe_settings.revocable.then(|| {
        format!(
            "recipe_settings: {library} contenders do not make their locks revocable (the \
             contender protocol has no revocation), so revocable must be false"
        )
    })
}

fn run_beside(
    scenario: &Scenario,
    seed: u64,
    target: &Target,
    launcher: &ClientLauncher,
    contenders: Contenders<'_>,
) -> Result<Trace, RunFailure> {
    let schedule = scenario.fault_schedule(seed);
    if let Some(refused) = contenders.refusal(scenario, seed, &schedule) {
        return Err(RunFailure::before_start(refused));
    }
    let code = match (scenario.recipe.built_in(), contenders) {
        (Some(_), Contenders::Programs) => {
            return Err(RunFailure::before_start(format!(
                "recipe: expected the name of a program, found `{}`, a recipe of splitbrain's \
                 table (run it with `run`)",
                scenario.recipe
            )));
        }
        (None, Contenders::Programs) => Code::Program,
        (Some(recipe), _) => Code::Recipe(recipe),
        (None, _) => {
            return Err(RunFailure::before_start(format!(
                "recipe: expected a recipe of splitbrain's table, found `{}`, a recipe of your \
                 own (real runs of those are not supported; a program's are, with \
                 `run_program`)",
                scenario.recipe
            )));
        }
    };
    if let Some(refused) = refusal(scenario, seed, &schedule, target.local_servers()) {
        return Err(RunFailure::before_start(refused));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| RunFailure::before_start(format!("cannot build a tokio runtime: {e}")))?;
    let real = RealRun {
        scenario,
        code,
        seed,
        target,
        launcher,
        contenders,
        target_kind: target.kind(),
        schedule,
    };
    runtime.block_on(real.execute())
}

/// What a run's clients run.
#[derive(Clone, Copy)]
enum Code {
    /// A recipe, a row of the table.
    Recipe(RecipeKind),
    /// A user's program, served by the launcher's processes.
    Program,
}

/// One run being carried out.
struct RealRun<'a> {
    scenario: &'a Scenario,
    /// What its clients run.
    code: Code,
    seed: u64,
    target: &'a Target,
    /// How to start each client's process.
    launcher: &'a ClientLauncher,
    /// Curator contenders beside the scenario's clients, or in their place.
    contenders: Contenders<'a>,
    /// What the target is, read once (a restart holds the local server meanwhile).
    target_kind: String,
    schedule: Vec<ScheduledFault>,
}

/// How many times a run's end-of-run tree read is tried before the run is given up.
const TREE_READS: usize = 3;

impl RealRun<'_> {
    async fn execute(&self) -> Result<Trace, RunFailure> {
        let timeout = Duration::from_millis(self.scenario.server.session_timeout_ms);
        let within = timeout.max(Duration::from_secs(1));
        let observer = RealConnector::new(self.target.connect_string(), timeout);
        // Servers the harness started serve already (it waited until they did): one slow to
        // open the first session (a loaded machine, an ensemble's first session through its
        // leader) gets ten times as long, as the end's tree read does.
        let probing = match self.target.is_local() {
            true => within * 10,
            false => within,
        };
        let probe = connect_within(&observer, probing)
            .await
            .map_err(RunFailure::before_start)?;
        probe.close().await;

        let clock = RealClock::start();
        let recorder = Recorder::new(clock);
        let expiries = ExpiryLog::follow(self.target.server_logs(), clock, recorder.clone());
        let resource = ResourceServer::start(self.scenario.workload.fenced, recorder.clone())
            .map_err(RunFailure::before_start)?;
        let proxies = match self.schedule.iter().any(|f| is_network(&f.fault)) {
            true => Some(Arc::new(
                Proxies::start(self.target.connect_string(), self.scenario.clients)
                    .await
                    .map_err(RunFailure::before_start)?,
            )),
            false => None,
        };
        let (progress_tx, mut progress) = unbounded();
        let mut clients = Vec::new();
        for slot in (0..self.contenders.rust_clients(self.scenario)).map(ClientSlot) {
            let spec = ClientSpec {
                scenario: self.scenario.clone(),
                seed: self.seed,
                slot,
                connect_string: match &proxies {
                    Some(proxies) => proxies.connect_string(slot.0).to_owned(),
                    None => self.target.connect_string().to_owned(),
                },
                origin_ns: clock.origin_monotonic_ns(),
                resource: resource.socket().to_owned(),
                restarts: 0,
                begun: 0,
            };
            match ClientProcess::spawn(self.launcher, &spec, recorder.clone(), progress_tx.clone())
            {
                Ok(process) => clients.push(process),
                Err(why) => return Err(self.partial(&recorder, why)),
            }
        }
        if let Some(why) = all(&clients, &mut progress, Progress::Ready).await {
            return Err(self.partial(&recorder, why));
        }
        let mut contenders = match self.contenders.library() {
            None => None,
            Some(library) => {
                let run = self.contender_run(&recorder, clock, &resource, proxies.as_deref());
                let started = contender::Contenders::start(&library.program(), run).await;
                Some(started.map_err(|why| self.partial(&recorder, why))?)
            }
        };
        // What the faults reach of each contender, taken before they are driven.
        let handles = contenders.as_ref().map_or_else(Vec::new, |c| c.handles());
        let contenders_ended = async {
            match contenders.as_mut() {
                Some(contenders) => contenders.ended().await,
                None => Ok(()),
            }
        };
        // Once every workload is done no fault starts, and the run waits for the lasting ones.
        let (done_tx, done) = oneshot::channel::<()>();
        // The scenario's timeline (the workloads' timers, the faults, the horizon) starts once
        // every client process is ready, however long they took to start.
        let start = Instant::now();
        if let Err(why) = clients.iter().try_for_each(ClientProcess::start) {
            return Err(self.partial(&recorder, why));
        }
        // Slots in order: the Rust clients', then the contenders' (in their place, slot 0 on).
        let slots = (clients.iter().map(Client::Process))
            .chain(handles.iter().map(|handle| Client::Contender(handle)))
            .collect();
        let (restarter, members) = (self.target.restarter(), self.target.members());
        let injector =
            Injector::new(slots, restarter, members, recorder.clone(), proxies).seeded(self.seed);
        let faults = injector.run(start, &self.schedule, done.map(drop));
        let horizon = start + Duration::from_millis(self.scenario.horizon_ms);
        // Ctrl-C ends the run as a failure does: the partial trace is kept, the client
        // processes are killed when dropped, and the local servers are stopped when the
        // target is dropped.
        let interrupted = async {
            match tokio::signal::ctrl_c().await {
                Ok(()) => INTERRUPTED.to_owned(),
                Err(_) => pending().await,
            }
        };
        let everyone = async {
            let (died, ended) = futures::join!(
                all(&clients, &mut progress, Progress::Done),
                contenders_ended
            );
            let _ = done_tx.send(());
            died.or(ended.err()).map_or(Ok(()), Err)
        };
        let failed = select_biased! {
            why = interrupted.fuse() => Some(why),
            ended = try_join(everyone, faults).fuse() => ended.err(),
            () = tokio::time::sleep_until(horizon.into()).fuse() => None,
        };
        // The servers' watches are read while every client still runs: a connection's watches
        // go with it.
        if failed.is_none() {
            let connect_string = self.target.connect_string().to_owned();
            let root = self.scenario.lock_path.clone();
            let listed =
                tokio::task::spawn_blocking(move || watch_snapshot(&connect_string, &root));
            match listed.await.unwrap_or_else(|e| Err(e.to_string())) {
                Ok(Some(watches)) => recorder.record(None, watches),
                Ok(None) => {}
                Err(why) => say_unlisted(&why),
            }
            if let Some(members) = self.target.members() {
                let modes = tokio::task::spawn_blocking(move || members.modes()).await;
                if let Ok(modes) = modes {
                    recorder.record(None, EventKind::ServerModes { modes });
                }
            }
        }
        // A restart under way ends with its server serving, before the tree is read or the
        // servers are stopped; a paused client dies of the SIGKILL with the others.
        let settled = injector.settle();
        drop(clients);
        // Contenders still running at the horizon are killed before the tree is read.
        drop(contenders);
        drop(expiries);
        settled.await;
        if let Some(why) = failed {
            return Err(self.partial(&recorder, why));
        }
        // The server answered the probe: one slow to answer now, or a read's connection lost
        // (a loaded machine), gets ten times as long and three tries, each on a session of its
        // own, before the run is given up for its tree (the read changes nothing).
        let lock_path = &self.scenario.lock_path;
        let containers = match self.code {
            Code::Recipe(recipe) => directories(recipe, lock_path),
            Code::Program => containers_created(&recorder.events()),
        };
        let read_tree = || async {
            let session = connect_within(&observer, within * 10).await?;
            let tree = snapshot(&session, &containers, lock_path).await;
            session.close().await;
            tree
        };
        let mut tree = read_tree().await;
        for _ in 1..TREE_READS {
            if tree.is_ok() {
                break;
            }
            tree = read_tree().await;
        }
        match tree {
            Ok(tree) => recorder.record(None, tree),
            Err(why) => {
                let why = format!("the run ended, but the lock's tree could not be read: {why}");
                return Err(self.partial(&recorder, why));
            }
        }
        Ok(self.trace(&recorder))
    }

    /// What the contenders of this run need to know.
    fn contender_run(
        &self,
        recorder: &Recorder,
        clock: RealClock,
        resource: &ResourceServer,
        proxies: Option<&Proxies>,
    ) -> ContenderRun<'_> {
        let first_slot = self.contenders.rust_clients(self.scenario);
        let count = self
            .contenders
            .library()
            .map_or(0, |library| library.count());
        // In the clients' place each contender connects through its client's proxy.
        let connect_strings = (0..count)
            .map(|i| match (self.contenders, proxies) {
                (Contenders::InPlace(_), Some(proxies)) => proxies.connect_string(i),
                _ => self.target.connect_string(),
            })
            .map(str::to_owned)
            .collect();
        ContenderRun {
            scenario: self.scenario,
            connect_strings,
            seed: self.seed,
            first_slot,
            recorder: recorder.clone(),
            clock,
            resource: resource.resource(),
            servers: self.target.connect_string().to_owned(),
        }
    }

    fn partial(&self, recorder: &Recorder, message: String) -> RunFailure {
        RunFailure {
            message,
            trace: Some(Box::new(self.trace(recorder))),
        }
    }

    fn trace(&self, recorder: &Recorder) -> Trace {
        let mut settings = json!({
            "target": self.target_kind,
            "connect_string": self.target.connect_string(),
            "session_timeout_ms": self.scenario.server.session_timeout_ms,
        });
        if let Some(library) = self.contenders.library() {
            let name = library.name().to_lowercase();
            settings[format!("{name}_contenders")] = library.count().into();
            let in_place = matches!(self.contenders, Contenders::InPlace(_));
            settings[format!("{name}_in_place")] = in_place.into();
        }
        Trace {
            meta: Meta {
                scenario: self.scenario.name.clone(),
                seed: self.seed,
                source: Source::Real,
                build: format!("splitbrain-real {}", env!("CARGO_PKG_VERSION")),
                recipe: self.scenario.recipe.clone(),
                clients: self.contenders.rust_clients(self.scenario)
                    + self
                        .contenders
                        .library()
                        .map_or(0, |library| library.count()),
                settings,
                fault_schedule: self.schedule.clone(),
                scenario_spec: Some(Box::new(self.scenario.clone())),
                model_spec: None,
                shrunk_from: None,
            },
            events: recorder.take_events_in_order(),
        }
    }
}

/// Waits until every client process has reached `stage` (`Progress::Ready` or
/// `Progress::Done`): `None`, or how one died first.
async fn all(
    clients: &[ClientProcess],
    progress: &mut UnboundedReceiver<Progress>,
    stage: fn(ClientSlot) -> Progress,
) -> Option<String> {
    let mut reached = 0;
    while reached < clients.len() {
        match progress.next().await? {
            Progress::Died(slot) => return Some(clients[usize::from(slot.0)].death()),
            other if other == stage(other.slot()) => reached += 1,
            _ => {}
        }
    }
    None
}

/// Whether `fault` acts on the network or needs to know where each client is connected (so
/// the run needs its proxies).
fn is_network(fault: &Fault) -> bool {
    matches!(
        fault,
        Fault::Partition { .. }
            | Fault::Isolate { .. }
            | Fault::Heal
            | Fault::IsolateFromPeers { .. }
            | Fault::LagServer { .. }
            | Fault::CutFromServer { .. }
            | Fault::CrashServer {
                server: ServerSelector::ServerOf(_),
                ..
            }
            | Fault::PauseServer {
                server: ServerSelector::ServerOf(_),
                ..
            }
            | Fault::SlowServerLinks {
                server: Some(ServerSelector::ServerOf(_)),
                ..
            }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(at_ms: u64, fault: Fault) -> ScheduledFault {
        ScheduledFault::at(at_ms, fault)
    }

    #[test]
    fn contenders_in_place_take_every_fault_but_an_expiry_of_a_session_that_may_be_gone() {
        let pause = |client| Fault::Pause {
            client,
            for_ms: 2500,
        };
        let expire = |client| Fault::ExpireSession { client };
        let refused = |schedule: &[ScheduledFault]| in_place_refusal("Kazoo", schedule, 7);
        let crash = Fault::Crash { client: 1 };
        let taken = [
            at(100, pause(0)),
            at(200, expire(1)),
            at(300, expire(2)),
            at(400, crash),
        ];
        assert_eq!(refused(&taken), None);
        // A pause of client 0 may end its session: the one `ready` named may be gone.
        let after_pause = refused(&[at(100, pause(0)), at(200, expire(1)), at(300, expire(0))]);
        assert_eq!(
            after_pause.as_deref(),
            Some(
                "faults: Kazoo contenders in place of the clients have the session they \
                 reported ready with expired, so an expire_session must come before any fault \
                 that may end that session, found expire_session of client 0 at 300 ms after \
                 pause at 100 ms (seed 7)"
            )
        );
        let restart = Fault::RestartServer { down_ms: 500 };
        let after_restart = refused(&[at(100, restart), at(900, expire(2))]).unwrap();
        assert!(
            after_restart.contains("after restart_server at 100 ms"),
            "{after_restart}"
        );
        let after_crash = refused(&[at(100, Fault::Crash { client: 2 }), at(900, expire(2))]);
        assert!(after_crash.unwrap().contains("after crash at 100 ms"));
    }
}
