//! One benchmark contender process, from the harness's side: started in a process group of
//! its own and bound to this process's life, its stdout read line by line by a thread, its
//! CPU time read from its process CPU clock, and SIGKILLed when dropped if it has not ended by
//! itself after stdin's end.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::lines::{Line, parse};
use crate::local::kill_group;
use crate::processes::{Piped, last_words, spawn_piped};

/// How long a contender may take to close its session and exit once stdin has ended.
const EXIT_WITHIN: Duration = Duration::from_secs(5);

/// A running contender.
pub(crate) struct Running {
    name: String,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Option<JoinHandle<String>>,
}

impl Running {
    /// Starts `command` as contender `name`.
    pub(crate) fn spawn(command: Command, name: String) -> Result<Running, String> {
        let failed = |e: std::io::Error| format!("{name}: cannot start: {e}");
        let Piped {
            child,
            stdin,
            stdout,
            stderr,
        } = spawn_piped(command).map_err(failed)?;
        let (sender, lines) = channel();
        let reading = std::thread::Builder::new()
            .name(format!("{name}-stdout"))
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { return };
                    if sender.send(line).is_err() {
                        return;
                    }
                }
            });
        let mut running = Running {
            name: name.clone(),
            child: Some(child),
            stdin: Some(stdin),
            lines,
            stderr: None,
        };
        reading.map_err(failed)?;
        running.stderr = Some(last_words(stderr, format!("{name}-stderr")).map_err(failed)?);
        Ok(running)
    }

    /// Writes `line` to the contender's stdin.
    pub(crate) fn tell(&mut self, line: &str) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        (writeln!(stdin, "{line}").and_then(|()| stdin.flush()))
            .map_err(|e| format!("{}: cannot write to its stdin: {e}", self.name))
    }

    /// The contender's next line, read by `deadline`; an error saying how it ended (with its
    /// last words on stderr) when its output ends first or is not a line of the protocol.
    pub(crate) fn next_line(&mut self, deadline: Instant) -> Result<(Duration, Line), String> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(text) => parse(&text).map_err(|e| format!("{}: {e}", self.name)),
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "{}: no word from it within the time allowed",
                self.name
            )),
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.as_mut().and_then(|child| child.wait().ok());
                let words = (self.stderr.take()).and_then(|thread| thread.join().ok());
                Err(format!(
                    "{}: its output ended ({}): {}",
                    self.name,
                    status.map_or("not reaped".into(), |s| s.to_string()),
                    words.as_deref().unwrap_or("").trim()
                ))
            }
        }
    }

    /// The CPU time the contender's process has used so far, user and system, all its
    /// threads (its process CPU clock, `clock_getcpuclockid`: nanoseconds, where
    /// `/proc/<pid>/stat` counts 10 ms ticks).
    pub(crate) fn cpu_time(&self) -> Result<Duration, String> {
        let pid = (self.child.as_ref())
            .and_then(|child| libc::pid_t::try_from(child.id()).ok())
            .ok_or_else(|| format!("{}: no process", self.name))?;
        let mut clock: libc::clockid_t = 0;
        // SAFETY: `clock` is a valid place for the clock id; `pid` is our unreaped child.
        let found = unsafe { libc::clock_getcpuclockid(pid, &mut clock) };
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `now` is a valid timespec to write.
        if found != 0 || unsafe { libc::clock_gettime(clock, &mut now) } != 0 {
            return Err(format!(
                "{}: cannot read its CPU clock: {}",
                self.name,
                std::io::Error::last_os_error()
            ));
        }
        let secs = u64::try_from(now.tv_sec).unwrap_or(0);
        Ok(Duration::from_secs(secs)
            + Duration::from_nanos(u64::try_from(now.tv_nsec).unwrap_or(0)))
    }
}

impl Drop for Running {
    /// Ends stdin (the contender then closes its session and exits), waits a little for
    /// that, and SIGKILLs its process group otherwise.
    fn drop(&mut self) {
        self.stdin = None;
        let Some(mut child) = self.child.take() else {
            return;
        };
        let deadline = Instant::now() + EXIT_WITHIN;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        kill_group(child);
    }
}
