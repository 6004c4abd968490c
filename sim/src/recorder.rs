//! The in-memory trace recorder shared by every node of a run, and the driver observer that
//! feeds it the client-side events.

use std::sync::{Arc, Mutex};

use lock::driver::{Observed, Observer};
use lock::ids::ClientSlot;
use lock::recipe::Recipe;
use lock::recipes::{Call, Notice};
use madsim::time::Instant;
use scenarios::trace::{Event, EventKind, client_event};

/// Collects trace events, stamped with simulated nanoseconds since the run started. Cheap to
/// clone; all clones append to one list.
#[derive(Clone)]
pub struct Recorder {
    start: Instant,
    events: Arc<Mutex<Vec<Event>>>,
}

impl Recorder {
    /// A recorder whose time zero is now (simulated time: call it inside the runtime).
    pub fn start() -> Recorder {
        Recorder {
            start: Instant::now(),
            events: Arc::default(),
        }
    }

    /// Records `kind` on `client` (`None`: the server or the environment).
    pub fn record(&self, client: Option<ClientSlot>, kind: EventKind) {
        let t = Instant::now().duration_since(self.start).as_nanos();
        let event = Event {
            t: u64::try_from(t).unwrap_or(u64::MAX),
            client,
            kind,
        };
        self.events.lock().expect("recorder lock").push(event);
    }

    /// The events recorded so far.
    pub fn events(&self) -> Vec<Event> {
        self.events.lock().expect("recorder lock").clone()
    }

    /// The events recorded so far, moved out (the recorder is left empty): the end of a run
    /// takes its trace this way instead of copying it.
    pub fn take_events(&self) -> Vec<Event> {
        std::mem::take(&mut *self.events.lock().expect("recorder lock"))
    }
}

/// Records what a client's driver observes.
pub struct TraceObserver {
    client: ClientSlot,
    recorder: Recorder,
}

impl TraceObserver {
    /// An observer of client `client`.
    pub fn new(client: ClientSlot, recorder: Recorder) -> TraceObserver {
        TraceObserver { client, recorder }
    }
}

impl<R: Recipe<Call = Call, Notice = Notice>> Observer<R> for TraceObserver {
    fn observe(&mut self, observed: Observed<'_, R>) {
        if let Some(kind) = client_event(observed) {
            self.recorder.record(Some(self.client), kind);
        }
    }
}
