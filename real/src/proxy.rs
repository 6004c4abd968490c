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
//! A direction can also lag ([`Links::lag`], a server's `lag_server`): each piece it reads is
//! passed on the lag after it was read, in order, so a lag that ends leaves what it held to
//! drain first, as TCP would. A slow link (`slow_server_links`) holds each piece a delay drawn
//! for it instead ([`Late::Drawn`]), in order too: a piece due before the one ahead of it
//! waits for it, as a TCP stream's bytes do behind a retransmitted segment. A pump reads into a queue that its writer drains, so reading
//! goes on while a cut or a lag holds what was read.
//!
//! A cut can also be armed to start at a client's request ([`Proxies::arm`], a fault's
//! `on_request`): the client's stream is read as ZooKeeper's frames ([`crate::frames`]), and
//! the frame carrying the first matching request starts the cut before it is passed on, so
//! the cut holds that request and everything after it.

use std::collections::{BTreeMap, BTreeSet};
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use scenarios::fault::{Fault, Node, RequestTrigger, slow_link_delay_ms};
use scenarios::rng::SplitMix64;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::time::{Duration, Instant};

use crate::frames::{FoundRequest, Frames};

/// A direction of a client's links.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Direction {
    /// From the client to the server.
    Up,
    /// From the server to the client.
    Down,
}

/// One cut: a link (a client's links to the servers, or one server's to a peer) in one
/// direction.
pub(crate) type Cut = (u16, Direction);

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

/// A fault armed to start as a leader sends its followers a text (`Links::arm_proposal`).
struct ArmedProposal {
    text: Vec<u8>,
    /// Called with the leader's index as the first piece carrying the text is read, before it
    /// is passed on.
    started: Box<dyn FnOnce(usize) + Send>,
}

/// How late a lagging direction passes on each piece it reads.
#[derive(Clone, Debug)]
pub(crate) enum Late {
    /// Every piece this late (`lag_server`).
    By(Duration),
    /// Each piece a delay drawn for it from `rng`: a slow link's delay in `[min_ms, max_ms]`
    /// and its losses' retransmission timeouts (`slow_server_links`, drawn as
    /// [`slow_link_delay_ms`] says).
    Drawn {
        /// `min_ms`, `max_ms` and `loss_percent`.
        slow: (u64, u64, u8),
        /// The fault's own stream of the run's seed.
        rng: SplitMix64,
    },
}

/// The cuts in force, by the index of the fault that made them, and the cuts armed to start
/// at a request; a change of the cuts is announced on `changed`. Also the connections open
/// through the links, so that a fault can find where a link's newest one goes.
pub(crate) struct Links {
    cuts: Mutex<BTreeMap<usize, Vec<Cut>>>,
    /// The lags in force, by the index of the fault that made them: the directions and by
    /// how much.
    lags: Mutex<BTreeMap<usize, (Vec<Cut>, Late)>>,
    /// The links cut from one of their targets only, both ways, by the index of the fault
    /// that made them (a client cut off from one server: `cut_from_server`).
    target_cuts: Mutex<BTreeMap<usize, (u16, usize)>>,
    armed: Mutex<Vec<ArmedCut>>,
    /// The faults armed to start at a leader's proposal (peer proxies only).
    proposals: Mutex<Vec<ArmedProposal>>,
    changed: watch::Sender<()>,
    /// The open connections by the order they were accepted in: their link and target.
    open: Mutex<BTreeMap<u64, (u16, usize)>>,
    /// The next connection's place in that order.
    serials: AtomicU64,
}

impl Links {
    /// No cut, nothing armed, no connection.
    pub fn new() -> Arc<Links> {
        Arc::new(Links {
            cuts: Mutex::default(),
            lags: Mutex::default(),
            target_cuts: Mutex::default(),
            armed: Mutex::default(),
            proposals: Mutex::default(),
            changed: watch::Sender::new(()),
            open: Mutex::default(),
            serials: AtomicU64::new(0),
        })
    }

    /// Puts `cuts` in force as the cuts of fault `index`.
    pub fn cut(&self, index: usize, cuts: Vec<Cut>) {
        self.cuts.lock().expect("cuts").insert(index, cuts);
        self.changed.send_replace(());
    }

    /// Puts `lag` in force on `cuts` as the lag of fault `index`: what they read from now on
    /// is passed on as late as `lag` says.
    pub fn lag(&self, index: usize, cuts: Vec<Cut>, lag: Late) {
        self.lags.lock().expect("lags").insert(index, (cuts, lag));
    }

    /// Cuts `link` from its target `target` only, both ways, as the cut of fault `index`.
    pub fn cut_from_target(&self, index: usize, link: u16, target: usize) {
        (self.target_cuts.lock().expect("target cuts")).insert(index, (link, target));
        self.changed.send_replace(());
    }

    /// Ends the cuts or the lag of fault `index`; false when a heal had ended them already.
    pub fn heal(&self, index: usize) -> bool {
        let cut = self.cuts.lock().expect("cuts").remove(&index);
        let lag = self.lags.lock().expect("lags").remove(&index);
        let target_cut = (self.target_cuts.lock().expect("target cuts")).remove(&index);
        self.changed.send_replace(());
        cut.is_some() || lag.is_some() || target_cut.is_some()
    }

    /// Ends every cut and lag; the indices of the faults that made them, in order.
    pub fn heal_all(&self) -> Vec<usize> {
        let cuts = std::mem::take(&mut *self.cuts.lock().expect("cuts"));
        let lags = std::mem::take(&mut *self.lags.lock().expect("lags"));
        let target_cuts = std::mem::take(&mut *self.target_cuts.lock().expect("target cuts"));
        self.changed.send_replace(());
        let healed: BTreeSet<usize> = (cuts.into_keys())
            .chain(lags.into_keys())
            .chain(target_cuts.into_keys())
            .collect();
        healed.into_iter().collect()
    }

    /// How late `cut`'s direction passes on the piece it reads now: the longest fixed lag on
    /// it, plus a delay drawn for each slow link on it (as the simulator adds them).
    fn lag_of(&self, cut: Cut) -> Duration {
        let mut lags = self.lags.lock().expect("lags");
        let (mut longest, mut drawn) = (Duration::ZERO, Duration::ZERO);
        for (_, late) in lags.values_mut().filter(|(cuts, _)| cuts.contains(&cut)) {
            match late {
                Late::By(lag) => longest = longest.max(*lag),
                Late::Drawn { slow, rng } => {
                    let ms = slow_link_delay_ms(*slow, |min, max| rng.in_range(min, max));
                    drawn += Duration::from_millis(ms);
                }
            }
        }
        longest + drawn
    }

    /// The target (its index among the link's targets) of `link`'s newest open connection.
    pub fn newest_target(&self, link: u16) -> Option<usize> {
        let open = self.open.lock().expect("open connections");
        (open.values().rev()).find_map(|&(l, target)| (l == link).then_some(target))
    }

    /// Whether `cut`'s direction of a connection to its link's target `target` is cut: by a
    /// cut of that direction, or by a cut of the link from that target.
    fn is_cut(&self, cut: Cut, target: usize) -> bool {
        let cuts = self.cuts.lock().expect("cuts");
        let target_cuts = self.target_cuts.lock().expect("target cuts");
        cuts.values().flatten().any(|&c| c == cut)
            || (target_cuts.values()).any(|&(link, t)| (link, t) == (cut.0, target))
    }

    /// Arms `started` to be called with a leader's index as the leader's stream to a follower
    /// first carries `text` (its proposal of a write on a path with that text: a request's own
    /// path reaches the leader on the follower's side of the connection, not this one).
    pub fn arm_proposal(&self, text: Vec<u8>, started: impl FnOnce(usize) + Send + 'static) {
        (self.proposals.lock().expect("armed proposals")).push(ArmedProposal {
            text,
            started: Box::new(started),
        });
    }

    /// Disarms every fault armed for a proposal that has not come (their `started` is never
    /// called).
    pub fn disarm_proposals(&self) {
        self.proposals.lock().expect("armed proposals").clear();
    }

    /// Starts the faults armed for a text that `leader`'s stream carries in `read`, or across
    /// the end of what came `before` it and `read`.
    fn spot_proposals(&self, leader: usize, before: &[u8], read: &[u8]) {
        let fired: Vec<ArmedProposal> = {
            let mut armed = self.proposals.lock().expect("armed proposals");
            let carried = |a: &mut ArmedProposal| {
                let kept = before.len().min(a.text.len().saturating_sub(1));
                let window = [&before[before.len() - kept..], read].concat();
                !a.text.is_empty() && window.windows(a.text.len()).any(|w| w == a.text)
            };
            armed.extract_if(.., carried).collect()
        };
        for armed in fired {
            (armed.started)(leader);
        }
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
        let links = Links::new();
        let mut connect_strings = Vec::new();
        for client in 0..clients {
            let mut addresses = Vec::new();
            for (target, server) in servers.split(',').enumerate() {
                let listener = TcpListener::bind("127.0.0.1:0")
                    .await
                    .map_err(|e| format!("cannot start a proxy for client {client}: {e}"))?;
                let address = listener
                    .local_addr()
                    .map_err(|e| format!("cannot start a proxy for client {client}: {e}"))?;
                addresses.push(address.to_string());
                let route = Route {
                    to: server.to_owned(),
                    target,
                    link: client,
                    reads: Reads::ClientRequests,
                };
                tokio::spawn(accept(listener, route, links.clone()));
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
        self.links.cut(index, cuts_of(fault, clients));
    }

    /// Cuts `client` off from server `server` (its index in the servers' order) only, both
    /// ways, as the cut of fault `index`: its connections to the other servers pass.
    pub fn cut_from_server(&self, index: usize, client: u16, server: usize) {
        self.links.cut_from_target(index, client, server);
    }

    /// The server (its index in the servers' order) of `client`'s newest open connection.
    pub fn server_of(&self, client: u16) -> Option<usize> {
        self.links.newest_target(client)
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
        self.links.heal(index)
    }

    /// Ends every cut; the indices of the faults that made them.
    pub fn heal_all(&self) -> Vec<usize> {
        self.links.heal_all()
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

/// Where a proxy's listener passes what it accepts, and what the accepted streams carry.
#[derive(Clone)]
pub(crate) struct Route {
    /// The address connected to for each accepted connection.
    pub to: String,
    /// Which of its link's targets `to` is (a client's server, by index).
    pub target: usize,
    /// The link it belongs to (the key of its cuts).
    pub link: u16,
    /// What the accepted side sends.
    pub reads: Reads,
}

/// What the accepting side of a proxied connection sends ([`Direction::Up`]).
#[derive(Clone)]
pub(crate) enum Reads {
    /// A ZooKeeper client's frames: their requests start the cuts armed for them.
    ClientRequests,
    /// Bytes the proxy does not read.
    Bytes,
    /// A follower's quorum connection to its leader: bytes, and what the leader sends back is
    /// read for the texts armed to start a fault at its proposal ([`Reads::FromLeader`]).
    Quorum,
    /// What leader `leader` sends a follower ([`Direction::Down`] of a quorum connection):
    /// bytes, each read searched for the texts armed for a proposal before it is passed on.
    FromLeader {
        /// The leader's index.
        leader: usize,
    },
    /// A server's election connection: its first message names the server's own election
    /// address, which the peer connects back to, so the proxy puts `reply_at` there (the
    /// proxy by which that peer reaches the server); then bytes.
    Election {
        /// `host:port` of the proxy the peer must connect back through.
        reply_at: String,
    },
}

impl Reads {
    /// What the connected side of a connection to `target` sends back ([`Direction::Down`]).
    fn back_from(&self, target: usize) -> Reads {
        match self {
            Reads::Quorum => Reads::FromLeader { leader: target },
            _ => Reads::Bytes,
        }
    }
}

/// Accepts connections on `listener` and pairs each with one to `route.to` (see [`connect`]);
/// a target that does not answer closes the accepted connection, as a refused connection does.
pub(crate) async fn accept(listener: TcpListener, route: Route, links: Arc<Links>) {
    while let Ok((inbound, _)) = listener.accept().await {
        let route = route.clone();
        let links = links.clone();
        tokio::spawn(async move {
            let Some(outbound) = connect(&route).await else {
                return;
            };
            let _ = inbound.set_nodelay(true);
            let _ = outbound.set_nodelay(true);
            let (client_read, client_write) = inbound.into_split();
            let (server_read, server_write) = outbound.into_split();
            let back = route.reads.back_from(route.target);
            let up = (route.link, Direction::Up);
            let down = (route.link, Direction::Down);
            let key = links.serials.fetch_add(1, Ordering::Relaxed);
            (links.open.lock().expect("open connections")).insert(key, (route.link, route.target));
            futures::join!(
                pump(
                    client_read,
                    server_write,
                    (up, route.target),
                    links.clone(),
                    route.reads
                ),
                pump(
                    server_read,
                    client_write,
                    (down, route.target),
                    links.clone(),
                    back
                ),
            );
            links.open.lock().expect("open connections").remove(&key);
        });
    }
}

/// How many times a server's peer port is tried for one accepted connection, and how long
/// apart: 2 s in all.
const PEER_CONNECT_ATTEMPTS: u32 = 20;
const PEER_CONNECT_RETRY: std::time::Duration = std::time::Duration::from_millis(100);

/// The connection to `route.to` for one accepted connection. A client's server is tried once:
/// a server that is down closes the client's connection at once. A server's peer port is tried
/// for a while, because ZooKeeper's servers take a refused connection and one accepted then
/// closed differently: a follower connecting to its new leader before the leader listens is
/// refused and tries again a second later, but one whose connection is accepted and closed
/// goes back to the election, so the leader waits its `initLimit` out for a quorum (10 s).
async fn connect(route: &Route) -> Option<TcpStream> {
    let attempts = match route.reads {
        Reads::ClientRequests => 1,
        Reads::Bytes | Reads::Quorum | Reads::FromLeader { .. } | Reads::Election { .. } => {
            PEER_CONNECT_ATTEMPTS
        }
    };
    for attempt in 0..attempts {
        if attempt > 0 {
            tokio::time::sleep(PEER_CONNECT_RETRY).await;
        }
        if let Ok(stream) = TcpStream::connect(&route.to).await {
            return Some(stream);
        }
    }
    None
}

/// Copies `from` to `to`, holding each piece (and the end of stream) while `cut` is in force
/// and passing it on no earlier than the lag in force on `cut` when it was read. As `reads`
/// says: from a client, the pieces are ZooKeeper's frames, and a request in one starts the
/// cuts armed for it before it is passed on (so that they hold it); an election connection's
/// first message is rewritten ([`Reads::Election`]); else whatever each read returns. Ends
/// once the end of stream is passed on, or when `to` fails or the proxies are gone (then
/// nothing more is read).
async fn pump(
    from: OwnedReadHalf,
    to: OwnedWriteHalf,
    (cut, target): (Cut, usize),
    links: Arc<Links>,
    reads: Reads,
) {
    let (queue, pieces) = mpsc::unbounded_channel();
    let link = Link {
        to,
        cut,
        target,
        changes: links.changed.subscribe(),
        links: &links,
    };
    let mut written = pin!(write_pieces(pieces, link));
    tokio::select! {
        biased;
        () = &mut written => return,
        () = read_pieces(from, cut, &links, reads, queue) => {}
    }
    written.await;
}

/// A piece of a stream on its way, to be passed on no earlier than `due`; no bytes: the end
/// of the stream. A frame carrying a client's request starts the cuts armed for it as it is
/// passed on, after the pieces before it.
struct Piece {
    due: Instant,
    bytes: Option<Vec<u8>>,
    request: Option<FoundRequest>,
}

/// How much of a leader's last read is kept to find a text that spans two reads: longer
/// than any path a scenario names.
const SPANNED: usize = 4096;

/// Reads `from` into `queue` as [`pump`] says, each piece stamped with its due time, until
/// the end of the stream (queued too) or until the writer is gone.
async fn read_pieces(
    mut from: OwnedReadHalf,
    cut: Cut,
    links: &Links,
    reads: Reads,
    queue: mpsc::UnboundedSender<Piece>,
) {
    let queued = |bytes: Option<Vec<u8>>, request: Option<FoundRequest>| {
        let due = Instant::now() + links.lag_of(cut);
        let piece = Piece {
            due,
            bytes,
            request,
        };
        queue.send(piece).is_ok()
    };
    if let Reads::Election { reply_at } = &reads {
        let first = crate::peers::initial_message(&mut from, reply_at).await;
        let ended = first.is_none();
        if !queued(first, None) || ended {
            return;
        }
    }
    let mut chunk = vec![0; 64 * 1024];
    let mut frames = matches!(reads, Reads::ClientRequests).then(Frames::default);
    // What a leader sent last, for a text that spans two reads.
    let mut before: Vec<u8> = Vec::new();
    loop {
        let read = from.read(&mut chunk).await.unwrap_or(0);
        if let Reads::FromLeader { leader } = reads {
            links.spot_proposals(leader, &before, &chunk[..read]);
            // Only the last SPANNED bytes are kept: copy no more of a large read than that.
            before.extend_from_slice(&chunk[read.saturating_sub(SPANNED)..read]);
            before.drain(..before.len().saturating_sub(SPANNED));
        }
        let passed = match frames.as_mut() {
            Some(frames) if read == 0 => queued(Some(frames.rest()), None),
            None => queued(Some(chunk[..read].to_vec()), None),
            Some(frames) => {
                frames.push(&chunk[..read]);
                let mut passed = true;
                while passed && let Some((frame, request)) = frames.next() {
                    passed = queued(Some(frame), request);
                }
                passed
            }
        };
        if !passed || read == 0 {
            queued(None, None);
            return;
        }
    }
}

/// Passes each piece of `pieces` on through `link` once it is due and not cut (a request in
/// it starting the cuts armed for it first, so that they hold it), then shuts `link`'s side
/// down at the end of the stream, a failed write or the proxies' end.
async fn write_pieces(mut pieces: mpsc::UnboundedReceiver<Piece>, mut link: Link<'_>) {
    while let Some(Piece {
        due,
        bytes,
        request,
    }) = pieces.recv().await
    {
        if due > Instant::now() {
            tokio::time::sleep_until(due).await;
        }
        if let Some(request) = request {
            link.links.fire(link.cut.0, &request);
        }
        let end = bytes.is_none();
        if !link.pass(bytes.as_deref().unwrap_or_default()).await || end {
            break;
        }
    }
    let _ = link.to.shutdown().await;
}

/// One direction of a client's link, as a pump writes it.
struct Link<'a> {
    to: OwnedWriteHalf,
    cut: Cut,
    /// Which of its link's targets the connection goes to.
    target: usize,
    links: &'a Links,
    changes: watch::Receiver<()>,
}

impl Link<'_> {
    /// Waits while the link is cut, then writes `bytes`; false when the proxies are gone or
    /// the write failed.
    async fn pass(&mut self, bytes: &[u8]) -> bool {
        loop {
            self.changes.borrow_and_update();
            if !self.links.is_cut(self.cut, self.target) {
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

    /// Waits (bounded) until `client`'s server, as the proxies see it, is `expected`.
    async fn server_of_becomes(proxies: &Proxies, client: u16, expected: Option<usize>) {
        for _ in 0..500 {
            if proxies.server_of(client) == expected {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!(
            "server_of({client}) is {:?}, not {expected:?}",
            proxies.server_of(client)
        );
    }

    #[tokio::test]
    async fn a_client_s_server_is_the_one_of_its_newest_open_connection() {
        let (first, second) = (
            TcpListener::bind("127.0.0.1:0").await.unwrap(),
            TcpListener::bind("127.0.0.1:0").await.unwrap(),
        );
        let servers = [&first, &second].map(|l| l.local_addr().unwrap().to_string());
        let proxies = Proxies::start(&servers.join(","), 2).await.unwrap();
        assert_eq!(proxies.server_of(0), None);
        let listeners: Vec<&str> = proxies.connect_string(0).split(',').collect();
        let _to_second = TcpStream::connect(listeners[1]).await.unwrap();
        let _at_second = second.accept().await.unwrap();
        server_of_becomes(&proxies, 0, Some(1)).await;
        let to_first = TcpStream::connect(listeners[0]).await.unwrap();
        let at_first = first.accept().await.unwrap();
        server_of_becomes(&proxies, 0, Some(0)).await;
        assert_eq!(proxies.server_of(1), None, "client 1 has no connection");
        // Once the newer connection is closed, the older one names the server again.
        drop((to_first, at_first));
        server_of_becomes(&proxies, 0, Some(1)).await;
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
        // The connect request, then a listing and a create elsewhere: none starts the cut,
        // and the matching create, written with them at once, holds only itself.
        let before = [
            frame(&[0; 12]),
            request(12, "/l/leases"),
            request(15, "/l/locks/_c_1-lock-"),
        ]
        .concat();
        let create = request(1, "/l/leases/_c_1-lease-");
        client
            .write_all(&[&before[..], &create].concat())
            .await
            .unwrap();
        let mut received = vec![0; before.len()];
        let passed =
            tokio::time::timeout(Duration::from_secs(30), inbound.read_exact(&mut received));
        passed
            .await
            .expect("what came before the create passed")
            .unwrap();
        assert_eq!(received, before);
        started.await.expect("the create started the cut");
        assert!(
            proxies.links.is_cut((0, Direction::Up), 0),
            "the create is held"
        );
        assert!(proxies.heal(3));
        let mut received = vec![0; create.len()];
        inbound.read_exact(&mut received).await.unwrap();
        assert_eq!(received, create, "passed on at the heal");
    }

    #[tokio::test]
    async fn a_lagging_direction_passes_what_it_reads_the_lag_late_in_order() {
        let server = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = server.local_addr().unwrap().to_string();
        let proxies = Proxies::start(&address, 1).await.unwrap();
        let lag = Duration::from_millis(300);
        proxies
            .links
            .lag(5, vec![(0, Direction::Up)], Late::By(lag));
        let mut client = TcpStream::connect(proxies.connect_string(0)).await.unwrap();
        let (mut inbound, _) = server.accept().await.unwrap();
        let (first, second) = (frame(b"first"), frame(b"second"));
        let sent = Instant::now();
        client.write_all(&first).await.unwrap();
        client.write_all(&second).await.unwrap();
        let mut received = vec![0; first.len() + second.len()];
        inbound.read_exact(&mut received).await.unwrap();
        assert!(
            sent.elapsed() >= lag,
            "passed on after {:?}",
            sent.elapsed()
        );
        assert_eq!(received, [first, second].concat(), "in order");
        // The other direction does not lag: an hour's lag on it would hold this reply.
        proxies.links.lag(
            6,
            vec![(0, Direction::Down)],
            Late::By(Duration::from_secs(3600)),
        );
        assert!(proxies.heal(6), "healed before anything was read under it");
        assert!(!proxies.heal(6), "healed already");
        inbound.write_all(b"reply").await.unwrap();
        let mut reply = [0; 5];
        let waited = tokio::time::timeout(Duration::from_secs(30), client.read_exact(&mut reply));
        waited.await.expect("not held").unwrap();
        assert_eq!(&reply, b"reply");
        assert_eq!(proxies.heal_all(), vec![5]);
    }

    /// Writes `bytes` on `from` and says whether they reach `to` within `within`.
    async fn passes(from: &mut TcpStream, to: &mut TcpStream, bytes: &[u8], within: u64) -> bool {
        from.write_all(bytes).await.unwrap();
        let mut received = vec![0; bytes.len()];
        let read = to.read_exact(&mut received);
        match tokio::time::timeout(Duration::from_millis(within), read).await {
            Ok(read) => {
                read.unwrap();
                assert_eq!(received, bytes);
                true
            }
            Err(_) => false,
        }
    }

    #[tokio::test]
    async fn a_client_cut_from_one_server_reaches_the_others_and_that_one_at_the_heal() {
        let servers = [
            TcpListener::bind("127.0.0.1:0").await.unwrap(),
            TcpListener::bind("127.0.0.1:0").await.unwrap(),
        ];
        let addresses: Vec<String> = (servers.iter())
            .map(|s| s.local_addr().unwrap().to_string())
            .collect();
        let proxies = Proxies::start(&addresses.join(","), 2).await.unwrap();
        let listeners: Vec<&str> = proxies.connect_string(0).split(',').collect();
        let mut to_cut = TcpStream::connect(listeners[0]).await.unwrap();
        let (mut cut_end, _) = servers[0].accept().await.unwrap();
        let mut to_other = TcpStream::connect(listeners[1]).await.unwrap();
        let (mut other_end, _) = servers[1].accept().await.unwrap();
        let other_client = proxies
            .connect_string(1)
            .split(',')
            .next()
            .unwrap()
            .to_owned();
        let mut other_client = TcpStream::connect(other_client).await.unwrap();
        let (mut other_client_end, _) = servers[0].accept().await.unwrap();
        proxies.cut_from_server(4, 0, 0);
        // What a client sends is read as ZooKeeper's frames.
        let (up, other, c1) = (frame(b"up"), frame(b"other"), frame(b"c1"));
        assert!(
            !passes(&mut to_cut, &mut cut_end, &up, 300).await,
            "held up"
        );
        assert!(
            !passes(&mut cut_end, &mut to_cut, b"down", 300).await,
            "held down"
        );
        assert!(passes(&mut to_other, &mut other_end, &other, 30_000).await);
        assert!(passes(&mut other_client, &mut other_client_end, &c1, 30_000).await);
        assert_eq!(proxies.heal_all(), vec![4]);
        let mut held = vec![0; up.len()];
        cut_end.read_exact(&mut held).await.unwrap();
        assert_eq!(held, up, "passed on at the heal");
    }
}
