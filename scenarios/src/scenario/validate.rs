//! The semantic checks a scenario must pass after parsing: names, ranges, durations, client
//! indices, instants inside the horizon, properties the recipe can be checked for, and the
//! size bounds below (far above every catalog and benchmark scenario, low enough that one
//! seed cannot run for minutes without a word).

use std::ops::RangeInclusive;

use coordination::framework::FrameworkConfig;
use coordination::recipes::TimeoutScope;
use coordination::retry::RetryPolicy;

use crate::fault::{Fault, Node, RequestTrigger, ScheduledFault, ServerGroups, ServerSelector};
use crate::rng::SplitMix64;
use recipe_table::property::Expectation;

use super::parse::Invalid;
use super::random::{ClientPick, FaultTemplate, NodePick};
use super::{RecipeKind, Scenario};

type Check = Result<(), Invalid>;

/// The most clients a scenario may have.
pub const MAX_CLIENTS: u16 = 64;
/// The most acquisitions per client.
pub const MAX_ACQUISITIONS: u32 = 1_000;
/// The most servers an ensemble has.
pub const MAX_ENSEMBLE: u16 = 9;
/// The longest horizon: one hour of simulated time, in ms.
pub const MAX_HORIZON_MS: u64 = 3_600_000;
/// The most faults one seed can have: the fixed ones plus the most every random generator
/// can draw.
pub const MAX_FAULTS: u64 = 256;

fn invalid(
    pointer: impl Into<String>,
    expected: impl Into<String>,
    found: impl ToString,
) -> Invalid {
    Invalid {
        pointer: pointer.into(),
        expected: expected.into(),
        found: found.to_string(),
    }
}

/// Fails with `expected, found` at `pointer` unless `ok`.
fn require(ok: bool, pointer: &str, expected: &str, found: impl ToString) -> Check {
    if ok {
        Ok(())
    } else {
        Err(invalid(pointer, expected, found))
    }
}

fn positive(value: u64, pointer: &str) -> Check {
    require(
        value > 0,
        pointer,
        "a positive number of milliseconds",
        value,
    )
}

/// Checks everything serde cannot.
pub(super) fn validate(s: &Scenario) -> Check {
    let kebab = !s.name.is_empty()
        && s.name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    require(kebab, "/name", "a kebab-case name", format!("{:?}", s.name))?;
    let one_line = !s.description.trim().is_empty() && !s.description.contains('\n');
    let found = format!("{:?}", s.description);
    require(one_line, "/description", "one non-empty line", found)?;
    require(s.clients >= 1, "/clients", "at least 1 client", s.clients)?;
    let most = format!("at most {MAX_CLIENTS} clients");
    require(s.clients <= MAX_CLIENTS, "/clients", &most, s.clients)?;
    check_workload(s)?;
    check_server(s)?;
    check_framework(s)?;
    positive(s.horizon_ms, "/horizon_ms")?;
    let most = format!("a horizon of at most {MAX_HORIZON_MS} ms (one simulated hour)");
    require(
        s.horizon_ms <= MAX_HORIZON_MS,
        "/horizon_ms",
        &most,
        s.horizon_ms,
    )?;
    check_fault_count(s)?;
    for (i, fault) in s.faults.iter().enumerate() {
        check_scheduled(s, fault, &format!("/faults/{i}"))?;
    }
    for (i, random) in s.random_faults.iter().enumerate() {
        let at = format!("/random_faults/{i}");
        let before = format!("instants before the horizon ({} ms)", s.horizon_ms);
        let found = format!("at_ms up to {}", random.at_ms.max);
        require(
            random.at_ms.max < s.horizon_ms,
            &format!("{at}/at_ms"),
            &before,
            found,
        )?;
        let found = "an empty list";
        require(
            !random.pick.is_empty(),
            &format!("{at}/pick"),
            "at least one fault template",
            found,
        )?;
        for (j, template) in random.pick.iter().enumerate() {
            check_template(s, template, &format!("{at}/pick/{j}"))?;
            // Every draw of a valid template has its kind and the same ends (client or
            // server), so one draw tells whether a client's request can start its faults.
            let drawn = template.draw(s.clients, &mut SplitMix64::new(0));
            if let Fault::RestartServer { .. } = drawn {
                not_in_ensemble(s, "restart_server", &format!("{at}/pick/{j}"))?;
            }
            if let Some(server) = drawn.server_selector() {
                let pointer = format!("{at}/pick/{j}/server");
                check_server_selector(s, server, (&pointer, "one server"))?;
            }
            require(
                random.on_request.is_none() || drawn.requesting_client().is_some(),
                &format!("{at}/pick/{j}"),
                "with on_request, only partitions between one client and the server or \
                 isolations of one client",
                drawn.kind(),
            )?;
        }
        if let Some(pick) = &random.on_request {
            require(
                !pick.ops.is_empty(),
                &format!("{at}/on_request/ops"),
                "at least one request kind",
                "an empty list",
            )?;
        }
    }
    check_properties(s)
}

fn check_workload(s: &Scenario) -> Check {
    let w = &s.workload;
    let found = w.acquisitions;
    require(
        found >= 1,
        "/workload/acquisitions",
        "at least 1 acquisition",
        found,
    )?;
    require(
        found <= MAX_ACQUISITIONS,
        "/workload/acquisitions",
        &format!("at most {MAX_ACQUISITIONS} acquisitions per client"),
        found,
    )?;
    if let Some(timeout) = w.acquire_timeout_ms {
        positive(timeout, "/workload/acquire_timeout_ms")?;
    }
    let settings = &s.recipe_settings;
    let leases = settings.max_leases;
    require(
        leases >= 1,
        "/recipe_settings/max_leases",
        "at least 1 lease",
        leases,
    )?;
    let writers = settings.writers;
    let expected = format!("at most the {} clients", s.clients);
    require(
        writers <= s.clients,
        "/recipe_settings/writers",
        &expected,
        writers,
    )?;
    let revocable: Vec<&str> = (RecipeKind::ALL.iter())
        .filter(|kind| kind.revocable())
        .map(|kind| kind.name())
        .collect();
    require(
        !settings.revocable || s.recipe.revocable(),
        "/recipe_settings/revocable",
        &format!("revocable only with the recipe {}", revocable.join(" or ")),
        format!("revocable with {}", s.recipe),
    )?;
    require(
        !settings.awaits || s.recipe.family() == recipe_table::family::Family::Latch,
        "/recipe_settings/awaits",
        "awaits only with the recipe leader-latch",
        format!("awaits with {}", s.recipe),
    )?;
    require(
        settings.timeout_scope == TimeoutScope::default() || s.recipe == RecipeKind::MultiLock,
        "/recipe_settings/timeout_scope",
        "timeout_scope only with the recipe multi-lock",
        format!("timeout_scope with {}", s.recipe),
    )
}

/// At most [`MAX_FAULTS`] per seed: the fixed faults, then each generator's most.
fn check_fault_count(s: &Scenario) -> Check {
    let expected = format!("at most {MAX_FAULTS} faults per seed");
    let mut total = s.faults.len() as u64;
    require(
        total <= MAX_FAULTS,
        "/faults",
        &expected,
        format!("{total} faults"),
    )?;
    for (i, random) in s.random_faults.iter().enumerate() {
        total = total.saturating_add(random.count.max);
        let found = format!("up to {total} with this generator's {}", random.count.max);
        let pointer = format!("/random_faults/{i}/count/max");
        require(total <= MAX_FAULTS, &pointer, &expected, found)?;
    }
    Ok(())
}

fn check_server(s: &Scenario) -> Check {
    let server = &s.server;
    positive(server.tick_ms, "/server/tick_ms")?;
    positive(server.container_sweep_ms, "/server/container_sweep_ms")?;
    let expected = "1 (a standalone server) to 9 servers";
    let servers = server.ensemble;
    require(
        (1..=MAX_ENSEMBLE).contains(&servers),
        "/server/ensemble",
        expected,
        servers,
    )?;
    require(
        server.sync_limit > 0,
        "/server/sync_limit",
        "a positive number of ticks",
        server.sync_limit,
    )?;
    let (low, high) = (2 * server.tick_ms, 20 * server.tick_ms);
    require(
        (low..=high).contains(&server.session_timeout_ms),
        "/server/session_timeout_ms",
        &format!("a session timeout within 2 to 20 ticks ({low}..={high} ms)"),
        server.session_timeout_ms,
    )
}

fn check_framework(s: &Scenario) -> Check {
    let limit = RetryPolicy::MAX_EXPONENTIAL_RETRIES;
    if let RetryPolicy::ExponentialBackoff { max_retries, .. } = s.framework.retry {
        require(
            max_retries <= limit,
            "/framework/retry/max_retries",
            &format!("at most {limit} retries (Curator's limit for exponential-backoff)"),
            max_retries,
        )?;
    }
    within(
        FrameworkConfig::SESSION_EXPIRATION_PERCENTS,
        s.framework.lost_after_percent,
        "/framework/session_expiration_percent",
        "a percent of the session timeout",
        " (Curator's bounds)",
    )?;
    within(
        FrameworkConfig::CONNECTION_TIMEOUTS_MS,
        s.framework.connection_timeout_ms,
        "/framework/connection_timeout_ms",
        "a connection timeout",
        " ms",
    )
}

/// `value` lies in `range`; else the error expects "`what` within `start..=end``unit`".
fn within(range: RangeInclusive<u32>, value: u32, pointer: &str, what: &str, unit: &str) -> Check {
    let expected = format!("{what} within {}..={}{unit}", range.start(), range.end());
    require(range.contains(&value), pointer, &expected, value)
}

fn check_client(clients: u16, client: u16, pointer: &str) -> Check {
    let expected = format!("a client index below {clients}");
    require(client < clients, pointer, &expected, client)
}

fn check_node(clients: u16, node: Node, pointer: &str) -> Check {
    match node {
        Node::Server => Ok(()),
        Node::Client(client) => check_client(clients, client, &format!("{pointer}/client")),
    }
}

/// A fault of the standalone server only (an ensemble's servers restart with `crash_server`).
fn not_in_ensemble(s: &Scenario, kind: &str, pointer: &str) -> Check {
    require(
        !s.server.is_ensemble(),
        pointer,
        "a fault the simulated ensemble models (crash_server restarts one of its servers)",
        kind,
    )
}

/// A selector names a server of the scenario's ensemble: a server or follower index in
/// range, or a client; the leader always.
fn check_server_selector(
    s: &Scenario,
    server: ServerSelector,
    (pointer, what): (&str, &str),
) -> Check {
    let servers = s.server.ensemble;
    let found = format!("{server:?} with {servers} server(s)");
    require(
        s.server.is_ensemble(),
        pointer,
        &format!("a fault on {what} in an ensemble (server.ensemble at least 2)"),
        &found,
    )?;
    match server {
        ServerSelector::Server(n) => {
            let expected = format!("a server index below {servers}");
            require(n < servers, &format!("{pointer}/server"), &expected, n)
        }
        ServerSelector::Follower(k) => {
            let expected = format!("a follower index below {}", servers - 1);
            require(
                k < servers - 1,
                &format!("{pointer}/follower"),
                &expected,
                k,
            )
        }
        ServerSelector::Leader => Ok(()),
        ServerSelector::ServerOf(client) => {
            check_client(s.clients, client, &format!("{pointer}/server_of"))
        }
    }
}

/// A split's groups, in an ensemble: random halves, or at least two groups that hold every
/// server exactly once.
fn check_groups(s: &Scenario, groups: &ServerGroups, pointer: &str) -> Check {
    let servers = s.server.ensemble;
    require(
        s.server.is_ensemble(),
        pointer,
        "a split of the servers of an ensemble (server.ensemble at least 2)",
        format!("{servers} server(s)"),
    )?;
    let expected = format!(
        "at least two groups holding each server below {servers} exactly once (or \"random_halves\")"
    );
    require(
        groups.split(servers),
        pointer,
        &expected,
        groups_found(groups),
    )
}

fn groups_found(groups: &ServerGroups) -> String {
    match groups {
        ServerGroups::Given(groups) => format!("{groups:?}"),
        ServerGroups::RandomHalves => "random_halves".into(),
    }
}

/// A delay's span: `min_ms` at most `max_ms`.
fn check_span(min_ms: u64, max_ms: u64, at: &str) -> Check {
    let found = format!("min_ms {min_ms} above max_ms {max_ms}");
    require(
        min_ms <= max_ms,
        &format!("{at}/max_ms"),
        "max_ms >= min_ms",
        found,
    )
}

/// A slow link's delay and loss: `min_ms` at most `max_ms`, a loss below 100 % (at 100 % a
/// message would never arrive, and TCP would give the connection up).
fn check_slow_links(
    s: &Scenario,
    server: Option<ServerSelector>,
    slow: (u64, u64, u8),
    at: &str,
) -> Check {
    let (min_ms, max_ms, loss_percent) = slow;
    require(
        s.server.is_ensemble(),
        &format!("{at}/kind"),
        "slow_server_links in an ensemble (server.ensemble at least 2)",
        format!("{} server(s)", s.server.ensemble),
    )?;
    if let Some(server) = server {
        let pointer = format!("{at}/server");
        check_server_selector(s, server, (&pointer, "one server's links to its peers"))?;
    }
    check_span(min_ms, max_ms, at)?;
    require(
        loss_percent < 100,
        &format!("{at}/loss_percent"),
        "a percentage 0..=99 (TCP retransmits a lost segment until it arrives)",
        loss_percent,
    )
}

fn check_duration(for_ms: Option<u64>, pointer: &str) -> Check {
    for_ms.map_or(Ok(()), |d| positive(d, &format!("{pointer}/for_ms")))
}

fn check_scheduled(s: &Scenario, scheduled: &ScheduledFault, at: &str) -> Check {
    let before = format!("an instant before the horizon ({} ms)", s.horizon_ms);
    require(
        scheduled.at_ms < s.horizon_ms,
        &format!("{at}/at_ms"),
        &before,
        scheduled.at_ms,
    )?;
    if let Some(trigger) = &scheduled.on_request {
        check_trigger(scheduled, trigger, at)?;
    }
    let at = format!("{at}/fault");
    let clients = s.clients;
    match scheduled.fault {
        Fault::Pause { client, for_ms } => {
            check_client(clients, client, &format!("{at}/client"))?;
            positive(for_ms, &format!("{at}/for_ms"))
        }
        Fault::ExpireSession { client } | Fault::Crash { client } => {
            check_client(clients, client, &format!("{at}/client"))
        }
        Fault::Heal => Ok(()),
        Fault::RestartServer { down_ms } => {
            not_in_ensemble(s, "restart_server", &at)?;
            positive(down_ms, &format!("{at}/down_ms"))
        }
        Fault::Isolate { node, for_ms } => {
            check_node(clients, node, &format!("{at}/node"))?;
            check_duration(for_ms, &at)
        }
        Fault::IsolateFromPeers { server, for_ms, .. } => {
            let pointer = format!("{at}/server");
            check_server_selector(s, server, (&pointer, "a server's peers only"))?;
            check_duration(for_ms, &at)
        }
        Fault::LagServer {
            server,
            lag_ms,
            for_ms,
            ..
        } => {
            let pointer = format!("{at}/server");
            check_server_selector(s, server, (&pointer, "one server's links from its peers"))?;
            positive(lag_ms, &format!("{at}/lag_ms"))?;
            check_duration(for_ms, &at)
        }
        Fault::CutFromServer { client, for_ms, .. } => {
            check_client(clients, client, &format!("{at}/client"))?;
            let server = scheduled.fault.server_selector().expect("a selector");
            let pointer = format!("{at}/server");
            check_server_selector(s, server, (&pointer, "one client's link to one server"))?;
            check_duration(for_ms, &at)
        }
        Fault::CrashServer {
            server, down_ms, ..
        } => {
            let pointer = format!("{at}/server");
            check_server_selector(s, server, (&pointer, "one server"))?;
            positive(down_ms, &format!("{at}/down_ms"))
        }
        Fault::PauseServer {
            server, pause_ms, ..
        } => {
            let pointer = format!("{at}/server");
            check_server_selector(s, server, (&pointer, "one server"))?;
            positive(pause_ms, &format!("{at}/pause_ms"))
        }
        Fault::SplitServers {
            ref groups, for_ms, ..
        } => {
            check_groups(s, groups, &format!("{at}/groups"))?;
            check_duration(for_ms, &at)
        }
        Fault::SlowServerLinks {
            server,
            min_ms,
            max_ms,
            loss_percent,
            for_ms,
            ..
        } => {
            check_slow_links(s, server, (min_ms, max_ms, loss_percent), &at)?;
            check_duration(for_ms, &at)
        }
        Fault::Partition { a, b, for_ms, .. } => {
            check_link(clients, (a, b), ("a", "b"), &at)?;
            check_duration(for_ms, &at)
        }
        Fault::Delay {
            from,
            to,
            min_ms,
            max_ms,
            for_ms,
        } => {
            check_link(clients, (from, to), ("from", "to"), &at)?;
            check_span(min_ms, max_ms, &at)?;
            check_duration(for_ms, &at)
        }
        Fault::Drop {
            from,
            to,
            percent,
            for_ms,
        } => {
            check_link(clients, (from, to), ("from", "to"), &at)?;
            check_percent(percent, &at)?;
            check_duration(for_ms, &at)
        }
    }
}

/// A request can start only a cut of one client's links or a crash of a server.
fn check_trigger(scheduled: &ScheduledFault, trigger: &RequestTrigger, at: &str) -> Check {
    require(
        scheduled.fault.may_start_at_request(),
        &format!("{at}/on_request"),
        "on_request only on a partition between one client and the server, an isolation of \
         one client or a crash_server",
        format!("on_request on {}", scheduled.fault.kind()),
    )?;
    let found = format!("{:?}", trigger.path_contains);
    require(
        !trigger.path_contains.contains('\n'),
        &format!("{at}/on_request/path_contains"),
        "text on one line",
        found,
    )
}

fn check_percent(percent: u8, at: &str) -> Check {
    require(
        percent <= 100,
        &format!("{at}/percent"),
        "a percentage 0..=100",
        percent,
    )
}

fn check_link(clients: u16, (a, b): (Node, Node), names: (&str, &str), at: &str) -> Check {
    check_node(clients, a, &format!("{at}/{}", names.0))?;
    check_node(clients, b, &format!("{at}/{}", names.1))?;
    let found = format!("{a:?} at both ends");
    require(
        a != b,
        &format!("{at}/{}", names.1),
        "two different nodes",
        found,
    )
}

fn check_template(s: &Scenario, template: &FaultTemplate, at: &str) -> Check {
    let clients = s.clients;
    let (client_picks, node_picks, spans) = template.parts();
    for pick in client_picks {
        if let ClientPick::Client(client) = pick {
            check_client(clients, client, &format!("{at}/client"))?;
        }
    }
    for pick in &node_picks {
        if let NodePick::Client(client) = *pick {
            check_client(clients, client, &format!("{at}/client"))?;
        }
    }
    if let [a, b] = node_picks[..] {
        let same = match (a, b) {
            (NodePick::AnyClient, NodePick::AnyClient) => clients < 2,
            (NodePick::AnyClient, NodePick::Client(_))
            | (NodePick::Client(_), NodePick::AnyClient) => clients < 2,
            _ => a == b,
        };
        require(
            !same,
            at,
            "two different nodes at the ends of a link",
            format!("{a:?} and {b:?}"),
        )?;
    }
    let field = match template {
        FaultTemplate::RestartServer { .. } | FaultTemplate::CrashServer { .. } => "down_ms",
        FaultTemplate::PauseServer { .. } => "pause_ms",
        _ => "for_ms",
    };
    for span in spans {
        require(
            span.min > 0,
            &format!("{at}/{field}"),
            "a positive number of milliseconds",
            span,
        )?;
    }
    match *template {
        FaultTemplate::Delay { min_ms, max_ms, .. } => check_span(min_ms, max_ms, at),
        FaultTemplate::SplitServers { ref groups, .. } => {
            check_groups(s, groups, &format!("{at}/groups"))
        }
        FaultTemplate::SlowServerLinks {
            server,
            min_ms,
            max_ms,
            loss_percent,
            ..
        } => check_slow_links(s, server, (min_ms, max_ms, loss_percent), at),
        FaultTemplate::Drop { percent, .. } => check_percent(percent, at),
        FaultTemplate::LagServer { lag_ms, .. } => positive(lag_ms.min, &format!("{at}/lag_ms")),
        _ => Ok(()),
    }
}

fn check_properties(s: &Scenario) -> Check {
    let known = s.recipe.properties();
    for (property, expectation) in &s.properties {
        if *expectation != Expectation::Unchecked && !known.contains(property) {
            let names: Vec<&str> = known.iter().map(|p| p.name()).collect();
            return Err(invalid(
                format!("/properties/{property}"),
                format!("a property of recipe `{}` ({})", s.recipe, names.join(", ")),
                format!("`{property}`"),
            ));
        }
    }
    Ok(())
}
