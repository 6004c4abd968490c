//! A simulated ZooKeeper and client nodes that run programs under a fault schedule: the
//! smallest run loop for unmodified client code. It has no checkers yet (those come from the
//! scenario run loop, `sim::run`, once programs are a kind of recipe code there).

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::channel::mpsc::unbounded;
use futures::{FutureExt, StreamExt};
use madsim::runtime::Handle;
use madsim::time::Instant;
use scenarios::fault::{Node, ScheduledFault};
use scenarios::scenario::{Scenario, ServerSettings};
use sim::faults::Injector;
use sim::net::Network;
use sim::recorder::{Recorder, SimClock};
use sim::server::ServerHandle;
use sim::servers::Servers;
use sim::stream::SimDialer;
use sim::time::SimTime;
use sim::wire::{node_ip, server_addr};
use sim::{in_fresh_runtime, panic_message};
use trace::Event;

use crate::{on_client_node, with_dead_processes_spawning_nothing};

/// A run of programs: its seed, its clients, its server and its faults.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The run's seed.
    pub seed: u64,
    /// How many client nodes run the program.
    pub clients: u16,
    /// The simulated server's settings.
    pub server: ServerSettings,
    /// The faults, at times from the start of the run.
    pub faults: Vec<ScheduledFault>,
    /// When the run stops if a program has not returned by then.
    pub horizon: Duration,
}

impl Setup {
    /// The run of `scenario` with `seed`: its clients, server and horizon, and its fault
    /// schedule for that seed (fixed faults and those its random-fault generators draw).
    pub fn of_scenario(scenario: &Scenario, seed: u64) -> Setup {
        Setup {
            seed,
            clients: scenario.clients,
            server: scenario.server,
            faults: scenario.fault_schedule(seed),
            horizon: Duration::from_millis(scenario.horizon_ms),
        }
    }
}

/// What a program is told about its place in the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// Its client's slot, 0 up.
    pub slot: u16,
    /// The simulated server's address, to connect to.
    pub server: SocketAddr,
}

/// How a client's program ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended<T> {
    /// It returned this (the first time: a crashed client's program starts over, and may
    /// return again).
    Returned(T),
    /// It panicked, with this message: that client's run ended, the others' went on.
    Panicked(String),
    /// It was still running at the horizon.
    Running,
}

impl<T> Ended<T> {
    /// What the program returned; panics, naming how it ended, if it did not.
    pub fn returned(self) -> T {
        match self {
            Ended::Returned(value) => value,
            Ended::Panicked(message) => panic!("the program panicked: {message}"),
            Ended::Running => panic!("the program was still running at the horizon"),
        }
    }
}

/// What a run of programs gave: how each client's program ended, by slot, and the trace.
#[derive(Debug)]
pub struct Outcome<T> {
    /// How each client's program ended, by slot.
    pub results: Vec<Ended<T>>,
    /// What the simulated server and the fault injector recorded: sessions, watches fired,
    /// faults.
    pub events: Vec<Event>,
}

/// Runs `program` on each client node of `setup` against one simulated server, in a
/// simulation on a fresh thread, until every program has returned and every fault has
/// ended, or until the horizon. A client node's crash starts its program over.
pub fn run<T, F>(setup: Setup, program: impl Fn(Place) -> F + Send + Sync + 'static) -> Outcome<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    outside_the_simulation();
    in_fresh_runtime(setup.seed, move |runtime| {
        with_dead_processes_spawning_nothing(|| {
            let outcome = runtime.block_on(simulate(setup, Arc::new(program)));
            // Its nodes' futures are dropped here, with the spawner that drops what they spawn.
            drop(runtime);
            outcome
        })
    })
}

/// Initialises what the client's dependencies initialise once per process from the random
/// source, before any simulation runs: done inside the first run of a process, it would draw
/// from that run's seeded source (madsim serves `getrandom`), so the first run of a process
/// would differ from a later run of the same seed. ahash 0.8 keys hashlink's sets, which
/// zookeeper-client keeps its watches in, from seeds it draws once per process.
pub(crate) fn outside_the_simulation() {
    let _keys_drawn = ahash::RandomState::new();
}

async fn simulate<T, F>(setup: Setup, program: Arc<dyn Fn(Place) -> F + Send + Sync>) -> Outcome<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let start = Instant::now();
    let time = SimTime::current();
    let recorder = Recorder::new(SimClock::start(time.clone()));
    let network = Network::new(time);
    let server = ServerHandle::new(setup.server, recorder.clone(), network.clone());
    let handle = Handle::current();
    let server_node = server.start_node().await;
    let (done_tx, mut done_rx) = unbounded();
    let client_nodes = (0..setup.clients)
        .map(|slot| {
            let node = Node::Client(slot);
            let dialer = Arc::new(SimDialer::new(node, network.clone()));
            let program = program.clone();
            let done = done_tx.clone();
            let place = Place {
                slot,
                server: server_addr(),
            };
            let main = move || {
                let (dialer, program, done) = (dialer.clone(), program.clone(), done.clone());
                async move {
                    let running = AssertUnwindSafe(on_client_node(dialer, program(place)));
                    let ended = match running.catch_unwind().await {
                        Ok(value) => Ended::Returned(value),
                        Err(panic) => Ended::Panicked(panic_message(&*panic)),
                    };
                    let _ = done.unbounded_send((slot, ended));
                }
            };
            handle
                .create_node()
                .name(format!("client-{slot}"))
                .ip(node_ip(node))
                .init(main)
                .build()
                .id()
        })
        .collect();
    drop(done_tx);
    let injector = Injector {
        handle: handle.clone(),
        client_nodes,
        servers: Servers::Standalone {
            server,
            node: server_node.id(),
        },
        network,
        recorder: recorder.clone(),
    };
    let faults = madsim::task::spawn(injector.run(start, setup.faults));
    let mut results = BTreeMap::new();
    let settled = async {
        while results.len() < usize::from(setup.clients) {
            let Some((slot, result)) = done_rx.next().await else {
                break;
            };
            results.entry(slot).or_insert(result);
        }
        let _ = faults.await;
    };
    // Past the horizon, what has not returned is left running as the runtime is dropped.
    let _ = madsim::time::timeout(setup.horizon.saturating_sub(start.elapsed()), settled).await;
    Outcome {
        results: (0..setup.clients)
            .map(|slot| results.remove(&slot).unwrap_or(Ended::Running))
            .collect(),
        events: recorder.take_events_in_order(),
    }
}
