//! What a run's faults reach of one contender in a client's place ([`Handle`]): its process,
//! stopped and continued as a Rust client's is (`pause`), and the session it reported
//! `ready` with, expired from the executor (`expire_session`).

use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::channel::oneshot;
use tokio::sync::watch;

use crate::expire::expire;
use crate::local::kill_group;
use crate::pause::{Paused, Stops, signal};

/// A contender's session: its id and password.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Session {
    /// The session's id.
    pub(crate) id: i64,
    /// The session's password.
    pub(crate) password: Vec<u8>,
}

impl Session {
    /// The session `id` whose password is `hex`, as a `ready` report gives them; `Err` says
    /// what was expected.
    pub(crate) fn of_ready(id: i64, hex: &str) -> Result<Session, String> {
        let is_hex = hex.len().is_multiple_of(2) && hex.bytes().all(|b| b.is_ascii_hexdigit());
        let password = is_hex.then(|| {
            (0..hex.len())
                .step_by(2)
                .filter_map(|at| u8::from_str_radix(&hex[at..at + 2], 16).ok())
                .collect::<Vec<u8>>()
        });
        let password = password.ok_or_else(|| {
            format!(
                "`ready`: expected the session's password in hex (two digits a byte), found {hex:?}"
            )
        })?;
        Ok(Session { id, password })
    }
}

/// One contender's process and session, as the run's faults reach them.
#[derive(Debug)]
pub(crate) struct Handle {
    /// How messages name the contender.
    name: String,
    /// Its process, which a crash replaces.
    life: Mutex<Life>,
    /// Whether a pause stops it now: its driver sends nothing meanwhile.
    stopped: watch::Sender<bool>,
    /// How many restarts the injector ordered: its driver starts the next process then.
    ordered: watch::Sender<u32>,
    /// The session it reported last.
    session: Mutex<Option<Session>>,
    /// The servers' connect string (not a proxy's: a cut does not keep an expiry out).
    servers: String,
    /// The session timeout the contender asked for.
    timeout: Duration,
}

/// The contender's process now, and where a crash of it stands.
#[derive(Debug)]
struct Life {
    /// Its process until its reader reaps it (`None` then).
    child: Arc<Mutex<Option<Child>>>,
    /// Its number among the contender's processes (a crash starts the next).
    process: u32,
    /// The pauses that stop it now.
    stops: Stops,
    /// Whether the injector killed it (a crash): the end of its output is no failure.
    killed: bool,
    /// Whether its workload is done: a crash then starts no other process.
    done: bool,
    /// Told once its driver has read every report of the killed process.
    reports_read: Option<oneshot::Sender<()>>,
    /// Told once its driver has started the next process after a crash.
    restarted: Option<oneshot::Sender<Result<(), String>>>,
}

impl Handle {
    /// The handle of contender `name`, whose process is `child`, on `servers` with sessions
    /// of `timeout`.
    pub(crate) fn new(
        name: String,
        child: Arc<Mutex<Option<Child>>>,
        servers: String,
        timeout: Duration,
    ) -> Handle {
        let life = Life {
            child,
            process: 0,
            stops: Stops::default(),
            killed: false,
            done: false,
            reports_read: None,
            restarted: None,
        };
        Handle {
            name,
            life: Mutex::new(life),
            stopped: watch::Sender::new(false),
            ordered: watch::Sender::new(0),
            session: Mutex::default(),
            servers,
            timeout,
        }
    }

    fn life(&self) -> std::sync::MutexGuard<'_, Life> {
        self.life.lock().expect("contender life")
    }

    /// Keeps the session the contender reported last (`ready`, or `session` when its library
    /// has a new one; a restarted contender's `ready`).
    pub(crate) fn ready(&self, session: Session) {
        *self.session.lock().expect("contender session") = Some(session);
    }

    /// Stops the contender's process group (`SIGSTOP`) unless a pause stops it already: its
    /// library runs nothing, its heartbeats included, and its driver sends it nothing, until
    /// every pause is given back to [`Handle::resume`]. A contender that has exited has
    /// nothing to stop.
    pub(crate) fn pause(&self) -> Result<Paused, String> {
        let mut life = self.life();
        let process = life.process;
        let first = life.stops.pause();
        self.signalled(&life, first, libc::SIGSTOP, "stop")?;
        Ok(Paused { process })
    }

    /// Ends `paused`: the contender is continued (`SIGCONT`) when no other pause stops it. A
    /// pause of a process crashed since continues nothing.
    pub(crate) fn resume(&self, paused: Paused) -> Result<(), String> {
        let mut life = self.life();
        if life.process != paused.process {
            return Ok(());
        }
        let last = life.stops.resume();
        self.signalled(&life, last, libc::SIGCONT, "continue")
    }

    /// Sends `sent` to the contender's process group when `send`; then tells the driver
    /// whether it is stopped.
    fn signalled(
        &self,
        life: &Life,
        send: bool,
        sent: libc::c_int,
        what: &str,
    ) -> Result<(), String> {
        // The child is locked while it is signalled: its reader reaps it only through it.
        let child = life.child.lock().expect("contender process");
        let signalled = match (send, child.as_ref()) {
            (true, Some(child)) => {
                let group = libc::pid_t::try_from(child.id()).map_or(0, |pid| -pid);
                signal(group, sent).map_err(|e| format!("cannot {what} {}: {e}", self.name))
            }
            _ => Ok(()),
        };
        self.stopped.send_replace(life.stops.stopped());
        signalled
    }

    /// Waits until no pause stops the contender.
    pub(crate) async fn running(&self) {
        let mut stopped = self.stopped.subscribe();
        // The sender is `self`'s, so it outlives this wait.
        let _ = stopped.wait_for(|stopped| !stopped).await;
    }

    /// Expires the contender's latest session now, as the executor expires a Rust client's: a
    /// second connection on it, closed. The contender is stopped meanwhile (as a Rust
    /// client's session thread is held): its library cannot take the session back from the
    /// second connection before the close.
    pub(crate) async fn expire_session(&self) -> Result<(), String> {
        let session = self.session.lock().expect("contender session").clone();
        let session = session.ok_or_else(|| format!("{}: no session to expire yet", self.name))?;
        let paused = self.pause()?;
        let expired = expire(&self.servers, session.id, &session.password, self.timeout).await;
        self.resume(paused)?;
        expired.map_err(|e| format!("{}: {e}", self.name))
    }

    /// Crashes the contender (`SIGKILL` to its process group) and returns once its driver has
    /// read every report it made: nothing it did can then come later in the trace. Its
    /// session stays on the server until the server expires it. A contender done with its
    /// workload has nothing left to crash.
    pub(crate) async fn kill(&self) -> Result<(), String> {
        let reports_read = {
            let mut life = self.life();
            if life.done {
                return Ok(());
            }
            life.killed = true;
            // A stopped process dies of SIGKILL too; the next one is not stopped.
            life.stops = Stops::default();
            self.stopped.send_replace(false);
            if let Some(child) = life.child.lock().expect("contender process").take() {
                kill_group(child);
            }
            let (read, reports_read) = oneshot::channel();
            life.reports_read = Some(read);
            reports_read
        };
        (reports_read.await).map_err(|_| format!("{}: its driver stopped", self.name))
    }

    /// Has the driver start a new process for the contender in place of the one
    /// [`Handle::kill`] killed (a new hello, a new session) and returns once it is started;
    /// the driver carries on with the cycles the dead one had not begun. A contender done
    /// with its workload is not restarted.
    pub(crate) async fn restart(&self) -> Result<(), String> {
        let restarted = {
            let mut life = self.life();
            if life.done {
                return Ok(());
            }
            let (started, restarted) = oneshot::channel();
            life.restarted = Some(started);
            restarted
        };
        self.ordered.send_modify(|ordered| *ordered += 1);
        (restarted.await).unwrap_or_else(|_| Err(format!("{}: its driver stopped", self.name)))
    }

    /// Whether the injector killed the contender's process (the driver restarts it then).
    pub(crate) fn killed(&self) -> bool {
        self.life().killed
    }

    /// Tells the injector that every report of the killed process has been read.
    pub(crate) fn reports_read(&self) {
        if let Some(read) = self.life().reports_read.take() {
            let _ = read.send(());
        }
    }

    /// Waits for the injector's order to start restart number `restarts`.
    pub(crate) async fn restart_ordered(&self, restarts: u32) {
        let mut ordered = self.ordered.subscribe();
        // The sender is `self`'s, so it outlives this wait.
        let _ = ordered.wait_for(|ordered| *ordered >= restarts).await;
    }

    /// The new process `child` runs in the contender's place (`Err`: it could not start),
    /// told to the injector.
    pub(crate) fn restarted(&self, child: Result<Arc<Mutex<Option<Child>>>, String>) {
        let mut life = self.life();
        // The kill is dealt with, whether the next process started or not.
        life.killed = false;
        let started = child.map(|child| {
            life.child = child;
            life.process += 1;
        });
        if let Some(restarted) = life.restarted.take() {
            let _ = restarted.send(started);
        }
    }

    /// Marks the workload done: a crash from now on starts no other process.
    pub(crate) fn done(&self) {
        self.life().done = true;
    }

    /// Whether the workload is done.
    pub(crate) fn is_done(&self) -> bool {
        self.life().done
    }

    /// The id of the session the contender reported last, for messages.
    pub(crate) fn session_id(&self) -> Option<i64> {
        let session = self.session.lock().expect("contender session");
        session.as_ref().map(|session| session.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ready_password_is_hex_two_digits_a_byte() {
        let session = Session::of_ready(7, "00ff1A").unwrap();
        assert_eq!(session.password, [0x00, 0xff, 0x1a]);
        for bad in ["0", "0g", "zz00"] {
            let why = Session::of_ready(7, bad).unwrap_err();
            assert!(why.contains("in hex") && why.contains(bad), "{why}");
        }
    }
}
