//! The server lane's content: each ephemeral node from create to delete, coloured by its
//! client (a node that went with its session's expiry ends in a red cap), and the session
//! expiries themselves.

use std::fmt;

use trace::{EventKind, ServerSession};

use super::client::interval;
use super::layout::Layout;
use super::scale::Scale;
use super::svg::{Hover, Svg, text_width};
use crate::analysis::{Lane, NodeEnd, Run};
use crate::describe;

/// Draws the server lane.
pub(crate) fn draw(svg: &mut Svg<'_>, run: &Run, layout: &Layout, scale: &Scale) -> fmt::Result {
    let Some(lane) = layout.lane(Lane::Server) else {
        return Ok(());
    };
    for (node, &row) in run.nodes.iter().zip(&layout.node_rows) {
        if !scale.shows(node.start, node.end) {
            continue;
        }
        let (y, h) = lane.node_row(row);
        let (x1, x2) = (scale.x(node.start), scale.x(node.end));
        let owner = node
            .client
            .map(|c| format!("c{c}"))
            .unwrap_or_else(|| "?".to_owned());
        let how = match node.ended {
            NodeEnd::Open => "still there when the trace ends",
            NodeEnd::Deleted => "deleted",
            NodeEnd::Expired => "deleted by its session's expiry",
            NodeEnd::Closed => "deleted when its session closed",
        };
        let tip = format!(
            "{} (czxid {}, {}) · {} · {how}",
            node.path,
            node.czxid.0,
            describe::session(run, node.session),
            interval(run.clock, node.start, node.end, node.ended == NodeEnd::Open)
        );
        let class = format!("node k{}", node.client.unwrap_or(0) % 8);
        svg.rect(
            (x1, y, x2 - x1, h),
            &class,
            Hover {
                tip: Some(&tip),
                event: Some(node.start_event),
            },
        )?;
        let label = format!("{} · {owner}", describe::node_name(&node.path));
        if text_width(&label) + 8.0 < x2 - x1 {
            svg.text((x1 + 4.0, y + 11.0), "in-light", &label)?;
        }
        if node.ended == NodeEnd::Expired {
            svg.rect(
                (x2 - 3.0, y - 1.0, 4.0, h + 2.0),
                "expired-cap",
                Default::default(),
            )?;
        }
    }
    let (y, h) = lane.mark_row();
    for (index, event) in run.trace.events.iter().enumerate() {
        let EventKind::ServerSession {
            session,
            change: ServerSession::Expired,
        } = &event.kind
        else {
            continue;
        };
        if !scale.shows(event.t, event.t) {
            continue;
        }
        let x = scale.x(event.t);
        let tip = format!(
            "{} {} expired; its ephemeral nodes are deleted",
            run.clock.at(event.t),
            describe::session(run, *session)
        );
        svg.polygon(
            &[(x - 6.0, y), (x + 6.0, y), (x, y + h)],
            "expiry",
            Hover {
                tip: Some(&tip),
                event: Some(index),
            },
        )?;
        let label = match run.sessions.owner.get(session) {
            Some(client) => format!("c{client}'s session expired"),
            None => format!("{session} expired"),
        };
        svg.text((x + 8.0, y + 11.0), "mark-label", &label)?;
    }
    Ok(())
}
