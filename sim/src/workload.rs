//! A client node's main: the recipe with its framework layer, run by the driver over the
//! simulated client, and the workload that uses the lock to guard the shared resource.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::channel::mpsc::UnboundedSender;
use lock::client::Client;
use lock::driver::{Driver, Handle};
use lock::fencing::{FencedResource, Token};
use lock::framework::{Framework, FrameworkConfig};
use lock::ids::{ClientSlot, Owner};
use lock::recipe::Recipe;
use lock::recipes::{Call, Notice};
use scenarios::fault::Node;
use scenarios::trace::EventKind;

use crate::client::SimConnector;
use crate::links::Links;
use crate::recorder::{Recorder, TraceObserver};
use crate::settings::{asked_timeout, draw_ms};
use lock::zk::Path;
use scenarios::recipes::{RecipeDef, Testable, Visitor};
use scenarios::scenario::{RecipeKind, ServerSettings, Workload};
use scenarios::usage::RecipeSettings;

/// The one owner each client acquires for.
const OWNER: Owner = Owner(0);

/// Everything a client node needs; survives the node's restarts (a crash), so that the
/// restarted client carries on with the acquisitions left.
#[derive(Clone)]
pub(crate) struct ClientNode {
    pub slot: ClientSlot,
    pub recipe: RecipeKind,
    pub lock_path: Path,
    pub workload: Workload,
    pub settings: RecipeSettings,
    pub server: ServerSettings,
    pub framework: FrameworkConfig,
    pub links: Arc<Mutex<Links>>,
    pub recorder: Recorder,
    pub resource: Arc<Mutex<FencedResource>>,
    /// Acquisitions started so far, across restarts.
    pub started: Arc<Mutex<u32>>,
    pub done: UnboundedSender<ClientSlot>,
}

impl ClientNode {
    /// The node's main: runs the workload to its end, closes the session, reports done.
    pub async fn run(self) {
        self.recipe.visit(Drive { node: &self }).await;
        let _ = self.done.unbounded_send(self.slot);
    }

    /// Runs `recipe` with its framework layer, driven over the simulated client, beside the
    /// workload that uses it.
    async fn run_client<R: Recipe<Call = Call, Notice = Notice>>(&self, recipe: R) {
        let framework = Framework::new(self.framework.clone(), self.slot, madsim::rand::random());
        let client = Client::new(framework, recipe);
        let connector = SimConnector::new(
            Node::Client(self.slot.0),
            asked_timeout(&self.server),
            self.links.clone(),
        );
        let mut observer = TraceObserver::new(self.slot, self.recorder.clone());
        let (driver, handle) = Driver::new(client);
        // The workload drops the handle when it is done, which closes the session.
        futures::join!(driver.run(&connector, &mut observer), self.work(handle));
    }

    async fn work<R: Recipe<Call = Call, Notice = Notice>>(&self, mut handle: Handle<R>) {
        let timeout = (self.workload.acquire_timeout_ms).map(Duration::from_millis);
        let stagger = self.workload.stagger_ms * u64::from(self.slot.0);
        madsim::time::sleep(Duration::from_millis(stagger)).await;
        let family = self.recipe.family();
        // Cycles of this process: a restarted client starts its recipe afresh.
        let mut cycle = 0;
        while self.start_acquisition() {
            let usage = family.usage(OWNER, self.slot, cycle, timeout, &self.settings);
            cycle += 1;
            if self.settings.revocable {
                // Curator's testRevoking: revocable, and the holder is asked to give way.
                let owner = OWNER;
                let calls = [Call::MakeRevocable { owner }, Call::AttemptRevoke { owner }];
                if calls.into_iter().any(|call| handle.call(call).is_err()) {
                    return;
                }
            }
            if handle.call(usage.begin).is_err() {
                return;
            }
            // A revocation request can come before the grant (the node is first already).
            let mut asked = false;
            let answer = next_matching(&mut handle, |n| {
                asked |= matches!(n, Notice::RevocationRequested { .. });
                n.granted().is_some() || n.refused()
            });
            let Some(answer) = answer.await else {
                return;
            };
            if let Some(token) = answer.granted() {
                let hold = self.hold(&mut handle, asked);
                if usage.writes {
                    self.use_resource(token, hold).await;
                } else {
                    hold.await;
                }
                if handle.call(usage.end).is_err() {
                    return;
                }
                if next_matching(&mut handle, Notice::answers_end)
                    .await
                    .is_none()
                {
                    return;
                }
            }
            madsim::time::sleep(draw_ms(self.workload.think_ms)).await;
        }
    }

    /// Counts one more cycle if the workload has any left (across restarts).
    fn start_acquisition(&self) -> bool {
        let mut started = self.started.lock().expect("progress lock");
        let more = *started < self.workload.acquisitions;
        if more {
            *started += 1;
        }
        more
    }

    /// Holds for a drawn hold time; a revocable holder stops as soon as it is asked to
    /// release (at once when `asked` while it waited).
    async fn hold<R: Recipe<Notice = Notice>>(&self, handle: &mut Handle<R>, asked: bool) {
        let time = madsim::time::sleep(draw_ms(self.workload.hold_ms));
        if !self.settings.revocable {
            return time.await;
        }
        if asked {
            return;
        }
        let request = next_matching(handle, |n| matches!(n, Notice::RevocationRequested { .. }));
        futures::select_biased! {
            _ = Box::pin(request).fuse() => {}
            _ = Box::pin(time).fuse() => {}
        }
    }

    /// Read with the token, `hold`, write value + 1 with the token (skipped when the read was
    /// refused). No re-check of the lock in between: that is what fencing is for.
    async fn use_resource(&self, token: Token, hold: impl Future<Output = ()>) {
        let read = self.resource().read(token);
        self.record(EventKind::ResourceRead {
            owner: OWNER,
            token,
            accepted: read.is_ok(),
            value: read.ok(),
        });
        hold.await;
        let Ok(value) = read else {
            return;
        };
        let value = value + 1;
        let accepted = self.resource().write(token, value).is_ok();
        self.record(EventKind::ResourceWrite {
            owner: OWNER,
            token,
            value,
            accepted,
        });
    }

    fn resource(&self) -> std::sync::MutexGuard<'_, FencedResource> {
        self.resource.lock().expect("resource lock")
    }

    fn record(&self, kind: EventKind) {
        self.recorder.record(Some(self.slot), kind);
    }
}

/// Builds the node's recipe as its row of the recipe table defines it and runs it.
struct Drive<'a> {
    node: &'a ClientNode,
}

impl<'a> Visitor for Drive<'a> {
    type Output = Pin<Box<dyn Future<Output = ()> + 'a>>;

    fn visit<R: Testable>(self, def: &'static RecipeDef<R>) -> Self::Output {
        let recipe = (def.build)(self.node.lock_path.clone(), &self.node.settings);
        Box::pin(self.node.run_client(recipe))
    }
}

/// The next notice that `wanted` accepts, skipping the others (connection-state notices,
/// leadership changes while holding); `None` once the driver has stopped.
async fn next_matching<R: Recipe<Notice = Notice>>(
    handle: &mut Handle<R>,
    mut wanted: impl FnMut(&Notice) -> bool,
) -> Option<Notice> {
    loop {
        let notice = handle.next_notice().await?;
        if wanted(&notice) {
            return Some(notice);
        }
    }
}
