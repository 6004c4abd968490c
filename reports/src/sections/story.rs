//! The causal story: the violation's window retold in plain sentences, one per event that
//! matters — faults, expiries, acquisitions and releases, connection changes, resource
//! accesses — with the consequences spelled out (whose node went with an expiry, who still
//! believed it held the lock when someone else acquired it, why a write was rejected).

use std::fmt::{self, Write};

use coordination::fencing::Token;
use coordination::ids::ClientSlot;
use coordination::recipe::SessionEvent;
use coordination::recipes::{Call, Notice};
use coordination::zk::EventKind as WatchKind;
use recipe_table::property::{Property, Violation};
use scenarios::fault::Fault;
use trace::{Event, EventKind, ServerSession};

use super::timeline::access_words;
use crate::analysis::{self, Lane, NodeEnd, Run};
use crate::describe;
use crate::escape::Esc;
use crate::verdict;

/// The most sentences the story tells; the table has the rest.
const MAX_LINES: usize = 80;

/// How a sentence is coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tone {
    /// A fault.
    Fault,
    /// Something broke (expiry, rejection, loss, the violation itself).
    Bad,
    /// The lock changed hands.
    Lock,
    /// Anything else worth a sentence.
    Plain,
}

/// One sentence of the story.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Line {
    t: u64,
    lane: Lane,
    tone: Tone,
    event: Option<usize>,
    text: String,
}

/// Writes the story section.
pub(crate) fn write(out: &mut String, run: &Run, violations: &[Violation]) -> fmt::Result {
    let lines = lines(run, violations.first());
    out.push_str("<section id=\"story\"><h2>What happened</h2>");
    if let Some(first) = violations.first() {
        let (from, to) = analysis::window(run, first);
        write!(
            out,
            "<p class=\"caption\">The events that matter between {} and {}, involving {}, in order.</p>",
            run.clock.at(from),
            run.clock.at(to),
            Esc(&verdict::who(&first.clients))
        )?;
    }
    out.push_str("<ol class=\"story\">");
    for line in lines.iter().take(MAX_LINES) {
        let tone = match line.tone {
            Tone::Fault => "fault",
            Tone::Bad => "bad",
            Tone::Lock => "lock",
            Tone::Plain => "plain",
        };
        let colour = match line.lane {
            Lane::Client(c) => format!("k{}", c % 8),
            Lane::Server => "srv".to_owned(),
        };
        write!(out, "<li class=\"{tone}\"")?;
        if let Some(event) = line.event {
            write!(out, " data-e=\"{event}\"")?;
        }
        write!(
            out,
            "><span class=\"t\">{}</span><span class=\"who {colour}\">{}</span><span class=\"txt\">{}</span></li>",
            Esc(&run.clock.at(line.t)),
            line.lane,
            Esc(&line.text)
        )?;
    }
    out.push_str("</ol>");
    if lines.len() > MAX_LINES {
        write!(
            out,
            "<p class=\"caption\">… and {} more; the event table below has everything.</p>",
            lines.len() - MAX_LINES
        )?;
    }
    out.push_str("</section>");
    Ok(())
}

/// The story of `violation` (of the whole run when there is none), in time order.
fn lines(run: &Run, violation: Option<&Violation>) -> Vec<Line> {
    let (from, to) = violation.map_or((0, run.end), |v| analysis::window(run, v));
    let involved = |lane: Lane| match (violation, lane) {
        (None, _) | (_, Lane::Server) => true,
        (Some(v), Lane::Client(c)) => v.clients.contains(&ClientSlot(c)),
    };
    let mut lines: Vec<Line> = Vec::new();
    for (index, event) in run.trace.events.iter().enumerate() {
        if event.t < from || event.t > to {
            continue;
        }
        if let Some(line) = sentence(run, index, event).filter(|l| involved(l.lane)) {
            lines.push(line);
        }
    }
    if let Some(v) = violation {
        insert(&mut lines, violation_start(v));
        if let Some(end) = violation_end(run, v) {
            insert(&mut lines, end);
        }
    }
    lines
}

/// Inserts `line` after every line at or before its instant.
fn insert(lines: &mut Vec<Line>, line: Line) {
    let at = lines.partition_point(|l| l.t <= line.t);
    lines.insert(at, line);
}

/// The line that opens the violation.
fn violation_start(v: &Violation) -> Line {
    let text = if verdict::is_overlap(v) && v.until.is_some() {
        let all = if v.clients.len() == 2 { "both" } else { "all" };
        let what = match v.property {
            Property::LeaderUniqueBelief => "believe they lead",
            Property::LeaseBound => "believe they hold a lease",
            Property::RwExclusion => "believe they hold the read-write lock",
            Property::LiveSessionExclusion => "hold at once on live sessions",
            _ => "believe they hold the lock",
        };
        format!(
            "From here {} {all} {what}: {} is violated.",
            verdict::who(&v.clients),
            v.property
        )
    } else {
        format!("{} is violated: {}", v.property, v.message)
    };
    Line {
        t: v.at,
        lane: Lane::Server,
        tone: Tone::Bad,
        event: v.events.first().copied(),
        text,
    }
    .with_lane_of(v)
}

/// The line that closes an interval violation.
fn violation_end(run: &Run, v: &Violation) -> Option<Line> {
    let length = verdict::extent(v)?;
    Some(
        Line {
            t: v.at + length,
            lane: Lane::Server,
            tone: Tone::Bad,
            event: None,
            text: match v.property {
                Property::Progress | Property::Answered => format!(
                    "The run ends, {} later, with the waiter still waiting.",
                    run.clock.duration(length)
                ),
                _ if verdict::is_overlap(v) => {
                    format!("The overlap ends after {}.", run.clock.duration(length))
                }
                _ => format!("The violation ends after {}.", run.clock.duration(length)),
            },
        }
        .with_lane_of(v),
    )
}

impl Line {
    /// Files the line under the violation's first client.
    fn with_lane_of(mut self, v: &Violation) -> Line {
        if let Some(first) = v.clients.first() {
            self.lane = Lane::Client(first.0);
        }
        self
    }
}

/// The sentence an event deserves, if any.
fn sentence(run: &Run, index: usize, event: &Event) -> Option<Line> {
    let lane = event.client.map_or(Lane::Server, |c| Lane::Client(c.0));
    let line = |tone, text: String| {
        Some(Line {
            t: event.t,
            lane,
            tone,
            event: Some(index),
            text,
        })
    };
    let me = lane.to_string();
    match &event.kind {
        EventKind::FaultStart { fault } => fault_line(run, index, event, fault, true),
        EventKind::FaultEnd { fault } => fault_line(run, index, event, fault, false),
        EventKind::ServerSession {
            session,
            change: ServerSession::Expired,
        } => {
            let owner = run.sessions.owner.get(session).copied();
            let nodes: Vec<&str> = run
                .nodes
                .iter()
                .filter(|n| n.ended == NodeEnd::Expired && n.end_event == Some(index))
                .map(|n| describe::node_name(&n.path))
                .collect();
            let whose = owner.map_or_else(
                || format!("session {session}"),
                |c| format!("c{c}'s session {session}"),
            );
            let mut text =
                format!("{whose} expired on the server: no heartbeat within the session timeout");
            match nodes.as_slice() {
                [] => {}
                [one] => write!(text, "; its node {one} is deleted").ok()?,
                many => write!(text, "; its nodes {} are deleted", many.join(", ")).ok()?,
            }
            if let Some(c) = owner.filter(|&c| run.paused_at(c, event.t)) {
                write!(text, " — c{c} is paused and cannot know").ok()?;
            }
            Some(Line {
                t: event.t,
                lane: owner.map_or(Lane::Server, Lane::Client),
                tone: Tone::Bad,
                event: Some(index),
                text,
            })
        }
        EventKind::ServerSession {
            session,
            change: ServerSession::Closed,
        } => line(
            Tone::Plain,
            format!("{} closed", describe::session(run, *session)),
        ),
        EventKind::Session { event: change } => match change {
            SessionEvent::Suspended => line(
                Tone::Bad,
                format!(
                    "{me} lost its connection (SUSPENDED){}",
                    hold_ended(run, index)
                        .unwrap_or_else(|| ": nothing it holds is safe any more".to_owned())
                ),
            ),
            SessionEvent::Lost {
                server_confirmed: true,
            } => line(
                Tone::Bad,
                format!(
                    "{me} learns that its session has expired (LOST){}",
                    hold_ended(run, index).unwrap_or_default()
                ),
            ),
            SessionEvent::Lost {
                server_confirmed: false,
            } => line(
                Tone::Bad,
                format!("{me} gives up on its session (LOST); the server may still hold it"),
            ),
            SessionEvent::Reconnected { session_changed } => line(
                Tone::Plain,
                if *session_changed {
                    format!("{me} reconnected with a new session")
                } else {
                    format!("{me} reconnected with the same session")
                },
            ),
        },
        EventKind::Call { call } => {
            let held = || {
                let token = event
                    .client
                    .and_then(|c| run.hold_at(c.0, event.t))
                    .and_then(|h| h.token());
                token.map(|t| format!(" (token {t})")).unwrap_or_default()
            };
            match call {
                Call::Acquire { mode, .. } => line(
                    Tone::Plain,
                    format!("{me} asks for the lock{}", describe::mode_words(*mode)),
                ),
                Call::Release { .. } => {
                    line(Tone::Lock, format!("{me} releases the lock{}", held()))
                }
                Call::Start { .. } => line(Tone::Plain, format!("{me} joins the election")),
                Call::Requeue { .. } => {
                    line(Tone::Plain, format!("{me} queues for leadership again"))
                }
                Call::Relinquish { .. } => line(
                    Tone::Lock,
                    format!("{me} gives up its leadership{}", held()),
                ),
                Call::Close { .. } => {
                    line(Tone::Lock, format!("{me} leaves the election{}", held()))
                }
                Call::Interrupt { .. } => {
                    line(Tone::Plain, format!("{me} interrupts its leadership"))
                }
                Call::AttemptRevoke { .. } => line(
                    Tone::Plain,
                    format!("{me} asks the lock's holder to release"),
                ),
                Call::Await { .. } | Call::HasLeadership { .. } | Call::MakeRevocable { .. } => {
                    None
                }
            }
        }
        EventKind::Notice { notice } => {
            notice_line(run, event, notice).and_then(|(tone, text)| line(tone, text))
        }
        EventKind::WatchDelivered { event: watched } if watched.kind == WatchKind::NodeDeleted => {
            line(
                Tone::Plain,
                format!(
                    "{me} is notified: {} was deleted",
                    describe::node_name(&watched.path)
                ),
            )
        }
        EventKind::ResourceRead { .. } | EventKind::ResourceWrite { .. } => {
            let access = run.accesses.iter().find(|a| a.event == index)?;
            let tone = if access.accepted && access.overwrote.is_none() {
                Tone::Plain
            } else {
                Tone::Bad
            };
            line(tone, access_words(access))
        }
        _ => None,
    }
}

/// For a session change at event `index`: the hold that the lock notices right after it
/// (same client, same instant) end — `: its hold on token 8 ends`.
fn hold_ended(run: &Run, index: usize) -> Option<String> {
    let event = &run.trace.events[index];
    let client = event.client?.0;
    let hold = run.locks_of(client).find(|l| {
        l.is_hold() && !l.open && l.end == event.t && l.end_event.is_some_and(|e| e > index)
    })?;
    let token = hold.token()?;
    Some(format!(
        ": its hold on token {token} ends — nothing it holds is safe any more"
    ))
}

/// A lock notice as a sentence.
fn notice_line(run: &Run, event: &Event, notice: &Notice) -> Option<(Tone, String)> {
    let client = event.client?.0;
    Some(match notice {
        Notice::Acquired { token, mode, .. } => {
            let what = format!("acquired the lock{}", describe::mode_words(*mode));
            (Tone::Lock, granted(run, event, client, &what, *token)?)
        }
        Notice::IsLeader { token, .. } => (
            Tone::Lock,
            granted(run, event, client, "became leader", *token)?,
        ),
        Notice::NotLeader { .. } => (Tone::Bad, format!("c{client} is not leader any more")),
        Notice::TimedOut { .. } => (Tone::Plain, format!("c{client} gave up waiting (timeout)")),
        Notice::Failed { reason, .. } => {
            (Tone::Bad, format!("c{client}'s call failed: {reason:?}"))
        }
        Notice::Reconnected { .. } => (Tone::Lock, format!("c{client} holds again")),
        Notice::RevocationRequested { .. } => (
            Tone::Plain,
            format!("c{client} is asked to release the lock (revocation)"),
        ),
        // The session line just before tells these (see `hold_ended`); the rest are answers
        // to queries.
        Notice::Suspended { .. }
        | Notice::Lost { .. }
        | Notice::Released { .. }
        | Notice::Awaited { .. }
        | Notice::Leadership { .. }
        | Notice::Closed { .. }
        | Notice::RevokeAttempted { .. } => return None,
    })
}

/// `c1 acquired the lock with token 7 (node lock-0001) — while c0 still believes it holds
/// token 5 (c0 is paused)`.
fn granted(run: &Run, event: &Event, client: u16, what: &str, token: Token) -> Option<String> {
    let node = run
        .nodes
        .iter()
        .find(|n| n.czxid.0 == token.0)
        .map(|n| format!(" (node {})", describe::node_name(&n.path)))
        .unwrap_or_default();
    let mut text = format!("c{client} {what} with token {token}{node}");
    for other in run.lanes.iter().filter_map(|lane| match lane {
        Lane::Client(c) if *c != client => Some(*c),
        _ => None,
    }) {
        let Some(hold) = run.hold_at(other, event.t) else {
            continue;
        };
        let token = hold
            .token()
            .map(|t| format!(" token {t}"))
            .unwrap_or_default();
        write!(text, " — while c{other} still believes it holds{token}").ok()?;
        if run.paused_at(other, event.t) {
            write!(text, " (c{other} is paused)").ok()?;
        }
    }
    Some(text)
}

/// A fault's start or end as a sentence.
fn fault_line(run: &Run, index: usize, event: &Event, fault: &Fault, start: bool) -> Option<Line> {
    let lane = run
        .faults
        .iter()
        .find(|f| f.start_event == index || f.end_event == Some(index))
        .and_then(|f| f.lanes().first().copied())
        .unwrap_or(Lane::Server);
    let text = match (fault, start) {
        (Fault::Pause { client, for_ms }, true) => format!(
            "c{client} is paused (GC) for {}: it runs nothing and sends no heartbeats",
            crate::clock::millis(*for_ms)
        ),
        (Fault::Pause { client, .. }, false) => {
            format!("c{client} resumes, unaware of anything that happened while it was paused")
        }
        (Fault::Crash { client }, false) => format!("c{client} restarts"),
        (Fault::Heal | Fault::ExpireSession { .. }, true) => describe::fault(fault),
        (Fault::Heal | Fault::ExpireSession { .. }, false) => return None,
        (_, true) => format!("{} begins", describe::fault(fault)),
        (_, false) => format!("{} ends", describe::fault(fault)),
    };
    Some(Line {
        t: event.t,
        lane,
        tone: Tone::Fault,
        event: Some(index),
        text,
    })
}
