//! The run's fenced resource as a service of the parent process: [`ResourceServer`] listens on
//! a Unix socket in a temporary directory and applies every client process's accesses to one
//! [`Recorded`] resource (checking tokens as the simulator's does, and recording each access
//! on the run's recorder while it holds the resource, so the trace has them in the order they
//! were applied); [`RemoteResource`] is a client process's end of it.

use std::io::{BufReader, ErrorKind};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use coordination::fencing::Token;
use coordination::ids::{ClientSlot, Owner};
use runtime::resource::{Recorded, SharedResource};

use crate::clock::{RealClock, Recorder};
use crate::local::temp_dir;
use crate::wire::{ResourceReply, ResourceRequest, receive, send};

/// The fenced resource, served to the run's client processes until dropped.
pub(crate) struct ResourceServer {
    dir: PathBuf,
    socket: PathBuf,
    stopping: Arc<AtomicBool>,
    resource: Arc<Recorded<RealClock>>,
}

impl ResourceServer {
    /// Serves a counter at 0 (fenced when `fenced`) recording on `recorder`.
    pub fn start(fenced: bool, recorder: Recorder) -> Result<ResourceServer, String> {
        let dir = temp_dir("splitbrain-resource").map_err(|e| e.to_string())?;
        let socket = dir.join("resource.sock");
        let listener = UnixListener::bind(&socket)
            .map_err(|e| format!("{}: cannot listen: {e}", socket.display()))?;
        let resource = Arc::new(Recorded::new(fenced, recorder));
        let stopping = Arc::new(AtomicBool::new(false));
        let (accepting, served) = (stopping.clone(), resource.clone());
        std::thread::Builder::new()
            .name("resource".into())
            .spawn(move || accept(&listener, &served, &accepting))
            .map_err(|e| format!("cannot start the resource thread: {e}"))?;
        Ok(ResourceServer {
            dir,
            socket,
            stopping,
            resource,
        })
    }

    /// The socket clients connect to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The resource itself, for the contenders (their reads and writes are made in the parent).
    pub fn resource(&self) -> Arc<Recorded<RealClock>> {
        self.resource.clone()
    }
}

impl Drop for ResourceServer {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees `stopping`.
        let _ = UnixStream::connect(&self.socket);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Serves each connection on a thread of its own until the server stops.
fn accept(listener: &UnixListener, resource: &Arc<Recorded<RealClock>>, stopping: &AtomicBool) {
    for stream in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let resource = resource.clone();
        // A connection that cannot get a thread is dropped: its client process then fails
        // with a message saying the resource is unreachable.
        let _ = std::thread::Builder::new()
            .name("resource-client".into())
            .spawn(move || serve(stream, &*resource));
    }
}

/// Answers one client process's requests in order until it hangs up.
fn serve(stream: UnixStream, resource: &dyn SharedResource) {
    let Ok(mut replies) = stream.try_clone() else {
        return;
    };
    let mut requests = BufReader::new(stream);
    while let Ok(Some(request)) = receive::<ResourceRequest>(&mut requests, "resource request") {
        let reply = match request.write {
            None => {
                let value = resource.read(request.client, request.owner, request.token);
                ResourceReply {
                    value,
                    accepted: value.is_some(),
                }
            }
            Some(value) => ResourceReply {
                value: None,
                accepted: resource.write(request.client, request.owner, request.token, value),
            },
        };
        if send(&mut replies, &reply).is_err() {
            return;
        }
    }
}

/// A client process's connection to the run's [`ResourceServer`]. The parent records the
/// accesses; an access that cannot be made (the parent is gone) ends the process with a
/// message on stderr, which the parent reports.
pub(crate) struct RemoteResource {
    connection: Mutex<(BufReader<UnixStream>, UnixStream)>,
}

impl RemoteResource {
    /// Connects to the resource at `socket`.
    pub fn connect(socket: &Path) -> Result<RemoteResource, String> {
        let stream = UnixStream::connect(socket).map_err(|e| {
            format!(
                "{}: cannot reach the fenced resource: {e}",
                socket.display()
            )
        })?;
        let writer = stream
            .try_clone()
            .map_err(|e| format!("{}: {e}", socket.display()))?;
        Ok(RemoteResource {
            connection: Mutex::new((BufReader::new(stream), writer)),
        })
    }

    fn access(&self, request: ResourceRequest) -> ResourceReply {
        let mut connection = self.connection.lock().expect("resource connection");
        let (replies, requests) = &mut *connection;
        let reply = send(requests, &request)
            .map_err(|e| e.to_string())
            .and_then(|()| receive::<ResourceReply>(replies, "the fenced resource"));
        match reply {
            Ok(Some(reply)) => reply,
            Ok(None) => gone(ErrorKind::UnexpectedEof.to_string()),
            Err(why) => gone(why),
        }
    }
}

/// Ends the client process: the resource (the parent) is gone.
fn gone(why: String) -> ! {
    eprintln!("the fenced resource is unreachable: {why}");
    std::process::exit(3)
}

impl SharedResource for RemoteResource {
    fn read(&self, client: ClientSlot, owner: Owner, token: Token) -> Option<u64> {
        let request = ResourceRequest {
            client,
            owner,
            token,
            write: None,
        };
        self.access(request).value
    }

    fn write(&self, client: ClientSlot, owner: Owner, token: Token, value: u64) -> bool {
        let request = ResourceRequest {
            client,
            owner,
            token,
            write: Some(value),
        };
        self.access(request).accepted
    }
}
