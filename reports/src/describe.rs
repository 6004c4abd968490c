//! Events, faults and requests in plain words, for the event table, hover details and the
//! story. The words are plain text: whoever puts them on the page escapes them.

use coordination::recipe::SessionEvent;
use coordination::recipes::{Call, Mode, Notice};
use coordination::session::RawState;
use coordination::zk::{CreateMode, OpOk, OpResult, Path, Request, SessionId, Stat};
use scenarios::fault::{Fault, Node, ServerGroups, ServerSelector};
use trace::{Event, EventKind, ServerMode, ServerSession};

use crate::analysis::Run;
use crate::clock::millis;

/// How many characters of node data, or how many child names, a description shows.
const SHOWN: usize = 48;

/// The event kind's name as the trace spells it.
pub(crate) fn kind_name(kind: &EventKind) -> &'static str {
    match kind {
        EventKind::OpSent { .. } => "op_sent",
        EventKind::OpApplied { .. } => "op_applied",
        EventKind::Reply { .. } => "reply",
        EventKind::WatchFired { .. } => "watch_fired",
        EventKind::WatchDelivered { .. } => "watch_delivered",
        EventKind::ServerSession { .. } => "server_session",
        EventKind::RawSession { .. } => "raw_session",
        EventKind::Session { .. } => "session",
        EventKind::Call { .. } => "call",
        EventKind::Notice { .. } => "notice",
        EventKind::FaultStart { .. } => "fault_start",
        EventKind::FaultEnd { .. } => "fault_end",
        EventKind::ResourceRead { .. } => "resource_read",
        EventKind::ResourceWrite { .. } => "resource_write",
        EventKind::TreeSnapshot { .. } => "tree_snapshot",
        EventKind::WatchSnapshot { .. } => "watch_snapshot",
        EventKind::ServerModes { .. } => "server_modes",
        EventKind::LibraryError { .. } => "library_error",
        EventKind::DeadlinePassed { .. } => "deadline_passed",
        EventKind::ProgramFailed { .. } => "program_failed",
    }
}

/// A machine's name: `server` or `c0`.
pub(crate) fn node(node: Node) -> String {
    match node {
        Node::Server => "server".to_owned(),
        Node::Client(n) => format!("c{n}"),
    }
}

/// A node's name without the protection prefix, splitbrain's (`_c_<nonce>-<client>-<serial>-`)
/// or Curator's (`_c_<uuid>-`): `lock-0000000003`.
pub(crate) fn node_name(path: &Path) -> &str {
    let name = path.name();
    let Some(rest) = name.strip_prefix("_c_") else {
        return name;
    };
    let dashes =
        |text: &str, at: &[usize]| at.iter().all(|&i| text.as_bytes().get(i) == Some(&b'-'));
    if dashes(rest, &[8, 13, 18, 23, 36]) {
        return &rest[37..];
    }
    rest.splitn(4, '-').nth(3).unwrap_or(name)
}

/// A server a fault names by its selector, with the server it resolved to: `the leader
/// (server 2)`.
fn named(server: ServerSelector, resolved: Option<u16>) -> String {
    let resolved = resolved.map(|n| format!(" (server {n})"));
    format!("{}{}", selector(server), resolved.unwrap_or_default())
}

/// A fault as a phrase: `c0 paused (GC) for 8.000s`.
pub(crate) fn fault(fault: &Fault) -> String {
    let lasting = |for_ms: Option<u64>| for_ms.map(|ms| format!(" for {}", millis(ms)));
    match fault {
        Fault::Pause { client, for_ms } => {
            format!("c{client} paused (GC) for {}", millis(*for_ms))
        }
        Fault::Partition {
            a,
            b,
            oneway,
            for_ms,
        } => format!(
            "partition {} {} {}{}",
            node(*a),
            if *oneway { "→" } else { "↔" },
            node(*b),
            lasting(*for_ms).unwrap_or_default()
        ),
        Fault::Isolate { node: n, for_ms } => {
            format!(
                "{} isolated{}",
                node(*n),
                lasting(*for_ms).unwrap_or_default()
            )
        }
        Fault::IsolateFromPeers {
            server,
            resolved,
            for_ms,
        } => format!(
            "{} cut off from its peers{}",
            named(*server, *resolved),
            lasting(*for_ms).unwrap_or_default()
        ),
        Fault::CutFromServer {
            client,
            resolved,
            for_ms,
            ..
        } => {
            let server = fault.server_selector().expect("a selector");
            format!(
                "c{client} cut off from {}{}",
                named(server, *resolved),
                lasting(*for_ms).unwrap_or_default()
            )
        }
        Fault::LagServer {
            server,
            resolved,
            lag_ms,
            for_ms,
        } => format!(
            "{} hears its peers {lag_ms} ms late{}",
            named(*server, *resolved),
            lasting(*for_ms).unwrap_or_default()
        ),
        Fault::CrashServer {
            server,
            resolved,
            down_ms,
        } => format!("{} crashed, down {down_ms} ms", named(*server, *resolved)),
        Fault::PauseServer {
            server,
            resolved,
            pause_ms,
        } => format!("{} paused {pause_ms} ms", named(*server, *resolved)),
        Fault::SplitServers {
            groups,
            resolved,
            for_ms,
        } => {
            let split = match (resolved, groups) {
                (Some(groups), _) | (None, ServerGroups::Given(groups)) => (groups.iter())
                    .map(|group| format!("{group:?}"))
                    .collect::<Vec<_>>()
                    .join(" | "),
                (None, ServerGroups::RandomHalves) => "random halves".to_owned(),
            };
            format!(
                "servers split {split}{}",
                lasting(*for_ms).unwrap_or_default()
            )
        }
        Fault::SlowServerLinks {
            server,
            resolved,
            min_ms,
            max_ms,
            loss_percent,
            for_ms,
        } => format!(
            "{} slow ({}–{}, {loss_percent}% lost){}",
            server.map_or("links between servers".to_owned(), |server| {
                format!("links of {}", named(server, *resolved))
            }),
            millis(*min_ms),
            millis(*max_ms),
            lasting(*for_ms).unwrap_or_default()
        ),
        Fault::Heal => "network healed".to_owned(),
        Fault::ExpireSession { client } => format!("server expires c{client}'s session"),
        Fault::Crash { client } => format!("c{client} crashed"),
        Fault::RestartServer { down_ms } => format!("server restarted, down {down_ms} ms"),
        Fault::Delay {
            from,
            to,
            min_ms,
            max_ms,
            for_ms,
        } => format!(
            "messages {} → {} delayed {}–{}{}",
            node(*from),
            node(*to),
            millis(*min_ms),
            millis(*max_ms),
            lasting(*for_ms).unwrap_or_default()
        ),
        Fault::Drop {
            from,
            to,
            percent,
            for_ms,
        } => format!(
            "{percent}% of messages {} → {} dropped{}",
            node(*from),
            node(*to),
            lasting(*for_ms).unwrap_or_default()
        ),
    }
}

/// A server selector as a phrase: `the server of c0`.
fn selector(server: ServerSelector) -> String {
    match server {
        ServerSelector::Server(n) => format!("server {n}"),
        ServerSelector::Follower(k) => format!("follower {k}"),
        ServerSelector::Leader => "the leader".to_owned(),
        ServerSelector::ServerOf(client) => format!("the server of c{client}"),
    }
}

/// A session with its client, when known: `session 0x1 (c0)`.
pub(crate) fn session(run: &Run, session: SessionId) -> String {
    match run.sessions.owner.get(&session) {
        Some(client) => format!("session {session} (c{client})"),
        None => format!("session {session}"),
    }
}

/// One event in a line, for the table and hover details.
pub(crate) fn event(run: &Run, event: &Event) -> String {
    match &event.kind {
        EventKind::OpSent { op, request: r } => format!("op {} → {}", op.0, request(r)),
        EventKind::OpApplied {
            session: s,
            op,
            request: r,
            result: res,
            zxid,
            read_from,
        } => {
            let zxid = zxid.map(|z| format!(", zxid {}", z.0)).unwrap_or_default();
            let read = (read_from.as_ref())
                .map(|read| format!(", read on server {} at zxid {}", read.server, read.zxid.0))
                .unwrap_or_default();
            format!(
                "{} op {} {} ⇒ {}{zxid}{read}",
                session(run, *s),
                op.0,
                request_name(r),
                result(res)
            )
        }
        EventKind::Reply { op, result: res } => format!("op {} ← {}", op.0, result(res)),
        EventKind::WatchFired {
            session: s,
            event: w,
            zxid,
        } => {
            let cause = match zxid {
                Some(z) => format!(" (change zxid {})", z.0),
                None => " (on reconnect)".to_owned(),
            };
            format!(
                "watch of {} fired: {:?} {}{cause}",
                session(run, *s),
                w.kind,
                w.path
            )
        }
        EventKind::WatchDelivered { event: w } => format!("watch event: {:?} {}", w.kind, w.path),
        EventKind::ServerSession { session: s, change } => {
            let change = match change {
                ServerSession::Created => "created",
                ServerSession::Reattached => "re-attached",
                ServerSession::Expired => "expired (its ephemeral nodes deleted)",
                ServerSession::Closed => "closed",
            };
            format!("{} {change}", session(run, *s))
        }
        EventKind::RawSession { state } => match state {
            RawState::Connected { session, timeout } => format!(
                "connected: session {session}, timeout {}",
                millis(timeout.as_millis().try_into().unwrap_or(u64::MAX))
            ),
            RawState::Disconnected => "disconnected".to_owned(),
            RawState::Expired => "told: session expired".to_owned(),
        },
        EventKind::Session { event } => match event {
            SessionEvent::Suspended => "SUSPENDED: connection lost, session may come back",
            SessionEvent::Lost {
                server_confirmed: true,
            } => "LOST: the server expired the session",
            SessionEvent::Lost {
                server_confirmed: false,
            } => "LOST: gave up on the session (the server may still hold it)",
            SessionEvent::Reconnected {
                session_changed: true,
            } => "RECONNECTED with a new session",
            SessionEvent::Reconnected {
                session_changed: false,
            } => "RECONNECTED, same session",
        }
        .to_owned(),
        EventKind::Call { call: c } => call(c),
        EventKind::Notice { notice: n } => notice(n),
        EventKind::TreeSnapshot { nodes } => {
            let ephemeral: Vec<String> = nodes
                .iter()
                .filter_map(|n| {
                    let owner = n.ephemeral_owner?;
                    Some(format!("{} ({})", n.path, session(run, owner)))
                })
                .collect();
            format!(
                "tree: {} nodes, {} ephemeral {}",
                nodes.len(),
                ephemeral.len(),
                some(&ephemeral)
            )
        }
        EventKind::WatchSnapshot { watches } => {
            let listed: Vec<String> = (watches.iter())
                .map(|w| format!("{} ({})", w.path, session(run, w.session)))
                .collect();
            format!(
                "the server lists {} data or exists watch(es) {}",
                watches.len(),
                some(&listed)
            )
        }
        EventKind::ServerModes { modes } => server_modes(modes),
        EventKind::LibraryError { message } => format!("the library's error: {message}"),
        EventKind::DeadlinePassed { owner } => {
            format!("the timeout of owner {}'s acquire is up", owner.0)
        }
        EventKind::ProgramFailed { error } => format!("the program FAILED: {error}"),
        EventKind::FaultStart { fault: f } => format!("fault begins: {}", fault(f)),
        EventKind::FaultEnd { fault: f } => format!("fault ends: {}", fault(f)),
        EventKind::ResourceRead {
            owner,
            token,
            accepted,
            value,
        } => format!(
            "owner {} reads with token {token}: {}",
            owner.0,
            match (accepted, value) {
                (true, Some(v)) => format!("accepted, value {v}"),
                (true, None) => "accepted".to_owned(),
                (false, _) => "REJECTED (stale token)".to_owned(),
            }
        ),
        EventKind::ResourceWrite {
            owner,
            token,
            value,
            accepted,
        } => format!(
            "owner {} writes {value} with token {token}: {}",
            owner.0,
            if *accepted {
                "accepted"
            } else {
                "REJECTED (stale token)"
            }
        ),
    }
}

/// A user call.
fn call(call: &Call) -> String {
    let owner = call.owner().0;
    let within = |timeout: &Option<std::time::Duration>| match timeout {
        Some(d) => format!(
            " (timeout {})",
            millis(d.as_millis().try_into().unwrap_or(u64::MAX))
        ),
        None => String::new(),
    };
    match call {
        Call::Acquire { timeout, mode, .. } => {
            format!(
                "owner {owner} calls acquire{}{}",
                mode_words(*mode),
                within(timeout)
            )
        }
        Call::Release { mode, .. } => format!("owner {owner} calls release{}", mode_words(*mode)),
        Call::Await { timeout, .. } => format!("owner {owner} calls await{}", within(timeout)),
        Call::Close { notify: true, .. } => format!("owner {owner} calls close (notify leader)"),
        other => format!("owner {owner} calls {}", other.name()),
    }
}

/// ` (read)` for a read hold; nothing for an exclusive one.
pub(crate) fn mode_words(mode: Mode) -> &'static str {
    match mode {
        Mode::Exclusive => "",
        Mode::Read => " (read)",
        Mode::Write => " (write)",
        Mode::Lease => " (lease)",
    }
}

/// A recipe's notice.
fn notice(notice: &Notice) -> String {
    let owner = notice.owner().0;
    let yes_no = |yes: bool| if yes { "yes" } else { "no" };
    match notice {
        Notice::Acquired { token, mode, .. } => {
            format!("owner {owner} ACQUIRED{}, token {token}", mode_words(*mode))
        }
        Notice::Released {
            remaining, mode, ..
        } => format!(
            "owner {owner} released{} ({remaining} holds left)",
            mode_words(*mode)
        ),
        Notice::TimedOut { .. } => format!("owner {owner} timed out waiting"),
        Notice::Failed { reason, .. } => format!("owner {owner} failed: {reason:?}"),
        Notice::Suspended { .. } => format!("owner {owner}'s hold SUSPENDED"),
        Notice::Reconnected { .. } => format!("owner {owner} holds again"),
        Notice::Lost { .. } => format!("owner {owner}'s hold LOST"),
        Notice::IsLeader { token, .. } => format!("owner {owner} is LEADER, token {token}"),
        Notice::NotLeader { .. } => format!("owner {owner} is NOT LEADER any more"),
        Notice::Awaited { leader, .. } => {
            format!("owner {owner}'s await returns: leader {}", yes_no(*leader))
        }
        Notice::Leadership { leader, .. } => {
            format!("owner {owner} has leadership: {}", yes_no(*leader))
        }
        Notice::Closed { .. } => format!("owner {owner} left the election"),
        Notice::RevocationRequested { .. } => {
            format!("owner {owner} is ASKED TO RELEASE (revocation)")
        }
        Notice::RevokeAttempted { delivered, .. } => format!(
            "owner {owner}'s revoke attempt: {}",
            if *delivered {
                "the holder was asked"
            } else {
                "no holder found"
            }
        ),
    }
}

/// A request's operation name (its `op_sent` row has the rest).
fn request_name(request: &Request) -> &'static str {
    match request {
        Request::Create { .. } => "create",
        Request::Delete { .. } => "delete",
        Request::SetData { .. } => "set_data",
        Request::GetData { .. } => "get_data",
        Request::Exists { .. } => "exists",
        Request::GetChildren { .. } => "get_children",
        Request::RemoveWatches { .. } => "remove_watches",
    }
}

/// A request: `create /locks/x/lock- (ephemeral_sequential)`.
pub(crate) fn request(request: &Request) -> String {
    let watch = |w: bool| if w { " +watch" } else { "" };
    match request {
        Request::Create { path, data, mode } => {
            let data = if data.is_empty() {
                String::new()
            } else {
                format!(" data {}", bytes(data))
            };
            format!("create {path} ({}){data}", mode_name(*mode))
        }
        Request::Delete { path, version } => match version {
            Some(v) => format!("delete {path} (version {v})"),
            None => format!("delete {path}"),
        },
        Request::SetData { path, data, .. } => format!("set_data {path} {}", bytes(data)),
        Request::GetData { path, watch: w } => format!("get_data {path}{}", watch(*w)),
        Request::Exists { path, watch: w } => format!("exists {path}{}", watch(*w)),
        Request::GetChildren { path, watch: w } => format!("get_children {path}{}", watch(*w)),
        Request::RemoveWatches { path, kind } => format!("remove_watches {path} ({kind:?})"),
    }
}

/// An outcome: `created /locks/x/lock-0000000003 (czxid 37)`, `error: no node`.
pub(crate) fn result(result: &OpResult) -> String {
    let czxid = |stat: &Stat| stat.czxid.0;
    match result {
        Ok(OpOk::Created { path, stat }) => format!("created {path} (czxid {})", czxid(stat)),
        Ok(OpOk::Deleted) => "deleted".to_owned(),
        Ok(OpOk::DataSet { stat }) => format!("data set (version {})", stat.version),
        Ok(OpOk::Data { data, stat }) => {
            format!("data {} (czxid {})", bytes(data), czxid(stat))
        }
        Ok(OpOk::Exists { stat: Some(stat) }) => format!("exists (czxid {})", czxid(stat)),
        Ok(OpOk::Exists { stat: None }) => "does not exist".to_owned(),
        Ok(OpOk::Children { names, .. }) => {
            let mut sorted = names.clone();
            sorted.sort_unstable();
            format!("children {}", some(&sorted))
        }
        Ok(OpOk::WatchesRemoved) => "watches removed".to_owned(),
        Err(error) => format!("error: {error}"),
    }
}

/// Each server's mode at the horizon, by number (`server 0 leader, server 1 not serving`), and,
/// when none leads, what that means for the run.
fn server_modes(modes: &[Option<ServerMode>]) -> String {
    let each: Vec<String> = (modes.iter().enumerate())
        .map(|(server, mode)| {
            let mode = match mode {
                Some(ServerMode::Leader) => "leader",
                Some(ServerMode::Follower) => "follower",
                Some(ServerMode::Observer) => "observer",
                Some(ServerMode::Standalone) => "standalone",
                None => "not serving",
            };
            format!("server {server} {mode}")
        })
        .collect();
    let leaderless = !modes.iter().flatten().any(|m| m.leads());
    format!(
        "the servers at the horizon: {}{}",
        each.join(", "),
        if leaderless {
            " — NO LEADER: no session expires and no write is applied"
        } else {
            ""
        }
    )
}

/// The first few items in brackets: `[a, b, … 7 more]`.
fn some(items: &[String]) -> String {
    let shown = SHOWN / 8;
    let more = match items.len().saturating_sub(shown) {
        0 => String::new(),
        n => format!(", … {n} more"),
    };
    let first: Vec<&str> = items.iter().take(shown).map(String::as_str).collect();
    format!("[{}{more}]", first.join(", "))
}

/// Node data as quoted text (lossy UTF-8, shortened).
fn bytes(data: &[u8]) -> String {
    let text = String::from_utf8_lossy(data);
    let mut shown: String = text.chars().take(SHOWN).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    format!("{shown:?} ({} bytes)", data.len())
}

/// A create mode as the trace spells it.
fn mode_name(mode: CreateMode) -> &'static str {
    match mode {
        CreateMode::Persistent => "persistent",
        CreateMode::PersistentSequential => "persistent_sequential",
        CreateMode::Ephemeral => "ephemeral",
        CreateMode::EphemeralSequential => "ephemeral_sequential",
        CreateMode::Container => "container",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_read_as_phrases() {
        let pause = Fault::Pause {
            client: 0,
            for_ms: 8_000,
        };
        assert_eq!(fault(&pause), "c0 paused (GC) for 8.000s");
        let cut = Fault::Partition {
            a: Node::Client(1),
            b: Node::Server,
            oneway: true,
            for_ms: None,
        };
        assert_eq!(fault(&cut), "partition c1 → server");
        let split = Fault::SplitServers {
            groups: ServerGroups::RandomHalves,
            resolved: Some(vec![vec![1], vec![0, 2]]),
            for_ms: None,
        };
        assert_eq!(fault(&split), "servers split [1] | [0, 2]");
        let slow = Fault::SlowServerLinks {
            server: Some(ServerSelector::Leader),
            resolved: Some(2),
            min_ms: 0,
            max_ms: 300,
            loss_percent: 10,
            for_ms: None,
        };
        assert_eq!(
            fault(&slow),
            "links of the leader (server 2) slow (0.000s–0.300s, 10% lost)"
        );
    }

    #[test]
    fn server_modes_read_by_number_and_a_leaderless_ensemble_is_said_so() {
        let led = [Some(ServerMode::Follower), Some(ServerMode::Leader), None];
        assert_eq!(
            server_modes(&led),
            "the servers at the horizon: server 0 follower, server 1 leader, server 2 not serving"
        );
        let leaderless = server_modes(&[Some(ServerMode::Follower), None, None]);
        assert!(leaderless.ends_with("NO LEADER: no session expires and no write is applied"));
    }

    #[test]
    fn long_data_is_shortened() {
        let data = vec![b'x'; 100];
        let shown = bytes(&data);
        assert!(shown.starts_with("\"xxxx"));
        assert!(shown.ends_with("…\" (100 bytes)"), "{shown}");
    }

    #[test]
    fn protection_prefixes_are_dropped_from_node_names() {
        let protected = Path::new("/locks/gc/_c_deadbeef-0000-00000001-lock-0000000003").unwrap();
        assert_eq!(node_name(&protected), "lock-0000000003");
        let curators =
            Path::new("/l/leases/_c_12a23a58-66b8-4cc4-9cbc-0d240cf6a6c1-lease-0000000006")
                .unwrap();
        assert_eq!(node_name(&curators), "lease-0000000006");
        let plain = Path::new("/locks/gc/lock-0000000004").unwrap();
        assert_eq!(node_name(&plain), "lock-0000000004");
    }
}
