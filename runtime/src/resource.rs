//! The run's protected resource as a client's workload reaches it: each access is made and
//! recorded in one step ([`SharedResource`]), so the trace lists accesses in the order the
//! resource saw them — in one process ([`Recorded`]: the simulator's, a real run's parent) or
//! through another process that holds it (a real run's client processes).

use std::sync::Mutex;

use coordination::fencing::{FencedResource, Token};
use coordination::ids::{ClientSlot, Owner};

use trace::EventKind;
use trace::record::{Clock, Recorder};

/// The protected resource of a run, shared by its clients.
pub trait SharedResource: Send + Sync {
    /// `client` (as `owner`) reads with `token`: the value, unless the token is stale. The
    /// access is recorded.
    fn read(&self, client: ClientSlot, owner: Owner, token: Token) -> Option<u64>;

    /// `client` (as `owner`) writes `value` with `token`: whether it was accepted. The access
    /// is recorded.
    fn write(&self, client: ClientSlot, owner: Owner, token: Token, value: u64) -> bool;
}

/// A [`FencedResource`] in this process, recording each access on `recorder` while it holds
/// the resource.
pub struct Recorded<C> {
    resource: Mutex<FencedResource>,
    recorder: Recorder<C>,
}

impl<C: Clock> Recorded<C> {
    /// A counter at 0, fenced when `fenced`, recording on `recorder`.
    pub fn new(fenced: bool, recorder: Recorder<C>) -> Recorded<C> {
        Recorded {
            resource: Mutex::new(FencedResource::new(fenced)),
            recorder,
        }
    }
}

impl<C: Clock> SharedResource for Recorded<C> {
    fn read(&self, client: ClientSlot, owner: Owner, token: Token) -> Option<u64> {
        let mut resource = self.resource.lock().expect("resource lock");
        let read = resource.read(token);
        let kind = EventKind::ResourceRead {
            owner,
            token,
            accepted: read.is_ok(),
            value: read.ok(),
        };
        self.recorder.record(Some(client), kind);
        read.ok()
    }

    fn write(&self, client: ClientSlot, owner: Owner, token: Token, value: u64) -> bool {
        let mut resource = self.resource.lock().expect("resource lock");
        let accepted = resource.write(token, value).is_ok();
        let kind = EventKind::ResourceWrite {
            owner,
            token,
            value,
            accepted,
        };
        self.recorder.record(Some(client), kind);
        accepted
    }
}
