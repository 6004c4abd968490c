//! `zookeeper-client`'s own `Client::lock` (this package's
//! `splitbrain-zookeeper-client-contender` binary) on a real ZooKeeper, driven over the
//! contender protocol: in place of a scenario's clients fault-free, a holder's GC pause (its
//! process stopped past its session timeout), its session expired, its process crashed;
//! beside splitbrain's clients on one lock path; and the protocol itself, line by line. The
//! assertions are what the crate does, as the checkers judge it.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use real::contender::protocol::{Hello, Report, Stamped};
use real::local::Settings;
use real::target::Target;
use real::zookeeper_client::ZookeeperClient;
use support::beside::{EACH, passes_mixed};
use support::contenders::{
    fault_free_in_place, holder_crash_restarts, holder_hears_its_expiry,
    holder_paused_past_its_session, lines, stale_write_accepted,
};

/// `count` of the crate's contenders, run by this package's binary.
fn zookeeper_client(count: u16) -> ZookeeperClient {
    let program = env!("CARGO_BIN_EXE_splitbrain-zookeeper-client-contender");
    ZookeeperClient::started_by(program.into(), Vec::new(), count).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn client_locks_in_place_of_the_clients_exclude_each_other_in_queue_order() {
    fault_free_in_place(&zookeeper_client(3));
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn rust_mutexes_and_client_locks_exclude_each_other_in_queue_order_waking_one_per_release() {
    // Curator's prefix names the crate's nodes as splitbrain's mutex names its own, and the
    // crate orders them by the same sequence: one queue.
    let scenario = support::beside::scenario("herd-free-mutex", 30);
    passes_mixed(&scenario, &zookeeper_client(EACH));
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_client_lock_paused_past_its_session_believes_beside_the_next_and_loses_an_update() {
    // The lock tells its holder nothing of the pause: continued, the holder writes at once
    // with its old token on the unfenced counter (belief and fenced exclusion violated, as
    // the scenario expects).
    let trace = holder_paused_past_its_session("gc-pause-split-brain", &zookeeper_client(2));
    assert!(stale_write_accepted(&trace), "{}", lines(&trace));
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_client_lock_paused_past_its_session_is_fenced_off() {
    let trace = holder_paused_past_its_session("gc-pause-fenced", &zookeeper_client(2));
    assert!(!stale_write_accepted(&trace), "{}", lines(&trace));
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_client_lock_holder_whose_session_expires_hears_it_and_is_fenced_off() {
    // Client 0 holds for 5 s, its session expired at 2 s: the crate's state watcher says
    // Disconnected, then Expired when it reconnects, before the hold ends. The crate does not
    // connect again by itself, and client 0 has no acquire left to connect a new client for.
    holder_hears_its_expiry(&zookeeper_client(2), false);
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_crashed_client_lock_holder_is_restarted_on_a_new_session() {
    holder_crash_restarts(&zookeeper_client(2));
}

/// The reports of the contender for its next line, parsed.
fn report(lines: &mut impl Iterator<Item = std::io::Result<String>>) -> Report {
    let line = lines.next().expect("a report").expect("a line");
    let stamped: Stamped = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
    stamped.report
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn the_contender_speaks_the_protocol_and_answers_unsupported_for_an_election() {
    let _serial = real::testing::one_server_at_a_time();
    let target = Target::start_local(1, Settings::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut contender = Command::new(env!("CARGO_BIN_EXE_splitbrain-zookeeper-client-contender"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = contender.stdin.take().unwrap();
    let mut reports = BufReader::new(contender.stdout.take().unwrap()).lines();
    let mut send = |line: &str| writeln!(&mut stdin, "{line}").unwrap();
    let hello = Hello {
        client: 0,
        recipe: "mutex".into(),
        connect: target.connect_string().into(),
        lock_path: "/locks/protocol".into(),
        max_leases: None,
        session_timeout_ms: 4000,
        connection_timeout_ms: 5000,
        retry: "exponential-backoff:1000:3".into(),
    };
    send(&serde_json::to_string(&real::contender::protocol::Command::Hello(hello)).unwrap());
    let Report::Ready { session_id, .. } = report(&mut reports) else {
        panic!("ready first");
    };
    assert!(session_id != 0);
    send(r#"{"type":"await","timeout_ms":100}"#);
    let Report::Failed { error, message } = report(&mut reports) else {
        panic!("await is answered by a failure");
    };
    assert_eq!(error, "unsupported", "{message}");
    send(r#"{"type":"acquire","mode":"read"}"#);
    assert!(matches!(report(&mut reports), Report::Failed { error, .. } if error == "unsupported"));
    send(r#"{"type":"release"}"#);
    assert!(matches!(report(&mut reports), Report::Failed { error, .. } if error == "not_held"));
    send(r#"{"type":"acquire","timeout_ms":5000}"#);
    let Report::Acquired { token, .. } = report(&mut reports) else {
        panic!("acquired");
    };
    send(&format!(r#"{{"type":"write","token":{token},"value":1}}"#));
    assert_eq!(report(&mut reports), Report::Write { token, value: 1 });
    send(r#"{"type":"release"}"#);
    assert!(matches!(report(&mut reports), Report::Released { .. }));
    drop(stdin);
    let status = contender.wait().unwrap();
    assert_eq!(status.code(), Some(0), "the end of stdin ends it");
    target.stop();
}
