//! The ZooKeeper side of a run: a standalone server, or the servers of an ensemble
//! (`sim/src/server/member.rs`), each on a node of its own. What the run and the fault
//! injector ask of them (sessions, the tree, expiry, which server a selector names) is asked
//! here, of the standalone server or of the ensemble's leader (the one leading the highest
//! epoch; while none leads, the one that last led the highest).

use std::net::SocketAddr;

use coordination::zk::SessionId;
use coordination::zk::tree::Tree;
use madsim::task::NodeId;
use scenarios::fault::ServerSelector;
use scenarios::scenario::ServerSettings;

use crate::net::Network;
use crate::recorder::Recorder;
use crate::server::{Control, ServerHandle, recorded};
use crate::wire::{SERVER_PORT, member_addr, server_addr};

/// A run's servers, started.
#[derive(Clone)]
pub enum Servers {
    /// One server.
    Standalone {
        /// Its state.
        server: ServerHandle,
        /// Its node.
        node: NodeId,
    },
    /// An ensemble: server `n` is `members[n]`.
    Ensemble {
        /// Each server's state and node.
        members: Vec<(ServerHandle, NodeId)>,
    },
}

impl Servers {
    /// Starts the servers `settings` describe, and returns once every one listens.
    pub async fn start(
        settings: ServerSettings,
        recorder: &Recorder,
        network: &Network,
    ) -> Servers {
        if !settings.is_ensemble() {
            let server = ServerHandle::new(settings, recorder.clone(), network.clone());
            let node = server.start_node().await.id();
            return Servers::Standalone { server, node };
        }
        let recorded = recorded();
        let mut members = Vec::new();
        for id in 0..settings.ensemble {
            let server = ServerHandle::member(
                settings,
                id,
                recorded.clone(),
                recorder.clone(),
                network.clone(),
            );
            let node = server.start_member_node(id).await.id();
            members.push((server, node));
        }
        Servers::Ensemble { members }
    }

    /// The ensemble's leader: the server leading the highest epoch, if any leads.
    fn leader(members: &[(ServerHandle, NodeId)]) -> Option<u16> {
        (0..members.len() as u16)
            .filter_map(|n| Some((members[usize::from(n)].0.leading()?, n)))
            .max()
            .map(|(_, n)| n)
    }

    /// The standalone server, or the ensemble's leader (while none leads, the server with
    /// the highest epoch): where sessions are tracked and the log is ordered.
    fn tracker(&self) -> &ServerHandle {
        match self {
            Servers::Standalone { server, .. } => server,
            Servers::Ensemble { members } => {
                let n = Servers::leader(members).unwrap_or_else(|| {
                    (0..members.len() as u16)
                        .max_by_key(|&n| members[usize::from(n)].0.epoch())
                        .unwrap_or(0)
                });
                &members[usize::from(n)].0
            }
        }
    }

    /// The sessions the server (the leader) holds.
    pub fn sessions(&self) -> Vec<SessionId> {
        self.tracker().sessions()
    }

    /// A copy of the server's (the leader's) data tree.
    pub fn tree(&self) -> Tree {
        self.tracker().tree()
    }

    /// Sends a command to the server (the leader).
    pub fn control(&self, command: Control) {
        self.tracker().control(command);
    }

    /// The standalone server's node (an ensemble's servers crash with `crash_server`).
    pub fn standalone_node(&self) -> Option<NodeId> {
        match self {
            Servers::Standalone { node, .. } => Some(*node),
            Servers::Ensemble { .. } => None,
        }
    }

    /// Every server's node.
    pub fn nodes(&self) -> Vec<NodeId> {
        match self {
            Servers::Standalone { node, .. } => vec![*node],
            Servers::Ensemble { members, .. } => members.iter().map(|(_, node)| *node).collect(),
        }
    }

    /// The addresses clients connect to: their host list.
    pub fn addresses(settings: &ServerSettings) -> Vec<SocketAddr> {
        if settings.is_ensemble() {
            (0..settings.ensemble)
                .map(|n| member_addr(n, SERVER_PORT))
                .collect()
        } else {
            vec![server_addr()]
        }
    }

    /// The server `selector` names now: `None` for a standalone server, for a client
    /// attached to no server, or for the leader or a follower while no server leads.
    pub fn resolve(&self, selector: ServerSelector) -> Option<u16> {
        let Servers::Ensemble { members } = self else {
            return None;
        };
        let servers = members.len() as u16;
        selector.resolve(servers, Servers::leader(members), |client| {
            (0..servers).find(|&n| members[usize::from(n)].0.serves_client(client))
        })
    }

    /// Crashes server `n` of the ensemble (its machine goes down) on `handle`: true when it
    /// was up.
    pub fn crash(&self, n: u16, handle: &madsim::runtime::Handle) -> bool {
        let Servers::Ensemble { members } = self else {
            return false;
        };
        let (server, node) = &members[usize::from(n)];
        let crashed = server.crash();
        if crashed {
            handle.kill(*node);
        }
        crashed
    }

    /// Pause fault `fault` stops the process of server `n` of the ensemble on `handle` (a GC
    /// pause): its node runs nothing until every pause on it has ended ([`Servers::resume`]),
    /// and what is sent to it waits. A crash of the server meanwhile ends its pauses (its
    /// restarted node runs).
    pub fn pause(&self, n: u16, fault: usize, handle: &madsim::runtime::Handle) {
        if let Servers::Ensemble { members } = self {
            let (server, node) = &members[usize::from(n)];
            if server.pause(fault) {
                handle.pause(*node);
            }
        }
    }

    /// Pause fault `fault` on server `n` of the ensemble ends on `handle`: when no other
    /// keeps it stopped, it processes what waited, in order of arrival.
    pub fn resume(&self, n: u16, fault: usize, handle: &madsim::runtime::Handle) {
        if let Servers::Ensemble { members } = self {
            let (server, node) = &members[usize::from(n)];
            if server.unpause(fault) {
                handle.resume(*node);
            }
        }
    }

    /// One crash of server `n` of the ensemble ends on `handle`: it starts again with its log
    /// when no other crash keeps it down.
    pub fn recover(&self, n: u16, handle: &madsim::runtime::Handle) {
        let Servers::Ensemble { members } = self else {
            return;
        };
        let (server, node) = &members[usize::from(n)];
        if server.recover() {
            handle.restart(*node);
        }
    }
}
