//! A [`Program`] as the code of a simulated run's clients: each client runs it on its own
//! simulated node, with a contender whose backend is the simulator's (its recorder, its
//! clock, the run's seed).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use coordination::ids::ClientSlot;
use runtime::drive::Executor;
use scenarios::scenario::Span;
use sim::client::SimConnector;
use sim::recorder::{Recorder, SimExecutor};
use sim::wire::server_addr;
use sim::{ClientMain, RecipeCode, RunScope, SimWork};
use simio::Dial;
use trace::EventKind;

use crate::contender::{Backend, Contender, Place};
use crate::node::{dead_processes_spawn_nothing, on_client_node};
use crate::program::Program;
use crate::requests::Recording;

impl From<Program> for RecipeCode {
    fn from(program: Program) -> RecipeCode {
        let recipe = program.recipe().clone();
        let client_main = client_main(move |work, connector| {
            let backend: Arc<dyn Backend> = Arc::new(Simulated(work.recorder.clone()));
            let contender = Contender::new(place(work, connector, backend.clone()));
            let dialer: Arc<dyn Dial> = Arc::new(connector.dialer());
            let triggers = connector.clone();
            let dialer = Recording::new(dialer, work.slot, backend)
                .before_each_request(move |request| triggers.before_request(request));
            let dialer = Arc::new(dialer);
            let program = program.clone();
            Box::pin(async move { on_client_node(dialer, program.run(contender)).await })
        });
        RecipeCode::program(recipe, client_main, run_scope)
    }
}

/// The place in the run of the client whose share of it is `work`, connecting through
/// `connector`.
fn place(work: &SimWork, connector: &SimConnector, backend: Arc<dyn Backend>) -> Place {
    Place {
        slot: work.slot,
        server: server_addr().to_string(),
        session_timeout: connector.session_timeout(),
        lock_path: work.lock_path.as_str().to_owned(),
        workload: work.workload.clone(),
        backend,
        resource: work.resource.clone(),
    }
}

/// The simulator's backend: its recorder, madsim's clock, the run's seed.
struct Simulated(Recorder);

impl Backend for Simulated {
    fn record(&self, slot: ClientSlot, kind: EventKind) {
        self.0.record(Some(slot), kind);
    }

    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()>>> {
        Box::pin(madsim::time::sleep(duration))
    }

    fn draw_ms(&self, span: Span) -> Duration {
        SimExecutor.draw_ms(span)
    }
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
