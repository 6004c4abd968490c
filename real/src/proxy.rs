//! A blackholing TCP proxy between each client process and each ZooKeeper server, so that a
//! scenario's network faults are real events on real sockets. Every client connects to
//! servers only through its own listeners ([`Proxies::connect_string`]); each accepted
//! connection is paired with one to the server, and bytes are copied both ways.
//!
//! A cut direction (client → server: [`Direction::Up`], server → client: [`Direction::Down`])
//! holds bytes, as a partition looks to TCP: the connection stays open, nothing arrives, and
//! bytes sent meanwhile are delivered once the cut heals (TCP retransmits them), in order; an
//! end of stream (a client that gave up on a silent connection after its read timeout, a
//! server that closed an expired session's connection) is held the same way and passed on
//! at the heal. A new connection made while the client is cut is accepted and held likewise
//! (its handshake gets no answer until the heal). Cuts are keyed by the index of the fault
//! that made them, so overlapping faults heal one by one, or all at once (`heal`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use scenarios::fault::{Fault, Node};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A direction of a client's links.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Direction {
    /// From the client to the server.
    Up,
    /// From the server to the client.
    Down,
}

/// One cut: a client's links in one direction.
type Cut = (u16, Direction);

/// The cuts in force, by the index of the fault that made them; a change is announced on
/// `changed`.
struct Links {
    cuts: Mutex<BTreeMap<usize, Vec<Cut>>>,
    changed: watch::Sender<()>,
}

impl Links {
    fn is_cut(&self, client: u16, direction: Direction) -> bool {
        let cuts = self.cuts.lock().expect("cuts");
        cuts.values()
            .flatten()
            .any(|&cut| cut == (client, direction))
    }
}

/// The run's proxies: for each client, one listener per server.
pub(crate) struct Proxies {
    links: Arc<Links>,
    /// Each client's connect string: its listeners, in the servers' order.
    connect_strings: Vec<String>,
}

impl Proxies {
    /// Starts the listeners of `clients` clients in front of the servers of `servers`
    /// (`host:port[,host:port…]`), on 127.0.0.1 with free ports. Runs on the calling tokio
    /// runtime until it ends.
    pub async fn start(servers: &str, clients: u16) -> Result<Proxies, String> {
        let links = Arc::new(Links {
            cuts: Mutex::default(),
            changed: watch::Sender::new(()),
        });
        let mut connect_strings = Vec::new();
        for client in 0..clients {
            let mut addresses = Vec::new();
            for server in servers.split(',') {
                let listener = TcpListener::bind("127.0.0.1:0")
                    .await
                    .map_err(|e| format!("cannot start a proxy for client {client}: {e}"))?;
                let address = listener
                    .local_addr()
                    .map_err(|e| format!("cannot start a proxy for client {client}: {e}"))?;
                addresses.push(address.to_string());
                tokio::spawn(accept(listener, server.to_owned(), client, links.clone()));
            }
            connect_strings.push(addresses.join(","));
        }
        Ok(Proxies {
            links,
            connect_strings,
        })
    }

    /// Where `client` connects.
    pub fn connect_string(&self, client: u16) -> &str {
        &self.connect_strings[usize::from(client)]
    }

    /// Cuts what `fault` (a partition or isolation, fault `index` of the schedule) cuts.
    pub fn cut(&self, index: usize, fault: &Fault) {
        let clients = u16::try_from(self.connect_strings.len()).unwrap_or(u16::MAX);
        let cuts = cuts_of(fault, clients);
        self.links.cuts.lock().expect("cuts").insert(index, cuts);
        self.links.changed.send_replace(());
    }

    /// Ends the cuts of fault `index`; false when a heal had ended them already.
    pub fn heal(&self, index: usize) -> bool {
        let removed = self.links.cuts.lock().expect("cuts").remove(&index);
        self.links.changed.send_replace(());
        removed.is_some()
    }

    /// Ends every cut; the indices of the faults that made them.
    pub fn heal_all(&self) -> Vec<usize> {
        let cuts = std::mem::take(&mut *self.links.cuts.lock().expect("cuts"));
        self.links.changed.send_replace(());
        cuts.into_keys().collect()
    }
}

/// The links `fault` cuts among `clients` clients. Clients exchange nothing with one
/// another, so a cut between two clients (or of the server from itself) cuts nothing, as in
/// the simulator.
fn cuts_of(fault: &Fault, clients: u16) -> Vec<Cut> {
    let both = |client: u16| [(client, Direction::Up), (client, Direction::Down)];
    match *fault {
        Fault::Isolate {
            node: Node::Client(client),
            ..
        } => both(client).to_vec(),
        Fault::Isolate {
            node: Node::Server, ..
        } => (0..clients).flat_map(both).collect(),
        Fault::Partition { a, b, oneway, .. } => {
            let (client, from_client) = match (a, b) {
                (Node::Client(client), Node::Server) => (client, true),
                (Node::Server, Node::Client(client)) => (client, false),
                _ => return Vec::new(),
            };
            let forward = if from_client {
                Direction::Up
            } else {
                Direction::Down
            };
            if oneway {
                vec![(client, forward)]
            } else {
                both(client).to_vec()
            }
        }
        _ => Vec::new(),
    }
}

/// Accepts `client`'s connections and pairs each with one to `server`; a server that does
/// not answer (down) closes the client's connection at once, as a refused connection does.
async fn accept(listener: TcpListener, server: String, client: u16, links: Arc<Links>) {
    while let Ok((inbound, _)) = listener.accept().await {
        let Ok(outbound) = TcpStream::connect(&server).await else {
            continue;
        };
        let _ = inbound.set_nodelay(true);
        let _ = outbound.set_nodelay(true);
        let (client_read, client_write) = inbound.into_split();
        let (server_read, server_write) = outbound.into_split();
        let up = (client, Direction::Up);
        let down = (client, Direction::Down);
        tokio::spawn(pump(client_read, server_write, up, links.clone()));
        tokio::spawn(pump(server_read, client_write, down, links.clone()));
    }
}

/// Copies `from` to `to`, holding each chunk (and the end of stream) while `cut` is in force.
async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, cut: Cut, links: Arc<Links>) {
    let mut changes = links.changed.subscribe();
    let mut chunk = vec![0; 64 * 1024];
    loop {
        let read = from.read(&mut chunk).await.unwrap_or(0);
        loop {
            changes.borrow_and_update();
            if !links.is_cut(cut.0, cut.1) {
                break;
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
        if read == 0 || to.write_all(&chunk[..read]).await.is_err() {
            let _ = to.shutdown().await;
            return;
        }
    }
}
