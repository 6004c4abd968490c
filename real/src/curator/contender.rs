//! One Curator contender process: started, its output read into the run's trace by a thread
//! of its own, told to go, and SIGKILLed when dropped before it ends.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};

use coordination::ids::ClientSlot;
use tokio::sync::oneshot;
use trace::Event;

use super::lines::{Line, parse};
use crate::clock::{RealClock, Recorder};
use crate::local::{HarnessError, io_error, kill_group, spawn_bound_to_this_process};

/// How a contender ended, or why it could not start: `Err` with one line saying why.
pub(crate) type Ending = Result<(), String>;

/// A running contender.
pub(crate) struct Contender {
    slot: ClientSlot,
    /// Taken by the reader thread when the output ends (it reaps the process); killed here
    /// on drop otherwise.
    child: Arc<Mutex<Option<Child>>>,
    stdin: ChildStdin,
    ready: Option<oneshot::Receiver<Ending>>,
    ended: Option<oneshot::Receiver<Ending>>,
}

/// Where a contender's events go.
pub(crate) struct Sink {
    /// The run's recorder.
    pub recorder: Recorder,
    /// The run's clock, to place the contender's `CLOCK_MONOTONIC` stamps on.
    pub clock: RealClock,
}

impl Contender {
    /// Starts `command` (the contender of client `slot`) with its stderr in `stderr`, and
    /// reads its output into `sink` until it ends.
    pub(crate) fn spawn(
        slot: ClientSlot,
        mut command: Command,
        stderr: PathBuf,
        sink: Sink,
    ) -> Result<Contender, HarnessError> {
        let what = |e| io_error(format!("starting curator contender {}", slot.0), e);
        let log = File::create(&stderr).map_err(what)?;
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log);
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = spawn_bound_to_this_process(command).map_err(what)?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            kill_group(child);
            return Err(HarnessError(format!(
                "curator contender {}: no pipes to it",
                slot.0
            )));
        };
        let child = Arc::new(Mutex::new(Some(child)));
        let (ready_tx, ready) = oneshot::channel();
        let (ended_tx, ended) = oneshot::channel();
        let reader = Reader {
            slot,
            child: child.clone(),
            stderr,
            sink,
        };
        std::thread::Builder::new()
            .name(format!("curator-{}", slot.0))
            .spawn(move || reader.run(BufReader::new(stdout), ready_tx, ended_tx))
            .map_err(what)?;
        Ok(Contender {
            slot,
            child,
            stdin,
            ready: Some(ready),
            ended: Some(ended),
        })
    }

    /// Waits until the contender has its session (or has ended without one).
    pub(crate) async fn ready(&mut self) -> Ending {
        let ready = self.ready.take().expect("ready is awaited once");
        ready.await.unwrap_or_else(|_| Err(self.gone()))
    }

    /// Tells the contender to start its acquisitions.
    pub(crate) fn go(&mut self) -> Ending {
        (writeln!(self.stdin, "go").and_then(|()| self.stdin.flush())).map_err(|e| {
            format!(
                "curator contender {}: cannot tell it to go: {e}",
                self.slot.0
            )
        })
    }

    /// Waits until the contender has ended.
    pub(crate) async fn ended(&mut self) -> Ending {
        let ended = self.ended.take().expect("the end is awaited once");
        ended.await.unwrap_or_else(|_| Err(self.gone()))
    }

    fn gone(&self) -> String {
        format!(
            "curator contender {}: its reader thread is gone",
            self.slot.0
        )
    }
}

impl Drop for Contender {
    fn drop(&mut self) {
        if let Some(child) = self.child.lock().expect("contender process").take() {
            kill_group(child);
        }
    }
}

/// The thread that reads a contender's output.
struct Reader {
    slot: ClientSlot,
    child: Arc<Mutex<Option<Child>>>,
    stderr: PathBuf,
    sink: Sink,
}

impl Reader {
    fn run(
        self,
        output: impl BufRead,
        ready: oneshot::Sender<Ending>,
        ended: oneshot::Sender<Ending>,
    ) {
        let mut ready = Some(ready);
        let ending = self.read(output, &mut ready);
        let ending = ending.and_then(|()| self.reap());
        if let Some(ready) = ready {
            let _ = ready.send(ending.clone().and(Err(format!(
                "curator contender {} ended before it was ready",
                self.slot.0
            ))));
        }
        let _ = ended.send(ending);
    }

    /// Reads the output to its end (or a malformed line) and records its events; `Ok` when
    /// the contender said it was done.
    fn read(&self, output: impl BufRead, ready: &mut Option<oneshot::Sender<Ending>>) -> Ending {
        let mut done = false;
        for line in output.lines() {
            let line = line.map_err(|e| self.failed(&format!("reading its output: {e}")))?;
            let (stamp, line) = parse(&line).map_err(|e| self.failed(&e))?;
            match line {
                Line::Ready => {
                    if let Some(ready) = ready.take() {
                        let _ = ready.send(Ok(()));
                    }
                }
                Line::Event(kind) => {
                    let t = self.sink.clock.since_start(stamp);
                    self.sink.recorder.push(Event {
                        t: u64::try_from(t.as_nanos()).unwrap_or(u64::MAX),
                        client: Some(self.slot),
                        kind,
                    });
                }
                Line::Done => done = true,
            }
        }
        if done {
            Ok(())
        } else {
            Err(self.failed("its output ended before it was done"))
        }
    }

    /// Reaps the process; `Err` unless it exited with status 0.
    fn reap(&self) -> Ending {
        let Some(mut child) = self.child.lock().expect("contender process").take() else {
            return Err(self.failed("it was killed"));
        };
        match child.wait() {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(self.failed(&format!("it exited ({status})"))),
            Err(e) => Err(self.failed(&format!("waiting for it: {e}"))),
        }
    }

    /// One line: what failed, and the end of the contender's stderr.
    fn failed(&self, what: &str) -> String {
        format!(
            "curator contender {}: {what}{}",
            self.slot.0,
            stderr_tail(&self.stderr)
        )
    }
}

/// `; stderr: <its last line>`, or nothing when it wrote none.
fn stderr_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    match text.lines().rev().find(|l| !l.trim().is_empty()) {
        Some(line) => format!("; stderr: {}", line.trim()),
        None => String::new(),
    }
}
