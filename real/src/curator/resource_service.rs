//! The run's fenced resource served to the Curator contenders' Java processes: the one
//! resource the Rust client processes reach through [`crate::resource`], on a TCP port of
//! 127.0.0.1, one request a line (`read <slot> <token>` → `ok <value>` | `stale`;
//! `write <slot> <token> <value>` → `ok` | `stale`). The resource records each access on
//! the client `slot` names while it holds it ([`SharedResource`]), so accesses of both
//! languages are in the trace in the order the resource took them.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use coordination::fencing::Token;
use coordination::ids::ClientSlot;
use runtime::resource::SharedResource;
use runtime::workload::OWNER;

use crate::local::{HarnessError, io_error};

/// The resource, served until dropped.
pub(crate) struct ResourceService {
    port: u16,
    stopping: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl ResourceService {
    /// Serves `resource` on a free port of 127.0.0.1.
    pub(crate) fn start(
        resource: Arc<dyn SharedResource>,
    ) -> Result<ResourceService, HarnessError> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .map_err(|e| io_error("binding the resource service".into(), e))?;
        let port = (listener.local_addr())
            .map_err(|e| io_error("reading the resource service's port".into(), e))?
            .port();
        let stopping = Arc::new(AtomicBool::new(false));
        let stop = stopping.clone();
        let acceptor = std::thread::Builder::new()
            .name("resource-service".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(stream) = stream else { continue };
                    let resource = resource.clone();
                    // A connection's thread ends when its client closes it.
                    let _ = std::thread::Builder::new()
                        .name("resource-connection".into())
                        .spawn(move || serve(stream, resource.as_ref()));
                }
            })
            .map_err(|e| io_error("starting the resource service".into(), e))?;
        Ok(ResourceService {
            port,
            stopping,
            acceptor: Some(acceptor),
        })
    }

    /// The port it serves on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for ResourceService {
    /// Stops accepting: the flag, then a connection that wakes the acceptor to read it.
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// Answers the requests of one connection until it closes (or sends a malformed line).
fn serve(stream: TcpStream, resource: &dyn SharedResource) {
    let Ok(mut replies) = stream.try_clone() else {
        return;
    };
    let _ = stream.set_nodelay(true);
    for line in BufReader::new(stream).lines() {
        let Ok(line) = line else { return };
        let Some(answer) = answer(&line, resource) else {
            return;
        };
        if writeln!(replies, "{answer}").is_err() {
            return;
        }
    }
}

/// Carries out one request (the resource records it); the answer, or `None` for a malformed
/// request.
fn answer(line: &str, resource: &dyn SharedResource) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let number = |i: usize| words.get(i).and_then(|w| w.parse::<u64>().ok());
    let slot = ClientSlot(u16::try_from(number(1)?).ok()?);
    let token = Token(number(2)?);
    match (words.first(), words.len()) {
        (Some(&"read"), 3) => Some(
            resource
                .read(slot, OWNER, token)
                .map_or_else(|| "stale".into(), |value| format!("ok {value}")),
        ),
        (Some(&"write"), 4) => {
            let accepted = resource.write(slot, OWNER, token, number(3)?);
            Some(if accepted { "ok" } else { "stale" }.into())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use runtime::resource::Recorded;
    use trace::EventKind;

    use super::*;
    use crate::clock::{RealClock, Recorder};

    #[test]
    fn accesses_are_fenced_recorded_on_the_named_client_and_malformed_lines_refused() {
        let recorder = Recorder::new(RealClock::start());
        let resource = Recorded::new(true, recorder.clone());
        assert_eq!(answer("read 4 7", &resource).unwrap(), "ok 0");
        assert_eq!(answer("write 4 7 1", &resource).unwrap(), "ok");
        assert_eq!(answer("write 3 6 5", &resource).unwrap(), "stale");
        assert_eq!(answer("read 5 8", &resource).unwrap(), "ok 1");
        for bad in ["read 4", "write 4 7", "erase 4 7", "read x 7", "read 4 7 9"] {
            assert_eq!(answer(bad, &resource), None, "{bad}");
        }
        let events = recorder.take_events();
        let clients: Vec<u16> = events.iter().map(|e| e.client.unwrap().0).collect();
        assert_eq!(clients, [4, 4, 3, 5]);
        assert!(matches!(
            events[2].kind,
            EventKind::ResourceWrite {
                accepted: false,
                ..
            }
        ));
    }
}
