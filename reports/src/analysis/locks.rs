//! Waiting and holding, per client and owner, exactly as the checkers see them: the spans
//! are `properties::check::timeline`'s intervals (the checkers' monitors folded over the
//! trace), put on the time axis and told why they ended. (A hold runs from `Acquired` or
//! `IsLeader` to the first of the release call, `Relinquish`, `Close`, `NotLeader`, `Lost`, a
//! crash or, under the standard error policy, `Suspended`; `Reconnected` with the same
//! session holds again with the same token.)

use coordination::fencing::Token;
use coordination::ids::Owner;
use coordination::recipes::Mode;
use coordination::recipes::{Call, Notice};
use properties::check::timeline::{Interval, Role, Timeline};
use scenarios::fault::Fault;
use trace::{EventKind, Trace};

/// Whether a lock span waits or holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LockKind {
    /// From the acquire call to `Acquired`, `TimedOut` or `Failed`.
    Waiting,
    /// Holding with this fencing token.
    Holding(Token),
}

/// Why a lock span ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LockEnd {
    /// Still going when the trace ended.
    Open,
    /// The waiter got the lock.
    Acquired,
    /// The waiter gave up or failed.
    GaveUp,
    /// The holder called release.
    Released,
    /// The holder's connection dropped.
    Suspended,
    /// The leader was told it is not leader any more.
    NotLeader,
    /// The holder's session was lost.
    Lost,
    /// The client crashed.
    Crashed,
}

impl LockEnd {
    /// How the page words it.
    pub(crate) fn words(self) -> &'static str {
        match self {
            LockEnd::Open => "still going when the trace ends",
            LockEnd::Acquired => "acquired",
            LockEnd::GaveUp => "gave up",
            LockEnd::Released => "released",
            LockEnd::Suspended => "connection suspended",
            LockEnd::NotLeader => "not leader any more",
            LockEnd::Lost => "session lost",
            LockEnd::Crashed => "client crashed",
        }
    }

    /// Why a span ended, from the event that ended it.
    fn of(kind: &EventKind) -> LockEnd {
        match kind {
            EventKind::Call {
                call: Call::Release { .. } | Call::Relinquish { .. } | Call::Close { .. },
            } => LockEnd::Released,
            EventKind::Notice { notice } => match notice {
                Notice::Acquired { .. } | Notice::IsLeader { .. } | Notice::Reconnected { .. } => {
                    LockEnd::Acquired
                }
                Notice::Suspended { .. } => LockEnd::Suspended,
                Notice::NotLeader { .. } => LockEnd::NotLeader,
                Notice::Lost { .. } => LockEnd::Lost,
                Notice::TimedOut { .. } | Notice::Failed { .. } | Notice::Closed { .. } => {
                    LockEnd::GaveUp
                }
                _ => LockEnd::Open,
            },
            EventKind::FaultStart {
                fault: Fault::Crash { .. },
            } => LockEnd::Crashed,
            _ => LockEnd::Open,
        }
    }
}

/// One waiting or holding interval of one owner on one client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LockSpan {
    /// The client.
    pub client: u16,
    /// The owner on it.
    pub owner: Owner,
    /// What is waited for or held: a lock (in a mode) or leadership.
    pub role: Role,
    /// Waiting or holding.
    pub kind: LockKind,
    /// When it began.
    pub start: u64,
    /// When it ended (the trace's end when `open`).
    pub end: u64,
    /// True when the trace ended first.
    pub open: bool,
    /// Why it ended.
    pub ended: LockEnd,
    /// The event that began it.
    pub start_event: usize,
    /// The event that ended it.
    pub end_event: Option<usize>,
}

impl LockSpan {
    /// What the span's holder holds, for sentences: `the lock`, `the read lock`, `a lease`,
    /// `leadership`.
    pub(crate) fn held(&self) -> &'static str {
        match self.role {
            Role::Lock(Mode::Exclusive) => "the lock",
            Role::Lock(Mode::Read) => "the read lock",
            Role::Lock(Mode::Write) => "the write lock",
            Role::Lock(Mode::Lease) => "a lease",
            Role::Leader => "leadership",
        }
    }

    /// The hold's label on the timeline: `token 7`, `read 7`, `lease 7`, `leader 7`.
    pub(crate) fn label(&self, token: Token) -> String {
        let what = match self.role {
            Role::Lock(Mode::Exclusive) => "token",
            Role::Lock(Mode::Read) => "read",
            Role::Lock(Mode::Write) => "write",
            Role::Lock(Mode::Lease) => "lease",
            Role::Leader => "leader",
        };
        format!("{what} {token}")
    }

    /// True for a hold.
    pub(crate) fn is_hold(&self) -> bool {
        matches!(self.kind, LockKind::Holding(_))
    }

    /// The hold's token.
    pub(crate) fn token(&self) -> Option<Token> {
        match self.kind {
            LockKind::Holding(token) => Some(token),
            LockKind::Waiting => None,
        }
    }
}

/// The lock spans of `trace`, which ends at `end`, in the order they began.
pub(crate) fn spans(trace: &Trace, end: u64) -> Vec<LockSpan> {
    let timeline = Timeline::of(trace);
    let t = |index: usize| trace.events.get(index).map_or(end, |e| e.t);
    let span = |interval: &Interval, kind| LockSpan {
        client: interval.who.0.0,
        owner: interval.who.1,
        role: interval.role,
        kind,
        start: t(interval.start),
        end: interval.end.map_or(end, t),
        open: interval.end.is_none(),
        ended: interval
            .end
            .and_then(|i| trace.events.get(i))
            .map_or(LockEnd::Open, |e| LockEnd::of(&e.kind)),
        start_event: interval.start,
        end_event: interval.end,
    };
    let waits = timeline.waits.iter().map(|w| span(w, LockKind::Waiting));
    let holds = timeline.holds.iter().map(|h| {
        let token = h.token.unwrap_or(Token(0));
        span(h, LockKind::Holding(token))
    });
    let mut spans: Vec<LockSpan> = waits.chain(holds).collect();
    spans.sort_by_key(|s| (s.start_event, s.start));
    spans
}
