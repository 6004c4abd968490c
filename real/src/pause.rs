//! A `pause` fault on one process, whoever's it is (a Rust client's, a contender's): stopped
//! (`SIGSTOP`) at the first pause, continued (`SIGCONT`) when the last of the pauses that
//! overlap ends.

/// A pause of a client's process, to give back when it ends: which process of the client it
/// stopped (a crash starts the next).
#[derive(Debug)]
#[must_use = "a pause lasts until it is given back"]
pub(crate) struct Paused {
    /// The process's number among the client's processes (its `restarts`).
    pub(crate) process: u32,
}

/// How many pauses stop one process now.
#[derive(Debug, Default)]
pub(crate) struct Stops {
    pauses: u32,
}

impl Stops {
    /// One more pause: whether it is the first (the process is to be stopped now).
    pub(crate) fn pause(&mut self) -> bool {
        self.pauses += 1;
        self.pauses == 1
    }

    /// One pause less: whether it was the last (the process is to be continued now).
    pub(crate) fn resume(&mut self) -> bool {
        self.pauses = self.pauses.saturating_sub(1);
        self.pauses == 0
    }

    /// Whether a pause stops the process now.
    pub(crate) fn stopped(&self) -> bool {
        self.pauses > 0
    }
}

/// kill(2): `signal` (`SIGSTOP`, `SIGCONT`) to `pid`, a process or, negative, a process
/// group. The caller holds the child it signals unreaped, so the pid is still its child's.
pub(crate) fn signal(pid: libc::pid_t, signal: libc::c_int) -> std::io::Result<()> {
    // SAFETY: kill(2) on the PID (or process group) of a child the caller has not reaped.
    if unsafe { libc::kill(pid, signal) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
