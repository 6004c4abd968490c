//! One contender's process: started in a process group of its own, its stdin written one
//! [`Command`] a line, its stdout read by a thread of its own into [`Output`]s, and
//! SIGKILLed (its group) when dropped before it has exited.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command as OsCommand, Stdio};
use std::sync::{Arc, Mutex};

use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};

use super::protocol::{Command, Meaning, parse};
use crate::local::{kill_group, spawn_bound_to_this_process};

/// What the reader thread hears from a contender.
#[derive(Debug)]
pub(crate) enum Output {
    /// A report: its stamp (`CLOCK_MONOTONIC` nanoseconds) and meaning.
    Report(u64, Meaning),
    /// The output ended: `Ok` when the process then exited with status 0; `Err` with one
    /// line saying why otherwise (a malformed line ends it too, the process killed).
    End(Result<(), String>),
}

/// A running contender process.
pub(crate) struct Process {
    /// How messages name it: `<program> contender <slot>`.
    name: String,
    /// Taken by the reader thread when the output ends (it reaps the process); killed on drop
    /// otherwise.
    child: Arc<Mutex<Option<Child>>>,
    /// `None` once closed.
    stdin: Option<ChildStdin>,
}

impl Process {
    /// Starts `command` (named `name` in messages) with its stderr in `stderr`; its outputs
    /// come on the receiver, ending with one [`Output::End`].
    pub(crate) fn spawn(
        name: String,
        mut command: OsCommand,
        stderr: PathBuf,
    ) -> Result<(Process, UnboundedReceiver<Output>), String> {
        let program = command.get_program().to_owned();
        let log =
            File::create(&stderr).map_err(|e| format!("{name}: {}: {e}", stderr.display()))?;
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log);
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = spawn_bound_to_this_process(command)
            .map_err(|e| format!("{name}: cannot start {}: {e}", program.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            kill_group(child);
            return Err(format!("{name}: no pipes to it"));
        };
        let child = Arc::new(Mutex::new(Some(child)));
        let (outputs, received) = unbounded();
        let reader = Reader {
            name: name.clone(),
            child: child.clone(),
            stderr,
        };
        std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || reader.run(BufReader::new(stdout), &outputs))
            .map_err(|e| format!("{name}: cannot start its reader thread: {e}"))?;
        let process = Process {
            name,
            child,
            stdin: Some(stdin),
        };
        Ok((process, received))
    }

    /// Its process, until its reader reaps it (`None` then): to signal it while locked.
    pub(crate) fn child(&self) -> Arc<Mutex<Option<Child>>> {
        self.child.clone()
    }

    /// Its name in messages.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Sends `command`, one line.
    pub(crate) fn send(&mut self, command: &Command) -> Result<(), String> {
        let line = serde_json::to_string(command).expect("a command is JSON");
        let stdin = (self.stdin.as_mut()).ok_or_else(|| format!("{}: stdin closed", self.name))?;
        (writeln!(stdin, "{line}").and_then(|()| stdin.flush()))
            .map_err(|e| format!("{}: cannot send {line}: {e}", self.name))
    }

    /// Closes its stdin: the contender closes its session and exits.
    pub(crate) fn close(&mut self) {
        self.stdin = None;
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(child) = self.child.lock().expect("contender process").take() {
            kill_group(child);
        }
    }
}

/// The thread that reads a contender's output.
struct Reader {
    name: String,
    child: Arc<Mutex<Option<Child>>>,
    stderr: PathBuf,
}

impl Reader {
    fn run(self, output: impl BufRead, outputs: &UnboundedSender<Output>) {
        let read = self.read(output, outputs);
        let end = read.and_then(|()| self.reap());
        let _ = outputs.unbounded_send(Output::End(end));
    }

    /// Passes reports on until the output ends (`Ok`) or a line is not a report (`Err`, the
    /// process killed).
    fn read(&self, output: impl BufRead, outputs: &UnboundedSender<Output>) -> Result<(), String> {
        for (number, line) in output.lines().enumerate() {
            let line = line.map_err(|e| self.failed(&format!("reading its output: {e}")))?;
            match parse(&line) {
                Ok((t, meaning)) => {
                    let _ = outputs.unbounded_send(Output::Report(t, meaning));
                }
                Err(why) => {
                    if let Some(child) = self.child.lock().expect("contender process").take() {
                        kill_group(child);
                    }
                    let line = format!("line {} of its output, {line:?}: {why}", number + 1);
                    return Err(self.failed(&line));
                }
            }
        }
        Ok(())
    }

    /// Reaps the process; `Err` unless it exited with status 0.
    fn reap(&self) -> Result<(), String> {
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
        format!("{}: {what}{}", self.name, stderr_tail(&self.stderr))
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
