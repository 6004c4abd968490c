//! The contender program's side of the protocol, for the contenders this crate runs itself
//! (`zookeeper-async`'s, `zookeeper-client`'s): [`serve`] reads the `hello` and then one
//! command a line from stdin, answers `read`, `write` and a second `hello` itself, hands
//! every other command to the library's [`Served`] one at a time, and prints each [`Report`]
//! stamped with `CLOCK_MONOTONIC` ([`say`]). A panic's text is kept ([`panicked`]), so that a
//! library call that panicked is a `failed` report naming it, not the contender's end.
//!
//! The library's calls run on the runtime the library needs, which the caller of [`serve`]
//! gives: tokio for `zookeeper-async`, [`crate::executor`]'s one-thread executor for
//! `zookeeper-client`. Stdin is read on a thread of its own, so either can wait for a line.

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Mutex;

use futures::StreamExt;
use futures::channel::mpsc::{UnboundedReceiver, unbounded};

use super::protocol::{Command, Hello, Report, Stamped};
use crate::clock::monotonic_ns;

/// The text and place of the last panic, for the `failed` report of a call that panicked.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// A run of the protocol's loop, for the runtime to run to its end.
pub type Run = Pin<Box<dyn Future<Output = Result<(), String>>>>;

/// A library's contender: what it does with the commands [`serve`] does not answer itself.
pub trait Served: Sized + 'static {
    /// Connects as `hello` says and reports `ready`; `Err` (one line) when it cannot.
    fn start(hello: Hello) -> impl Future<Output = Result<Self, String>>;

    /// Answers `command` (neither `hello`, `read` nor `write`), reporting as its library does.
    fn answer(&mut self, command: Command) -> impl Future<Output = ()>;

    /// Gives back what it holds and closes its session: stdin has ended.
    fn end(self) -> impl Future<Output = ()>;
}

/// Runs the contender `S` on the runtime `block_on` builds and runs the protocol's loop on:
/// exits 0 once stdin ends, 2 with one line on stderr when a line is not a command or the
/// library (or its runtime) cannot start.
pub fn serve<S: Served>(block_on: impl FnOnce(Run) -> Result<(), String>) -> ExitCode {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some(info.to_string());
        hook(info);
    }));
    match block_on(Box::pin(run::<S>())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("{why}");
            ExitCode::from(2)
        }
    }
}

async fn run<S: Served>() -> Result<(), String> {
    let mut lines = stdin_lines();
    let first = (lines.next().await).ok_or("stdin: expected `hello`, found its end")?;
    let Command::Hello(hello) = command(&first)? else {
        return Err(format!("stdin: expected `hello` first, found `{first}`"));
    };
    let mut served = S::start(hello).await?;
    while let Some(line) = lines.next().await {
        match command(&line)? {
            Command::Read { token } => say(Report::Read { token }),
            Command::Write { token, value } => say(Report::Write { token, value }),
            Command::Hello(_) => say(failure("unsupported", "hello twice")),
            other => served.answer(other).await,
        }
    }
    served.end().await;
    Ok(())
}

/// The lines of stdin, read on a thread of their own.
fn stdin_lines() -> UnboundedReceiver<String> {
    let (lines, receiver) = unbounded();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if lines.unbounded_send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

fn command(line: &str) -> Result<Command, String> {
    serde_json::from_str(line)
        .map_err(|e| format!("stdin: expected a command, found `{line}`: {e}"))
}

/// Prints `report`, stamped now, as one line of stdout.
pub fn say(report: Report) {
    let stamped = Stamped {
        t: monotonic_ns(),
        report,
    };
    println!(
        "{}",
        serde_json::to_string(&stamped).expect("a report is JSON")
    );
}

/// A `failed` report: `error` is one of the protocol's names, `message` the library's text.
pub fn failure(error: &str, message: &str) -> Report {
    Report::Failed {
        error: error.into(),
        message: message.into(),
    }
}

/// The `failed` report of a call that panicked: the panic's text and place, or `otherwise`
/// when none was kept.
pub fn panicked(otherwise: &str) -> Report {
    let panic = LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()).take();
    failure("panicked", &panic.unwrap_or_else(|| otherwise.into()))
}

/// A czxid as a token (zxids are not negative).
pub fn czxid(zxid: i64) -> u64 {
    u64::try_from(zxid).unwrap_or(0)
}
