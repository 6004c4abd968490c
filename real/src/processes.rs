//! A real run's client processes, from the parent's side: [`ClientLauncher`] says how to
//! start one (the `splitbrain` binary's hidden `real-client` subcommand, or a test's
//! program), [`ClientProcess`] starts it — in a process group of its own, so a terminal's
//! Ctrl-C reaches only the parent, and SIGKILLed should the parent die — sends it its spec,
//! merges its reported events into the run's recorder, pauses and resumes it (SIGSTOP,
//! SIGCONT) and SIGKILLs it when dropped.

use std::ffi::OsString;
use std::io::{BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use futures::channel::mpsc::UnboundedSender;
use futures::channel::oneshot;
use lock::ids::ClientSlot;

use crate::clock::Recorder;
use crate::local::{kill_group, spawn_bound_to_this_process};
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
    /// It is ready to start its workload.
    Ready(ClientSlot),
    /// It reported its workload done.
    Done(ClientSlot),
    /// Its stdout ended (or said something else) before it reported done: it died.
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

/// One running client process; SIGKILLed and reaped when dropped.
pub(crate) struct ClientProcess {
    slot: ClientSlot,
    pid: libc::pid_t,
    child: Mutex<Child>,
    stdin: Mutex<ChildStdin>,
    /// Waits for the outcome of the expiry asked last.
    expired: Arc<Mutex<Option<ExpiryOutcome>>>,
    done: Arc<AtomicBool>,
    /// The thread reading what the process writes on stderr (its last words, when it dies).
    stderr: Mutex<Option<JoinHandle<String>>>,
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
        let slot = spec.slot;
        let failed = |e: std::io::Error| {
            format!(
                "client {}: cannot start {}: {e}",
                slot.0,
                launcher.program.display()
            )
        };
        let Piped {
            child,
            stdin,
            stdout,
            stderr,
        } = spawn_piped(launcher.command()).map_err(failed)?;
        let process = ClientProcess {
            slot,
            pid: libc::pid_t::try_from(child.id()).unwrap_or(libc::pid_t::MAX),
            child: Mutex::new(child),
            stdin: Mutex::new(stdin),
            expired: Arc::default(),
            done: Arc::default(),
            stderr: Mutex::new(None),
        };
        wire::send(&mut *process.stdin.lock().expect("stdin"), spec).map_err(failed)?;
        process.read_reports(stdout, recorder, progress)?;
        let last_words = last_words(stderr, format!("client-{}-stderr", slot.0)).map_err(failed)?;
        *process.stderr.lock().expect("stderr") = Some(last_words);
        Ok(process)
    }

    /// Merges the process's reports into the run, on a thread of their own.
    fn read_reports(
        &self,
        stdout: ChildStdout,
        recorder: Recorder,
        progress: UnboundedSender<Progress>,
    ) -> Result<(), String> {
        let (slot, expired, done) = (self.slot, self.expired.clone(), self.done.clone());
        let reader = move || {
            let mut reports = BufReader::new(stdout);
            let what = format!("client {}'s reports", slot.0);
            while let Ok(Some(report)) = wire::receive::<Report>(&mut reports, &what) {
                match report {
                    Report::Ready => {
                        let _ = progress.unbounded_send(Progress::Ready(slot));
                    }
                    Report::Event(event) => recorder.push(event),
                    Report::Expired(outcome) => {
                        if let Some(waiting) = expired.lock().expect("expiry").take() {
                            let _ = waiting.send(outcome);
                        }
                    }
                    Report::Done => {
                        done.store(true, Ordering::SeqCst);
                        let _ = progress.unbounded_send(Progress::Done(slot));
                        return;
                    }
                }
            }
            let _ = progress.unbounded_send(Progress::Died(slot));
        };
        std::thread::Builder::new()
            .name(format!("client-{}-reports", slot.0))
            .spawn(reader)
            .map(drop)
            .map_err(|e| format!("client {}: cannot start its reader: {e}", slot.0))
    }

    /// Whether the process reported its workload done.
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::SeqCst)
    }

    /// Tells the ready process to start its workload.
    pub fn start(&self) -> Result<(), String> {
        wire::send(
            &mut *self.stdin.lock().expect("stdin"),
            &wire::Command::Start,
        )
        .map_err(|e| format!("cannot start client {}: {e}", self.slot.0))
    }

    /// Asks the process to expire its newest session and waits for the outcome; a process
    /// done with its workload has nothing left to expire.
    pub async fn expire_session(&self) -> Result<(), String> {
        let (outcome, waiting) = oneshot::channel();
        *self.expired.lock().expect("expiry") = Some(outcome);
        let asked = wire::send(
            &mut *self.stdin.lock().expect("stdin"),
            &wire::Command::ExpireSession,
        );
        match (asked, waiting.await) {
            (Ok(()), Ok(outcome)) => outcome,
            _ if self.is_done() => Ok(()),
            _ => Err(format!("client {}'s process ended", self.slot.0)),
        }
    }

    /// Stops the process (`SIGSTOP`): it runs nothing, its session's heartbeats included.
    pub fn pause(&self) -> Result<(), String> {
        self.signal(libc::SIGSTOP, "stop")
    }

    /// Resumes a paused process (`SIGCONT`).
    pub fn resume(&self) -> Result<(), String> {
        self.signal(libc::SIGCONT, "continue")
    }

    fn signal(&self, signal: libc::c_int, what: &str) -> Result<(), String> {
        // SAFETY: kill(2) on the PID of a child this process has not reaped yet.
        if unsafe { libc::kill(self.pid, signal) } == 0 || self.is_done() {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        Err(format!(
            "cannot {what} client {}'s process ({}): {error}",
            self.slot.0, self.pid
        ))
    }

    /// One line on how the process died (its status and the first line it wrote on stderr),
    /// once its reports ended before it was done.
    pub fn death(&self) -> String {
        let status = self.child.lock().expect("child").wait();
        let status = match status {
            Ok(status) => status.to_string(),
            Err(error) => format!("status unknown: {error}"),
        };
        // The process is gone, so its stderr has ended and the thread returns.
        let reader = self.stderr.lock().expect("stderr").take();
        let stderr = reader.and_then(|r| r.join().ok()).unwrap_or_default();
        match stderr.lines().next() {
            Some(line) => format!("client {}'s process died ({status}): {line}", self.slot.0),
            None => format!("client {}'s process died ({status})", self.slot.0),
        }
    }
}

impl Drop for ClientProcess {
    fn drop(&mut self) {
        let mut child = self.child.lock().expect("child");
        let _ = child.kill();
        let _ = child.wait();
    }
}
