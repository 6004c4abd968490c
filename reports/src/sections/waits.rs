//! Who waits for whom, for a liveness violation: each client still waiting at the end of the
//! trace, the watch it waits on, the node behind that watch and the session that created it,
//! and what that node's owner does in turn — followed until the chain comes back to a client
//! already on it (a cycle), reaches an owner that holds or does nothing on a live session, or
//! a node nothing in the trace will change. Only what the trace shows is said.

use std::collections::BTreeSet;
use std::fmt::{self, Write};

use coordination::zk::Path;
use recipe_table::property::{Class, Violation};

use trace::EventKind;

use crate::analysis::{ClientView, Doing, NodeEnd, NodeRef, Run, Target, WaitOn, WatchKind};
use crate::describe;
use crate::escape::Esc;
use crate::verdict;

/// Whether the report has the section: its violation is a liveness one.
pub(crate) fn shown(violations: &[Violation]) -> bool {
    violations
        .first()
        .is_some_and(|v| v.property.class() == Class::Liveness)
}

/// Writes the section, when [`shown`].
pub(crate) fn write(out: &mut String, run: &Run, violations: &[Violation]) -> fmt::Result {
    if !shown(violations) {
        return Ok(());
    }
    out.push_str("<section id=\"waits\"><h2>Who waits for whom</h2>");
    leaderless(out, run)?;
    let waiting = run.waiting_at_end();
    if waiting.is_empty() {
        write!(
            out,
            "<p class=\"caption\">No client is still waiting at the end of the trace ({}).",
            run.clock.at(run.end)
        )?;
        for client in &violations[0].clients {
            let last = (run.locks_of(client.0).filter(|l| !l.is_hold())).last();
            if let Some(wait) = last {
                let at = run.clock.at(wait.end);
                let ended = format!(
                    " {client}'s last wait ended at {at}: {}.",
                    wait.ended.words()
                );
                write!(out, "{}", Esc(&ended))?;
            }
        }
        out.push_str("</p>");
    } else {
        write!(
            out,
            "<p class=\"caption\">At the end of the trace ({}): what each waiting client waits \
             on, who created it, and what that owner does in turn.</p><ul class=\"waits\">",
            run.clock.at(run.end)
        )?;
        server_view(out, run, &waiting)?;
        for client in waiting {
            out.push_str("<li>");
            Walk::new(run, out).wait(client, &format!("c{client}"))?;
            out.push_str("</li>");
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>");
    Ok(())
}

/// Says so when the servers' modes read at the horizon (a real run on an ensemble) show no
/// leader: such an ensemble expires no session and applies no write, so no wait can end.
fn leaderless(out: &mut String, run: &Run) -> fmt::Result {
    let modes = (run.trace.events.iter().rev()).find_map(|e| match &e.kind {
        EventKind::ServerModes { modes } => Some(modes),
        _ => None,
    });
    let Some(modes) = modes else {
        return Ok(());
    };
    if modes.iter().flatten().any(|m| m.leads()) {
        return Ok(());
    }
    let serving = modes.iter().flatten().count();
    let text = format!(
        "No server of the ensemble leads at the horizon ({serving} of {} serving): it expires no \
         session and applies no write, so none of these waits can end until one is elected. \
         The hang is the ensemble's before it is the recipe's.",
        modes.len()
    );
    write!(out, "<p class=\"caption\">{}</p>", Esc(&text))
}

/// Says which waits of `waiting` clients are the server's view at the horizon (the watches it
/// listed), not the trace's requests, if any are.
fn server_view(out: &mut String, run: &Run, waiting: &[u16]) -> fmt::Result {
    if run.listed.is_none() {
        return Ok(());
    }
    let unrecorded: Vec<String> = (waiting.iter())
        .filter(|&&c| !run.sends_requests(c))
        .map(|c| format!("c{c}"))
        .collect();
    if unrecorded.is_empty() {
        return Ok(());
    }
    let waits = match unrecorded.len() {
        1 => "its wait is",
        _ => "their waits are",
    };
    let text = format!(
        "The trace records none of the requests of {}: {waits} the server's view at the \
         horizon, the data and exists watches ZooKeeper listed by session (wchc, which lists no \
         child watches), with the owners of the watched nodes in the tree read at the end.",
        verdict::and_list(&unrecorded)
    );
    write!(out, "<p class=\"caption\">{}</p>", Esc(&text))
}

/// One waiting client's chain, being written.
struct Walk<'r, 'o> {
    run: &'r Run<'r>,
    out: &'o mut String,
    /// The clients on the chain so far, the one being told last.
    chain: Vec<u16>,
    /// The waiting clients already told in this chain.
    told: BTreeSet<u16>,
    /// The watched directories whose children this chain has listed.
    listed: BTreeSet<Path>,
}

impl<'r, 'o> Walk<'r, 'o> {
    fn new(run: &'r Run<'r>, out: &'o mut String) -> Walk<'r, 'o> {
        Walk {
            run,
            out,
            chain: Vec::new(),
            told: BTreeSet::new(),
            listed: BTreeSet::new(),
        }
    }

    /// Writes `text`, escaped.
    fn say(&mut self, text: &str) -> fmt::Result {
        write!(self.out, "{}", Esc(text))
    }

    /// Writes `text`, escaped, as the end of a chain.
    fn end(&mut self, text: &str) -> fmt::Result {
        write!(self.out, "<span class=\"end\">{}</span>", Esc(text))
    }

    /// Tells what the waiting `client` (called `subject`) waits on, and on.
    fn wait(&mut self, client: u16, subject: &str) -> fmt::Result {
        let Doing::Waits { span, on } = self.run.doing_at_end(client) else {
            return Ok(());
        };
        self.chain.push(client);
        self.told.insert(client);
        let since = self.run.clock.at(span.start);
        self.say(&format!("{subject} waits (since {since})"))?;
        match on.as_slice() {
            [] if !self.run.sends_requests(client) => self.unrecorded(client)?,
            [] => {
                let connection = (self.run.sessions.client.get(&client))
                    .and_then(|views| views.last())
                    .filter(|view| view.kind != ClientView::Connected)
                    .map(|view| format!(" (its connection is {})", view.kind.name()))
                    .unwrap_or_default();
                self.end(&format!(
                    " with no watch outstanding that it left since then{connection}: nothing \
                     in the trace will wake it"
                ))?;
            }
            [one] => self.on(client, one)?,
            many => {
                self.say(" on several watches:")?;
                self.out.push_str("<ul>");
                for each in many {
                    self.out.push_str("<li>");
                    self.on(client, each)?;
                    self.out.push_str("</li>");
                }
                self.out.push_str("</ul>");
            }
        }
        self.chain.pop();
        Ok(())
    }

    /// Tells of a waiter whose requests the trace does not record (a contender that reports
    /// only what its library tells it): the nodes its session has at the end, if any.
    fn unrecorded(&mut self, client: u16) -> fmt::Result {
        let session = self.run.session_at_end(client);
        let nodes = self.run.nodes_at_end().unwrap_or_default();
        let names: Vec<String> = (nodes.iter())
            .filter(|n| Some(n.session) == session)
            .map(|n| describe::node_name(n.path).to_owned())
            .collect();
        let held = match session {
            Some(session) if !names.is_empty() => format!(
                "; its session {session} has {} at the end",
                verdict::and_list(&names)
            ),
            _ => String::new(),
        };
        let unlisted = match self.run.listed {
            Some(_) => {
                ", and the server listed no data or exists watch of its session at the horizon \
                 (a child watch is not listed)"
            }
            None => "",
        };
        self.end(&format!(
            "; the trace records none of c{client}'s requests, so not what it waits on\
             {unlisted}{held}"
        ))
    }

    /// Tells one watch of `client` and what is behind it.
    fn on(&mut self, client: u16, on: &WaitOn) -> fmt::Result {
        let watch = on.watch;
        let left = self.run.clock.at(watch.t);
        let name = describe::node_name(&watch.path);
        self.say(&match watch.kind {
            WatchKind::Data => format!(" for a change to {name} (data watch left at {left})"),
            WatchKind::Exist => format!(" for {name} to be created (exists watch left at {left})"),
            WatchKind::Child => format!(
                " for a change to the children of {} (child watch left at {left})",
                watch.path
            ),
            WatchKind::Listed => {
                format!(" on {name} (a watch of its session that the server listed at {left})")
            }
        })?;
        match &on.target {
            Target::Node(node) => {
                let at = (node.created)
                    .map(|t| format!(" at {}", self.run.clock.at(t)))
                    .unwrap_or_default();
                self.say(&format!(", created by {}{at}", whose(node)))?;
                self.owner(node)
            }
            Target::Gone(node) => {
                let how = match node.ended {
                    NodeEnd::Expired => format!("with its session {}'s expiry", node.session),
                    NodeEnd::Closed => format!("with the close of its session {}", node.session),
                    NodeEnd::Deleted | NodeEnd::Open => "deleted".to_owned(),
                };
                self.end(&format!(
                    ", which went at {} ({how}) without its event reaching c{client}: nothing \
                     will wake it",
                    self.run.clock.at(node.end)
                ))
            }
            Target::Unseen => self.end(
                ": this trace records only the clients' side (a real run's, or a program's), \
                 and no tree read at the end, so it does not show who created the nodes there",
            ),
            Target::NotInSnapshot if watch.kind == WatchKind::Listed => self.end(&format!(
                ": the tree read at the end of the run has no ephemeral node {name}, so no \
                 session's end will change it"
            )),
            Target::NotInSnapshot => self.end(&format!(
                ": the tree read at the end of the run has no ephemeral node {name}, and no \
                 event of its going reached c{client}"
            )),
            Target::Unknown if watch.kind == WatchKind::Exist => {
                self.end(": nobody in the trace creates it")
            }
            Target::Unknown => self.end(&format!(
                ": no ephemeral node {name} is in the trace, and no event of it reached \
                 c{client}"
            )),
            Target::Children(children) => self.children(client, &watch.path, children),
        }
    }

    /// Tells the children of the directory `client` watches and follows the other clients'
    /// nodes among them.
    fn children(&mut self, client: u16, dir: &Path, children: &[NodeRef]) -> fmt::Result {
        if children.is_empty() {
            return self.end(": it has no ephemeral children, so only a new child will wake it");
        }
        let own = self.run.session_at_end(client);
        if self.listed.insert(dir.clone()) {
            let named: Vec<String> = (children.iter())
                .map(|n| {
                    let whose = if Some(n.session) == own {
                        format!("c{client}'s own session {}", n.session)
                    } else {
                        whose(n)
                    };
                    format!("{} ({whose})", describe::node_name(n.path))
                })
                .collect();
            self.say(&format!(
                ", whose children are {}",
                verdict::and_list(&named)
            ))?;
        } else {
            self.say(", the same children")?;
        }
        let others: Vec<&NodeRef> = (children.iter())
            .filter(|n| Some(n.session) != own)
            .collect();
        match others.as_slice() {
            [] => self.end(&format!(
                " — all c{client}'s own, so only a new child will wake it"
            )),
            [one] => self.owner(one),
            many => {
                self.out.push_str("<ul>");
                for node in many {
                    self.out.push_str("<li>");
                    self.say(&format!("through {}", describe::node_name(node.path)))?;
                    self.owner(node)?;
                    self.out.push_str("</li>");
                }
                self.out.push_str("</ul>");
                Ok(())
            }
        }
    }

    /// Follows the live `node` to its owner: what the owner does decides whether anyone will
    /// delete it.
    fn owner(&mut self, node: &NodeRef) -> fmt::Result {
        let session = node.session;
        let Some(owner) = node.client else {
            return self.end(&format!(
                " → no client in the trace used session {session}: nobody the trace shows \
                 will delete the node"
            ));
        };
        let current = self.run.session_at_end(owner);
        if current != Some(session) {
            let now = current.map_or_else(|| "no session".to_owned(), |s| format!("session {s}"));
            return self.end(&format!(
                " → c{owner} is on {now} at the end, while its earlier session {session} is \
                 still live on the server and keeps the node: nobody will delete it before \
                 that session expires"
            ));
        }
        if self.chain.contains(&owner) {
            return self.end(&format!(" → back to c{owner}: a cycle"));
        }
        if self.told.contains(&owner) {
            return self.end(&format!(" → c{owner}, whose wait is told above"));
        }
        match self.run.doing_at_end(owner) {
            Doing::Waits { .. } => self.wait(owner, &format!(" — c{owner} itself")),
            Doing::Holds(hold) => {
                let token = hold
                    .token()
                    .map(|t| format!(" (token {t})"))
                    .unwrap_or_default();
                self.end(&format!(
                    " → c{owner} holds {}{token} at the end of the trace, its session \
                     {session} live: nobody deletes the node before c{owner} lets go",
                    hold.held()
                ))
            }
            Doing::Idle => self.end(&format!(
                " → c{owner} neither waits nor holds at the end of the trace, and its session \
                 {session} is live: nobody will delete the node"
            )),
        }
    }
}

/// `c2's session 0x1` (or just the session, when no client used it).
fn whose(node: &NodeRef) -> String {
    match node.client {
        Some(c) => format!("c{c}'s session {}", node.session),
        None => format!("session {}", node.session),
    }
}

#[cfg(test)]
mod tests {
    use coordination::zk::Request;
    use recipe_table::property::Property;
    use trace::build::Build;
    use trace::{ServerMode, Trace};

    use super::*;
    use crate::analysis::tests::violation;

    /// The section of `trace` for a `progress` violation, as text with its markup dropped.
    fn told(trace: &Trace) -> String {
        let run = Run::new(trace);
        let mut out = String::new();
        write(&mut out, &run, &[violation(Property::Progress)]).unwrap();
        let mut text = String::new();
        let mut markup = false;
        for c in out.chars() {
            match c {
                '<' => markup = true,
                '>' => markup = false,
                _ if !markup => text.push(c),
                _ => {}
            }
        }
        text.replace("&#39;", "'")
    }

    /// c0 and c1 connected (sessions 0x7, 0x8), each asking for the lock.
    fn asking() -> Build {
        Build::new()
            .connected(0, 7)
            .connected(1, 8)
            .acquire(0)
            .acquire(1)
    }

    #[test]
    fn two_clients_each_waiting_on_the_others_node_are_a_cycle() {
        let trace = asking()
            .created(7, "/l/lock-1", Some(7), 3)
            .created(8, "/l/lock-2", Some(8), 4)
            .watching(0, 1, "/l/lock-2", 4)
            .watching(1, 1, "/l/lock-1", 3)
            .trace();
        let text = told(&trace);
        assert!(
            text.contains(
                "c0 waits (since t=0.002s) for a change to lock-2 (data watch left at t=0.007s), \
                 created by c1's session 0x8 at t=0.005s — c1 itself waits (since t=0.003s) for a \
                 change to lock-1 (data watch left at t=0.009s), created by c0's session 0x7 at \
                 t=0.004s → back to c0: a cycle"
            ),
            "{text}"
        );
        assert!(
            text.contains("c1 waits"),
            "one chain per waiting client: {text}"
        );
    }

    #[test]
    fn waits_on_an_ensemble_without_a_leader_at_the_horizon_are_said_to_be_its() {
        let modes = |modes| EventKind::ServerModes { modes };
        let leaderless = asking()
            .push(None, modes(vec![Some(ServerMode::Follower), None, None]))
            .trace();
        assert!(
            told(&leaderless).contains(
                "No server of the ensemble leads at the horizon (1 of 3 serving): it expires no \
                 session"
            ),
            "{}",
            told(&leaderless)
        );
        let led = (asking())
            .push(None, modes(vec![Some(ServerMode::Leader), None, None]))
            .trace();
        assert!(
            !told(&led).contains("leads at the horizon"),
            "{}",
            told(&led)
        );
    }

    #[test]
    fn a_wait_on_the_node_of_a_live_idle_owner_ends_at_it() {
        let trace = asking()
            .created(8, "/l/lock-2", Some(8), 4)
            .acquired(1, 4)
            .release(1)
            .watching(0, 1, "/l/lock-2", 4)
            .trace();
        let text = told(&trace);
        assert!(
            text.contains(
                "created by c1's session 0x8 at t=0.004s → c1 neither waits nor holds at the end \
                 of the trace, and its session 0x8 is live: nobody will delete the node"
            ),
            "{text}"
        );
        assert!(!text.contains("c1 waits"), "{text}");
    }

    #[test]
    fn a_wait_on_a_holders_node_says_who_holds() {
        let trace = asking()
            .created(8, "/l/lock-2", Some(8), 4)
            .acquired(1, 4)
            .watching(0, 1, "/l/lock-2", 4)
            .trace();
        assert!(
            told(&trace).contains("→ c1 holds the lock (token 4) at the end of the trace"),
            "{}",
            told(&trace)
        );
    }

    #[test]
    fn a_wait_on_a_directory_follows_the_other_clients_children() {
        let trace = asking()
            .created(7, "/l/lease-1", Some(7), 3)
            .created(8, "/l/lease-2", Some(8), 4)
            .listing(0, 1, "/l", 4)
            .listing(1, 1, "/l", 4)
            .trace();
        let text = told(&trace);
        assert!(
            text.contains(
                "c0 waits (since t=0.002s) for a change to the children of /l (child watch left \
                 at t=0.007s), whose children are lease-1 (c0's own session 0x7) and lease-2 \
                 (c1's session 0x8) — c1 itself waits (since t=0.003s) for a change to the \
                 children of /l (child watch left at t=0.009s), the same children → back to c0: \
                 a cycle"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_waiter_with_no_watch_is_said_to_have_none() {
        let create = Request::Create {
            path: trace::build::path("/l/lock-"),
            data: Vec::new(),
            mode: coordination::zk::CreateMode::EphemeralSequential,
        };
        let sent = EventKind::OpSent {
            op: coordination::ids::OpId(1),
            request: create,
        };
        let trace = asking().push(Some(0), sent).trace();
        let text = told(&trace);
        assert!(
            text.contains(
                "c0 waits (since t=0.002s) with no watch outstanding that it left since then: \
                 nothing in the trace will wake it"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_wait_on_a_node_that_went_unheard_ends_there() {
        let trace = asking()
            .created(8, "/l/lock-2", Some(8), 4)
            .watching(0, 1, "/l/lock-2", 4)
            .server_session(8, trace::ServerSession::Expired)
            .trace();
        let text = told(&trace);
        assert!(
            text.contains(
                "for a change to lock-2 (data watch left at t=0.006s), which went at t=0.007s \
                 (with its session 0x8's expiry) without its event reaching c0: nothing will \
                 wake it"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_real_trace_reads_the_owners_off_the_tree_read_at_its_end() {
        let real = asking().watching(0, 1, "/l/lock-2", 4).real();
        let text = told(&real.clone().trace());
        assert!(
            text.contains(
                "for a change to lock-2 (data watch left at t=0.005s): this trace records only \
                 the clients' side (a real run's, or a program's), and no tree read at the end"
            ),
            "{text}"
        );
        let nodes = vec![trace::SnapshotNode {
            path: trace::build::path("/l/lock-2"),
            ephemeral_owner: Some(coordination::zk::SessionId(8)),
        }];
        let read = real.push(None, trace::EventKind::TreeSnapshot { nodes });
        let text = told(&read.trace());
        assert!(
            text.contains(
                "for a change to lock-2 (data watch left at t=0.005s), created by c1's session \
                 0x8 — c1 itself waits (since t=0.003s); the trace records none of c1's requests"
            ),
            "{text}"
        );
    }

    /// A simulated program's trace has no applied requests either (the server serves its
    /// bytes): the owners come from the tree the run ends with, as in a real trace.
    #[test]
    fn a_programs_trace_reads_the_owners_off_the_tree_at_its_end() {
        let nodes = vec![trace::SnapshotNode {
            path: trace::build::path("/l/lock-2"),
            ephemeral_owner: Some(coordination::zk::SessionId(8)),
        }];
        let program = (asking().watching(0, 1, "/l/lock-2", 4))
            .push(None, trace::EventKind::TreeSnapshot { nodes });
        let text = told(&program.trace());
        assert!(
            text.contains("for a change to lock-2 (data watch left at t=0.005s), created by c1's"),
            "{text}"
        );
    }

    #[test]
    fn a_waiter_whose_requests_the_trace_lacks_is_not_said_to_wait_on_nothing() {
        let text = told(&asking().real().trace());
        assert!(
            text.contains(
                "c0 waits (since t=0.002s); the trace records none of c0's requests, so not what \
                 it waits on"
            ),
            "{text}"
        );
        let nodes = vec![trace::SnapshotNode {
            path: trace::build::path("/l/_c_69438145-e725-48c3-86c2-f3b8a8a00b8c-lease-0000000001"),
            ephemeral_owner: Some(coordination::zk::SessionId(7)),
        }];
        let snapshot = EventKind::TreeSnapshot { nodes };
        let text = told(&asking().real().push(None, snapshot).trace());
        assert!(
            text.contains(
                "the trace records none of c0's requests, so not what it waits on; its session \
                 0x7 has lease-0000000001 at the end"
            ),
            "{text}"
        );
    }

    /// A real trace of contenders c0 (sessions 0x7) and c1 (0x8), both waiting, whose
    /// requests it does not record, ending with the server's `watches` and the tree of
    /// `nodes` (path, ephemeral owner).
    fn contenders_listed(watches: &[(u64, &str)], nodes: &[(&str, u64)]) -> Trace {
        listed_after(asking(), watches, nodes)
    }

    /// `before`, made a real trace, then the server's `watches` and the tree of `nodes`.
    fn listed_after(before: Build, watches: &[(u64, &str)], nodes: &[(&str, u64)]) -> Trace {
        let watches = (watches.iter())
            .map(|&(session, node)| trace::ServerWatch {
                session: coordination::zk::SessionId(session),
                path: trace::build::path(node),
            })
            .collect();
        let nodes = (nodes.iter())
            .map(|&(node, owner)| trace::SnapshotNode {
                path: trace::build::path(node),
                ephemeral_owner: Some(coordination::zk::SessionId(owner)),
            })
            .collect();
        (before.real())
            .push(None, EventKind::WatchSnapshot { watches })
            .push(None, EventKind::TreeSnapshot { nodes })
            .trace()
    }

    #[test]
    fn contenders_watching_each_others_nodes_on_the_server_are_a_cycle() {
        let trace = contenders_listed(
            &[(7, "/l/lock-2"), (8, "/l/lock-1")],
            &[("/l/lock-1", 7), ("/l/lock-2", 8)],
        );
        let text = told(&trace);
        assert!(
            text.contains(
                "The trace records none of the requests of c0 and c1: their waits are the \
                 server's view at the horizon"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "c0 waits (since t=0.002s) on lock-2 (a watch of its session that the server \
                 listed at t=0.004s), created by c1's session 0x8 — c1 itself waits (since \
                 t=0.003s) on lock-1 (a watch of its session that the server listed at \
                 t=0.004s), created by c0's session 0x7 → back to c0: a cycle"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_contender_the_server_lists_no_watch_of_is_said_to_have_none_listed() {
        let trace = contenders_listed(&[(7, "/l/lock-2")], &[("/l/lock-2", 8)]);
        let text = told(&trace);
        assert!(
            text.contains(
                "created by c1's session 0x8 — c1 itself waits (since t=0.003s); the trace \
                 records none of c1's requests, so not what it waits on, and the server listed \
                 no data or exists watch of its session at the horizon (a child watch is not \
                 listed); its session 0x8 has lock-2 at the end"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_listed_watch_of_an_old_session_or_on_no_ephemeral_node_is_told_as_such() {
        let before = Build::new().connected(0, 6).connected(0, 7).acquire(0);
        let old = listed_after(before, &[(7, "/l/lock-2"), (6, "/l/lock-1")], &[]);
        let text = told(&old);
        assert!(!text.contains("lock-1"), "c0's earlier session 0x6: {text}");
        assert!(
            text.contains(
                "on lock-2 (a watch of its session that the server listed at t=0.003s): the \
                 tree read at the end of the run has no ephemeral node lock-2, so no session's \
                 end will change it"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_hang_nobody_waits_on_at_the_end_says_how_its_waits_ended() {
        let trace = Build::new().connected(0, 7).acquire(0).failed(0).trace();
        let run = Run::new(&trace);
        let gave_up = Violation {
            clients: vec![coordination::ids::ClientSlot(0)],
            ..violation(Property::Progress)
        };
        let mut out = String::new();
        write(&mut out, &run, &[gave_up]).unwrap();
        assert!(
            out.contains(
                "No client is still waiting at the end of the trace (t=0.002s). c0&#39;s last \
                 wait ended at t=0.002s: gave up."
            ),
            "{out}"
        );
    }

    #[test]
    fn only_a_liveness_violation_gets_the_section() {
        assert!(!shown(&[violation(Property::HerdFree)]));
        assert!(!shown(&[]));
    }
}
