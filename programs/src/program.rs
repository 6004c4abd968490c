//! [`program`]: a user's program as the code of a run's clients, so that the simulator's run
//! loop, its checkers, reports, shrinking, replay by seed and the `cargo test` helpers
//! (`splitbrain::testing::hunt`) serve it as they serve a recipe.

use std::fmt::Display;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use recipe_table::family::Family;
use recipe_table::recipe_ref::RecipeRef;
use sim::client::SimConnector;
use sim::{ClientMain, RecipeCode, RunScope, SimWork, panic_message};
use simio::Dial;
use trace::EventKind;

use crate::contender::Contender;
use crate::node::{dead_processes_spawn_nothing, on_client_node};
use crate::requests::Recording;
use crate::simulated::outside_the_simulation;

/// The code of the program `main`, standing in for a recipe named `name` of `family` (which
/// says what the checkers judge: `Family::Lock` for a lock, `Family::Latch` for an
/// election ...). A scenario runs it when its `recipe` is `{"name": <name>, "family": ...}`.
///
/// Each client runs `main` with its [`Contender`], on its own simulated node: every task the
/// client library spawns stays on that node, its connections go through the simulated
/// network (the requests it writes are recorded as `op_sent` events), its randomness comes
/// from the run's seed. A crash of the node starts `main` over.
/// When `main` returns an error or panics, that client's run ends there, recorded as a
/// `program_failed` event; the other clients go on.
///
/// # Panics
/// When `name` is the name of a recipe of splitbrain's table.
pub fn program<F, R, E>(name: &str, family: Family, main: F) -> RecipeCode
where
    F: Fn(Contender) -> R + Send + Sync + 'static,
    R: Future<Output = Result<(), E>> + 'static,
    E: Display,
{
    let recipe = RecipeRef::own(name, family, false).unwrap_or_else(|why| panic!("{why}"));
    outside_the_simulation();
    let main = Arc::new(main);
    let client_main = client_main(move |work, connector| {
        let contender = Contender::of(work, connector);
        let dialer: Arc<dyn Dial> = Arc::new(connector.dialer());
        let dialer = Arc::new(Recording::new(dialer, work.slot, work.recorder.clone()));
        let main = main.clone();
        Box::pin(async move {
            let reporter = contender.clone();
            let running = on_client_node(dialer, async move { main(contender).await });
            let error = match AssertUnwindSafe(running).catch_unwind().await {
                Ok(Ok(())) => return,
                Ok(Err(error)) => error.to_string(),
                Err(panic) => format!("panicked: {}", panic_message(&*panic)),
            };
            reporter.record(EventKind::ProgramFailed { error });
        })
    });
    RecipeCode::program(recipe, client_main, run_scope)
}

/// `main`, typed as a client's main (a closure's signature cannot say so itself).
fn client_main<M>(main: M) -> M
where
    M: for<'a> Fn(&'a SimWork, &'a SimConnector) -> ClientMain<'a>,
{
    main
}

/// What a program's run thread holds: a spawner for what is spawned while no node runs.
fn run_scope() -> RunScope {
    Box::new(dead_processes_spawn_nothing())
}
