//! The server side's one piece of evidence a real trace gets: when a local server expired a
//! session, read off its log (the harness has each line start with its epoch milliseconds,
//! see [`crate::local`]) and recorded as the simulator's server records it
//! (`server_session`, `expired`), so that `live_session_exclusion` can tell a holder whose
//! session the server has ended. ZooKeeper logs `Expiring session 0x…` before it closes the
//! session and deletes its ephemerals; the event is stamped at the end of the logged
//! millisecond (never before the expiry: nothing is excused early). Servers the user runs
//! (`--connect`) have no log here, and their traces no such events.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use coordination::zk::SessionId;
use trace::{Event, EventKind, ServerSession};

use crate::clock::{RealClock, Recorder};

/// How often the logs are read.
const POLL: Duration = Duration::from_millis(20);

/// Records the session expiries the servers log, until dropped (a last read then).
pub(crate) struct ExpiryLog {
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
}

impl ExpiryLog {
    /// Follows `logs` from their current ends, recording on `recorder` (on `clock`).
    pub fn follow(logs: Vec<PathBuf>, clock: RealClock, recorder: Recorder) -> ExpiryLog {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let origin = clock.origin_epoch_ns();
        let mut logs: Vec<(PathBuf, u64, String)> = logs
            .into_iter()
            .map(|path| {
                let end = std::fs::metadata(&path).map_or(0, |m| m.len());
                (path, end, String::new())
            })
            .collect();
        let follow = move || {
            loop {
                let last = stopping.load(Ordering::SeqCst);
                for (path, offset, partial) in &mut logs {
                    for line in read_lines(path, offset, partial) {
                        if let Some(event) = expiry(&line, origin) {
                            recorder.push(event);
                        }
                    }
                }
                if last {
                    return;
                }
                std::thread::sleep(POLL);
            }
        };
        // Without the thread the trace has no expiries: the checker then counts the sessions
        // alive, which excuses nothing.
        let reader = std::thread::Builder::new()
            .name("server-log".into())
            .spawn(follow)
            .ok();
        ExpiryLog { stop, reader }
    }
}

impl Drop for ExpiryLog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// The complete lines added to `path` since `offset` (a line still being written waits in
/// `partial`).
fn read_lines(path: &PathBuf, offset: &mut u64, partial: &mut String) -> Vec<String> {
    let mut text = Vec::new();
    let read = File::open(path).and_then(|mut file| {
        file.seek(SeekFrom::Start(*offset))?;
        file.read_to_end(&mut text)
    });
    let Ok(read) = read else {
        return Vec::new();
    };
    *offset += read as u64;
    partial.push_str(&String::from_utf8_lossy(&text));
    let Some(end) = partial.rfind('\n') else {
        return Vec::new();
    };
    let rest = partial.split_off(end + 1);
    let complete = std::mem::replace(partial, rest);
    complete.lines().map(str::to_owned).collect()
}

/// The expiry a log line reports (`<epoch ms> INFO Expiring session 0x<id>, …`), stamped at
/// the end of its millisecond on the run's clock (time zero at `origin` epoch ns).
fn expiry(line: &str, origin: u64) -> Option<Event> {
    let (millis, message) = line.split_once(' ')?;
    let millis: u64 = millis.parse().ok()?;
    let (_, id) = message.split_once("Expiring session 0x")?;
    let id = id.split(|c: char| !c.is_ascii_hexdigit()).next()?;
    let session = SessionId(u64::from_str_radix(id, 16).ok()?);
    let t = (millis + 1)
        .saturating_mul(1_000_000)
        .saturating_sub(origin);
    Some(Event {
        t,
        client: None,
        kind: EventKind::ServerSession {
            session,
            change: ServerSession::Expired,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expiry_line_is_stamped_at_the_end_of_its_millisecond() {
        let line = "1764048743123 INFO Expiring session 0x100014da3250001, timeout of 1000ms \
                    exceeded";
        let event = expiry(line, 1_764_048_743_000_000_000).unwrap();
        assert_eq!(event.t, 124_000_000);
        assert_eq!(
            event.kind,
            EventKind::ServerSession {
                session: SessionId(0x0100_014d_a325_0001),
                change: ServerSession::Expired
            }
        );
        assert!(expiry("1764048743123 INFO Invalid session 0x1 for client", 0).is_none());
    }
}
