//! What a run's faults reach of one contender in a client's place ([`Handle`]): its process,
//! stopped and continued as a Rust client's is (`pause`), and the session it reported
//! `ready` with, expired from the executor (`expire_session`).

use std::process::Child;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::watch;

use crate::expire::expire;
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
    /// Its process until its reader reaps it (`None` then).
    child: Arc<Mutex<Option<Child>>>,
    /// The pauses that stop it now.
    stops: Mutex<Stops>,
    /// Whether a pause stops it now: its driver sends nothing meanwhile.
    stopped: watch::Sender<bool>,
    /// The session it reported `ready` with.
    session: OnceLock<Session>,
    /// The servers' connect string (not a proxy's: a cut does not keep an expiry out).
    servers: String,
    /// The session timeout the contender asked for.
    timeout: Duration,
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
        Handle {
            name,
            child,
            stops: Mutex::default(),
            stopped: watch::Sender::new(false),
            session: OnceLock::new(),
            servers,
            timeout,
        }
    }

    /// Keeps the session the contender reported `ready` with.
    pub(crate) fn ready(&self, session: Session) -> Result<(), String> {
        (self.session.set(session)).map_err(|_| format!("{}: `ready` again", self.name))
    }

    /// Stops the contender's process group (`SIGSTOP`) unless a pause stops it already: its
    /// library runs nothing, its heartbeats included, and its driver sends it nothing, until
    /// every pause is given back to [`Handle::resume`]. A contender that has exited has
    /// nothing to stop.
    pub(crate) fn pause(&self) -> Result<Paused, String> {
        self.signal_on(Stops::pause, libc::SIGSTOP, "stop")?;
        Ok(Paused { process: 0 })
    }

    /// Ends `paused`: the contender is continued (`SIGCONT`) when no other pause stops it.
    pub(crate) fn resume(&self, paused: Paused) -> Result<(), String> {
        // A contender has one process: every pause is of it.
        let Paused { process: _ } = paused;
        self.signal_on(Stops::resume, libc::SIGCONT, "continue")
    }

    /// Counts a pause or its end (`count`) and, when it says so, sends `signal` to the
    /// contender's process group; then tells the driver whether it is stopped.
    fn signal_on(
        &self,
        count: fn(&mut Stops) -> bool,
        sent: libc::c_int,
        what: &str,
    ) -> Result<(), String> {
        // The child is locked while it is signalled: its reader reaps it only through it.
        let child = self.child.lock().expect("contender process");
        let mut stops = self.stops.lock().expect("contender stops");
        let signalled = match (count(&mut stops), child.as_ref()) {
            (true, Some(child)) => {
                let group = libc::pid_t::try_from(child.id()).map_or(0, |pid| -pid);
                signal(group, sent).map_err(|e| format!("cannot {what} {}: {e}", self.name))
            }
            _ => Ok(()),
        };
        self.stopped.send_replace(stops.stopped());
        signalled
    }

    /// Waits until no pause stops the contender.
    pub(crate) async fn running(&self) {
        let mut stopped = self.stopped.subscribe();
        // The sender is `self`'s, so it outlives this wait.
        let _ = stopped.wait_for(|stopped| !stopped).await;
    }

    /// Expires the contender's session now, as the executor expires a Rust client's: a
    /// second connection on it, closed. The contender is stopped meanwhile (as a Rust
    /// client's session thread is held): its library cannot take the session back from the
    /// second connection before the close.
    pub(crate) async fn expire_session(&self) -> Result<(), String> {
        let session = (self.session.get())
            .ok_or_else(|| format!("{}: no session to expire yet", self.name))?;
        let paused = self.pause()?;
        let expired = expire(&self.servers, session.id, &session.password, self.timeout).await;
        self.resume(paused)?;
        expired.map_err(|e| format!("{}: {e}", self.name))
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
