//! A scenario's faults on a real ZooKeeper: which have a real counterpart here, and the
//! injector that carries them out on the run's clock, recording each fault's start and end
//! as the simulator's injector does.
//!
//! - `expire_session`: the client's process expires its newest session as Curator's test
//!   utilities do it ([`crate::session::RealConnector::expire_latest`]: a second connection
//!   on the session, closed); the fault ends when the process reports the outcome.
//! - `pause`: the client's process is stopped (SIGSTOP) for the fault's duration, then
//!   continued (SIGCONT): a GC pause, during which its session's heartbeats stop too.
//! - `restart_server`: when the harness started the server, SIGKILL and a restart on the same
//!   data directory (in an ensemble, of the leader); the fault starts once the server is
//!   killed and ends when it serves again.
//! - `partition`, `isolate`, `heal`: the client's links through its proxy (`real::proxy`) hold
//!   bytes in the cut directions until the fault's `for_ms` ends it or a `heal` ends every
//!   cut; the fault's end is recorded then (a cut between two clients cuts nothing: they
//!   exchange nothing). A cut with an `on_request` is armed at its time and starts (and is
//!   recorded) when the client's matching request reaches the proxy, which holds it; one
//!   whose request has not come when every workload is done never starts.
//! - `isolate_from_peers`, `lag_server`, `cut_from_server`, `crash_server`, `pause_server`
//!   (on a local ensemble): the selector
//!   is resolved when the fault fires, from the servers' `srvr` modes and the server of the
//!   client's newest connection through its proxies, and the fault is recorded with the
//!   server it named; a selector that names no server starts and ends at once, as in the
//!   simulator (which refuses these faults on a standalone server, as every scenario file
//!   does, so a real standalone server never meets them).
//!   - `isolate_from_peers`: the proxies between the servers (`real::peers`) hold every byte
//!     of that server's pairs until the fault's `for_ms` ends the cut or a `heal` ends every
//!     cut.
//!   - `cut_from_server`: the client's proxy to that server (by default the client's own,
//!     its newest connection's) holds every byte of its connections to it, both ways, as
//!     `partition` does for all of them, until `for_ms` or a `heal` ends the cut; its
//!     connections to the other servers pass, so its ZooKeeper client, once its read
//!     timeout ends the silent connection, moves on to another server.
//!   - `lag_server`: the same proxies pass on what that server's peers send it (their
//!     proposals, commits and pings, and the answers to its own messages) `lag_ms` after they
//!     read it, in order, until `for_ms` or a `heal` ends the lag; what was held then drains
//!     first, as in the simulator.
//!   - `slow_server_links` (with a `server`; without one, on every link): the same proxies
//!     hold each piece on that server's links, both ways, a delay drawn for it (its
//!     `min_ms`..=`max_ms`, plus a retransmission timeout per loss) from the fault's own
//!     stream of the run's seed, in order, until `for_ms` or a `heal` ends it.
//!   - `crash_server`: a machine's crash, as the simulator's: the fault starts when that
//!     server's JVM is stopped (SIGSTOP), so for `down_ms` its peers and clients hear nothing
//!     on connections that stay open, as from a dead host, and notice by their own timeouts
//!     (followers after `sync_limit` ticks, clients at their read timeout); then it is
//!     SIGKILLed (its connections reset, as a rebooted host's peers find theirs) and started
//!     again at once on its data directory, by the machinery of `restart_server`, and the
//!     fault ends when it serves again (as leader or follower). A bare SIGKILL would be a
//!     process's crash instead, whose host resets its connections at once: that is
//!     `restart_server` (`--kill-leader-at`). With an `on_request` it is armed at its time
//!     and starts as the leader first sends a follower a proposal carrying the trigger's
//!     path text, whatever the request (the peer proxies search what leaders send,
//!     `real::peers`): the proxy stops that leader before it passes the proposal on, so the
//!     follower logs it and no server commits it, and the fault is recorded with that
//!     server; one whose proposal has not come when every workload is done never starts.
//!   - `pause_server`: that server's JVM (its process group) is stopped (SIGSTOP) for
//!     `pause_ms`, then continued (SIGCONT); its clients and peers hear nothing meanwhile, and
//!     what they sent waits in its sockets, as in the simulator.
//! - `split_servers` (on a local ensemble): the groups are resolved when the fault fires —
//!   random halves drawn from the fault's own stream of the run's seed, so a rerun of the
//!   seed splits the same way (not the simulator's draw: that comes from madsim's source) —
//!   and the trace records them; the proxies between the servers hold every byte between
//!   servers of different groups, both ways, as `isolate_from_peers` holds one server's.
//! - `crash`: the client's process is SIGKILLed (its sessions stay on the server until the
//!   server expires them) and a new process for the client carries on with the cycles the
//!   dead one had not begun (`ClientProcess::kill`, then `ClientProcess::restart`). The
//!   fault's start is recorded once the dead process's reports have all been read, so none of
//!   its events comes after it in the trace (the checkers end the client's holds and waits
//!   there); its end once the new process has been told to start.
//!
//! A library's contender in a client's place ([`crate::run_with_contenders`]) takes the
//! faults on its client too (`Client::Contender`): a `pause` stops and continues its
//! process group as a client's process is stopped, and its driver sends it nothing meanwhile
//! (a workload timer due then takes effect when it runs again); an `expire_session` is
//! carried out by the executor at once, paused or not, with a second connection on the
//! session the contender reported `ready` with (`crate::expire`), the contender stopped for
//! that instant as a client's session thread is held; a `crash` SIGKILLs its process group,
//! its start recorded once its driver has read the dead process's last reports, and its
//! driver starts a new process in its place (a new hello and session), which carries on with
//! the cycles the dead one had not begun, its end recorded once that process is started.
//!
//! Every other fault is refused before the run starts ([`refusal`]): a `drop` has no
//! counterpart on TCP (lost segments are retransmitted), a `delay` is not mapped onto the
//! proxy. An ensemble scenario is refused on anything but a local ensemble of its size.
//!
//! # Overlapping faults
//!
//! Each fault starts at its scheduled time, as in the simulator, even while earlier ones
//! last: the injector carries out a fault's start at once (a signal, a command, a cut, a kill)
//! and keeps its lasting part (a pause's or a cut's duration, a restart's downtime, an
//! expiry's round trip to the client's process) beside the schedule until it ends, when its
//! end is recorded. Only a crash's start takes a few ms before the next fault can start (the
//! dead process's last reports are read first), and the resolution of a `leader` or
//! `follower(k)` selector as long as the servers take to answer `srvr` (a paused server
//! answers nothing: up to a second). The hard cases:
//!
//! - **Two pauses of one client** that overlap: the process is stopped at the first start and
//!   continued only when the last one ends (each pause's end is still recorded at its own
//!   end, before the SIGCONT when it is the last). The simulator's pause is a flag instead
//!   (madsim's `pause`/`resume`): there the first end resumes the client.
//! - **A pause of a client that is crashed meanwhile**: the SIGKILL ends the stopped process
//!   too; the new process is not stopped (a pause stops a process, and that one is gone), and
//!   the pause's end continues nothing, so a later pause of the new process counts afresh.
//! - **An expiry of a paused client** is asked at its time but carried out by the client's
//!   process when it runs again (the fault lasts until then); one of a client crashed meanwhile
//!   ends with the dead process (its sessions expire on the server by themselves).
//! - **A crash while the server restarts**: the new process starts at once and connects when
//!   the server serves again, as a restarted simulated client does.
//! - **Overlapping crashes of distinct servers** run as in the simulator: each server falls
//!   silent at its crash's start and is killed and started again at its end, and the
//!   harness takes its hold on the ensemble only to kill, to start and to check on one server
//!   (`Restarter::crash_and_restart`), so one server's restart never delays another's. A
//!   server started again while too few others run waits (up to 40 s) until a quorum of them
//!   does, and its fault ends when it has rejoined.
//! - **Overlapping downtimes that may name one server are refused** before the run, in one
//!   line naming both faults ([`refusal`]): a `restart_server`, or a `crash_server`
//!   scheduled before an earlier downtime's `down_ms` is over that may name a server the
//!   earlier brought down (the same `server(i)`, a `server(i)` after a crash of the leader
//!   or of a follower, a `server_of` a client). The simulator merges the crashes of one
//!   server into one downtime; on a real server a second SIGKILL would kill it again as it
//!   starts, a different fault, and a `restart_server` of an ensemble's leader while another
//!   server is down would take a second server down. A crash of the leader or of a follower
//!   never names a server that is down (it answers no `srvr`), so it overlaps freely.
//! - **Two pauses of one server** that overlap: as two pauses of one client, stopped at the
//!   first start and continued at the last end. **A crash of a paused server** kills the
//!   stopped JVM; the one started in its place is not stopped and the pause's end continues
//!   nothing (in the simulator the crash ends the pause too).
//! - **A `heal`** ends every cut (recorded then; a cut's own `for_ms` later ends nothing) and
//!   nothing else: pauses and restarts last on, as in the simulator.
//!
//! The run waits for every lasting fault to end once every workload is done (no new fault
//! starts then). When it ends first (its horizon, Ctrl-C, a failure), the lasting parts stop:
//! a paused process is SIGKILLed with every other client process (a stopped process dies of
//! SIGKILL, so none is left stopped), cuts end with the proxies, a paused server is continued
//! and a restart under way is waited for (`Injector::settle`) so that the servers serve again
//! before the run reads the lock's tree or stops them.

use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::channel::oneshot;
use futures::stream::FuturesUnordered;
use std::collections::BTreeMap;

use scenarios::fault::{Fault, RequestTrigger, ScheduledFault, ServerSelector};
use scenarios::rng::SplitMix64;
use scenarios::scenario::Scenario;
use tokio::task::JoinHandle;
use trace::EventKind;

use crate::clock::Recorder;
use crate::contender::Handle;
use crate::local::ServerMode;
use crate::pause::Paused;
use crate::peers::PeerCuts;
use crate::processes::ClientProcess;
use crate::proxy::Proxies;
use crate::target::{Members, Restarter};

/// Why `fault` cannot run on a real ZooKeeper here (`local`: how many servers the harness
/// started, `None` when the user runs them), or `None` when it can.
fn missing_counterpart(fault: &Fault, local: Option<u16>) -> Option<&'static str> {
    match fault {
        Fault::ExpireSession { .. } | Fault::Pause { .. } => None,
        Fault::RestartServer { .. } if local.is_some() => None,
        Fault::RestartServer { .. } => {
            Some("needs a server the harness started: use --start-local")
        }
        Fault::Crash { .. } | Fault::Partition { .. } | Fault::Isolate { .. } | Fault::Heal => None,
        Fault::Delay { .. } => {
            Some("the proxy holds bytes but does not delay them per message as the simulator does")
        }
        Fault::Drop { .. } => Some("TCP retransmits what a link loses: a loss is only a delay"),
        Fault::IsolateFromPeers { .. }
        | Fault::LagServer { .. }
        | Fault::SplitServers { .. }
        | Fault::SlowServerLinks { .. }
        | Fault::CutFromServer { .. }
        | Fault::CrashServer { .. }
        | Fault::PauseServer { .. } => local.is_none_or(|servers| servers <= 1).then_some(
            "needs an ensemble the harness started, with proxies between its servers: use \
             --start-local --ensemble N",
        ),
    }
}

/// One line refusing an ensemble scenario on anything but a local ensemble of its size, or
/// the first fault of `schedule` (seed `seed`'s schedule of `scenario`, in time order) that
/// has no real counterpart, or the first server downtime (a restart of the server, a crash of
/// one server of an ensemble) that starts while an earlier one keeps a server down: a fixed
/// fault by its index in the scenario's `faults`, a drawn one by the seed that draws it.
/// `local` is how many servers the harness started (`None` when the user runs them). `None`
/// when every fault can run.
pub fn refusal(
    scenario: &Scenario,
    seed: u64,
    schedule: &[ScheduledFault],
    local: Option<u16>,
) -> Option<String> {
    let servers = scenario.server.ensemble;
    if scenario.server.is_ensemble() && local != Some(servers) {
        let found = match local {
            None => "servers the user runs (--connect)".to_owned(),
            Some(1) => "a standalone server".to_owned(),
            Some(n) => format!("an ensemble of {n}"),
        };
        return Some(format!(
            "server.ensemble: expected a local ensemble of {servers} servers (--start-local \
             --ensemble {servers}), found {found}"
        ));
    }
    for (index, scheduled) in scenario.faults.iter().enumerate() {
        if let Some(why) = missing_counterpart(&scheduled.fault, local) {
            let kind = scheduled.fault.kind();
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
            let kind = scheduled.fault.kind();
            return Some(format!(
                "random_faults: seed {seed} draws {kind} at {} ms, which has no real \
                 counterpart yet ({why})",
                scheduled.at_ms
            ));
        }
    }
    overlapping_downtimes(scenario, seed, schedule)
}

/// One line naming the first two server downtimes in `schedule` (in time order: restarts of
/// the server, crashes of one server of an ensemble) where the later starts before the
/// earlier one's `down_ms` is over and both may bring down one server; see the module doc for
/// why they are refused.
fn overlapping_downtimes(
    scenario: &Scenario,
    seed: u64,
    schedule: &[ScheduledFault],
) -> Option<String> {
    let downtimes: Vec<(&ScheduledFault, u64)> = schedule
        .iter()
        .filter_map(|scheduled| match scheduled.fault {
            Fault::RestartServer { down_ms } | Fault::CrashServer { down_ms, .. } => {
                Some((scheduled, down_ms))
            }
            _ => None,
        })
        .collect();
    for (later_at, &(scheduled, _)) in downtimes.iter().enumerate() {
        let overlapped = downtimes[..later_at].iter().find(|(earlier, down_ms)| {
            scheduled.at_ms < earlier.at_ms.saturating_add(*down_ms)
                && !down_on_distinct_servers(&earlier.fault, &scheduled.fault)
        });
        let Some(&(earlier, earlier_down_ms)) = overlapped else {
            continue;
        };
        let (kind, earlier_kind) = (scheduled.fault.kind(), earlier.fault.kind());
        let why = match (&scheduled.fault, &earlier.fault) {
            (Fault::CrashServer { .. }, Fault::CrashServer { .. }) => {
                "keeps a server down: overlapping crashes are refused on a real ensemble when \
                 they may name one server (the same `server(i)`, a `server(i)` after a role \
                 that may have named it, or a `server_of` a client, whose server may be the \
                 one down): a second SIGKILL as it starts again, not one longer downtime as in \
                 the simulator"
            }
            (Fault::RestartServer { .. }, Fault::RestartServer { .. }) => {
                "keeps the server down: overlapping server restarts are refused on a real \
                 server (a second SIGKILL of an ensemble's leader kills a second server, not \
                 one longer downtime as in the simulator)"
            }
            _ => {
                "keeps a server down: a restart overlapping another downtime is refused on a \
                 real ensemble (a SIGKILL of the leader while another server is down, or of a \
                 server as it starts again, not one longer downtime as in the simulator)"
            }
        };
        return Some(format!(
            "{} ({kind} at {} ms) starts while {} ({earlier_kind} at {} ms, down \
             {earlier_down_ms} ms) {why}",
            origin(scenario, seed, scheduled),
            scheduled.at_ms,
            origin(scenario, seed, earlier),
            earlier.at_ms,
        ));
    }
    None
}

/// Whether two crashes that overlap bring down two distinct servers, whatever the ensemble
/// does meanwhile: each names a server by number and they differ, or the later names the
/// leader or a follower (which the server the earlier brought down is not while it is down).
fn down_on_distinct_servers(earlier: &Fault, later: &Fault) -> bool {
    let (
        Fault::CrashServer {
            server: earlier, ..
        },
        Fault::CrashServer { server: later, .. },
    ) = (earlier, later)
    else {
        return false;
    };
    match (earlier, later) {
        (ServerSelector::ServerOf(_), _) | (_, ServerSelector::ServerOf(_)) => false,
        (ServerSelector::Server(a), ServerSelector::Server(b)) => a != b,
        (_, ServerSelector::Leader | ServerSelector::Follower(_)) => true,
        (ServerSelector::Leader | ServerSelector::Follower(_), ServerSelector::Server(_)) => false,
    }
}

/// Names a fault of seed `seed`'s schedule of `scenario`: `faults[i]` when the scenario lists
/// it, else as a draw of its `random_faults`.
fn origin(scenario: &Scenario, seed: u64, scheduled: &ScheduledFault) -> String {
    match scenario.faults.iter().position(|f| f == scheduled) {
        Some(index) => format!("faults[{index}]"),
        None => format!("random_faults (seed {seed})"),
    }
}

/// The stream of a run's seed the faults draw from when they fire (then one per fault, by
/// its index): apart from the schedule's (1, `scenarios`) and the clients' (2, `real::clock`).
const FAULT_DRAWS: u64 = 3;

/// The part of a fault that lasts after its start: it records the fault's end when it ends.
type Lasting<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + 'a>>;

/// What a fault on one client acts on: the client's process, or the contender of a library
/// that runs in the client's place ([`crate::run_with_contenders`]).
#[derive(Clone, Copy)]
pub(crate) enum Client<'a> {
    /// splitbrain's client process.
    Process(&'a ClientProcess),
    /// A contender in the client's place: paused, crashed and started again as a process
    /// is, its session expired from here (see [`Handle`]).
    Contender(&'a Handle),
}

impl<'a> Client<'a> {
    fn pause(self) -> Result<Paused, String> {
        match self {
            Client::Process(process) => process.pause(),
            Client::Contender(contender) => contender.pause(),
        }
    }

    fn resume(self, paused: Paused) -> Result<(), String> {
        match self {
            Client::Process(process) => process.resume(paused),
            Client::Contender(contender) => contender.resume(paused),
        }
    }

    /// Asks for the expiry of the client's session now; the future waits for its outcome.
    fn expire_session(self) -> Lasting<'a> {
        match self {
            Client::Process(process) => Box::pin(process.expire_session()),
            Client::Contender(contender) => Box::pin(contender.expire_session()),
        }
    }

    /// Crashes the client's process (SIGKILL) and returns once every report it made is in.
    async fn kill(self) -> Result<(), String> {
        match self {
            Client::Process(process) => process.kill().await,
            Client::Contender(contender) => contender.kill().await,
        }
    }

    /// Starts a new process for the client in place of the one [`Client::kill`] killed.
    async fn restart(self) -> Result<(), String> {
        match self {
            Client::Process(process) => process.restart(),
            Client::Contender(contender) => contender.restart().await,
        }
    }
}

/// What the injector acts on.
pub(crate) struct Injector<'a> {
    /// What each client's faults act on, by slot.
    clients: Vec<Client<'a>>,
    /// The local server, when the harness started it.
    restarter: Option<Restarter>,
    /// The run's recorder (faults are recorded on no client).
    recorder: Recorder,
    /// The proxies between the clients and the servers, when the schedule has network
    /// faults.
    proxies: Option<Arc<Proxies>>,
    /// The threads carrying out restarts of the server, which outlive a run that ends first
    /// ([`Injector::settle`]).
    restarts: Mutex<Vec<JoinHandle<()>>>,
    /// The servers of the local ensemble, when the harness started one.
    members: Option<Members>,
    /// The cuts of a server from its peers that have started, by index, with the server
    /// their selector named (as recorded), for a `heal` to record their ends.
    resolved: Mutex<BTreeMap<usize, Fault>>,
    /// The run's seed: the faults that draw (a split's random halves, a slow link's delays)
    /// draw from streams of it.
    seed: u64,
}

impl<'a> Injector<'a> {
    /// An injector acting on `clients` (in slot order), the `restarter`'s server, the
    /// ensemble's `members` and the `proxies`, recording on `recorder`.
    pub fn new(
        clients: Vec<Client<'a>>,
        restarter: Option<Restarter>,
        members: Option<Members>,
        recorder: Recorder,
        proxies: Option<Arc<Proxies>>,
    ) -> Injector<'a> {
        Injector {
            clients,
            restarter,
            recorder,
            proxies,
            restarts: Mutex::default(),
            members,
            resolved: Mutex::default(),
            seed: 0,
        }
    }

    /// This injector with the faults' draws taken from streams of `seed`, the run's.
    pub fn seeded(self, seed: u64) -> Injector<'a> {
        Injector { seed, ..self }
    }

    /// Fault `index`'s own stream of the run's seed.
    fn draws(&self, index: usize) -> SplitMix64 {
        SplitMix64::for_stream(self.seed, &[FAULT_DRAWS, index as u64])
    }

    /// Starts each fault of `schedule` (in time order) at its time from `start`, even while
    /// earlier ones last, and returns once every fault has started and ended — or, once
    /// `no_more` resolves (every workload is done), once the faults started by then have
    /// ended: no fault starts after it. The first fault that fails ends the run with one line
    /// saying why.
    pub async fn run(
        &self,
        start: Instant,
        schedule: &[ScheduledFault],
        no_more: impl Future<Output = ()>,
    ) -> Result<(), String> {
        let mut lasting: FuturesUnordered<Lasting<'_>> = FuturesUnordered::new();
        let mut due = schedule.iter().enumerate().peekable();
        let mut no_more = pin!(no_more);
        let mut starting = true;
        loop {
            let next = due.peek().filter(|_| starting);
            let at = next.map(|(_, f)| start + Duration::from_millis(f.at_ms));
            if at.is_none() && lasting.is_empty() {
                return Ok(());
            }
            tokio::select! {
                biased;
                Some(ended) = lasting.next(), if !lasting.is_empty() => ended?,
                () = &mut no_more, if starting => {
                    starting = false;
                    // A fault armed for a request that has not come never starts now.
                    self.disarm_all();
                }
                () = tokio::time::sleep_until(at.unwrap_or(start).into()), if at.is_some() => {
                    let (index, scheduled) = due.next().expect("a fault is due");
                    let named = move |why: String| format!("fault_schedule[{index}] ({}): {why}", scheduled.fault.kind());
                    let started = match &scheduled.on_request {
                        Some(trigger) if scheduled.fault.starts_at_proposal() => {
                            self.arm_at_proposal(&scheduled.fault, trigger).map(Some)
                        }
                        Some(trigger) => self.arm(index, &scheduled.fault, trigger.clone()).map(Some),
                        None => self.start(index, &scheduled.fault, schedule).await,
                    };
                    if let Some(rest) = started.map_err(named)? {
                        lasting.push(Box::pin(async move { rest.await.map_err(named) }));
                    }
                }
            }
        }
    }

    /// Disarms what has not started, continues every server a pause stops now, and waits
    /// until no restart of a server is under way (a run that ended during one leaves its
    /// thread running): the server serves again, or failed to start. The future borrows
    /// nothing, so the client processes can be killed before it is awaited.
    pub fn settle(self) -> impl Future<Output = ()> + use<> {
        self.disarm_all();
        if let Some(members) = &self.members {
            members.stops().resume_all();
        }
        let restarts = self.restarts.into_inner().expect("restarts");
        async move {
            for restart in restarts {
                let _ = restart.await;
            }
        }
    }

    /// Carries out the start of fault `index` of `schedule` and records it: the part of the
    /// fault that lasts, if any, which records the fault's end; a fault without one has ended
    /// (recorded here).
    async fn start(
        &self,
        index: usize,
        fault: &Fault,
        schedule: &[ScheduledFault],
    ) -> Result<Option<Lasting<'a>>, String> {
        let (start, end) = (fault_start(fault), fault_end(fault));
        let lasting: Lasting<'a> = match *fault {
            Fault::Crash { client } => {
                let process = self.client(client);
                process.kill().await?;
                self.record(start);
                process.restart().await?;
                self.record(end);
                return Ok(None);
            }
            Fault::Heal => {
                self.record(start);
                let mut healed = self
                    .proxies
                    .as_ref()
                    .map_or_else(Vec::new, |p| p.heal_all());
                healed
                    .extend((self.members.as_ref()).map_or_else(Vec::new, |m| m.cuts().heal_all()));
                healed.sort_unstable();
                let resolved = self.resolved.lock().expect("resolved faults").clone();
                for healed in healed {
                    let fault = resolved.get(&healed).unwrap_or(&schedule[healed].fault);
                    self.record(fault_end(fault));
                }
                self.record(end);
                return Ok(None);
            }
            Fault::RestartServer { down_ms } => {
                let down = Down::Killed(Duration::from_millis(down_ms));
                return self.restart(fault, None, down).map(Some);
            }
            Fault::ExpireSession { client } => {
                self.record(start);
                let expired = self.client(client).expire_session();
                let recorder = self.recorder.clone();
                Box::pin(async move {
                    expired.await?;
                    recorder.record(None, end);
                    Ok(())
                })
            }
            Fault::Pause { client, for_ms } => {
                let process = self.client(client);
                self.record(start);
                let paused = process.pause()?;
                let recorder = self.recorder.clone();
                Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(for_ms)).await;
                    // Recorded before the process is continued: nothing it does then comes
                    // before the end in the trace.
                    recorder.record(None, end);
                    process.resume(paused)
                })
            }
            Fault::Partition { for_ms, .. } | Fault::Isolate { for_ms, .. } => {
                let proxies =
                    (self.proxies.clone()).ok_or("no proxy between clients and server")?;
                self.record(start);
                proxies.cut(index, fault);
                if for_ms.is_none() {
                    return Ok(None);
                }
                let recorder = self.recorder.clone();
                Box::pin(heal_after(
                    for_ms,
                    move || proxies.heal(index),
                    recorder,
                    end,
                ))
            }
            Fault::SplitServers { .. } | Fault::SlowServerLinks { server: None, .. } => {
                return self.on_every_server(index, fault);
            }
            Fault::IsolateFromPeers { .. }
            | Fault::LagServer { .. }
            | Fault::SlowServerLinks { .. }
            | Fault::CutFromServer { .. }
            | Fault::CrashServer { .. }
            | Fault::PauseServer { .. } => {
                return self.on_a_server(index, fault).await;
            }
            Fault::Delay { .. } | Fault::Drop { .. } => {
                return Err("no real counterpart (refused before the run)".into());
            }
        };
        Ok(Some(lasting))
    }

    /// Disarms every fault armed for a request that has not come: it never starts.
    fn disarm_all(&self) {
        if let Some(proxies) = &self.proxies {
            proxies.disarm_all();
        }
        if let Some(members) = &self.members {
            members.cuts().disarm_proposals();
        }
    }

    /// Arms fault `index` (a cut of one client's links) to start at that client's request
    /// matching `trigger`: its start is recorded then. The part that lasts waits for the
    /// start, then for the cut's `for_ms`, and records the end; a cut disarmed before its
    /// request came ends without a record.
    fn arm(
        &self,
        index: usize,
        fault: &Fault,
        trigger: RequestTrigger,
    ) -> Result<Lasting<'a>, String> {
        let proxies = (self.proxies.clone()).ok_or("no proxy between clients and server")?;
        let (start, end) = (fault_start(fault), fault_end(fault));
        let (started_tx, started) = oneshot::channel();
        let recorder = self.recorder.clone();
        proxies.arm(index, fault, trigger, move || {
            recorder.record(None, start);
            let _ = started_tx.send(());
        })?;
        let (for_ms, recorder) = (fault.duration_ms(), self.recorder.clone());
        Ok(Box::pin(async move {
            match started.await {
                Ok(()) => heal_after(for_ms, move || proxies.heal(index), recorder, end).await,
                Err(_) => Ok(()),
            }
        }))
    }

    /// Carries out fault `index`, addressed to one server of the local ensemble by a
    /// selector, on the server the selector names now (read from the servers' modes and the
    /// clients' proxies), recording it with that server: a cut from its peers, a crash and
    /// restart, or a pause. A selector that names no server (no leader, a client on no
    /// server) starts and ends at once, as in the simulator.
    async fn on_a_server(
        &self,
        index: usize,
        fault: &Fault,
    ) -> Result<Option<Lasting<'a>>, String> {
        let members = (self.members.clone()).ok_or("no local ensemble to act on a server of")?;
        let selector = fault
            .server_selector()
            .ok_or("a fault addressed to no server")?;
        let modes = match selector {
            ServerSelector::Leader | ServerSelector::Follower(_) => {
                let asked = members.clone();
                (tokio::task::spawn_blocking(move || asked.modes()).await)
                    .map_err(|e| format!("reading the servers' modes: {e}"))?
            }
            // Named without the servers' roles: asking them would hold the fault up to a
            // second per server that does not answer (one down, paused or crashed).
            ServerSelector::Server(_) | ServerSelector::ServerOf(_) => vec![None; members.count()],
        };
        let server_of = |client| (self.proxies.as_ref())?.server_of(client);
        let named = resolve(selector, &modes, server_of);
        let fault = fault.resolved_to(named);
        let Some(server) = named else {
            self.record(fault_start(&fault));
            self.record(fault_end(&fault));
            return Ok(None);
        };
        match fault {
            Fault::CrashServer { down_ms, .. } => {
                // A machine's crash, as the simulator's: the server falls silent first (its
                // JVM stopped, its connections open and mute, as a dead host's are), so its
                // peers and clients notice by their timeouts; only after `down_ms` is it
                // killed (its connections reset, as a rebooted host resets them) and started
                // again on its log.
                self.record(fault_start(&fault));
                let server = usize::from(server);
                // Never given back: the process is killed stopped.
                let _stopped_until_killed = members.stops().pause(server)?;
                let silent = Duration::from_millis(down_ms);
                self.restart(&fault, Some(server), Down::SilentFor(silent))
                    .map(Some)
            }
            Fault::PauseServer { pause_ms, .. } => {
                self.record(fault_start(&fault));
                let server = usize::from(server);
                let paused = members.stops().pause(server)?;
                let recorder = self.recorder.clone();
                Ok(Some(Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(pause_ms)).await;
                    // Recorded before the server is continued, as a client's pause is.
                    recorder.record(None, fault_end(&fault));
                    members.stops().resume(server, paused)
                })))
            }
            Fault::LagServer { lag_ms, .. } => {
                let lag = Duration::from_millis(lag_ms);
                Ok(self.on_peer_links(index, &members, fault, |cuts| {
                    cuts.lag_from_peers(index, server, lag);
                }))
            }
            Fault::SlowServerLinks { .. } => {
                let (slow, draws) = (fault.slowness(), self.draws(index));
                Ok(self.on_peer_links(index, &members, fault, |cuts| {
                    if let Some(slow) = slow {
                        cuts.slow(index, Some(server), slow, draws);
                    }
                }))
            }
            Fault::CutFromServer { client, .. } => {
                let proxies =
                    (self.proxies.clone()).ok_or("no proxy between clients and servers")?;
                let start = || proxies.cut_from_server(index, client, usize::from(server));
                let healer = proxies.clone();
                Ok(self.start_lasting(index, fault, start, move || healer.heal(index)))
            }
            _ => Ok(self.on_peer_links(index, &members, fault, |cuts| {
                cuts.cut_off(index, server);
            })),
        }
    }

    /// Carries out fault `index` on the links between every server of the local ensemble: a
    /// split into its groups (random halves drawn from the fault's stream of the run's seed),
    /// recorded with them, or slow links between every server.
    fn on_every_server(&self, index: usize, fault: &Fault) -> Result<Option<Lasting<'a>>, String> {
        let members = (self.members.clone()).ok_or("no local ensemble to act on the servers of")?;
        let mut draws = self.draws(index);
        let servers = u16::try_from(members.count()).map_err(|_| "too many servers")?;
        let fault = fault.split_resolved(servers, |min, max| draws.in_range(min, max));
        Ok(match fault {
            Fault::SplitServers {
                resolved: Some(ref groups),
                ..
            } => {
                let groups = groups.clone();
                self.on_peer_links(index, &members, fault, |cuts| cuts.split(index, &groups))
            }
            Fault::SlowServerLinks { .. } => {
                let slow = fault.slowness();
                self.on_peer_links(index, &members, fault, |cuts| {
                    if let Some(slow) = slow {
                        cuts.slow(index, None, slow, draws);
                    }
                })
            }
            _ => return Err("not a fault on every server's links".into()),
        })
    }

    /// Starts fault `index` on the links between the servers by `start` (an
    /// `isolate_from_peers`' cut or a `lag_server`'s lag, recorded with the server it names);
    /// the part that lasts heals it after the fault's `for_ms` (without one, a `heal` ends it).
    fn on_peer_links(
        &self,
        index: usize,
        members: &Members,
        fault: Fault,
        start: impl FnOnce(&PeerCuts),
    ) -> Option<Lasting<'a>> {
        let cuts = members.cuts().clone();
        let start_on = || start(members.cuts());
        self.start_lasting(index, fault, start_on, move || cuts.heal(index))
    }

    /// Records fault `index`'s start (`fault`, with the server or groups it named), starts it
    /// by `start`, and keeps it for a `heal` to record its end; the part that lasts ends it by
    /// `heal` after the fault's `for_ms`, recording its end unless a `heal` ended it first
    /// (without a `for_ms`, only a `heal` ends it).
    fn start_lasting(
        &self,
        index: usize,
        fault: Fault,
        start: impl FnOnce(),
        heal: impl FnOnce() -> bool + 'a,
    ) -> Option<Lasting<'a>> {
        self.record(fault_start(&fault));
        start();
        (self.resolved.lock().expect("resolved faults")).insert(index, fault.clone());
        let for_ms = fault.duration_ms()?;
        let healed = heal_after(Some(for_ms), heal, self.recorder.clone(), fault_end(&fault));
        Some(Box::pin(healed))
    }

    /// Starts a restart of local server `server` (`None`: the leader of an ensemble) on a
    /// thread of its own, the server down as `down` says: a `Down::Killed` restart's start is
    /// recorded once the server is killed (a silent one's, by the caller, when it fell
    /// silent), its end once it serves again (also when the run has ended meanwhile: see
    /// [`Injector::settle`]); the part that lasts reports how it went.
    fn restart(
        &self,
        fault: &Fault,
        server: Option<usize>,
        down: Down,
    ) -> Result<Lasting<'a>, String> {
        let fault = fault.clone();
        self.restart_when(down, move || Some(Ok((server, fault))))
    }

    /// [`Injector::restart`] of the server `named` names, with the fault to record, once it
    /// does (on the restart's thread, which it blocks): `None` when it never will, and the
    /// restart ends without a record; an error ends it with that error.
    fn restart_when(
        &self,
        down: Down,
        named: impl FnOnce() -> Option<Result<(Option<usize>, Fault), String>> + Send + 'static,
    ) -> Result<Lasting<'a>, String> {
        let restarter = self.restarter.clone().ok_or("no local server to restart")?;
        let recorder = self.recorder.clone();
        let (outcome, restarted) = oneshot::channel();
        let thread = tokio::task::spawn_blocking(move || {
            let (server, fault) = match named() {
                None => return drop(outcome.send(Ok(()))),
                Some(Err(error)) => return drop(outcome.send(Err(error))),
                Some(Ok(named)) => named,
            };
            let downtime = match down {
                Down::Killed(downtime) => downtime,
                Down::SilentFor(silent) => {
                    std::thread::sleep(silent);
                    Duration::ZERO
                }
            };
            let killed = || {
                if matches!(down, Down::Killed(_)) {
                    recorder.record(None, fault_start(&fault));
                }
            };
            let result = restarter.crash_and_restart(server, downtime, killed);
            if result.is_ok() {
                recorder.record(None, fault_end(&fault));
            }
            let _ = outcome.send(result.map_err(|e| e.to_string()));
        });
        self.restarts.lock().expect("restarts").push(thread);
        Ok(Box::pin(async move {
            (restarted.await).unwrap_or_else(|_| Err("the restart stopped".into()))
        }))
    }

    /// Arms fault `index`'s crash of a server to start as the ensemble's leader sends a
    /// follower a proposal carrying `trigger`'s path text (the peer proxies read it): the
    /// leader is stopped there, before the proxy passes the proposal on and so before any
    /// commit of it, its start recorded with that server; then it is down as any
    /// `crash_server`. A crash disarmed before its proposal came ends without a record.
    fn arm_at_proposal(
        &self,
        fault: &Fault,
        trigger: &RequestTrigger,
    ) -> Result<Lasting<'a>, String> {
        let members = (self.members.clone()).ok_or("no local ensemble to act on a server of")?;
        let Fault::CrashServer { down_ms, .. } = *fault else {
            return Err("only a crash_server starts at a proposal".into());
        };
        let (named_tx, named) = std::sync::mpsc::channel();
        let (stops, recorder, armed) = (
            members.stops().clone(),
            self.recorder.clone(),
            fault.clone(),
        );
        members
            .cuts()
            .arm_proposal(&trigger.path_contains, move |leader| {
                let fault = armed.resolved_to(u16::try_from(leader).ok());
                // Never given back: the process is killed stopped.
                let stopped = stops.pause(leader).map(|_stopped_until_killed| {
                    recorder.record(None, fault_start(&fault));
                    (Some(leader), fault)
                });
                let _ = named_tx.send(stopped);
            });
        let silent = Down::SilentFor(Duration::from_millis(down_ms));
        self.restart_when(silent, move || named.recv().ok())
    }

    fn client(&self, client: u16) -> Client<'a> {
        self.clients[usize::from(client)]
    }

    fn record(&self, kind: EventKind) {
        self.recorder.record(None, kind);
    }
}

/// Heals a cut after `for_ms` (a cut without one lasts until a `heal`) and records its `end`,
/// unless a heal ended it first (`heal` says whether it ended it).
async fn heal_after(
    for_ms: Option<u64>,
    heal: impl FnOnce() -> bool,
    recorder: Recorder,
    end: EventKind,
) -> Result<(), String> {
    if let Some(for_ms) = for_ms {
        tokio::time::sleep(Duration::from_millis(for_ms)).await;
        if heal() {
            recorder.record(None, end);
        }
    }
    Ok(())
}

/// The server `selector` names among servers in `modes` (by index, as `srvr` reports them;
/// `server_of` gives the server of a client's newest connection), by the simulator's rule
/// ([`ServerSelector::resolve`]).
fn resolve(
    selector: ServerSelector,
    modes: &[Option<ServerMode>],
    server_of: impl Fn(u16) -> Option<usize>,
) -> Option<u16> {
    let index = |n: usize| u16::try_from(n).ok();
    let leader = modes.iter().position(|&m| m == Some(ServerMode::Leader));
    let servers = index(modes.len()).unwrap_or(u16::MAX);
    selector.resolve(servers, leader.and_then(index), |client| {
        server_of(client).and_then(index)
    })
}

/// How a restarted server goes down.
#[derive(Clone, Copy, Debug)]
enum Down {
    /// Killed at once (its connections reset at once), started again after this downtime: a
    /// `restart_server`, a process's crash.
    Killed(Duration),
    /// Stopped (the caller stopped it) and silent for this long, then killed and started at
    /// once: a `crash_server`, a machine's crash.
    SilentFor(Duration),
}

fn fault_start(fault: &Fault) -> EventKind {
    EventKind::FaultStart {
        fault: fault.clone(),
    }
}

fn fault_end(fault: &Fault) -> EventKind {
    EventKind::FaultEnd {
        fault: fault.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_name_servers_as_the_simulator_does() {
        let modes = [Some(ServerMode::Follower), Some(ServerMode::Leader), None];
        let nowhere = |_| None;
        assert_eq!(resolve(ServerSelector::Leader, &modes, nowhere), Some(1));
        assert_eq!(
            resolve(ServerSelector::Follower(0), &modes, nowhere),
            Some(0)
        );
        // A server that does not serve counts among the followers, as in the simulator.
        assert_eq!(
            resolve(ServerSelector::Follower(1), &modes, nowhere),
            Some(2)
        );
        assert_eq!(resolve(ServerSelector::Follower(2), &modes, nowhere), None);
        assert_eq!(resolve(ServerSelector::Server(2), &modes, nowhere), Some(2));
        let on_two = |client| (client == 0).then_some(2);
        assert_eq!(
            resolve(ServerSelector::ServerOf(0), &modes, on_two),
            Some(2)
        );
        assert_eq!(resolve(ServerSelector::ServerOf(1), &modes, on_two), None);
        let leaderless = [Some(ServerMode::Follower), None, None];
        assert_eq!(resolve(ServerSelector::Leader, &leaderless, nowhere), None);
        assert_eq!(
            resolve(ServerSelector::Follower(0), &leaderless, nowhere),
            None
        );
    }
}
