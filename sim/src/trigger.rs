//! Faults that start at a request (a scenario fault's `on_request`): the injector arms them
//! at their `at_ms`. A cut of one client's links is fired by the client's session task just
//! before a matching request leaves, so that the cut is in force for that request itself; a
//! crash of a server is fired by the ensemble's leader as it proposes a matching write of any
//! client, after it has handed its proposal to the network, and the injector carries it out
//! at that instant, before the leader runs again. A trigger fires once, the first time a
//! request matches it; a heal does not disarm one that has not fired (it ends faults in
//! force, and this one is not yet).

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
    /// The fault, recorded when it starts (a crash of a server, by the injector as it
    /// starts it).
    pub fault: Fault,
    /// The client whose request starts it: `None` for one the leader fires, on any client's
    /// proposal.
    pub client: Option<u16>,
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

    /// Starts every armed cut that `client`'s `request`, about to be sent, matches: each is
    /// recorded, its rules enter `links`, and its injector is told.
    pub(crate) fn fire(&self, client: u16, request: &Request, links: &Mutex<Links>) {
        for armed in self.take_matching(Some(client), request) {
            let fault = armed.fault.clone();
            armed.recorder.record(None, EventKind::FaultStart { fault });
            let mut links = links.lock().expect("links lock");
            for rule in armed.rules {
                links.add(armed.index, rule);
            }
            let _ = armed.started.unbounded_send(armed.index);
        }
    }

    /// Tells the injector of every armed server fault that the leader's proposal of
    /// `request` matches, for it to start the fault now.
    pub(crate) fn fire_at_proposal(&self, request: &Request) {
        for armed in self.take_matching(None, request) {
            let _ = armed.started.unbounded_send(armed.index);
        }
    }

    /// Disarms and returns the triggers of `client` (`None`: the leader's) that `request`
    /// matches.
    fn take_matching(&self, client: Option<u16>, request: &Request) -> Vec<Armed> {
        if !self.any.load(Ordering::Relaxed) {
            return Vec::new();
        }
        let mut armed = self.armed();
        let (op, path) = (RequestOp::of(request), request.path().as_str());
        let matches = |a: &mut Armed| a.client == client && a.trigger.matches(op, path);
        let fired = armed.extract_if(.., matches).collect();
        self.any.store(!armed.is_empty(), Ordering::Relaxed);
        fired
    }

    fn armed(&self) -> std::sync::MutexGuard<'_, Vec<Armed>> {
        self.armed.lock().expect("triggers lock")
    }
}
