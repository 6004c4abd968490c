//! [`Program`]: a user's program, the code of a run's clients on any executor. In the
//! simulator it is a `sim::RecipeCode` (`From<Program>`, see [`crate::in_simulation`]), so
//! that the simulator's run loop, its checkers, reports, shrinking, replay by seed and the
//! `cargo test` helpers (`splitbrain::testing::hunt`) serve it as they serve a recipe; on a
//! real ZooKeeper each client process runs it (`splitbrain-real`'s `program_client`).

use std::fmt::Display;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use futures::FutureExt;
use recipe_table::family::Family;
use recipe_table::recipe_ref::RecipeRef;
use sim::panic_message;
use trace::EventKind;

use crate::contender::Contender;
use crate::simulated::outside_the_simulation;

/// A program's main, its type erased: what it returns is its error, in words.
type Main = dyn Fn(Contender) -> Pin<Box<dyn Future<Output = Result<(), String>>>> + Send + Sync;

/// A user's program under test, standing in for a recipe of its own name (see [`program`]).
#[derive(Clone)]
pub struct Program {
    recipe: RecipeRef,
    main: Arc<Main>,
}

/// The program `main`, standing in for a recipe named `name` of `family` (which says what the
/// checkers judge: `Family::Lock` for a lock, `Family::Latch` for an election ...). A scenario
/// runs it when its `recipe` is `{"name": <name>, "family": ...}`.
///
/// Each client runs `main` with its [`Contender`]. In the simulator every client is a
/// simulated node of its own: every task the client library spawns stays on that node, its
/// connections go through the simulated network (the requests it writes are recorded as
/// `op_sent` events), its randomness comes from the run's seed, and a crash of the node starts
/// `main` over. When `main` returns an error or panics, that client's run ends there,
/// recorded as a `program_failed` event; the other clients go on.
///
/// # Panics
/// When `name` is the name of a recipe of splitbrain's table.
pub fn program<F, R, E>(name: &str, family: Family, main: F) -> Program
where
    F: Fn(Contender) -> R + Send + Sync + 'static,
    R: Future<Output = Result<(), E>> + 'static,
    E: Display,
{
    let recipe = RecipeRef::own(name, family, false).unwrap_or_else(|why| panic!("{why}"));
    outside_the_simulation();
    let main = move |contender| {
        let run = main(contender);
        Box::pin(async move { run.await.map_err(|error| error.to_string()) })
            as Pin<Box<dyn Future<Output = Result<(), String>>>>
    };
    Program {
        recipe,
        main: Arc::new(main),
    }
}

impl Program {
    /// The recipe the program stands for: its name and family.
    pub fn recipe(&self) -> &RecipeRef {
        &self.recipe
    }

    /// Runs the program's main with `contender` to its end; an error it returns or a panic is
    /// recorded on the contender's client as a `program_failed` event.
    pub async fn run(&self, contender: Contender) {
        let reporter = contender.clone();
        let error = match AssertUnwindSafe((self.main)(contender))
            .catch_unwind()
            .await
        {
            Ok(Ok(())) => return,
            Ok(Err(error)) => error,
            Err(panic) => format!("panicked: {}", panic_message(&*panic)),
        };
        reporter.record(EventKind::ProgramFailed { error });
    }
}
