//! The in-memory trace recorder every executor of a scenario shares, stamped by the
//! executor's own [`Clock`] (simulated time, or one real monotonic clock for every client of a
//! real run), and the driver observer that feeds it a client's events.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use coordination::driver::{Observed, Observer};
use coordination::ids::ClientSlot;
use coordination::recipe::Recipe;
use coordination::recipes::{Call, Notice};

use crate::{Event, EventKind, client_event};

/// The time of a run: how long since it started. Cheap to clone; every clone reads the same
/// clock from the same start.
pub trait Clock: Clone + Send + Sync + 'static {
    /// The time elapsed since the run started.
    fn elapsed(&self) -> Duration;
}

/// Collects trace events, stamped with nanoseconds of `C` since the run started. Cheap to
/// clone; all clones append to one list (or hand each event to one sink, see
/// [`Recorder::streaming`]).
#[derive(Clone)]
pub struct Recorder<C> {
    clock: C,
    events: Arc<Mutex<Vec<Event>>>,
    sink: Option<Arc<EventSink>>,
}

/// Where a streaming recorder hands each event as it is recorded.
pub type EventSink = dyn Fn(Event) + Send + Sync;

impl<C: Clock> Recorder<C> {
    /// A recorder stamping events with `clock`.
    pub fn new(clock: C) -> Recorder<C> {
        Recorder {
            clock,
            events: Arc::default(),
            sink: None,
        }
    }

    /// A recorder stamping events with `clock` that keeps none: each is handed to `sink` as
    /// it is recorded (a real run's client process sends its events to the run's parent).
    pub fn streaming(clock: C, sink: Arc<EventSink>) -> Recorder<C> {
        Recorder {
            clock,
            events: Arc::default(),
            sink: Some(sink),
        }
    }

    /// Makes room for `additional` more events at once, so that the list does not grow (and
    /// copy itself) step by step while a run records.
    pub fn reserve(&self, additional: usize) {
        self.events
            .lock()
            .expect("recorder lock")
            .reserve(additional);
    }

    /// Appends an event stamped elsewhere on the same clock (by another process of a real
    /// run); [`Recorder::take_events_in_order`] puts it in its place.
    pub fn push(&self, event: Event) {
        self.events.lock().expect("recorder lock").push(event);
    }

    /// Records `kind` on `client` (`None`: the server or the environment).
    pub fn record(&self, client: Option<ClientSlot>, kind: EventKind) {
        let t = self.clock.elapsed().as_nanos();
        let event = Event {
            t: u64::try_from(t).unwrap_or(u64::MAX),
            client,
            kind,
        };
        match &self.sink {
            Some(sink) => sink(event),
            None => self.events.lock().expect("recorder lock").push(event),
        }
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

    /// As [`Recorder::take_events`], sorted by time (stable: events of one time keep the
    /// order they were recorded in) — for a recorder that [`Recorder::push`]es events of
    /// other processes.
    pub fn take_events_in_order(&self) -> Vec<Event> {
        let mut events = self.take_events();
        events.sort_by_key(|event| event.t);
        events
    }
}

/// Records what a client's driver observes.
pub struct TraceObserver<C> {
    client: ClientSlot,
    recorder: Recorder<C>,
}

impl<C: Clock> TraceObserver<C> {
    /// An observer of client `client`.
    pub fn new(client: ClientSlot, recorder: Recorder<C>) -> TraceObserver<C> {
        TraceObserver { client, recorder }
    }
}

impl<C: Clock, R: Recipe<Call = Call, Notice = Notice>> Observer<R> for TraceObserver<C> {
    fn observe(&mut self, observed: Observed<'_, R>) {
        if let Some(kind) = client_event(observed) {
            self.recorder.record(Some(self.client), kind);
        }
    }
}
