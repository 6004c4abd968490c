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
//!
//! A cut can also be armed to start at a client's request ([`Proxies::arm`], a fault's
//! `on_request`): the client's stream is read as ZooKeeper's frames ([`crate::frames`]), and
//! the frame carrying the first matching request starts the cut before it is passed on, so
//! the cut holds that request and everything after it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use scenarios::fault::{Fault, Node, RequestTrigger};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::frames::{FoundRequest, Frames};

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

/// A cut waiting for a request of its client (a fault's `on_request`).
struct ArmedCut {
    /// The index of its fault.
    index: usize,
    client: u16,
    trigger: RequestTrigger,
    cuts: Vec<Cut>,
    /// Called as the cut starts (before it is in force).
    started: Box<dyn FnOnce() + Send>,
}

/// The cuts in force, by the index of the fault that made them, and the cuts armed to start
/// at a request; a change of the cuts is announced on `changed`.
struct Links {
    cuts: Mutex<BTreeMap<usize, Vec<Cut>>>,
    armed: Mutex<Vec<ArmedCut>>,
    changed: watch::Sender<()>,
}

impl Links {
    fn is_cut(&self, client: u16, direction: Direction) -> bool {
        let cuts = self.cuts.lock().expect("cuts");
        cuts.values()
            .flatten()
            .any(|&cut| cut == (client, direction))
    }

    /// Starts every cut armed for `client`'s `request`, about to be passed on.
    fn fire(&self, client: u16, (op, path): &FoundRequest) {
        let fired: Vec<ArmedCut> = {
            let mut armed = self.armed.lock().expect("armed cuts");
            let matches = |a: &mut ArmedCut| a.client == client && a.trigger.matches(*op, path);
            armed.extract_if(.., matches).collect()
        };
        for armed in fired {
            (armed.started)();
            self.cuts
                .lock()
                .expect("cuts")
                .insert(armed.index, armed.cuts);
            self.changed.send_replace(());
        }
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
            armed: Mutex::default(),
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

    /// Arms what `fault` (fault `index` of the schedule, a cut of one client's links) cuts,
    /// to start when that client's request matching `trigger` reaches its proxy: `started`
    /// is called then, and the cut holds the request and what follows.
    pub fn arm(
        &self,
        index: usize,
        fault: &Fault,
        trigger: RequestTrigger,
        started: impl FnOnce() + Send + 'static,
    ) -> Result<(), String> {
        let client =
            (fault.requesting_client()).ok_or("on_request only on a cut of one client's links")?;
        let clients = u16::try_from(self.connect_strings.len()).unwrap_or(u16::MAX);
        self.links.armed.lock().expect("armed cuts").push(ArmedCut {
            index,
            client,
            trigger,
            cuts: cuts_of(fault, clients),
            started: Box::new(started),
        });
        Ok(())
    }

    /// Disarms every cut that has not started (their `started` is never called).
    pub fn disarm_all(&self) {
        self.links.armed.lock().expect("armed cuts").clear();
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

/// Copies `from` to `to`, holding each piece (and the end of stream) while `cut` is in force.
/// From a client, the pieces are ZooKeeper's frames, and a request in one starts the cuts
/// armed for it before it is passed on (so that they hold it); from the server, whatever each
/// read returns.
async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, cut: Cut, links: Arc<Links>) {
    let mut link = Link {
        to: &mut to,
        cut,
        links: &links,
        changes: links.changed.subscribe(),
    };
    let mut chunk = vec![0; 64 * 1024];
    let mut frames = (cut.1 == Direction::Up).then(Frames::default);
    loop {
        let read = from.read(&mut chunk).await.unwrap_or(0);
        let passed = match frames.as_mut() {
            Some(frames) if read == 0 => link.pass(&frames.rest()).await,
            None => link.pass(&chunk[..read]).await,
            Some(frames) => {
                frames.push(&chunk[..read]);
                let mut passed = true;
                while passed && let Some((frame, request)) = frames.next() {
                    if let Some(request) = request {
                        links.fire(cut.0, &request);
                    }
                    passed = link.pass(&frame).await;
                }
                passed
            }
        };
        if !passed || read == 0 {
            let _ = link.to.shutdown().await;
            return;
        }
    }
}

/// One direction of a client's link, as a pump writes it.
struct Link<'a> {
    to: &'a mut OwnedWriteHalf,
    cut: Cut,
    links: &'a Links,
    changes: watch::Receiver<()>,
}

impl Link<'_> {
    /// Waits while the link is cut, then writes `bytes`; false when the proxies are gone or
    /// the write failed.
    async fn pass(&mut self, bytes: &[u8]) -> bool {
        loop {
            self.changes.borrow_and_update();
            if !self.links.is_cut(self.cut.0, self.cut.1) {
                break;
            }
            if self.changes.changed().await.is_err() {
                return false;
            }
        }
        bytes.is_empty() || self.to.write_all(bytes).await.is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scenarios::fault::RequestOp;

    /// A ZooKeeper frame: its length, then `body`.
    fn frame(body: &[u8]) -> Vec<u8> {
        [&(body.len() as u32).to_be_bytes()[..], body].concat()
    }

    /// A request frame of op code `op` on `path`.
    fn request(op: i32, path: &str) -> Vec<u8> {
        let body = [
            &7i32.to_be_bytes()[..],
            &op.to_be_bytes(),
            &(path.len() as i32).to_be_bytes(),
            path.as_bytes(),
        ]
        .concat();
        frame(&body)
    }

    #[tokio::test]
    async fn an_armed_cut_starts_at_its_client_s_matching_request_and_holds_it() {
        let server = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = server.local_addr().unwrap().to_string();
        let proxies = Proxies::start(&address, 1).await.unwrap();
        let cut_off = Fault::Isolate {
            node: Node::Client(0),
            for_ms: None,
        };
        let trigger = RequestTrigger {
            op: RequestOp::Create,
            path_contains: "/leases/".into(),
        };
        let (started_tx, started) = tokio::sync::oneshot::channel();
        proxies
            .arm(3, &cut_off, trigger, move || started_tx.send(()).unwrap())
            .unwrap();
        let mut client = TcpStream::connect(proxies.connect_string(0)).await.unwrap();
        let (mut inbound, _) = server.accept().await.unwrap();
        // The connect request, then a listing and a create elsewhere: none starts the cut.
        let before = [
            frame(&[0; 12]),
            request(12, "/l/leases"),
            request(15, "/l/locks/_c_1-lock-"),
        ]
        .concat();
        client.write_all(&before).await.unwrap();
        let mut received = vec![0; before.len()];
        inbound.read_exact(&mut received).await.unwrap();
        assert_eq!(received, before);
        let create = request(1, "/l/leases/_c_1-lease-");
        client.write_all(&create).await.unwrap();
        started.await.expect("the create started the cut");
        assert!(proxies.links.is_cut(0, Direction::Up), "the create is held");
        assert!(proxies.heal(3));
        let mut received = vec![0; create.len()];
        inbound.read_exact(&mut received).await.unwrap();
        assert_eq!(received, create, "passed on at the heal");
    }
}
