//! An in-memory, fault-free [`Coordination`] over [`Tree`], for unit tests of recipes
//! through the async driver. It never disconnects or expires; requests apply at once.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::channel::mpsc::{UnboundedSender, unbounded};

use crate::ids::OpId;
use crate::session::{Connector, Coordination, EventInbox, RawEvent, RawState};
use crate::zk::tree::{Fired, Tree};
use crate::zk::{Request, SessionId};

/// The session timeout the in-memory server negotiates.
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(10);

/// How the in-memory server sleeps: the test's executor supplies its clock.
pub type Sleeper = Arc<dyn Fn(Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

#[derive(Default)]
struct Server {
    tree: Tree,
    last_session: u64,
    sessions: BTreeMap<SessionId, UnboundedSender<RawEvent>>,
}

impl Server {
    fn deliver(&self, fired: Vec<Fired>) {
        for Fired { session, event } in fired {
            self.send(session, RawEvent::Watch { event });
        }
    }

    fn send(&self, session: SessionId, event: RawEvent) {
        if let Some(events) = self.sessions.get(&session) {
            let _ = events.unbounded_send(event);
        }
    }
}

/// The in-memory server; connect to it as a [`Connector`]. Cheap to clone.
#[derive(Clone)]
pub struct MemoryServer {
    server: Arc<Mutex<Server>>,
    sleeper: Sleeper,
}

impl MemoryServer {
    /// An empty server whose sessions sleep with `sleeper`.
    pub fn new(sleeper: Sleeper) -> MemoryServer {
        MemoryServer {
            server: Arc::default(),
            sleeper,
        }
    }

    /// A copy of the data tree.
    pub fn tree(&self) -> Tree {
        self.server.lock().expect("server lock").tree.clone()
    }
}

impl Connector for MemoryServer {
    type Session = MemorySession;

    async fn connect(&self) -> MemorySession {
        let (events_tx, events_rx) = unbounded();
        let mut server = self.server.lock().expect("server lock");
        server.last_session += 1;
        let session = SessionId(server.last_session);
        let connected = RawEvent::State {
            state: RawState::Connected {
                session,
                timeout: SESSION_TIMEOUT,
            },
        };
        let _ = events_tx.unbounded_send(connected);
        server.sessions.insert(session, events_tx);
        MemorySession {
            session,
            server: self.server.clone(),
            events: EventInbox::new(events_rx),
            sleeper: self.sleeper.clone(),
        }
    }
}

/// One session on a [`MemoryServer`].
pub struct MemorySession {
    session: SessionId,
    server: Arc<Mutex<Server>>,
    events: EventInbox,
    sleeper: Sleeper,
}

impl Coordination for MemorySession {
    async fn submit(&self, op: OpId, request: Request) {
        let mut server = self.server.lock().expect("server lock");
        if !server.sessions.contains_key(&self.session) {
            return;
        }
        let applied = server.tree.apply(self.session, &request);
        server.deliver(applied.fired);
        let reply = RawEvent::Reply {
            op,
            result: applied.result,
        };
        server.send(self.session, reply);
    }

    async fn next_event(&self) -> Option<RawEvent> {
        self.events.next().await
    }

    async fn close(&self) {
        let mut server = self.server.lock().expect("server lock");
        if server.sessions.remove(&self.session).is_some() {
            let fired = server.tree.end_session(self.session);
            server.deliver(fired);
        }
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send + 'static {
        (self.sleeper)(duration)
    }
}
