//! Faults that start at a request (a scenario fault's `on_request`): the injector arms them
//! at their `at_ms`, and the client's session task fires them just before a matching request
//! leaves, so that the cut is in force for that request itself. A trigger fires once, the
//! first time a request of its client matches it; a heal does not disarm one that has not
//! fired (it ends faults in force, and this one is not yet).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use coordination::zk::Request;
use futures::channel::mpsc::UnboundedSender;
use scenarios::fault::{Fault, RequestOp, RequestTrigger};
use trace::EventKind;

use crate::links::{Links, Rule};
use crate::recorder::Recorder;

/// A fault waiting for its request.
pub(crate) struct Armed {
    /// Its index in the run's schedule (the key of its rules in the link table).
    pub index: usize,
    /// The fault, recorded when it starts.
    pub fault: Fault,
    /// The client whose request starts it.
    pub client: u16,
    /// Which requests start it.
    pub trigger: RequestTrigger,
    /// The rules it puts in the link table.
    pub rules: Vec<Rule>,
    /// Where its start is recorded.
    pub recorder: Recorder,
    /// Told the fault's index when it starts, so that the injector ends it on time.
    pub started: UnboundedSender<usize>,
}

/// The run's armed triggers. Clones share them.
#[derive(Clone, Default)]
pub struct Triggers {
    armed: Arc<Mutex<Vec<Armed>>>,
    /// Whether any is armed: read before every request, so that a run without triggers does
    /// not take the lock (an atomic round trip) for each.
    any: Arc<AtomicBool>,
}

impl Triggers {
    /// Arms `armed`.
    pub(crate) fn arm(&self, armed: Armed) {
        self.armed().push(armed);
        self.any.store(true, Ordering::Relaxed);
    }

    /// Starts every armed fault that `client`'s `request`, about to be sent, matches: each is
    /// recorded, its rules enter `links`, and its injector is told.
    pub(crate) fn fire(&self, client: u16, request: &Request, links: &Mutex<Links>) {
        if !self.any.load(Ordering::Relaxed) {
            return;
        }
        let fired: Vec<Armed> = {
            let mut armed = self.armed();
            let (op, path) = (RequestOp::of(request), request.path().as_str());
            let matches = |a: &mut Armed| a.client == client && a.trigger.matches(op, path);
            let fired = armed.extract_if(.., matches).collect();
            self.any.store(!armed.is_empty(), Ordering::Relaxed);
            fired
        };
        for armed in fired {
            let fault = armed.fault.clone();
            armed.recorder.record(None, EventKind::FaultStart { fault });
            let mut links = links.lock().expect("links lock");
            for rule in armed.rules {
                links.add(armed.index, rule);
            }
            let _ = armed.started.unbounded_send(armed.index);
        }
    }

    fn armed(&self) -> std::sync::MutexGuard<'_, Vec<Armed>> {
        self.armed.lock().expect("triggers lock")
    }
}
