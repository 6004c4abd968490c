//! A client lane's content: its session as it believes it (with the stretch where the server
//! had already expired it), its waiting and holding bars with their fencing tokens, and its
//! reads and writes of the protected resource.

use std::fmt;

use super::layout::{LaneBox, PLOT_W, PLOT_X};
use super::scale::Scale;
use super::svg::{Hover, Svg, text_width};
use crate::analysis::{Access, LockKind, LockSpan, Run};
use crate::clock::Clock;

/// Accesses closer than this to the previous one drawn (in user units) are not drawn.
const MIN_GAP: f64 = 3.0;

/// `t=1.000s → t=2.000s (1.000s)`, with `…` for a span the trace did not see end.
pub(crate) fn interval(clock: Clock, start: u64, end: u64, open: bool) -> String {
    let end_text = if open {
        "(trace ends)".to_owned()
    } else {
        clock.at(end)
    };
    format!(
        "{} → {end_text} ({}{})",
        clock.at(start),
        clock.duration(end - start),
        if open { "+" } else { "" }
    )
}

/// Draws lane `lane` of client `client`.
pub(crate) fn draw(
    svg: &mut Svg<'_>,
    run: &Run,
    client: u16,
    lane: &LaneBox,
    scale: &Scale,
) -> fmt::Result {
    sessions(svg, run, client, lane, scale)?;
    for span in run.locks_of(client).filter(|l| scale.shows(l.start, l.end)) {
        lock_span(svg, run, span, lane, scale)?;
    }
    let accesses: Vec<&Access> = run
        .accesses
        .iter()
        .filter(|a| a.client == client && scale.shows(a.t, a.t))
        .collect();
    let mut last_x = f64::NEG_INFINITY;
    for (i, access) in accesses.iter().enumerate() {
        let x = scale.x(access.t);
        // In a dense overview, an ordinary access on top of the previous one adds nothing;
        // rejected and lost ones are always drawn.
        if access.accepted && access.overwrote.is_none() && x - last_x < MIN_GAP {
            continue;
        }
        last_x = x;
        let next = accesses
            .get(i + 1)
            .map_or(PLOT_X + PLOT_W, |next| scale.x(next.t));
        self::access(svg, run, access, lane, scale, next - x)?;
    }
    Ok(())
}

/// The client's view of its session, and over it the stretches where the server had
/// already expired the session the client still believed in.
fn sessions(
    svg: &mut Svg<'_>,
    run: &Run,
    client: u16,
    lane: &LaneBox,
    scale: &Scale,
) -> fmt::Result {
    let (y, h) = lane.session_row();
    let spans = run
        .sessions
        .client
        .get(&client)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for span in spans.iter().filter(|s| scale.shows(s.start, s.end)) {
        let (x1, x2) = (scale.x(span.start), scale.x(span.end));
        let name = span.kind.name();
        let tip = format!(
            "c{client} {name} · {}",
            interval(run.clock, span.start, span.end, span.open)
        );
        let class = format!("ss {name}");
        svg.rect(
            (x1, y, x2 - x1, h),
            &class,
            Hover {
                tip: Some(&tip),
                event: Some(span.event),
            },
        )?;
        if text_width(name) + 8.0 < x2 - x1 {
            svg.text((x1 + 4.0, y + 11.0), "in-dark", name)?;
        }
    }
    for life in run.sessions.server_of(client) {
        let Some(span) = life
            .unnoticed
            .as_ref()
            .filter(|s| scale.shows(s.start, s.end))
        else {
            continue;
        };
        let (x1, x2) = (scale.x(span.start), scale.x(span.end));
        let tip = format!(
            "the server expired c{client}'s session {} at {}; c{client} still believed it was connected until {}",
            life.session,
            run.clock.at(span.start),
            if span.open {
                "the trace ended".to_owned()
            } else {
                run.clock.at(span.end)
            }
        );
        svg.rect(
            (x1, y - 2.0, x2 - x1, h + 4.0),
            "unnoticed",
            Hover {
                tip: Some(&tip),
                event: Some(span.event),
            },
        )?;
        let label = "expired on the server";
        if text_width(label) + 8.0 < x2 - x1 {
            svg.text((x1 + 4.0, y + 11.0), "in-alarm", label)?;
        }
    }
    Ok(())
}

/// A waiting or holding bar; a hold is labelled with its token, and the part of it the
/// server no longer backed (its session expired) is hatched.
fn lock_span(
    svg: &mut Svg<'_>,
    run: &Run,
    span: &LockSpan,
    lane: &LaneBox,
    scale: &Scale,
) -> fmt::Result {
    let (y, h) = lane.lock_row();
    let (x1, x2) = (scale.x(span.start), scale.x(span.end));
    let who = format!("c{} (owner {})", span.client, span.owner.0);
    let when = interval(run.clock, span.start, span.end, span.open);
    let hover = |tip| Hover {
        tip: Some(tip),
        event: Some(span.start_event),
    };
    match span.kind {
        LockKind::Waiting => {
            let tip = format!(
                "{who} waits for {} · {when} · {}",
                span.held(),
                span.ended.words()
            );
            svg.rect((x1, y + 4.0, x2 - x1, h - 8.0), "wait", hover(&tip))?;
            if text_width("waiting") + 8.0 < x2 - x1 {
                svg.text((x1 + 4.0, y + h / 2.0 + 4.0), "in-muted", "waiting")?;
            }
        }
        LockKind::Holding(token) => {
            let tip = format!(
                "{who} holds {} with token {token} · {when} · ended: {}",
                span.held(),
                span.ended.words()
            );
            let class = format!("hold k{}", span.client % 8);
            svg.rect((x1, y, x2 - x1, h), &class, hover(&tip))?;
            for life in run.sessions.server_of(span.client) {
                let Some(stale) = &life.unnoticed else {
                    continue;
                };
                let (from, to) = (stale.start.max(span.start), stale.end.min(span.end));
                if from >= to || !scale.shows(from, to) {
                    continue;
                }
                let (z1, z2) = (scale.x(from), scale.x(to));
                let tip = format!(
                    "c{} still believes it holds token {token}, but the server expired its session {} at {}",
                    span.client,
                    life.session,
                    run.clock.at(stale.start)
                );
                svg.rect(
                    (z1, y, z2 - z1, h),
                    "zombie",
                    Hover {
                        tip: Some(&tip),
                        event: Some(stale.event),
                    },
                )?;
            }
            let label = span.label(token);
            let short = token.to_string();
            if text_width(&label) + 8.0 < x2 - x1 {
                svg.text((x1 + 4.0, y + 14.0), "in-light", &label)?;
            } else if text_width(&short) + 6.0 < x2 - x1 {
                svg.text((x1 + 3.0, y + 14.0), "in-light", &short)?;
            }
        }
    }
    Ok(())
}

/// A read (circle) or write (diamond) in the resource row: hollow green when accepted, solid
/// red when rejected, orange when an accepted write lost an earlier update; labelled with what
/// it did when the next access leaves `room`.
fn access(
    svg: &mut Svg<'_>,
    run: &Run,
    access: &Access,
    lane: &LaneBox,
    scale: &Scale,
    room: f64,
) -> fmt::Result {
    let (y, h) = lane.access_row();
    let (x, cy) = (scale.x(access.t), y + h / 2.0);
    let (class, verdict, mark) = match (access.accepted, access.overwrote) {
        (false, _) => ("acc rejected", " — rejected", "✗"),
        (true, Some(_)) => ("acc lost", " — update lost", "✗"),
        (true, None) => ("acc ok", "", ""),
    };
    let tip = format!("{} {}", run.clock.at(access.t), access_words(access));
    let hover = Hover {
        tip: Some(&tip),
        event: Some(access.event),
    };
    let r = 6.0;
    if access.write {
        svg.polygon(
            &[(x, cy - r), (x + r, cy), (x, cy + r), (x - r, cy)],
            class,
            hover,
        )?;
    } else {
        svg.circle((x, cy), r - 1.0, class, hover)?;
    }
    let (what, short) = if access.write {
        ("write", "W")
    } else {
        ("read", "R")
    };
    let value = access.value.map(|v| format!(" {v}")).unwrap_or_default();
    let long = format!("{what}{value} · token {}{verdict}", access.token);
    let short = format!("{short}{value}{mark}");
    let text_class = if verdict.is_empty() {
        "acc-label"
    } else {
        "acc-label alarm"
    };
    match [long, short]
        .into_iter()
        .find(|label| text_width(label) + 14.0 < room)
    {
        Some(label) => svg.text((x + 9.0, cy + 4.0), text_class, &label),
        None => Ok(()),
    }
}

/// An access in words, with why it matters: `c0 wrote 5 with token 37 — REJECTED: the
/// resource had already accepted token 39`.
pub(crate) fn access_words(access: &Access) -> String {
    let what = match (access.write, access.value) {
        (true, Some(v)) => format!("wrote {v}"),
        (false, Some(v)) if access.accepted => format!("read {v}"),
        (true, None) => "wrote".to_owned(),
        (false, _) => "read".to_owned(),
    };
    let verdict = match (access.accepted, access.highest_before, access.overwrote) {
        (false, Some(highest), _) => {
            format!("REJECTED: the resource had already accepted token {highest}")
        }
        (false, None, _) => "REJECTED".to_owned(),
        (true, _, Some((client, value))) => {
            format!("accepted, overwriting c{client}'s {value}: an update is LOST")
        }
        (true, _, None) => "accepted".to_owned(),
    };
    format!(
        "c{} {what} with token {} — {verdict}",
        access.client, access.token
    )
}
