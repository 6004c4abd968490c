//! The environment of a program: on one simulated client node ([`on_client_node`]), or in a
//! real client process ([`with_environment`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use simio::{Dial, Dialing};

/// Runs `program` as the main of the simulated client node this is called on, with its
/// connections made by `dialer`.
///
/// Before the program starts, fastrand's generator on this thread is seeded from the
/// simulation's random source (it would otherwise continue from the run before). Every task
/// the program spawns through spawns-core (as `zookeeper-client` does) is a madsim task on
/// the same node, with the same dialer and spawner in scope.
pub async fn on_client_node<F: Future>(dialer: Arc<dyn Dial>, program: F) -> F::Output {
    fastrand::seed(madsim::rand::random());
    with_environment(dialer, spawn_on_this_node, program).await
}

/// Spawns `task` on the current madsim node, detached, as spawns-core's tasks are (dropping
/// madsim's handle does not cancel it).
fn spawn_on_this_node(task: Task) {
    drop(madsim::task::spawn(task));
}

/// A task spawned by the program, in its environment.
pub type Task = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Runs `program` with `dialer` in scope and a spawns-core spawner that hands every task the
/// program spawns (as `zookeeper-client` spawns its session task) to `spawn`, in the same
/// environment: so the connections a task opens are the dialer's too.
pub async fn with_environment<F: Future>(
    dialer: Arc<dyn Dial>,
    spawn: fn(Task),
    program: F,
) -> F::Output {
    OnNode::new(Spawner { dialer, spawn }, program).await
}

/// Spawns with `spawn`, carrying the program's environment.
#[derive(Clone)]
struct Spawner {
    dialer: Arc<dyn Dial>,
    spawn: fn(Task),
}

impl spawns_core::Spawn for Spawner {
    fn spawn(&self, task: spawns_core::Task) {
        (self.spawn)(Box::pin(OnNode::new(
            self.clone(),
            Box::into_pin(task.future),
        )));
    }
}

/// A future polled with its node's spawner and dialer in scope (madsim runs every node on
/// one thread, so the scope is entered for each poll, not once).
struct OnNode<F> {
    spawner: Spawner,
    future: Dialing<F>,
}

impl<F: Future> OnNode<F> {
    fn new(spawner: Spawner, future: F) -> OnNode<F> {
        let future = Dialing::new(spawner.dialer.clone(), future);
        OnNode { spawner, future }
    }
}

impl<F: Future> Future for OnNode<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        let _spawning = spawns_core::enter(&this.spawner);
        Pin::new(&mut this.future).poll(cx)
    }
}

/// Runs `simulation` (a whole run: its runtime made, run and dropped) within
/// [`dead_processes_spawn_nothing`].
pub fn with_dead_processes_spawning_nothing<R>(simulation: impl FnOnce() -> R) -> R {
    let _scope = dead_processes_spawn_nothing();
    simulation()
}

/// A spawner in scope, until the scope is dropped, for tasks spawned while no client node's
/// code runs, which drops them: they come from destructors run as a node is killed (a crash)
/// or as the run ends (the lock's background delete when its `LockClient` is dropped), and a
/// dead process starts nothing. Enter it on a run's thread before the run.
pub fn dead_processes_spawn_nothing() -> spawns_core::SpawnScope<'static> {
    spawns_core::enter(&Nothing)
}

/// Drops what it is given to spawn.
struct Nothing;

impl spawns_core::Spawn for Nothing {
    fn spawn(&self, task: spawns_core::Task) {
        drop(task);
    }
}
