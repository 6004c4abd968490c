//! A client node's main: the shared client loop ([`runtime::drive::ClientWork`]: the recipe's
//! code with its framework layer, run by the driver, beside the workload) over the simulated
//! client.

use coordination::framework::{Framework, FrameworkConfig};
use coordination::ids::ClientSlot;
use futures::channel::mpsc::UnboundedSender;
use runtime::drive::ClientWork;
use scenarios::fault::Node;
use scenarios::scenario::ServerSettings;

use crate::client::SimConnector;
use crate::net::Network;
use crate::recipe_code::RecipeCode;
use crate::recorder::{SimClock, SimExecutor};
use crate::settings::asked_timeout;

/// Everything a client node needs; survives the node's restarts (a crash), so that the
/// restarted client carries on with the acquisitions left.
#[derive(Clone)]
pub(crate) struct ClientNode {
    pub work: ClientWork<SimClock, SimExecutor>,
    pub code: RecipeCode,
    pub server: ServerSettings,
    /// The servers' addresses: the clients' host list.
    pub servers: Vec<std::net::SocketAddr>,
    pub framework: FrameworkConfig,
    pub network: Network,
    pub done: UnboundedSender<ClientSlot>,
}

impl ClientNode {
    /// The node's main: runs the workload to its end, closes the session, reports done.
    pub async fn run(self) {
        let slot = self.work.slot;
        let framework = Framework::new(self.framework, slot, madsim::rand::random());
        let connector = SimConnector::new(
            Node::Client(slot.0),
            asked_timeout(&self.server),
            self.network,
        )
        .servers(self.servers);
        self.code.run(&self.work, framework, &connector).await;
        let _ = self.done.unbounded_send(slot);
    }
}
