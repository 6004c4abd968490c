//! The local ZooKeeper harness: servers start on 127.0.0.1, serve, and are gone (every
//! process of their group) once stopped or dropped.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use real::local::{self, Ensemble, ServerMode, Settings, Standalone};

/// True while a process (or its process group, created by the harness) exists.
fn alive(pid: u32) -> bool {
    let group_alive = i32::try_from(pid)
        .map(|pid| {
            // SAFETY: signal 0 only checks that the process group exists.
            unsafe { libc::kill(-pid, 0) == 0 }
        })
        .unwrap_or(false);
    group_alive || Path::new(&format!("/proc/{pid}")).exists()
}

/// Waits (bounded) until none of `pids` is alive.
fn assert_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|&p| alive(p)) {
        assert!(Instant::now() < deadline, "still running: {pids:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn started<T>(result: Result<T, local::HarnessError>) -> T {
    result.unwrap_or_else(|e| panic!("{e}"))
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn standalone_serves_on_loopback_restarts_and_stops() {
    let began = Instant::now();
    let mut server = started(Standalone::start());
    eprintln!("standalone serving after {:?}", began.elapsed());
    assert!(server.client_addr().ip().is_loopback());
    assert_eq!(server.mode(), Some(ServerMode::Standalone));
    let answer = local::four_letter_word(server.client_addr(), "ruok").unwrap();
    assert_eq!(answer, "imok");
    let dir = server.dir().to_path_buf();
    let first = server.pid().unwrap();
    server.kill();
    assert_gone(&[first]);
    assert_eq!(server.mode(), None, "a killed server does not answer");
    let began = Instant::now();
    started(server.restart(Duration::ZERO));
    eprintln!("standalone restarted after {:?}", began.elapsed());
    let second = server.pid().unwrap();
    assert_ne!(first, second);
    server.stop();
    server.stop();
    assert_gone(&[second]);
    drop(server);
    assert!(!dir.exists(), "the temporary directory is removed");
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn ensemble_elects_a_leader_survives_its_kill_and_stops() {
    let began = Instant::now();
    let mut ensemble = started(Ensemble::start(3));
    eprintln!("3-server ensemble serving after {:?}", began.elapsed());
    assert_eq!(ensemble.connect_string().split(',').count(), 3);
    assert!(
        ensemble
            .connect_string()
            .split(',')
            .all(|a| a.starts_with("127.0.0.1:"))
    );
    let leader = ensemble.leader().expect("a leader");
    let modes: Vec<_> = (0..3).map(|s| ensemble.mode(s)).collect();
    assert_eq!(
        modes
            .iter()
            .filter(|m| **m == Some(ServerMode::Follower))
            .count(),
        2,
        "{modes:?}"
    );
    let pids = ensemble.pids();
    assert_eq!(pids.len(), 3);
    started(ensemble.kill(leader));
    let began = Instant::now();
    let next = started(ensemble.wait_leader(Duration::from_secs(30)));
    eprintln!("new leader after {:?}", began.elapsed());
    assert_ne!(next, leader);
    let began = Instant::now();
    started(ensemble.restart(leader, Duration::ZERO));
    eprintln!("old leader rejoined after {:?}", began.elapsed());
    assert_eq!(ensemble.mode(leader), Some(ServerMode::Follower));
    let mut all = pids.clone();
    all.extend(ensemble.pids());
    drop(ensemble);
    assert_gone(&all);
}

/// Waits (bounded by `within`) until `holds`, else fails saying what was awaited, with each
/// server's mode and the end of its log.
fn wait_until(ensemble: &Ensemble, what: &str, within: Duration, mut holds: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !holds() {
        if Instant::now() >= deadline {
            panic!(
                "not within {within:?}: {what}\n{}",
                ensemble_state(ensemble)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Each server's mode and the last lines of its log, for a failure message.
fn ensemble_state(ensemble: &Ensemble) -> String {
    const LINES: usize = 40;
    let mut state = String::new();
    for (server, log) in ensemble.log_paths().iter().enumerate() {
        let text = std::fs::read_to_string(log).unwrap_or_else(|e| format!("(unreadable: {e})"));
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(LINES)..].join("\n");
        let mode = ensemble.mode(server);
        state += &format!(
            "--- server {server}: {mode:?}; {}:\n{tail}\n",
            log.display()
        );
    }
    state
}

/// Three servers with syncLimit 5 ticks of 200 ms: a server that hears no peer gives up after
/// a second.
fn giving_up_after_a_second() -> Ensemble {
    let settings = Settings {
        sync_limit: 5,
        ..Settings::default()
    };
    started(Ensemble::start_with(3, settings))
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn servers_cut_off_from_their_peers_stop_serving_and_rejoin_at_the_heal() {
    let _serial = real::testing::one_server_at_a_time();
    let ensemble = giving_up_after_a_second();
    let cuts = ensemble.peer_cuts();
    let within = Duration::from_secs(30);
    let leader = ensemble.leader().expect("a leader");
    let follower = (0..3).find(|&s| s != leader).unwrap();
    let index = |server: usize| u16::try_from(server).unwrap();

    // A follower cut off stops serving; the leader keeps its quorum with the other one.
    cuts.cut_off(0, index(follower));
    wait_until(&ensemble, "the cut follower stops serving", within, || {
        ensemble.mode(follower).is_none()
    });
    assert_eq!(ensemble.mode(leader), Some(ServerMode::Leader));
    assert!(cuts.heal(0));
    wait_until(&ensemble, "the follower rejoins", within, || {
        ensemble.mode(follower) == Some(ServerMode::Follower)
    });

    // The leader cut off loses its quorum, and the two others elect one of themselves: each
    // knows the other only at the proxies, so the election went through them.
    cuts.cut_off(1, index(leader));
    wait_until(&ensemble, "another server leads", within, || {
        ensemble.mode(leader).is_none() && ensemble.leader().is_some_and(|l| l != leader)
    });
    assert!(cuts.heal(1));
    wait_until(
        &ensemble,
        "the old leader rejoins as a follower",
        within,
        || ensemble.mode(leader) == Some(ServerMode::Follower),
    );
    assert!(!cuts.heal(1), "healed already");
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_leader_split_into_a_minority_stops_serving_and_the_majority_elects() {
    let _serial = real::testing::one_server_at_a_time();
    let ensemble = giving_up_after_a_second();
    let cuts = ensemble.peer_cuts();
    let within = Duration::from_secs(30);
    let leader = ensemble.leader().expect("a leader");
    let index = |server: usize| u16::try_from(server).unwrap();
    let others: Vec<u16> = (0..3).filter(|&s| s != leader).map(index).collect();
    cuts.split(0, &[vec![index(leader)], others]);
    wait_until(
        &ensemble,
        "the majority elects one of its own",
        within,
        || ensemble.mode(leader).is_none() && ensemble.leader().is_some_and(|l| l != leader),
    );
    assert!(cuts.heal(0));
    wait_until(
        &ensemble,
        "the old leader rejoins as a follower",
        within,
        || ensemble.mode(leader) == Some(ServerMode::Follower),
    );
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn peer_links_slower_than_sync_limit_lose_the_leader_its_quorum_until_they_heal() {
    let _serial = real::testing::one_server_at_a_time();
    // Giving up after a second, below the links' 1.5 s each way.
    let ensemble = giving_up_after_a_second();
    let cuts = ensemble.peer_cuts();
    let within = Duration::from_secs(30);
    let leader = ensemble.leader().expect("a leader");
    cuts.slow(
        0,
        None,
        (1_500, 1_500, 0),
        scenarios::rng::SplitMix64::new(7),
    );
    wait_until(&ensemble, "the leader stops leading", within, || {
        ensemble.mode(leader) != Some(ServerMode::Leader)
    });
    assert!(cuts.heal(0));
    wait_until(&ensemble, "a server leads again", within, || {
        ensemble.leader().is_some() && (0..3).all(|s| ensemble.mode(s).is_some())
    });
}

#[test]
fn without_zookeeper_the_harness_says_how_to_install_it() {
    if local::installed() {
        return;
    }
    let error = Standalone::start().unwrap_err();
    assert_eq!(error.to_string(), local::NOT_INSTALLED);
}

/// Run as a child process by the test below (it does nothing otherwise): starts a standalone
/// server, prints its PID and directory, and waits to be killed.
#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn child_process_starts_a_server_and_waits() {
    if std::env::var_os("SPLITBRAIN_REAL_CHILD").is_none() {
        return;
    }
    let server = started(Standalone::start());
    println!(
        "SERVER {} {}",
        server.pid().unwrap(),
        server.dir().display()
    );
    std::io::stdout().flush().unwrap();
    // The parent SIGKILLs this process as soon as it has read the line above.
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn a_process_killed_without_drop_leaves_no_server_behind() {
    assert!(local::installed(), "{}", local::NOT_INSTALLED);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "child_process_starts_a_server_and_waits",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("SPLITBRAIN_REAL_CHILD", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (found, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // libtest prints "test <name> ... " on the same line first.
            if let Some((_, rest)) = line.split_once("SERVER ") {
                let _ = found.send(rest.to_string());
                return;
            }
        }
    });
    let line = lines.recv_timeout(Duration::from_secs(30));
    // SIGKILL: no Drop, no unwinding; only the parent-death signal can stop the server.
    child.kill().unwrap();
    child.wait().unwrap();
    let line = line.expect("the child reported its server within 30 s");
    let (pid, dir) = line.split_once(' ').unwrap();
    let pid: u32 = pid.parse().unwrap();
    assert_gone(&[pid]);
    std::fs::remove_dir_all(PathBuf::from(dir)).unwrap();
}
