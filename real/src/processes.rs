//! A real run's client processes, from the parent's side: [`ClientLauncher`] says how to
//! start one (the `splitbrain` binary's hidden `real-client` subcommand, or a test's
//! program), [`ClientProcess`] starts it — in a process group of its own, so a terminal's
//! Ctrl-C reaches only the parent, and SIGKILLed should the parent die — sends it its spec,
//! merges its reported events into the run's recorder, pauses and resumes it (SIGSTOP,
//! SIGCONT; overlapping pauses stop it until the last ends), crashes it (SIGKILL) and starts
//! another in its place, and SIGKILLs it when dropped.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{BufReader, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use coordination::ids::ClientSlot;
use futures::channel::mpsc::UnboundedSender;
use futures::channel::oneshot;

use crate::clock::Recorder;
use crate::local::{kill_group, spawn_bound_to_this_process};
use crate::pause::{Paused, Stops, signal};
use crate::wire::{self, ClientSpec, Report};

/// How to start a client process: a program and the arguments before nothing else (the spec
/// comes on its stdin).
#[derive(Clone, Debug)]
pub struct ClientLauncher {
    program: PathBuf,
    args: Vec<OsString>,
}

impl ClientLauncher {
    /// Starts `program` with `args` (e.g. the `splitbrain` binary and `["real-client"]`).
    pub fn new(
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
    ) -> ClientLauncher {
        ClientLauncher {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    /// The command that starts one client: the program with its arguments.
    pub(crate) fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        command
    }
}

/// A child process with pipes to its stdin, stdout and stderr.
pub(crate) struct Piped {
    /// The process.
    pub child: Child,
    /// Its stdin.
    pub stdin: ChildStdin,
    /// Its stdout.
    pub stdout: ChildStdout,
    /// Its stderr.
    pub stderr: ChildStderr,
}

/// Starts `command` with its stdin, stdout and stderr piped, in a process group of its own
/// (a terminal's Ctrl-C reaches only this process), SIGKILLed should this process die.
pub(crate) fn spawn_piped(mut command: Command) -> std::io::Result<Piped> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = spawn_bound_to_this_process(command)?;
    match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
        (Some(stdin), Some(stdout), Some(stderr)) => Ok(Piped {
            child,
            stdin,
            stdout,
            stderr,
        }),
        _ => {
            kill_group(child);
            Err(std::io::Error::other("no pipes"))
        }
    }
}

/// Reads `stderr` to its end on a thread named `name`: a process's last words, when it dies.
pub(crate) fn last_words(stderr: ChildStderr, name: String) -> std::io::Result<JoinHandle<String>> {
    std::thread::Builder::new().name(name).spawn(move || {
        let mut text = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut text);
        text
    })
}

/// Where a client process is, told to the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Progress {
    /// It is ready to start its workload (a process started after a crash is told to start at
    /// once: its readiness concerns nobody).
    Ready(ClientSlot),
    /// It reported its workload done.
    Done(ClientSlot),
    /// Its stdout ended (or said something else) before it reported done, and nobody killed
    /// it on purpose: it died.
    Died(ClientSlot),
}

impl Progress {
    /// The client it is about.
    pub fn slot(self) -> ClientSlot {
        match self {
            Progress::Ready(slot) | Progress::Done(slot) | Progress::Died(slot) => slot,
        }
    }
}

/// Where the outcome of an expiry asked of a client process goes.
type ExpiryOutcome = oneshot::Sender<Result<(), String>>;

/// The expiries asked of one process, in the order it carries them out and reports them;
/// `None` once its reports have ended (an expiry asked then is not waited for).
type Expiries = Arc<Mutex<Option<VecDeque<ExpiryOutcome>>>>;

/// One client's process: the one running now, which a `crash` fault replaces
/// ([`ClientProcess::kill`], then [`ClientProcess::restart`]). The process running is
/// SIGKILLed and reaped when this is dropped.
pub(crate) struct ClientProcess {
    launch: Launch,
    running: Mutex<Running>,
}

/// How to start a process for one client, and what its processes share: their reports feed
/// the same run, `done` flag and count of cycles begun.
struct Launch {
    launcher: ClientLauncher,
    /// The first process's spec.
    spec: ClientSpec,
    recorder: Recorder,
    progress: UnboundedSender<Progress>,
    /// Whether a process reported the workload done.
    done: Arc<AtomicBool>,
    /// The cycles of the workload the processes reported begun ([`Report::Begun`]).
    begun: Arc<AtomicU32>,
}

/// One OS process of a client; SIGKILLed and reaped when dropped.
struct Running {
    /// How many processes of the client were crashed before this one.
    restarts: u32,
    pid: libc::pid_t,
    child: Child,
    stdin: ChildStdin,
    /// Set before the process is killed on purpose: the end of its reports is no death then.
    killed: Arc<AtomicBool>,
    /// The pauses that stop the process now: it is continued when the last one ends.
    stops: Stops,
    /// The expiries asked of it that it has not reported yet.
    expiries: Expiries,
    /// Resolves once every report of the process has been read.
    reports_read: Option<oneshot::Receiver<()>>,
    /// The thread reading what the process writes on stderr (its last words, when it dies).
    stderr: Option<JoinHandle<String>>,
}

impl ClientProcess {
    /// Starts the process `spec` describes; its events go to `recorder`, and its readiness
    /// and how its reports end to `progress`.
    pub fn spawn(
        launcher: &ClientLauncher,
        spec: &ClientSpec,
        recorder: Recorder,
        progress: UnboundedSender<Progress>,
    ) -> Result<ClientProcess, String> {
        let launch = Launch {
            launcher: launcher.clone(),
            spec: spec.clone(),
            recorder,
            progress,
            done: Arc::default(),
            begun: Arc::new(AtomicU32::new(spec.begun)),
        };
        let running = launch.start(spec.clone())?;
        Ok(ClientProcess {
            launch,
            running: Mutex::new(running),
        })
    }

    fn running(&self) -> MutexGuard<'_, Running> {
        self.running.lock().expect("client process")
    }

    fn slot(&self) -> ClientSlot {
        self.launch.spec.slot
    }

    /// Whether the process reported its workload done.
    pub fn is_done(&self) -> bool {
        self.launch.done.load(Ordering::SeqCst)
    }

    /// Tells the ready process to start its workload.
    pub fn start(&self) -> Result<(), String> {
        wire::send(&mut self.running().stdin, &wire::Command::Start)
            .map_err(|e| format!("cannot start client {}: {e}", self.slot().0))
    }

    /// Asks the process now to expire its newest session; the future waits for the outcome
    /// (a paused process carries it out once continued). A process done with its workload has
    /// nothing left to expire, and one killed on purpose (a crash) meanwhile takes the expiry
    /// with it: its sessions expire on the server by themselves.
    pub fn expire_session(&self) -> impl Future<Output = Result<(), String>> + '_ {
        let (outcome, waiting) = oneshot::channel();
        let asked = {
            let mut running = self.running();
            let queued = match &mut *running.expiries.lock().expect("expiries") {
                Some(asked) => {
                    asked.push_back(outcome);
                    true
                }
                None => false,
            };
            let asked = wire::send(&mut running.stdin, &wire::Command::ExpireSession);
            queued && asked.is_ok()
        };
        async move {
            let outcome = if asked { waiting.await.ok() } else { None };
            match outcome {
                Some(outcome) => outcome,
                None if self.is_done() => Ok(()),
                None => Err(format!("client {}'s process ended", self.slot().0)),
            }
        }
    }

    /// Stops the process (`SIGSTOP`) unless a pause stops it already: it runs nothing, its
    /// session's heartbeats included, until every pause is given back to
    /// [`ClientProcess::resume`].
    pub fn pause(&self) -> Result<Paused, String> {
        let mut running = self.running();
        let (pid, process) = (running.pid, running.restarts);
        if running.stops.pause() {
            self.signalled(signal(pid, libc::SIGSTOP), pid, "stop")?;
        }
        Ok(Paused { process })
    }

    /// Ends `paused`: the process is continued (`SIGCONT`) when no other pause stops it. A
    /// pause of a process killed since (a crash) continues nothing: the process it stopped is
    /// gone, and the one running now was never stopped by it.
    pub fn resume(&self, paused: Paused) -> Result<(), String> {
        let mut running = self.running();
        if running.restarts != paused.process {
            return Ok(());
        }
        let pid = running.pid;
        match running.stops.resume() {
            true => self.signalled(signal(pid, libc::SIGCONT), pid, "continue"),
            false => Ok(()),
        }
    }

    /// What a signal to the process did, as one line: a process done with its workload may
    /// have exited (`running` is locked meanwhile, and a child is reaped only through it, so
    /// `pid` is still this client's).
    fn signalled(
        &self,
        sent: std::io::Result<()>,
        pid: libc::pid_t,
        what: &str,
    ) -> Result<(), String> {
        match sent {
            Err(error) if !self.is_done() => Err(format!(
                "cannot {what} client {}'s process ({pid}): {error}",
                self.slot().0
            )),
            _ => Ok(()),
        }
    }

    /// Crashes the process (`SIGKILL`) and returns once every report it made has been read
    /// and it is reaped: nothing it did can then come later in the trace, and the count of
    /// cycles it began is final. Its sessions stay on the server until the server expires
    /// them (a connection's end never ends a session). Fails with how the process died when
    /// it died by itself first; a process that reported its workload done is no failure.
    pub async fn kill(&self) -> Result<(), String> {
        let reports_read = {
            let mut running = self.running();
            running.killed.store(true, Ordering::SeqCst);
            // A process done with its workload may have exited already: nothing to kill.
            let _ = running.child.kill();
            running.reports_read.take()
        };
        if let Some(reports_read) = reports_read {
            let _ = reports_read.await;
        }
        // Its stdout has ended, so it has closed its files and is exiting: the wait is short.
        let status = self.running().child.wait();
        match status {
            Ok(status) if status.signal() == Some(libc::SIGKILL) || self.is_done() => Ok(()),
            _ => Err(self.death()),
        }
    }

    /// Starts a new process for the client in place of the one [`ClientProcess::kill`]
    /// killed, as a crashed client restarts in the simulator: it opens a new session and
    /// carries on with the cycles its dead processes had not begun, the count they reported
    /// as they began each one (the simplest sound source: reported before a cycle's first
    /// call, and read to the end before this runs, so no cycle anyone could see begin is
    /// repeated; counting calls or completions in the events instead would redo the workload's
    /// own bookkeeping per recipe family). It is told to start at once: the scenario's
    /// timeline runs already. A client that reported its workload done is not restarted
    /// (nothing is left; a simulated one opens and closes one more session).
    pub fn restart(&self) -> Result<(), String> {
        if self.is_done() {
            return Ok(());
        }
        let spec = ClientSpec {
            restarts: self.running().restarts + 1,
            begun: self.launch.begun.load(Ordering::SeqCst),
            ..self.launch.spec.clone()
        };
        let next = self.launch.start(spec)?;
        // The dead process, reaped already, is dropped.
        *self.running() = next;
        self.start()
    }

    /// One line on how the process died (its status and the first line it wrote on stderr),
    /// once its reports ended before it was done.
    pub fn death(&self) -> String {
        let mut running = self.running();
        let status = match running.child.wait() {
            Ok(status) => status.to_string(),
            Err(error) => format!("status unknown: {error}"),
        };
        // The process is gone, so its stderr has ended and the thread returns.
        let reader = running.stderr.take();
        let stderr = reader.and_then(|r| r.join().ok()).unwrap_or_default();
        let slot = self.slot().0;
        match stderr.lines().next() {
            Some(line) => format!("client {slot}'s process died ({status}): {line}"),
            None => format!("client {slot}'s process died ({status})"),
        }
    }
}

impl Launch {
    /// Starts the process `spec` describes, sends it its spec and reads its reports and its
    /// stderr on threads of their own.
    fn start(&self, spec: ClientSpec) -> Result<Running, String> {
        let slot = spec.slot;
        let failed = |e: std::io::Error| {
            format!(
                "client {}: cannot start {}: {e}",
                slot.0,
                self.launcher.program.display()
            )
        };
        let Piped {
            child,
            stdin,
            stdout,
            stderr,
        } = spawn_piped(self.launcher.command()).map_err(failed)?;
        let (read, reports_read) = oneshot::channel();
        let mut running = Running {
            restarts: spec.restarts,
            pid: libc::pid_t::try_from(child.id()).unwrap_or(libc::pid_t::MAX),
            child,
            stdin,
            killed: Arc::default(),
            stops: Stops::default(),
            expiries: Arc::new(Mutex::new(Some(VecDeque::new()))),
            reports_read: Some(reports_read),
            stderr: None,
        };
        wire::send(&mut running.stdin, &spec).map_err(failed)?;
        let ends = ReportsEnd {
            killed: running.killed.clone(),
            expiries: running.expiries.clone(),
            read,
        };
        self.read_reports(stdout, slot, ends)?;
        let last_words = last_words(stderr, format!("client-{}-stderr", slot.0)).map_err(failed)?;
        running.stderr = Some(last_words);
        Ok(running)
    }

    /// Merges the reports of the process on `stdout` into the run, on a thread of their own;
    /// `ends` says what their end concerns.
    fn read_reports(
        &self,
        stdout: ChildStdout,
        slot: ClientSlot,
        ends: ReportsEnd,
    ) -> Result<(), String> {
        let (recorder, progress) = (self.recorder.clone(), self.progress.clone());
        let (done, begun) = (self.done.clone(), self.begun.clone());
        let ReportsEnd {
            killed,
            expiries,
            read,
        } = ends;
        let reader = move || {
            let mut reports = BufReader::new(stdout);
            let what = format!("client {}'s reports", slot.0);
            while let Ok(Some(report)) = wire::receive::<Report>(&mut reports, &what) {
                match report {
                    Report::Ready => {
                        let _ = progress.unbounded_send(Progress::Ready(slot));
                    }
                    Report::Event(event) => recorder.push(event),
                    Report::Begun(cycles) => begun.store(cycles, Ordering::SeqCst),
                    Report::Expired(outcome) => {
                        let mut asked = expiries.lock().expect("expiries");
                        if let Some(waiting) = asked.as_mut().and_then(VecDeque::pop_front) {
                            let _ = waiting.send(outcome);
                        }
                    }
                    Report::Done => {
                        done.store(true, Ordering::SeqCst);
                        let _ = progress.unbounded_send(Progress::Done(slot));
                        break;
                    }
                }
            }
            let ended_well = done.load(Ordering::SeqCst) || killed.load(Ordering::SeqCst);
            if !ended_well {
                let _ = progress.unbounded_send(Progress::Died(slot));
            }
            // The expiries still asked end with the process: well when it was done or killed
            // on purpose, else as a failure (their senders dropped).
            let unreported = expiries.lock().expect("expiries").take();
            for waiting in unreported.into_iter().flatten() {
                if ended_well {
                    let _ = waiting.send(Ok(()));
                }
            }
            let _ = read.send(());
        };
        std::thread::Builder::new()
            .name(format!("client-{}-reports", slot.0))
            .spawn(reader)
            .map(drop)
            .map_err(|e| format!("client {}: cannot start its reader: {e}", slot.0))
    }
}

/// What the end of a process's reports concerns.
struct ReportsEnd {
    /// Whether the process was killed on purpose.
    killed: Arc<AtomicBool>,
    /// The expiries asked of it, which end with it.
    expiries: Expiries,
    /// Told when the reports end.
    read: oneshot::Sender<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::RealClock;
    use futures::executor::block_on;
    use scenarios::catalog::Catalog;

    /// A client process that reads its spec and then sleeps (no ZooKeeper needed): enough to
    /// stop, continue, kill and restart.
    fn sleeper() -> ClientProcess {
        let launcher =
            ClientLauncher::new("/bin/sh", ["-c", "head -n 1 >/dev/null; exec sleep 60"]);
        let scenario = Catalog::builtin()
            .unwrap()
            .get("herd-free-mutex")
            .unwrap()
            .clone();
        let spec = ClientSpec {
            scenario,
            seed: 0,
            slot: ClientSlot(0),
            connect_string: "127.0.0.1:1".into(),
            origin_ns: 0,
            resource: PathBuf::from("/nonexistent"),
            restarts: 0,
            begun: 0,
        };
        let (progress, _) = futures::channel::mpsc::unbounded();
        let recorder = Recorder::new(RealClock::start());
        ClientProcess::spawn(&launcher, &spec, recorder, progress).unwrap()
    }

    /// Whether the client's running process is stopped (`T` in `/proc/PID/stat`).
    fn stopped(process: &ClientProcess) -> bool {
        let pid = process.running().pid;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let state = stat.rsplit(')').next().unwrap().split_whitespace().next();
        state == Some("T")
    }

    /// Waits until the process is (or is no longer) stopped: a signal to another process is
    /// delivered when it next runs, not when kill(2) returns.
    fn wait_stopped(process: &ClientProcess, wanted: bool) {
        while stopped(process) != wanted {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn overlapping_pauses_stop_the_process_until_the_last_ends() {
        let process = sleeper();
        let first = process.pause().unwrap();
        wait_stopped(&process, true);
        let second = process.pause().unwrap();
        process.resume(first).unwrap();
        // No SIGCONT was sent, so nothing can have continued it.
        assert!(stopped(&process), "still stopped by the second pause");
        process.resume(second).unwrap();
        wait_stopped(&process, false);
    }

    #[test]
    fn a_pause_of_a_crashed_process_continues_nothing_of_the_next_one() {
        let process = sleeper();
        let before = process.pause().unwrap();
        wait_stopped(&process, true);
        // An expiry asked of the stopped process, which it never reports.
        let expiry = process.expire_session();
        block_on(process.kill()).unwrap();
        process.restart().unwrap();
        assert_eq!(block_on(expiry), Ok(()), "the expiry ends with its process");
        assert!(!stopped(&process), "the new process is not stopped");
        let after = process.pause().unwrap();
        wait_stopped(&process, true);
        process.resume(before).unwrap();
        assert!(
            stopped(&process),
            "the dead process's pause continues nothing"
        );
        process.resume(after).unwrap();
        wait_stopped(&process, false);
    }
}
