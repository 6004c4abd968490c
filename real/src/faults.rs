//! A scenario's faults on a real ZooKeeper: which have a real counterpart here, and the
//! injector that carries them out on the run's clock, recording each fault's start and end
//! as the simulator's injector does.
//!
//! - `expire_session`: the client's process expires its newest session as Curator's test
//!   utilities do it ([`crate::session::RealConnector::expire_latest`]: a second connection
//!   on the session, closed).
//! - `pause`: the client's process is stopped (SIGSTOP) for the fault's duration, then
//!   continued (SIGCONT): a GC pause, during which its session's heartbeats stop too.
//! - `restart_server`: when the harness started the server, SIGKILL and a restart on the same
//!   data directory (in an ensemble, of the leader); the fault ends when the server serves
//!   again.
//!
//! - `partition`, `isolate`, `heal`: the client's links through its proxy (`real::proxy`) hold
//!   bytes in the cut directions until the fault's `for_ms` ends it or a `heal` ends every
//!   cut; the fault's end is recorded then (a cut between two clients cuts nothing: they
//!   exchange nothing).
//! - `crash`: the client's process is SIGKILLed (its sessions stay on the server until the
//!   server expires them) and a new process for the client carries on with the cycles the
//!   dead one had not begun (`ClientProcess::kill`, then `ClientProcess::restart`). The
//!   fault's start is recorded once the dead process's reports have all been read, so none of
//!   its events comes after it in the trace (the checkers end the client's holds and waits
//!   there); its end once the new process has been told to start.
//!
//! Every other fault is refused before the run starts ([`refusal`]): a `drop` has no
//! counterpart on TCP (lost segments are retransmitted), and a `delay` is not mapped onto the
//! proxy.

use std::sync::Arc;
use std::time::{Duration, Instant};

use scenarios::fault::{Fault, ScheduledFault};
use scenarios::scenario::Scenario;
use scenarios::trace::EventKind;

use crate::clock::Recorder;
use crate::processes::ClientProcess;
use crate::proxy::Proxies;
use crate::target::Restarter;

/// Why `fault` cannot run on a real ZooKeeper here (`local`: the harness started the server),
/// or `None` when it can.
fn missing_counterpart(fault: &Fault, local: bool) -> Option<&'static str> {
    match fault {
        Fault::ExpireSession { .. } | Fault::Pause { .. } => None,
        Fault::RestartServer { .. } if local => None,
        Fault::RestartServer { .. } => {
            Some("needs a server the harness started: use --start-local")
        }
        Fault::Crash { .. } | Fault::Partition { .. } | Fault::Isolate { .. } | Fault::Heal => None,
        Fault::Delay { .. } => {
            Some("the proxy holds bytes but does not delay them per message as the simulator does")
        }
        Fault::Drop { .. } => Some("TCP retransmits what a link loses: a loss is only a delay"),
    }
}

/// The fault's kind as scenario files name it (`pause`, `restart_server`, ...).
fn kind_name(fault: &Fault) -> String {
    let value = serde_json::to_value(fault).expect("a fault serializes");
    value["kind"].as_str().unwrap_or("fault").to_owned()
}

/// One line refusing the first fault of `schedule` (seed `seed`'s schedule of `scenario`)
/// that has no real counterpart: a fixed fault by its index in the scenario's `faults`, a
/// drawn one by the seed that draws it. `None` when every fault can run.
pub fn refusal(
    scenario: &Scenario,
    seed: u64,
    schedule: &[ScheduledFault],
    local: bool,
) -> Option<String> {
    for (index, scheduled) in scenario.faults.iter().enumerate() {
        if let Some(why) = missing_counterpart(&scheduled.fault, local) {
            let kind = kind_name(&scheduled.fault);
            return Some(format!(
                "faults[{index}]: {kind} has no real counterpart yet ({why})"
            ));
        }
    }
    let mut fixed = scenario.faults.clone();
    for scheduled in schedule {
        if let Some(at) = fixed.iter().position(|f| f == scheduled) {
            fixed.remove(at);
            continue;
        }
        if let Some(why) = missing_counterpart(&scheduled.fault, local) {
            let kind = kind_name(&scheduled.fault);
            return Some(format!(
                "random_faults: seed {seed} draws {kind} at {} ms, which has no real \
                 counterpart yet ({why})",
                scheduled.at_ms
            ));
        }
    }
    None
}

/// What the injector acts on.
pub(crate) struct Injector<'a> {
    /// Each client's process, by slot.
    pub clients: &'a [ClientProcess],
    /// The local server, when the harness started it.
    pub restarter: Option<Restarter>,
    /// The run's recorder (faults are recorded on no client).
    pub recorder: Recorder,
    /// The proxies between the clients and the servers, when the schedule has network
    /// faults.
    pub proxies: Option<Arc<Proxies>>,
}

impl Injector<'_> {
    /// Carries out `schedule` (times from `start`) in order; the first fault that fails ends
    /// the run with one line saying why.
    pub async fn run(&self, start: Instant, schedule: &[ScheduledFault]) -> Result<(), String> {
        for (index, scheduled) in schedule.iter().enumerate() {
            let at = start + Duration::from_millis(scheduled.at_ms);
            tokio::time::sleep_until(at.into()).await;
            let fault = scheduled.fault.clone();
            let ended = self
                .start(index, &fault, schedule)
                .await
                .map_err(|why| format!("fault_schedule[{index}] ({}): {why}", kind_name(&fault)))?;
            if ended {
                self.record(EventKind::FaultEnd { fault });
            }
        }
        Ok(())
    }

    /// Records the start of fault `index` of `schedule` and carries it out: whether it has
    /// ended. A crash starts once the process is dead: its start is recorded then.
    async fn start(
        &self,
        index: usize,
        fault: &Fault,
        schedule: &[ScheduledFault],
    ) -> Result<bool, String> {
        let start = EventKind::FaultStart {
            fault: fault.clone(),
        };
        if let Fault::Crash { client } = *fault {
            let process = self.client(client);
            process.kill().await?;
            self.record(start);
            return process.restart().map(|()| true);
        }
        self.record(start);
        self.inject(index, fault, schedule).await
    }

    /// Carries out fault `index` of `schedule`: whether it has ended (a network fault ends
    /// by itself after its `for_ms`, recorded then, or at a `heal`).
    async fn inject(
        &self,
        index: usize,
        fault: &Fault,
        schedule: &[ScheduledFault],
    ) -> Result<bool, String> {
        match *fault {
            Fault::Partition { for_ms, .. } | Fault::Isolate { for_ms, .. } => {
                let proxies = self
                    .proxies
                    .clone()
                    .ok_or("no proxy between clients and server")?;
                proxies.cut(index, fault);
                if let Some(for_ms) = for_ms {
                    let (recorder, fault) = (self.recorder.clone(), fault.clone());
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_millis(for_ms)).await;
                        if proxies.heal(index) {
                            recorder.record(None, EventKind::FaultEnd { fault });
                        }
                    });
                }
                Ok(false)
            }
            Fault::Heal => {
                let healed = self.proxies.as_ref().map(|p| p.heal_all());
                for healed in healed.unwrap_or_default() {
                    let fault = schedule[healed].fault.clone();
                    self.record(EventKind::FaultEnd { fault });
                }
                Ok(true)
            }
            _ => self.interrupt(fault).await.map(|()| true),
        }
    }

    /// Carries out a fault that lasts while this runs.
    async fn interrupt(&self, fault: &Fault) -> Result<(), String> {
        match *fault {
            Fault::ExpireSession { client } => self.client(client).expire_session().await,
            Fault::Pause { client, for_ms } => {
                let process = self.client(client);
                process.pause()?;
                tokio::time::sleep(Duration::from_millis(for_ms)).await;
                process.resume()
            }
            Fault::RestartServer { down_ms } => {
                let restarter = self.restarter.clone().ok_or("no local server to restart")?;
                let down = Duration::from_millis(down_ms);
                tokio::task::spawn_blocking(move || restarter.crash_and_restart(down))
                    .await
                    .map_err(|e| format!("the restart stopped: {e}"))?
                    .map_err(|e| e.to_string())
            }
            _ => Err("no real counterpart (refused before the run)".into()),
        }
    }

    fn client(&self, client: u16) -> &ClientProcess {
        &self.clients[usize::from(client)]
    }

    fn record(&self, kind: EventKind) {
        self.recorder.record(None, kind);
    }
}
