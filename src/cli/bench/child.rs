//! Runs a `splitbrain` command in a child process and measures it: wall time and peak
//! resident memory (the kernel's `ru_maxrss` of that child alone, from `wait4`).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli::Failure;

/// What one child run gave.
#[derive(Debug)]
pub struct Measured {
    /// Everything the child printed to stdout.
    pub stdout: String,
    /// From spawn to exit.
    pub wall: Duration,
    /// Peak resident set size of the child, in bytes.
    pub peak_rss: u64,
    /// The child's exit code (`None` when a signal ended it).
    pub code: Option<i32>,
}

/// Runs this executable with `args` (its stderr passed through, so a child's own errors are
/// seen), waits for it and measures it.
pub fn run_self(args: &[String]) -> Result<Measured, Failure> {
    let exe = crate::cli::this_executable()
        .map_err(|e| Failure(format!("bench: cannot find this executable: {e}")))?;
    let started = Instant::now();
    let mut child = Command::new(&exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| Failure(format!("bench: cannot start {}: {e}", exe.display())))?;
    let mut stdout = String::new();
    if let Some(mut pipe) = child.stdout.take() {
        pipe.read_to_string(&mut stdout).map_err(|e| {
            Failure(format!(
                "bench: reading `splitbrain {}`: {e}",
                args.join(" ")
            ))
        })?;
    }
    let (code, peak_rss) = wait_with_usage(child.id()).map_err(|e| {
        Failure(format!(
            "bench: waiting for `splitbrain {}`: {e}",
            args.join(" ")
        ))
    })?;
    Ok(Measured {
        stdout,
        wall: started.elapsed(),
        peak_rss,
        code,
    })
}

/// Reaps child `pid` with `wait4`, returning its exit code and its peak RSS in bytes.
/// (`std::process::Child::wait` does not report resource usage.)
fn wait_with_usage(pid: u32) -> std::io::Result<(Option<i32>, u64)> {
    let pid = libc::pid_t::try_from(pid).map_err(std::io::Error::other)?;
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain old data that wait4 fills in; zeroed is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own unreaped child; both pointers are valid for the call.
        let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if reaped == pid {
            break;
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    // Linux reports ru_maxrss in kilobytes.
    let peak_rss = u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024;
    Ok((code, peak_rss))
}
