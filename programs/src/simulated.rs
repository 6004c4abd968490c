//! A simulated ZooKeeper and client nodes that run programs: the smallest run loop for
//! unmodified client code, with no faults and no checkers yet (those come from the scenario
//! run loop, `sim::run`, once programs are a kind of recipe code there).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use futures::StreamExt;
use futures::channel::mpsc::unbounded;
use madsim::runtime::{Handle, Runtime};
use scenarios::fault::Node;
use scenarios::scenario::ServerSettings;
use sim::net::Network;
use sim::recorder::{Recorder, SimClock};
use sim::server::ServerHandle;
use sim::stream::SimDialer;
use sim::time::SimTime;
use sim::wire::{node_ip, server_addr};
use trace::Event;

use crate::on_client_node;

/// What a program is told about its place in the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// Its client's slot, 0 up.
    pub slot: u16,
    /// The simulated server's address, to connect to.
    pub server: SocketAddr,
}

/// What a run of programs gave: each client's result, by slot, and the server's trace.
#[derive(Debug)]
pub struct Outcome<T> {
    /// What each client's program returned, by slot.
    pub results: Vec<T>,
    /// The trace the simulated server recorded: sessions, requests applied, watches fired.
    pub events: Vec<Event>,
}

/// Runs `program` on `clients` client nodes against one simulated server, in a simulation
/// with `seed` on a fresh thread, until every program has returned.
pub fn run<T, F>(
    seed: u64,
    clients: u16,
    server: ServerSettings,
    program: impl Fn(Place) -> F + Send + Sync + 'static,
) -> Outcome<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    outside_the_simulation();
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                let runtime = Runtime::with_seed_and_config(seed, madsim::Config::default());
                runtime.block_on(simulate(clients, server, Arc::new(program)))
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Initialises what the client's dependencies initialise once per process from the random
/// source, before any simulation runs: done inside the first run of a process, it would draw
/// from that run's seeded source (madsim serves `getrandom`), so the first run of a process
/// would differ from a later run of the same seed. ahash 0.8 keys hashlink's sets, which
/// zookeeper-client keeps its watches in, from seeds it draws once per process.
fn outside_the_simulation() {
    let _keys_drawn = ahash::RandomState::new();
}

async fn simulate<T, F>(
    clients: u16,
    settings: ServerSettings,
    program: Arc<dyn Fn(Place) -> F + Send + Sync>,
) -> Outcome<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let time = SimTime::current();
    let recorder = Recorder::new(SimClock::start(time.clone()));
    let network = Network::new(time);
    let server = ServerHandle::new(settings, recorder.clone(), network.clone());
    let handle = Handle::current();
    server.start_node().await;
    let (done_tx, done_rx) = unbounded();
    for slot in 0..clients {
        let node = Node::Client(slot);
        let dialer = Arc::new(SimDialer::new(node, network.clone()));
        let program = program.clone();
        let done = done_tx.clone();
        let place = Place {
            slot,
            server: server_addr(),
        };
        let client = handle
            .create_node()
            .name(format!("client-{slot}"))
            .ip(node_ip(node))
            .build();
        client.spawn(async move {
            let result = on_client_node(dialer, program(place)).await;
            let _ = done.unbounded_send((slot, result));
        });
    }
    drop(done_tx);
    let mut finished: Vec<(u16, T)> = done_rx.collect().await;
    finished.sort_by_key(|(slot, _)| *slot);
    Outcome {
        results: finished.into_iter().map(|(_, result)| result).collect(),
        events: recorder.take_events_in_order(),
    }
}
