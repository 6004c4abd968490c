//! The Rust contender of `splitbrain bench --real` (the hidden `splitbrain bench-client`): one
//! OS process with its own session, running `cycles` of our `Mutex`, the naive herd lock or
//! our `LeaderLatch` through `coordination::driver::Driver` with no hold or think time, and printing
//! the same lines as Curator's (`real/java/CuratorBench.java`, see `bench::lines`), plus
//! the watch events its session delivered. Its spec ([`ContenderSpec`]) is the first JSON
//! line of stdin; it says `ready` once its session is connected, starts on `go`, prints its
//! lines when every cycle is done, and closes its session when stdin ends.

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use coordination::client::Client;
use coordination::driver::{Driver, Handle, Observed, Observer};
use coordination::framework::{Framework, FrameworkConfig};
use coordination::recipe::Recipe;
use coordination::recipes::{Call, LeaderLatch, Mutex, NaiveHerdMutex, Notice};
use coordination::session::{RawEvent, RawState};
use futures::StreamExt;
use futures::channel::{mpsc, oneshot};
use runtime::workload::OWNER;

use super::lines::{Line, Mark, format};
use super::{ContenderSpec, Lock};
use crate::clock::monotonic_ns;
use crate::executor;
use crate::session::RealConnector;
use crate::wire::receive;

/// Runs the contender process: exits 0 after its cycles once stdin ends, 2 with one line on
/// stderr when the spec is bad, the server unreachable or the recipe stops early.
pub fn serve() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("bench contender: {why}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let spec: ContenderSpec = receive(&mut std::io::stdin().lock(), "stdin")?
        .ok_or("stdin: expected the contender's spec, found the end of the stream")?;
    // The session runs on this thread beside its driver: one thread for the socket, the
    // session and the recipe.
    let connector = RealConnector::new(
        spec.connect_string.clone(),
        Duration::from_millis(spec.session_timeout_ms),
    )
    .on_the_calling_thread();
    let framework = Framework::new(FrameworkConfig::default(), spec.slot, std::process::id());
    let path = spec.lock_path.clone();
    executor::block_on(async {
        match spec.lock {
            Lock::Mutex => contend(Mutex::new(path), framework, &connector, &spec).await,
            Lock::NaiveHerd => {
                contend(NaiveHerdMutex::new(path), framework, &connector, &spec).await
            }
            Lock::LeaderLatch => {
                contend(LeaderLatch::new(path), framework, &connector, &spec).await
            }
        }
    })
}

/// Counts the watch events the session delivers and says when it is first connected.
struct Watching {
    watched: Arc<AtomicU64>,
    connected: Option<oneshot::Sender<()>>,
}

impl<R: Recipe> Observer<R> for Watching {
    fn observe(&mut self, observed: Observed<'_, R>) {
        match observed {
            Observed::Event(RawEvent::Watch { .. }) => {
                self.watched.fetch_add(1, Ordering::Relaxed);
            }
            Observed::Event(RawEvent::State {
                state: RawState::Connected { .. },
            }) => {
                if let Some(connected) = self.connected.take() {
                    let _ = connected.send(());
                }
            }
            _ => {}
        }
    }
}

/// Runs `recipe`'s cycles beside its driver; the session is closed when the cycles are done
/// and stdin has ended, or at once when they fail.
async fn contend<R: Recipe<Call = Call, Notice = Notice>>(
    recipe: R,
    framework: Framework,
    connector: &RealConnector,
    spec: &ContenderSpec,
) -> Result<(), String> {
    let (driver, handle) = Driver::new(Client::new(framework, recipe));
    let (connected_tx, connected) = oneshot::channel();
    let watched = Arc::new(AtomicU64::new(0));
    let mut watching = Watching {
        watched: watched.clone(),
        connected: Some(connected_tx),
    };
    let mut stdin = stdin_lines()?;
    let work = async move {
        // Dropped on every way out, which closes the session and ends the driver.
        let mut handle = handle;
        connected
            .await
            .map_err(|_| "the session ended before it connected".to_string())?;
        say(&format(monotonic_ns(), Line::Ready));
        match stdin.next().await.as_deref() {
            Some("go") => {}
            other => return Err(format!("stdin: expected `go`, found {other:?}")),
        }
        let before = watched.load(Ordering::Relaxed);
        let mut marks = Vec::with_capacity(spec.cycles as usize * 4);
        for _ in 0..spec.cycles {
            cycle(spec.lock, &mut handle, &mut marks).await?;
        }
        let done = monotonic_ns();
        let mut out: String = (marks.iter())
            .map(|&(nanos, mark)| format(nanos, Line::Mark(mark)) + "\n")
            .collect();
        let count = watched.load(Ordering::Relaxed) - before;
        out += &(format(done, Line::Watched(count)) + "\n");
        out += &format(done, Line::Done);
        say(&out);
        while stdin.next().await.is_some() {}
        Ok(())
    };
    let (_, outcome) = futures::join!(driver.run(connector, &mut watching), work);
    outcome
}

/// One cycle of `lock`: acquire and release, or start, lead and close; its marks appended.
async fn cycle<R: Recipe<Call = Call, Notice = Notice>>(
    lock: Lock,
    handle: &mut Handle<R>,
    marks: &mut Vec<(u64, Mark)>,
) -> Result<(), String> {
    // Each step: the mark of the call (if it has one), the call, the outcome it waits for.
    let steps: [(Option<Mark>, Call, Mark); 2] = match lock {
        Lock::Mutex | Lock::NaiveHerd => [
            (
                Some(Mark::Acquire),
                Call::acquire(OWNER, None),
                Mark::Acquired,
            ),
            (None, Call::release(OWNER), Mark::Released),
        ],
        Lock::LeaderLatch => [
            (
                Some(Mark::Start),
                Call::Start { owner: OWNER },
                Mark::Leader,
            ),
            (
                Some(Mark::Close),
                Call::Close {
                    owner: OWNER,
                    notify: false,
                },
                Mark::Closed,
            ),
        ],
    };
    for (called, call, awaited) in steps {
        if let Some(called) = called {
            marks.push((monotonic_ns(), called));
        }
        handle
            .call(call)
            .map_err(|_| "the driver stopped".to_string())?;
        loop {
            let notice = handle
                .next_notice()
                .await
                .ok_or("the driver stopped before the cycle ended")?;
            if let Some(mark) = mark_of(&notice) {
                marks.push((monotonic_ns(), mark));
                if mark == awaited {
                    break;
                }
            } else if let Notice::Failed { .. } | Notice::Lost { .. } = notice {
                return Err(format!("the recipe said {notice:?}"));
            }
        }
    }
    Ok(())
}

/// The mark a notice of a cycle stands for, if any.
fn mark_of(notice: &Notice) -> Option<Mark> {
    match notice {
        Notice::Acquired { .. } => Some(Mark::Acquired),
        Notice::Released { .. } => Some(Mark::Released),
        Notice::IsLeader { .. } => Some(Mark::Leader),
        Notice::Closed { .. } => Some(Mark::Closed),
        _ => None,
    }
}

/// Prints `text` and a newline on stdout, flushed.
fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// The lines of stdin, read by a thread of their own; the stream ends with stdin.
fn stdin_lines() -> Result<mpsc::UnboundedReceiver<String>, String> {
    let (lines, received) = mpsc::unbounded();
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { return };
                if lines.unbounded_send(line.trim().to_string()).is_err() {
                    return;
                }
            }
        })
        .map_err(|e| format!("cannot start the stdin thread: {e}"))?;
    Ok(received)
}
