//! One client of a real run that runs a user's program ([`programs::Program`]) in place of a
//! recipe: a binary of the user's that calls [`serve`] with its programs is the run's
//! [`crate::ClientLauncher`] (see [`crate::run_program`]).
//!
//! It speaks the parent's protocol as a recipe's client process does ([`crate::client`]): its
//! spec on the first line of stdin, `ready`, `start`, then its events and `done` on stdout,
//! and `expire_session` commands. The program runs on [`crate::executor`]'s one-thread
//! executor, on `async-io`'s reactor, with a spawns-core spawner: the client library's
//! timers, connections and tasks are the real ones the shims of `shims/` hand out outside a
//! simulation. Each connection it opens is real TCP read by the same tap as in the simulator
//! ([`programs::Recording`]), so the trace has the same `op_sent`, session and watch events,
//! and an expiry is made with the newest session's id and password the tap saw.
//!
//! What the program writes on stdout goes to stderr: stdout carries the protocol alone.

use std::fs::File;
use std::future::Future;
use std::io::Write;
use std::net::SocketAddr;
use std::os::fd::FromRawFd;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use coordination::ids::ClientSlot;
use programs::{Backend, Contender, Place, Program, Recording};
use runtime::drive::Executor;
use scenarios::scenario::Span;
use simio::{Connecting, Connection, Dial};
use trace::EventKind;

use crate::clock::{RealClock, RealExecutor, Recorder};
use crate::executor;
use crate::expire::expire;
use crate::resource::RemoteResource;
use crate::wire::{ClientSpec, Command, Report, receive, send};

/// Runs the client process for whichever of `programs` the spec's recipe names: reads the
/// spec from stdin, runs the program to its end, reports `done`, and runs what the client
/// library still does (a session's close) until the parent ends it. Exits 2 with one line on
/// stderr when the spec is bad, names no program of `programs`, or the resource is
/// unreachable; 1 when stdin ends (the parent is gone).
pub fn serve(programs: &[Program]) -> ExitCode {
    match run(programs) {
        Ok(code) => code,
        Err(why) => {
            eprintln!("{why}");
            ExitCode::from(2)
        }
    }
}

fn run(programs: &[Program]) -> Result<ExitCode, String> {
    let reports = Reports::take_stdout()?;
    let spec: ClientSpec = receive(&mut std::io::stdin().lock(), "stdin")?
        .ok_or("stdin: expected the client's spec, found the end of the stream")?;
    let recipe = &spec.scenario.recipe;
    let Some(program) = programs.iter().find(|p| p.recipe().name() == recipe.name()) else {
        let served: Vec<&str> = programs.iter().map(|p| p.recipe().name()).collect();
        return Err(format!(
            "recipe: expected one of the programs this binary serves ({}), found `{recipe}`",
            served.join(", ")
        ));
    };
    let resource = RemoteResource::connect(&spec.resource)?;
    reports.send(&Report::Ready);
    match receive::<Command>(&mut std::io::stdin().lock(), "stdin")? {
        Some(Command::Start) => {}
        None => return Ok(ExitCode::from(1)),
        Some(other) => return Err(format!("stdin: expected `start` first, found {other:?}")),
    }
    let sink_reports = reports.clone();
    let recorder = Recorder::streaming(
        RealClock::from_monotonic_ns(spec.origin_ns),
        Arc::new(move |event| sink_reports.send(&Report::Event(event))),
    );
    let backend: Arc<dyn Backend> = Arc::new(Real {
        recorder,
        executor: RealExecutor::for_client(spec.seed, spec.slot, spec.restarts),
    });
    let recording = Arc::new(Recording::new(Arc::new(Tcp), spec.slot, backend.clone()));
    let done = Arc::new(AtomicBool::new(false));
    let obeying = Obeying {
        reports: reports.clone(),
        recording: recording.clone(),
        connect_string: spec.connect_string.clone(),
        done: done.clone(),
    };
    std::thread::Builder::new()
        .name("commands".into())
        .spawn(move || obeying.obey())
        .map_err(|e| format!("cannot start the command thread: {e}"))?;
    let scenario = &spec.scenario;
    let contender = Contender::new(Place {
        slot: spec.slot,
        server: spec.connect_string.clone(),
        session_timeout: Duration::from_millis(scenario.server.session_timeout_ms),
        lock_path: scenario.lock_path.as_str().to_owned(),
        workload: scenario.workload.clone(),
        backend,
        resource: Arc::new(resource),
    });
    executor::block_on(async {
        programs::with_environment(recording, spawn_here, program.run(contender)).await;
        done.store(true, Ordering::SeqCst);
        reports.send(&Report::Done);
        // The client library's tasks (a dropped client's close) run on until the parent ends
        // the process, or stdin ends.
        futures::future::pending::<()>().await;
    });
    Ok(ExitCode::SUCCESS)
}

/// Spawns `task` on the executor running on this thread; one spawned when none runs (a
/// destructor's, as the process ends) is dropped.
fn spawn_here(task: programs::Task) {
    drop(executor::spawn(task));
}

/// The protocol's side of stdout: a copy of the process's stdout, whose own descriptor then
/// points at stderr, so that nothing the program prints can break a line of the protocol.
/// Each report is written whole, from any thread.
#[derive(Clone)]
struct Reports(Arc<Mutex<File>>);

impl Reports {
    fn take_stdout() -> Result<Reports, String> {
        std::io::stdout()
            .flush()
            .map_err(|e| format!("cannot flush stdout: {e}"))?;
        // SAFETY: dup and dup2 on the process's own standard descriptors; the copy is owned
        // by the `File` alone.
        let protocol = unsafe {
            let copy = libc::dup(libc::STDOUT_FILENO);
            if copy < 0 || libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) < 0 {
                return Err(format!(
                    "cannot set stdout aside for the protocol: {}",
                    std::io::Error::last_os_error()
                ));
            }
            File::from_raw_fd(copy)
        };
        Ok(Reports(Arc::new(Mutex::new(protocol))))
    }

    /// Sends `report` to the parent; a parent that is gone stops reading, and stdin's end
    /// then ends the process.
    fn send(&self, report: &Report) {
        let mut out = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let _ = send(&mut *out, report);
    }
}

/// What carries out the parent's commands, on a thread of its own.
struct Obeying {
    reports: Reports,
    recording: Arc<Recording>,
    connect_string: String,
    /// Whether the program has ended.
    done: Arc<AtomicBool>,
}

impl Obeying {
    /// Carries out each command until stdin ends, then ends the process (the parent is gone).
    fn obey(self) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build();
        let mut stdin = std::io::stdin().lock();
        while let Ok(Some(command)) = receive::<Command>(&mut stdin, "stdin") {
            match command {
                Command::ExpireSession => {
                    let outcome = match &runtime {
                        Ok(runtime) => runtime.block_on(self.expire()),
                        Err(e) => Err(format!("cannot build a tokio runtime: {e}")),
                    };
                    self.reports.send(&Report::Expired(outcome));
                }
                // Already started.
                Command::Start => {}
            }
        }
        std::process::exit(1);
    }

    /// Expires the newest session the program's connections were given; a program that has
    /// ended has nothing left to expire, as in the simulator.
    async fn expire(&self) -> Result<(), String> {
        if self.done.load(Ordering::SeqCst) {
            return Ok(());
        }
        let Some(keys) = self.recording.newest_session() else {
            return Err("the program has no session yet".into());
        };
        expire(&self.connect_string, keys.id, &keys.password, keys.timeout).await
    }
}

/// Real TCP connections, for the tap to read.
struct Tcp;

impl Dial for Tcp {
    fn dial(&self, addr: SocketAddr) -> Connecting {
        Box::pin(async move {
            let stream = tcp::TcpStream::connect(addr).await?;
            Ok(Box::new(stream) as Box<dyn Connection>)
        })
    }
}

/// A real client process's backend: its streaming recorder, real timers on `async-io`'s
/// reactor, and its stream of the run's seed.
struct Real {
    recorder: Recorder,
    executor: RealExecutor,
}

impl Backend for Real {
    fn record(&self, slot: ClientSlot, kind: EventKind) {
        self.recorder.record(Some(slot), kind);
    }

    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()>>> {
        let timer = async_io::Timer::after(duration);
        Box::pin(async move {
            timer.await;
        })
    }

    fn draw_ms(&self, span: Span) -> Duration {
        self.executor.draw_ms(span)
    }
}
