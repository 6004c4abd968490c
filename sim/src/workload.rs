//! A client node's main: the recipe with its framework layer, run by the driver over the
//! simulated client, and the workload that uses the lock to guard the shared resource.

use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::channel::mpsc::UnboundedSender;
use futures::future::Fuse;
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
use madsim::time::Sleep;
use scenarios::recipe_ref::RecipeRef;
use scenarios::recipes::{RecipeDef, Testable, Visitor};
use scenarios::scenario::{ServerSettings, Workload as WorkloadSettings};
use scenarios::usage::RecipeSettings;
use scenarios::workload::{WorkEffect, WorkInput, WorkTimer, Workload};

/// Everything a client node needs; survives the node's restarts (a crash), so that the
/// restarted client carries on with the acquisitions left.
#[derive(Clone)]
pub(crate) struct ClientNode {
    pub slot: ClientSlot,
    pub recipe: RecipeRef,
    pub lock_path: Path,
    pub workload: WorkloadSettings,
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
        let drive = Drive { node: &self };
        match self.recipe.built_in() {
            Some(kind) => kind.visit(drive).await,
            // `Sim::validate` refused a recipe neither built in nor registered.
            None => match crate::registry::drive(self.recipe.name(), drive) {
                Some(main) => main.await,
                None => unreachable!("recipe `{}` was validated", self.recipe),
            },
        }
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

    /// Runs the client's [`Workload`] to its end: its timers are madsim sleeps (the stagger
    /// by slot, hold and think times drawn from the seed), its calls go to the driver, its
    /// resource accesses are made and recorded here.
    async fn work<R: Recipe<Call = Call, Notice = Notice>>(&self, mut handle: Handle<R>) {
        let mut workload = self.fresh_workload();
        let mut timer = workload.pending_timer().map(|kind| self.set_timer(kind));
        let mut effects = Vec::new();
        loop {
            if self
                .carry_out(&mut workload, effects, &mut timer, &handle)
                .is_break()
            {
                return;
            }
            // `None`: the driver has stopped.
            let Some(input) = next_input(&workload, &mut timer, &mut handle).await else {
                return;
            };
            effects = Vec::new();
            workload.handle(input, &mut effects);
            self.note_progress(&workload);
        }
    }

    /// Carries out `effects` in order (a read's answer is fed back, and its effects carried
    /// out, at once); breaks when the workload is done or the driver has stopped.
    fn carry_out<R: Recipe<Call = Call, Notice = Notice>>(
        &self,
        workload: &mut Workload,
        effects: Vec<WorkEffect>,
        timer: &mut PendingTimer,
        handle: &Handle<R>,
    ) -> ControlFlow<()> {
        let mut queue = VecDeque::from(effects);
        while let Some(effect) = queue.pop_front() {
            match effect {
                WorkEffect::Call(call) => {
                    if handle.call(call).is_err() {
                        return ControlFlow::Break(());
                    }
                }
                WorkEffect::SetTimer(kind) => *timer = Some(self.set_timer(kind)),
                WorkEffect::CancelTimer(_) => *timer = None,
                WorkEffect::Read { owner, token } => {
                    let value = self.read(owner, token);
                    let mut more = Vec::new();
                    workload.handle(WorkInput::ReadDone(value), &mut more);
                    for effect in more.into_iter().rev() {
                        queue.push_front(effect);
                    }
                }
                WorkEffect::Write {
                    owner,
                    token,
                    value,
                } => self.write(owner, token, value),
                WorkEffect::Done => return ControlFlow::Break(()),
            }
        }
        ControlFlow::Continue(())
    }

    /// The workload of this process: a restarted client carries on with the cycles it had
    /// not begun.
    fn fresh_workload(&self) -> Workload {
        let started = *self.started.lock().expect("progress lock");
        let left = self.workload.acquisitions.saturating_sub(started);
        let timeout = self.workload.acquire_timeout_ms.map(Duration::from_millis);
        Workload::new(self.recipe.family(), self.slot, &self.settings, left)
            .with_timeout(timeout)
            .with_nested(self.workload.reentrant)
    }

    /// Counts the cycles begun so far, for a restart.
    fn note_progress(&self, workload: &Workload) {
        let left = workload.cycles_left();
        *self.started.lock().expect("progress lock") =
            self.workload.acquisitions.saturating_sub(left);
    }

    /// A sleep for workload timer `kind`: the stagger by slot, or a hold or think time
    /// drawn from the seed.
    fn set_timer(&self, kind: WorkTimer) -> (WorkTimer, Fuse<Pin<Box<Sleep>>>) {
        let duration = match kind {
            WorkTimer::Start => {
                Duration::from_millis(self.workload.stagger_ms * u64::from(self.slot.0))
            }
            WorkTimer::Hold => draw_ms(self.workload.hold_ms),
            WorkTimer::Think => draw_ms(self.workload.think_ms),
        };
        (kind, Box::pin(madsim::time::sleep(duration)).fuse())
    }

    /// Reads the resource with `token` and records it; the value, unless refused. No
    /// re-check of the lock around the accesses: that is what fencing is for.
    fn read(&self, owner: Owner, token: Token) -> Option<u64> {
        let read = self.resource().read(token);
        self.record(EventKind::ResourceRead {
            owner,
            token,
            accepted: read.is_ok(),
            value: read.ok(),
        });
        read.ok()
    }

    /// Writes `value` with `token` and records it.
    fn write(&self, owner: Owner, token: Token, value: u64) {
        let accepted = self.resource().write(token, value).is_ok();
        self.record(EventKind::ResourceWrite {
            owner,
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

/// Builds the node's recipe as its definition (a row of the table, or a registered user's
/// recipe) says and runs it.
pub(crate) struct Drive<'a> {
    node: &'a ClientNode,
}

impl<'a> Visitor for Drive<'a> {
    type Output = Pin<Box<dyn Future<Output = ()> + 'a>>;

    fn visit<R: Testable>(self, def: &'static RecipeDef<R>) -> Self::Output {
        let recipe = (def.build)(self.node.lock_path.clone(), &self.node.settings);
        Box::pin(self.node.run_client(recipe))
    }
}

/// The workload's pending timer, as a sleep (fused: it may be polled again after a notice).
type PendingTimer = Option<(WorkTimer, Fuse<Pin<Box<Sleep>>>)>;

/// The workload's next input: the pending timer or, while the workload listens, the next
/// notice, whichever comes first (the notice when both are ready). Notices that come while
/// it does not listen wait in the channel, as the workload allows: the task is woken only by
/// what it waits for. `None` once the driver has stopped (or nothing is awaited).
async fn next_input<R: Recipe<Notice = Notice>>(
    workload: &Workload,
    timer: &mut PendingTimer,
    handle: &mut Handle<R>,
) -> Option<WorkInput> {
    let input = match (workload.listening(), timer.as_mut()) {
        (true, Some((kind, sleep))) => futures::select_biased! {
            notice = handle.next_notice().fuse() => notice.map(WorkInput::Notice),
            () = &mut *sleep => Some(WorkInput::Timer(*kind)),
        },
        (true, None) => handle.next_notice().await.map(WorkInput::Notice),
        (false, Some((kind, sleep))) => {
            sleep.await;
            Some(WorkInput::Timer(*kind))
        }
        (false, None) => None,
    };
    if matches!(input, Some(WorkInput::Timer(_))) {
        *timer = None;
    }
    input
}
