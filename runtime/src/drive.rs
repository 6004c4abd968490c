//! One client of a scenario run — its recipe with the framework layer, run by
//! [`coordination::driver::Driver`] over any connector, beside the [`Workload`] that uses it to guard
//! the shared resource — driven the same way by every executor that runs in time: the
//! simulator (madsim) and a real ZooKeeper (tokio).
//!
//! What differs between them is an [`Executor`] (the clock the workload's timers sleep on and
//! the seeded source their durations are drawn from) and the recorder's [`Clock`]; the loop,
//! the resource accesses and the recording are this module's.

use std::collections::VecDeque;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use coordination::client::Client;
use coordination::driver::{Driver, Handle};
use coordination::fencing::Token;
use coordination::framework::Framework;
use coordination::ids::{ClientSlot, Owner};
use coordination::recipe::Recipe;
use coordination::recipes::{Call, Notice};
use coordination::session::Connector;
use coordination::zk::Path;
use futures::FutureExt;
use futures::future::Fuse;

use crate::resource::SharedResource;
use crate::workload::{WorkEffect, WorkInput, WorkTimer, Workload};
use recipe_table::family::RecipeSettings;
use recipe_table::recipe_ref::RecipeRef;
use recipe_table::recipes::{RecipeDef, Testable, Visitor};
use scenarios::scenario::{Span, Workload as WorkloadSettings};
use trace::record::{Clock, Recorder, TraceObserver};

/// What an executor brings to a client's workload: sleeps on its clock, and durations drawn
/// from the run's seeded source.
pub trait Executor {
    /// A sleep on the executor's clock.
    type Sleep: Future<Output = ()>;

    /// Sleeps for `duration`.
    fn sleep(&self, duration: Duration) -> Self::Sleep;

    /// A duration of `span` milliseconds, drawn from the run's seeded source.
    fn draw_ms(&self, span: Span) -> Duration;
}

/// One client's share of a run: what it runs, and what it shares with the other clients (the
/// recorder, the resource). Survives a client's restarts (a crash), so that the restarted
/// client carries on with the acquisitions left.
#[derive(Clone)]
pub struct ClientWork<C, E> {
    /// The client.
    pub slot: ClientSlot,
    /// The recipe it runs.
    pub recipe: RecipeRef,
    /// The lock path the recipe uses.
    pub lock_path: Path,
    /// What it does with the recipe.
    pub workload: WorkloadSettings,
    /// The recipe's settings.
    pub settings: RecipeSettings,
    /// The run's recorder.
    pub recorder: Recorder<C>,
    /// The run's protected resource (it records the accesses).
    pub resource: Arc<dyn SharedResource>,
    /// Cycles begun so far, across restarts.
    pub started: Started,
    /// The executor's clock and seeded source.
    pub executor: E,
}

impl<C: Clock, E: Executor> ClientWork<C, E> {
    /// Builds the recipe as its row of the recipe table defines it, composes it with
    /// `framework` and runs it over `connector`'s sessions beside the workload, until the
    /// workload is done and the session closed (or the driver stops by itself).
    ///
    /// # Panics
    /// When the recipe is not a row of the table: run a user's recipe with
    /// [`ClientWork::run_recipe`].
    pub async fn run<K: Connector>(&self, framework: Framework, connector: &K) {
        let Some(kind) = self.recipe.built_in() else {
            panic!(
                "recipe `{}` is not in the table: run it with run_recipe",
                self.recipe
            );
        };
        kind.visit(self.drive(framework, connector)).await;
    }

    /// As [`ClientWork::run`], with the recipe `def` defines (a user's own, or a row).
    pub async fn run_recipe<R: Testable, K: Connector>(
        &self,
        def: &'static RecipeDef<R>,
        framework: Framework,
        connector: &K,
    ) {
        self.drive(framework, connector).visit(def).await;
    }

    fn drive<'a, K>(&'a self, framework: Framework, connector: &'a K) -> Drive<'a, C, E, K> {
        Drive {
            work: self,
            framework,
            connector,
        }
    }

    async fn run_client<R, K>(&self, client: Client<R>, connector: &K)
    where
        R: Recipe<Call = Call, Notice = Notice>,
        K: Connector,
    {
        let mut observer = TraceObserver::new(self.slot, self.recorder.clone());
        let (driver, handle) = Driver::new(client);
        // The workload drops the handle when it is done, which closes the session.
        futures::join!(driver.run(connector, &mut observer), self.work(handle));
    }

    /// Runs the client's [`Workload`] to its end: its timers are the executor's sleeps (the
    /// stagger by slot, hold and think times drawn from the seed), its calls go to the
    /// driver, its resource accesses are made and recorded here.
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
        timer: &mut PendingTimer<E::Sleep>,
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
        let begun = self.started.count();
        let left = self.workload.acquisitions.saturating_sub(begun);
        workload_of(
            &self.recipe,
            self.slot,
            &self.settings,
            &self.workload,
            left,
        )
    }

    /// Counts the cycles begun so far, for a restart: called after each input, so a cycle
    /// that began is counted before its first call is carried out.
    fn note_progress(&self, workload: &Workload) {
        let begun = (self.workload.acquisitions).saturating_sub(workload.cycles_left());
        self.started.set(begun);
    }

    /// A sleep for workload timer `kind`: the stagger by slot, or a hold or think time
    /// drawn from the seed.
    fn set_timer(&self, kind: WorkTimer) -> (WorkTimer, Fuse<Pin<Box<E::Sleep>>>) {
        let duration = timer_duration(&self.workload, self.slot, kind, &self.executor);
        (kind, Box::pin(self.executor.sleep(duration)).fuse())
    }

    /// Reads the resource with `token` (the resource records it); the value, unless refused.
    /// No re-check of the lock around the accesses: that is what fencing is for.
    fn read(&self, owner: Owner, token: Token) -> Option<u64> {
        self.resource.read(self.slot, owner, token)
    }

    /// Writes `value` with `token` (the resource records it).
    fn write(&self, owner: Owner, token: Token, value: u64) {
        self.resource.write(self.slot, owner, token, value);
    }
}

/// The workload of the client on `slot` running `recipe` (with `settings`) as `workload` says,
/// with `cycles` cycles left: every executor that drives a [`Workload`] builds it so.
pub fn workload_of(
    recipe: &RecipeRef,
    slot: ClientSlot,
    settings: &RecipeSettings,
    workload: &WorkloadSettings,
    cycles: u32,
) -> Workload {
    let timeout = workload.acquire_timeout_ms.map(Duration::from_millis);
    Workload::new(recipe.family(), slot, settings, cycles)
        .with_timeout(timeout)
        .with_nested(workload.reentrant)
}

/// How long workload timer `kind` of the client on `slot` runs: the stagger by slot, or a
/// hold or think time of `workload` drawn from `executor`'s seeded source.
pub fn timer_duration<E: Executor>(
    workload: &WorkloadSettings,
    slot: ClientSlot,
    kind: WorkTimer,
    executor: &E,
) -> Duration {
    match kind {
        WorkTimer::Start => Duration::from_millis(workload.stagger_ms * u64::from(slot.0)),
        WorkTimer::Hold => executor.draw_ms(workload.hold_ms),
        WorkTimer::Think => executor.draw_ms(workload.think_ms),
    }
}

/// The cycles a client has begun, kept across its restarts (a crash) so that the restarted
/// client carries on with the cycles it had not begun. The simulator shares one count between
/// a client node's lives; an executor that restarts a client as a new OS process (the real
/// one) cannot, so its client tells each new count ([`Started::telling`]) to the parent,
/// which starts the next process from the last count it heard. A count is told before the
/// cycle's first call is carried out, so a process killed at any instant has told every cycle
/// that anyone else could have seen begin.
#[derive(Clone, Default)]
pub struct Started {
    count: Arc<Mutex<u32>>,
    tell: Option<Arc<dyn Fn(u32) + Send + Sync>>,
}

impl Started {
    /// `count` cycles begun already (by the client's earlier lives), each later count told to
    /// `tell` as it changes.
    pub fn telling(count: u32, tell: impl Fn(u32) + Send + Sync + 'static) -> Started {
        Started {
            count: Arc::new(Mutex::new(count)),
            tell: Some(Arc::new(tell)),
        }
    }

    /// The cycles begun so far.
    pub fn count(&self) -> u32 {
        *self.count.lock().expect("progress lock")
    }

    /// Sets the count to `count`, telling a change.
    fn set(&self, count: u32) {
        let previous = std::mem::replace(&mut *self.count.lock().expect("progress lock"), count);
        match &self.tell {
            Some(tell) if previous != count => tell(count),
            _ => {}
        }
    }
}

/// Builds the client's recipe as its definition (a row of the table, or a user's recipe) says
/// and runs it.
struct Drive<'a, C, E, K> {
    work: &'a ClientWork<C, E>,
    framework: Framework,
    connector: &'a K,
}

impl<'a, C: Clock, E: Executor, K: Connector> Visitor for Drive<'a, C, E, K> {
    type Output = Pin<Box<dyn Future<Output = ()> + 'a>>;

    fn visit<R: Testable>(self, def: &'static RecipeDef<R>) -> Self::Output {
        let recipe = (def.build)(self.work.lock_path.clone(), &self.work.settings);
        let client = Client::new(self.framework, recipe);
        Box::pin(self.work.run_client(client, self.connector))
    }
}

/// The workload's pending timer, as a sleep (fused: it may be polled again after a notice).
type PendingTimer<S> = Option<(WorkTimer, Fuse<Pin<Box<S>>>)>;

/// The workload's next input: the pending timer or, while the workload listens, the next
/// notice, whichever comes first (the notice when both are ready). Notices that come while
/// it does not listen wait in the channel, as the workload allows: the task is woken only by
/// what it waits for. `None` once the driver has stopped (or nothing is awaited).
async fn next_input<R: Recipe<Notice = Notice>, S: Future<Output = ()>>(
    workload: &Workload,
    timer: &mut PendingTimer<S>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_told_once_per_change() {
        let told = Arc::new(Mutex::new(Vec::new()));
        let heard = told.clone();
        let started = Started::telling(1, move |count| heard.lock().unwrap().push(count));
        for count in [1, 2, 2, 3] {
            started.set(count);
        }
        assert_eq!(started.count(), 3);
        assert_eq!(*told.lock().unwrap(), [2, 3]);
    }
}
