//! A `pause_server` fault on a local ZooKeeper's servers: each server's running JVM (its
//! process group) stopped (`SIGSTOP`) at the first pause and continued (`SIGCONT`) when the
//! last of the pauses that overlap ends, as a client's pauses are (`real::pause`). The table
//! lives outside the target's lock, which a restart of another server holds while that server
//! is down, so a pause starts and ends on time during one. A server killed meanwhile (a
//! `crash_server`, the end of the run) dies stopped or not, and the process started in its
//! place is not stopped: the pause's end continues nothing.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::pause::{Paused, Stops, signal};

/// The running process of each server of a local ZooKeeper, by index, and the pauses that
/// stop it; cheap to clone.
#[derive(Clone, Debug, Default)]
pub(crate) struct ServerStops(Arc<Mutex<Vec<Running>>>);

/// One server's process now.
#[derive(Debug, Default)]
struct Running {
    /// Its process group (the JVM leads it), while it runs.
    pgid: Option<libc::pid_t>,
    /// How many processes the server has had: names the one a pause stopped.
    starts: u32,
    /// The pauses that stop the process now.
    stops: Stops,
}

impl ServerStops {
    /// A table for `count` servers, none running yet.
    pub fn new(count: usize) -> ServerStops {
        ServerStops(Arc::new(Mutex::new(
            (0..count).map(|_| Running::default()).collect(),
        )))
    }

    /// Server `server` runs as process `pid` (the leader of its process group), stopped by
    /// no pause.
    pub fn started(&self, server: usize, pid: u32) {
        let mut servers = self.lock();
        let running = &mut servers[server];
        running.pgid = libc::pid_t::try_from(pid).ok();
        running.starts += 1;
        running.stops = Stops::default();
    }

    /// Server `server`'s process is about to be killed: no pause signals it from now on (it
    /// is reaped after this returns, so its pid is never reused while the table names it).
    pub fn killed(&self, server: usize) {
        let mut servers = self.lock();
        let running = &mut servers[server];
        running.pgid = None;
        running.stops = Stops::default();
    }

    /// Stops server `server`'s process unless a pause stops it already; a server that does
    /// not run (killed, not started again yet) is stopped by nothing.
    pub fn pause(&self, server: usize) -> Result<Paused, String> {
        let mut servers = self.lock();
        let running = &mut servers[server];
        if running.stops.pause()
            && let Some(pgid) = running.pgid
        {
            sent(signal(-pgid, libc::SIGSTOP), server, "stop")?;
        }
        Ok(Paused {
            process: running.starts,
        })
    }

    /// Ends `paused`: server `server`'s process is continued when no other pause stops it,
    /// unless the process it stopped was killed since.
    pub fn resume(&self, server: usize, paused: Paused) -> Result<(), String> {
        let mut servers = self.lock();
        let running = &mut servers[server];
        if running.starts != paused.process || !running.stops.resume() {
            return Ok(());
        }
        match running.pgid {
            Some(pgid) => sent(signal(-pgid, libc::SIGCONT), server, "continue"),
            None => Ok(()),
        }
    }

    /// Continues every stopped server, whatever pauses stop it: a run that ends during a
    /// pause leaves no JVM stopped (its tree is read, its servers stopped, after this).
    pub fn resume_all(&self) {
        for running in self.lock().iter_mut() {
            if running.stops.stopped()
                && let Some(pgid) = running.pgid
            {
                let _ = signal(-pgid, libc::SIGCONT);
            }
            running.stops = Stops::default();
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Running>> {
        self.0.lock().expect("server stops")
    }
}

/// What a signal to server `server`'s process group did, as one line.
fn sent(result: std::io::Result<()>, server: usize, what: &str) -> Result<(), String> {
    result.map_err(|error| format!("cannot {what} zookeeper server {server}'s process: {error}"))
}
