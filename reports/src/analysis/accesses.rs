//! Reads and writes of the protected resource, with what a reader of the report needs to
//! know about each: the highest token the resource had accepted before it (why a stale
//! access was rejected) and, for an accepted write that did not raise the counter, whose
//! write it overwrote (a lost update).

use coordination::fencing::Token;
use coordination::ids::Owner;
use trace::{EventKind, Trace};

/// One access to the resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Access {
    /// When.
    pub t: u64,
    /// Which client.
    pub client: u16,
    /// Which owner on it.
    pub owner: Owner,
    /// A write (else a read).
    pub write: bool,
    /// The token presented.
    pub token: Token,
    /// The value read or written.
    pub value: Option<u64>,
    /// Whether the resource accepted it.
    pub accepted: bool,
    /// The highest token accepted before this access.
    pub highest_before: Option<Token>,
    /// For an accepted write that did not raise the counter: the write it overwrote (client
    /// and value) — an increment is lost.
    pub overwrote: Option<(u16, u64)>,
    /// The event's index.
    pub event: usize,
}

/// The accesses of `trace`, in order.
pub(crate) fn accesses(trace: &Trace) -> Vec<Access> {
    let mut highest: Option<Token> = None;
    let mut last_write: Option<(u16, u64)> = None;
    let mut out = Vec::new();
    for (index, event) in trace.events.iter().enumerate() {
        let Some(client) = event.client else { continue };
        let (write, owner, token, value, accepted) = match event.kind {
            EventKind::ResourceRead {
                owner,
                token,
                accepted,
                value,
            } => (false, owner, token, value, accepted),
            EventKind::ResourceWrite {
                owner,
                token,
                value,
                accepted,
            } => (true, owner, token, Some(value), accepted),
            _ => continue,
        };
        let mut overwrote = None;
        if write && accepted {
            let value = value.unwrap_or_default();
            overwrote = last_write.filter(|&(_, before)| value <= before);
            last_write = Some((client.0, value));
        }
        out.push(Access {
            t: event.t,
            client: client.0,
            owner,
            write,
            token,
            value,
            accepted,
            highest_before: highest,
            overwrote,
            event: index,
        });
        if accepted {
            highest = highest.max(Some(token));
        }
    }
    out
}
