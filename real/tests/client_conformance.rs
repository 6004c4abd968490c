//! Conformance at the client's level: one fault-free session of the unmodified
//! `zookeeper-client` runs the same script against the simulated ZooKeeper (inside the
//! simulation, over its wire) and against a real ZooKeeper 3.8, and what the client returns
//! at each step — node names, stats, error codes, multi results, watch events — is the same,
//! step for step. Stats are compared on what does not depend on time or history: versions,
//! children, data length, and whether the node is this session's ephemeral (zxids, times and
//! `cversion`, which ZooKeeper bumps on deletes too, see `frontend.rs`, are left out).

use std::fmt::Debug;
use std::time::Duration;

use programs::simulated::{Setup, run};
use real::local::Standalone;
use scenarios::scenario::ServerSettings;
use zookeeper_client as zk;

/// The session timeout both servers are asked for.
const TIMEOUT: Duration = Duration::from_secs(4);

/// What the client returns at each step of the script, against the server at `server`.
async fn transcript(server: String) -> Vec<String> {
    let client = zk::Client::connector()
        .with_session_timeout(TIMEOUT)
        .connect(&server)
        .await
        .expect("a session");
    let mut lines = vec![format!("timeout {:?}", client.session_timeout())];
    let mut step = |what: &str, outcome: String| lines.push(format!("{what}: {outcome}"));
    let me = client.session_id().0;
    let stat = |stat: &zk::Stat| {
        format!(
            "version {} aversion {} children {} length {} mine {}",
            stat.version,
            stat.aversion,
            stat.num_children,
            stat.data_length,
            stat.ephemeral_owner == me
        )
    };
    let acls = zk::Acls::anyone_all();
    let persistent = zk::CreateMode::Persistent.with_acls(acls);
    let sequential = zk::CreateMode::PersistentSequential.with_acls(acls);
    let ephemeral = zk::CreateMode::Ephemeral.with_acls(acls);
    let ephemeral_sequential = zk::CreateMode::EphemeralSequential.with_acls(acls);
    let created = |r: Result<(zk::Stat, zk::CreateSequence), zk::Error>| {
        shown(r.map(|(s, sequence)| format!("{sequence} {}", stat(&s))))
    };

    step(
        "create /c",
        created(client.create("/c", b"x", &persistent).await),
    );
    step(
        "create /c again",
        created(client.create("/c", b"", &persistent).await),
    );
    step(
        "create under a missing parent",
        created(client.create("/c/no/n", b"", &persistent).await),
    );
    step(
        "sequential 1",
        created(client.create("/c/s-", b"", &sequential).await),
    );
    step(
        "sequential 2",
        created(client.create("/c/s-", b"ab", &sequential).await),
    );
    step(
        "ephemeral sequential",
        created(client.create("/c/e-", b"", &ephemeral_sequential).await),
    );
    step(
        "ephemeral",
        created(client.create("/c/eph", b"", &ephemeral).await),
    );
    step(
        "child of an ephemeral",
        created(client.create("/c/eph/n", b"", &persistent).await),
    );
    step(
        "bad path",
        created(client.create("c", b"", &persistent).await),
    );

    let (data, s, data_watch) = client.get_and_watch_data("/c/eph").await.expect("get");
    step("get and watch /c/eph", format!("{data:?} {}", stat(&s)));
    step(
        "set /c/eph",
        shown(
            client
                .set_data("/c/eph", b"new", Some(0))
                .await
                .map(|s| stat(&s)),
        ),
    );
    let event = data_watch.changed().await;
    step(
        "its data watch",
        format!("{:?} {}", event.event_type, event.path),
    );
    step(
        "set with a bad version",
        shown(
            client
                .set_data("/c/eph", b"", Some(7))
                .await
                .map(|s| stat(&s)),
        ),
    );
    step(
        "set a missing node",
        shown(
            client
                .set_data("/c/none", b"", None)
                .await
                .map(|s| stat(&s)),
        ),
    );
    step(
        "get a missing node",
        shown(
            client
                .get_data("/c/none")
                .await
                .map(|(d, s)| format!("{d:?} {}", stat(&s))),
        ),
    );

    let (children, s, children_watch) = client.get_and_watch_children("/c").await.expect("list");
    step(
        "children of /c",
        format!("{:?} {}", sorted(children), stat(&s)),
    );
    step(
        "create /c/k",
        created(client.create("/c/k", b"", &persistent).await),
    );
    let event = children_watch.changed().await;
    step(
        "its children watch",
        format!("{:?} {}", event.event_type, event.path),
    );

    let (missing, exists_watch) = client
        .check_and_watch_stat("/c/later")
        .await
        .expect("exists");
    step(
        "exists /c/later",
        format!("{:?}", missing.map(|s| stat(&s))),
    );
    step(
        "create /c/later",
        created(client.create("/c/later", b"", &persistent).await),
    );
    let event = exists_watch.changed().await;
    step(
        "its exists watch",
        format!("{:?} {}", event.event_type, event.path),
    );

    step(
        "delete a non-empty node",
        shown(client.delete("/c", None).await),
    );
    step(
        "delete with a bad version",
        shown(client.delete("/c/k", Some(3)).await),
    );
    step(
        "delete a missing node",
        shown(client.delete("/c/none", None).await),
    );
    step("delete /c/k", shown(client.delete("/c/k", Some(0)).await));
    step(
        "exists /c/k",
        format!(
            "{:?}",
            client.check_stat("/c/k").await.map(|s| s.map(|s| stat(&s)))
        ),
    );

    let mut good = client.new_multi_writer();
    good.add_create("/c/m", b"", &persistent).expect("op");
    good.add_set_data("/c/m", b"1", Some(0)).expect("op");
    good.add_check_version("/c/m", 1).expect("op");
    good.add_delete("/c/later", None).expect("op");
    step("multi", multi(good.commit().await, &stat));
    let mut bad = client.new_multi_writer();
    bad.add_create("/c/m2", b"", &persistent).expect("op");
    bad.add_check_version("/c/m", 0).expect("op");
    step("multi with a bad check", multi(bad.commit().await, &stat));
    step(
        "exists /c/m2",
        format!(
            "{:?}",
            client
                .check_stat("/c/m2")
                .await
                .map(|s| s.map(|s| stat(&s)))
        ),
    );

    step("sync", shown(client.sync("/c").await));
    step(
        "children at the end",
        shown(client.list_children("/c").await.map(sorted)),
    );
    lines
}

/// A result in words.
fn shown<T: Debug>(result: Result<T, zk::Error>) -> String {
    match result {
        Ok(value) => format!("ok {value:?}"),
        Err(error) => format!("error {error:?}"),
    }
}

/// A multi's results in words.
fn multi(
    results: Result<Vec<zk::MultiWriteResult>, zk::MultiWriteError>,
    stat: &dyn Fn(&zk::Stat) -> String,
) -> String {
    match results {
        Ok(results) => (results.iter())
            .map(|result| match result {
                zk::MultiWriteResult::Create { path, stat: s } => {
                    format!("create {path} {}", stat(s))
                }
                zk::MultiWriteResult::SetData { stat: s } => format!("set {}", stat(s)),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
            .join("; "),
        Err(error) => format!("error {error:?}"),
    }
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

/// The script against the simulated server.
fn simulated() -> Vec<String> {
    let setup = Setup {
        seed: 0,
        clients: 1,
        server: ServerSettings::standalone(200, 4_000, 60_000),
        faults: Vec::new(),
        horizon: Duration::from_secs(60),
    };
    let outcome = run(setup, |place| transcript(place.server.to_string()));
    outcome
        .results
        .into_iter()
        .next()
        .expect("one client")
        .returned()
}

#[test]
#[ignore = "needs zookeeper: scripts/test installs Debian's zookeeper"]
fn the_client_sees_the_same_answers_from_the_simulated_server_and_from_zookeeper() {
    let _serial = real::testing::one_server_at_a_time();
    let server = Standalone::start().unwrap_or_else(|e| panic!("{e}"));
    let real = real::executor::block_on(transcript(server.connect_string()));
    drop(server);
    let simulated = simulated();
    for (step, (real, simulated)) in real.iter().zip(&simulated).enumerate() {
        assert_eq!(
            real, simulated,
            "step {step}: ZooKeeper's answer, then the simulator's"
        );
    }
    assert_eq!(real.len(), simulated.len());
}

/// The script runs to its end in the simulation alone (what the test above compares).
#[test]
fn the_script_runs_on_the_simulated_server() {
    let lines = simulated();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("child of an ephemeral: error")),
        "{lines:#?}"
    );
}
