//! What a real run's parent and its client processes say to one another, as JSON lines: the
//! [`ClientSpec`] and [`Command`]s on a client's stdin, its [`Report`]s on its stdout, and
//! the fenced resource's requests and replies on the resource's socket.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use coordination::fencing::Token;
use coordination::ids::{ClientSlot, Owner};
use scenarios::scenario::Scenario;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use trace::Event;

/// What a client process runs: the first line of its stdin.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClientSpec {
    /// The scenario (the run spec).
    pub scenario: Scenario,
    /// The run's seed (the client draws its hold and think times from its stream of it).
    pub seed: u64,
    /// Which client it is.
    pub slot: ClientSlot,
    /// Where its ZooKeeper is (a proxy of the run's, when the run has one).
    pub connect_string: String,
    /// The run's time zero, in nanoseconds of `CLOCK_MONOTONIC`.
    pub origin_ns: u64,
    /// The socket of the run's fenced resource.
    pub resource: PathBuf,
    /// How many processes of this client were crashed before this one (0 for its first):
    /// each process draws from a stream of its own, so that its protection ids differ from
    /// those of a dead one, whose nodes may still be on the server.
    pub restarts: u32,
    /// The cycles of its workload that its earlier processes began (as they reported them,
    /// [`Report::Begun`]): it carries on with the rest.
    pub begun: u32,
}

/// What the parent asks of a running client process: later lines of its stdin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Start the workload (the first command, once every client process is ready).
    Start,
    /// Expire the client's newest session as Curator's test utilities do.
    ExpireSession,
}

/// What a client process tells the parent: the lines of its stdout.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Report {
    /// It has read its spec and reached the fenced resource: it starts on [`Command::Start`].
    Ready,
    /// An event of its trace, stamped on the run's clock.
    Event(Event),
    /// It begins a cycle of its workload: the cycles begun so far, across its processes. Sent
    /// before the cycle's first call, so that a process killed at any instant has reported
    /// every cycle it began in a way anyone could see.
    Begun(u32),
    /// The outcome of [`Command::ExpireSession`].
    Expired(Result<(), String>),
    /// Its workload is done and its session closed; it exits next.
    Done,
}

/// An access to the fenced resource: a read, or a write of `write`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct ResourceRequest {
    /// The client making it.
    pub client: ClientSlot,
    /// The owner on that client.
    pub owner: Owner,
    /// Its fencing token.
    pub token: Token,
    /// The value to write; `None` reads.
    pub write: Option<u64>,
}

/// The resource's answer: the value read, or whether the write was accepted.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct ResourceReply {
    /// A read's value, unless the token was stale.
    pub value: Option<u64>,
    /// Whether the access was accepted.
    pub accepted: bool,
}

/// Writes `message` as one line and flushes it.
pub fn send<T: Serialize>(out: &mut impl Write, message: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

/// Reads the next line as a `T`: `Ok(None)` at the end of the stream; `what` names the
/// stream in an error.
pub fn receive<T: DeserializeOwned>(
    input: &mut impl BufRead,
    what: &str,
) -> Result<Option<T>, String> {
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) => Ok(None),
        Ok(_) => serde_json::from_str(&line)
            .map(Some)
            .map_err(|e| format!("{what}: expected a JSON line of the protocol, found: {e}")),
        Err(error) => Err(format!("{what}: cannot read: {error}")),
    }
}
