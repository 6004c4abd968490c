//! One client of a real run as its own OS process (`splitbrain real-client`, started by the
//! run's parent, see [`crate::ClientLauncher`]): it reads its spec (`wire::ClientSpec`) from the first line
//! of stdin, opens its own sessions on ZooKeeper, runs the scenario's recipe, framework layer
//! and workload ([`runtime::drive`]) on the run's shared clock, reaches the fenced resource
//! through the parent's socket, and reports each trace event on stdout as it happens, and each
//! cycle of its workload as it begins it (so that a process started after a crash carries on
//! with the cycles its spec says were not begun, as a restarted simulated client does). It
//! reports `ready` and starts its workload when told `start` (so that a process slow to
//! start does not eat into the scenario's timeline); later stdin lines are the parent's
//! commands; when stdin ends (the parent is gone), it exits.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use coordination::framework::Framework;
use futures::channel::mpsc::{UnboundedSender, unbounded};
use futures::{FutureExt, StreamExt, select_biased};
use runtime::drive::{ClientWork, Started};
use trace::record::EventSink;

use crate::clock::{RealClock, RealExecutor, Recorder};
use crate::resource::RemoteResource;
use crate::session::RealConnector;
use crate::wire::{ClientSpec, Command, Report, receive, send};

/// Runs the client process: reads the spec from stdin, runs the client to the end of its
/// workload, reports `done` and exits 0; exits 2 with one line on stderr when the spec is
/// bad or the resource unreachable, and 1 when stdin ends first (the parent is gone).
pub fn serve() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(why) => {
            eprintln!("{why}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<ExitCode, String> {
    let spec: ClientSpec = receive(&mut std::io::stdin().lock(), "stdin")?
        .ok_or("stdin: expected the client's spec, found the end of the stream")?;
    if spec.scenario.recipe.built_in().is_none() {
        return Err(format!(
            "recipe: expected a recipe of splitbrain's table, found `{}`",
            spec.scenario.recipe
        ));
    }
    let resource = RemoteResource::connect(&spec.resource)?;
    report(&Report::Ready);
    match receive::<Command>(&mut std::io::stdin().lock(), "stdin")? {
        Some(Command::Start) => {}
        None => return Ok(ExitCode::from(1)),
        Some(other) => return Err(format!("stdin: expected `start` first, found {other:?}")),
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot build a tokio runtime: {e}"))?;
    let (commands_tx, mut commands) = unbounded();
    std::thread::Builder::new()
        .name("commands".into())
        .spawn(move || read_commands(&commands_tx))
        .map_err(|e| format!("cannot start the command thread: {e}"))?;
    let sink: Arc<EventSink> = Arc::new(|event| report(&Report::Event(event)));
    let recorder = Recorder::streaming(RealClock::from_monotonic_ns(spec.origin_ns), sink);
    let scenario = &spec.scenario;
    let work = ClientWork {
        slot: spec.slot,
        recipe: scenario.recipe.clone(),
        lock_path: scenario.lock_path.clone(),
        workload: scenario.workload.clone(),
        settings: scenario.recipe_settings,
        recorder,
        resource: Arc::new(resource),
        started: Started::telling(spec.begun, |begun| report(&Report::Begun(begun))),
        executor: RealExecutor::for_client(spec.seed, spec.slot, spec.restarts),
    };
    let timeout = Duration::from_millis(scenario.server.session_timeout_ms);
    let connector = RealConnector::new(spec.connect_string.clone(), timeout);
    let nonce = work.executor.next_u32();
    let framework = Framework::new(spec.scenario.framework, spec.slot, nonce);
    let obey = async {
        while let Some(command) = commands.next().await {
            match command {
                Command::ExpireSession => report(&Report::Expired(expire(&connector).await)),
                // Already started.
                Command::Start => {}
            }
        }
    };
    Ok(runtime.block_on(async {
        select_biased! {
            () = work.run(framework, &connector).fuse() => {
                report(&Report::Done);
                ExitCode::SUCCESS
            }
            () = obey.fuse() => ExitCode::from(1),
        }
    }))
}

/// Expires the client's newest session; a client whose session has closed (its workload
/// done) has nothing left to expire, as in the simulator.
async fn expire(connector: &RealConnector) -> Result<(), String> {
    match connector.expire_latest().await {
        Err(_) if !connector.has_open_session() => Ok(()),
        other => other,
    }
}

/// Passes stdin's commands on until it ends (or a line is not a command).
fn read_commands(commands: &UnboundedSender<Command>) {
    let mut stdin = std::io::stdin().lock();
    while let Ok(Some(command)) = receive::<Command>(&mut stdin, "stdin") {
        if commands.unbounded_send(command).is_err() {
            return;
        }
    }
}

/// Sends `message` to the parent on stdout; a parent that is gone stops reading, and stdin's
/// end then ends the process.
fn report(message: &Report) {
    let _ = send(&mut std::io::stdout().lock(), message);
}
