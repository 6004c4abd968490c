//! [`idle_session`]: splitbrain's own program of one idle `zookeeper-client` session, what
//! `splitbrain survival --client zookeeper-client` and `splitbrain fidelity` cut off from the
//! server to see whether the session survives, with the same client in the simulator and on a
//! real ZooKeeper.

use recipe_table::family::Family;
use zookeeper_client as zk;

use crate::contender::Contender;
use crate::program::{Program, program};

/// The idle session's name in scenarios and traces.
pub const IDLE_SESSION: &str = "zookeeper-client-idle-session";

/// One `zookeeper-client` session asking for the scenario's session timeout, open for one
/// hold time of the workload (so idle but for the client's pings), then closed. What it sees
/// of its session is read off its connection (`raw_session` events).
pub fn idle_session() -> Program {
    program(IDLE_SESSION, Family::Lock, idle)
}

async fn idle(contender: Contender) -> Result<(), zk::Error> {
    let client = zk::Client::connector()
        .with_session_timeout(contender.session_timeout())
        .connect(&contender.server())
        .await?;
    contender.hold().await;
    drop(client);
    Ok(())
}
