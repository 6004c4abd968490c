//! Proxies between the servers of a local ensemble, so that a server can be cut off from its
//! peers while its clients still reach it (a scenario's `isolate_from_peers`), the servers
//! split into groups (`split_servers`), a server hear its peers late (`lag_server`), or the
//! links between servers be slow and lossy (`slow_server_links`); and so that a fault can
//! start as the leader sends its followers a proposal (`crash_server` with `on_request`):
//! what a leader sends a follower is searched for the text armed for it.
//!
//! Each server's configuration lists itself at its real quorum and election ports and each
//! peer at two listeners of these proxies: one proxy per ordered pair of servers and port
//! (server `i`'s view of server `j`), which passes what `i` sends to `j`'s real port, with
//! the client proxies' machinery (`real::proxy`): a cut holds the bytes both ways until it
//! heals, as a partition looks to TCP. A pair's own link (its key for cuts) is the ordered
//! pair, so cutting a server cuts both directions of every pair it is in.
//!
//! ZooKeeper 3.8 accepts such per-server configurations: a server reaches each peer where
//! its own configuration says. One exchange needs the proxy's help: of two servers, the one
//! with the smaller id that opens an election connection (`QuorumCnxManager`) sends an
//! initial message carrying its own election address — its real port — then drops the
//! connection, and the one with the larger id connects back to the address in that message,
//! not to the one in its own configuration. The election proxy therefore rewrites that
//! message to name the proxy by which the larger id reaches the smaller one, so the
//! connection back goes through a proxy that a cut holds too.

use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use tokio::net::tcp::OwnedReadHalf;
use tokio::sync::oneshot;

use crate::local::{HarnessError, io_error};
use scenarios::fault::grouped_together;
use scenarios::rng::SplitMix64;

use crate::proxy::{Cut, Direction, Late, Links, Reads, Route, accept};

/// The longest election address an initial message may carry (ZooKeeper's own bound is
/// larger; ours are `127.0.0.1:PORT`).
const MAX_ADDRESS: usize = 4096;

/// A server's real quorum and election addresses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PeerPorts {
    /// Where followers connect to the leader.
    pub quorum: SocketAddr,
    /// Where leader election connects.
    pub election: SocketAddr,
}

/// The proxies between the servers of one ensemble, running on a thread of their own until
/// dropped.
#[derive(Debug)]
pub(crate) struct PeerProxies {
    /// For `i` and `j`, the proxies by which server `i` reaches server `j` (`None` for
    /// `i == j`).
    views: Vec<Vec<Option<PeerPorts>>>,
    cuts: PeerCuts,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// Cuts servers of one ensemble off from their peers, and heals them; cheap to clone.
#[derive(Clone)]
pub struct PeerCuts {
    links: Arc<Links>,
    servers: u16,
}

impl std::fmt::Debug for PeerCuts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PeerCuts({} servers)", self.servers)
    }
}

impl PeerCuts {
    /// Cuts server `server` off from every peer, as the cut of fault `index` (held until
    /// [`PeerCuts::heal`] of that index or [`PeerCuts::heal_all`]).
    pub fn cut_off(&self, index: usize, server: u16) {
        let peers = (0..self.servers).filter(|&peer| peer != server).collect();
        self.split(index, &[vec![server], peers]);
    }

    /// Splits the servers into `groups`, as the cut of fault `index` (held as
    /// [`PeerCuts::cut_off`]'s is): every pair of servers in different groups is cut, both
    /// ways.
    pub fn split(&self, index: usize, groups: &[Vec<u16>]) {
        let apart = pairs(self.servers).filter(|&(i, j)| !grouped_together(groups, i, j));
        self.links.cut(index, self.both_ways(apart));
    }

    /// Makes what server `server`'s peers send it (on their connections and its own) arrive
    /// `lag` late, in order, as the lag of fault `index` (ended as a cut is).
    pub fn lag_from_peers(&self, index: usize, server: u16, lag: Duration) {
        let arriving = (0..self.servers)
            .filter(|&peer| peer != server)
            .flat_map(|peer| {
                [
                    (self.link(peer, server), Direction::Up),
                    (self.link(server, peer), Direction::Down),
                ]
            })
            .collect::<Vec<Cut>>();
        self.links.lag(index, arriving, Late::By(lag));
    }

    /// Slows the links of server `server` (every link between servers when `None`), both
    /// ways, as fault `index` (ended as a cut is): each piece is held a delay drawn from
    /// `rng` as `slow` (`min_ms`, `max_ms`, `loss_percent`) says, in order.
    pub fn slow(&self, index: usize, server: Option<u16>, slow: (u64, u64, u8), rng: SplitMix64) {
        let slowed = pairs(self.servers)
            .filter(|&(i, j)| server.is_none_or(|server| server == i || server == j));
        (self.links).lag(index, self.both_ways(slowed), Late::Drawn { slow, rng });
    }

    /// Ends the cut or lag of fault `index`; false when a heal had ended it already.
    pub fn heal(&self, index: usize) -> bool {
        self.links.heal(index)
    }

    /// Ends every cut and lag; the indices of the faults that made them.
    pub fn heal_all(&self) -> Vec<usize> {
        self.links.heal_all()
    }

    /// Arms `started` to be called, with the leader's index, on the peer proxies' thread as a
    /// leader first sends a follower a proposal carrying `text` (a path, or part of one), and
    /// before the proxy passes it on: a fault started there acts while the proposal is on its
    /// way and before any commit of it.
    pub fn arm_proposal(&self, text: &str, started: impl FnOnce(usize) + Send + 'static) {
        self.links.arm_proposal(text.as_bytes().to_vec(), started);
    }

    /// Disarms every fault armed for a proposal that has not come.
    pub fn disarm_proposals(&self) {
        self.links.disarm_proposals();
    }

    /// Both directions of the links of `pairs` (ordered pairs of servers).
    fn both_ways(&self, pairs: impl Iterator<Item = (u16, u16)>) -> Vec<Cut> {
        pairs
            .map(|(from, to)| self.link(from, to))
            .flat_map(|link| [(link, Direction::Up), (link, Direction::Down)])
            .collect()
    }

    /// The link of server `from`'s connections to server `to`.
    fn link(&self, from: u16, to: u16) -> u16 {
        from * self.servers + to
    }
}

impl PeerProxies {
    /// Binds the proxies between the servers at `ports` (127.0.0.1, free ports) and starts
    /// passing bytes on a thread of their own.
    pub fn start(ports: &[PeerPorts]) -> Result<PeerProxies, HarnessError> {
        let servers = u16::try_from(ports.len())
            .map_err(|_| HarnessError(format!("{} servers are too many", ports.len())))?;
        let cuts = PeerCuts {
            links: Links::new(),
            servers,
        };
        let bind = || {
            let listener = StdListener::bind("127.0.0.1:0")
                .map_err(|e| io_error("binding a peer proxy on 127.0.0.1".into(), e))?;
            let address = listener
                .local_addr()
                .map_err(|e| io_error("reading a peer proxy's address".into(), e))?;
            listener
                .set_nonblocking(true)
                .map_err(|e| io_error("setting up a peer proxy".into(), e))?;
            Ok::<_, HarnessError>((listener, address))
        };
        // Every proxy is bound first: an election proxy names the one of the opposite pair.
        let mut bound = Vec::new();
        let mut views = vec![vec![None; ports.len()]; ports.len()];
        for (i, j) in pairs(servers) {
            let (quorum, quorum_at) = bind()?;
            let (election, election_at) = bind()?;
            bound.push((i, j, quorum, election));
            views[usize::from(i)][usize::from(j)] = Some(PeerPorts {
                quorum: quorum_at,
                election: election_at,
            });
        }
        let mut routes = Vec::new();
        for (i, j, quorum, election) in bound {
            let to = ports[usize::from(j)];
            let back = views[usize::from(j)][usize::from(i)].expect("every pair is bound");
            let link = cuts.link(i, j);
            let route = |to: SocketAddr, reads| Route {
                to: to.to_string(),
                target: usize::from(j),
                link,
                reads,
            };
            routes.push((quorum, route(to.quorum, Reads::Quorum)));
            let reply_at = back.election.to_string();
            routes.push((election, route(to.election, Reads::Election { reply_at })));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| io_error("building the peer proxies' runtime".into(), e))?;
        let (stop, stopped) = oneshot::channel::<()>();
        let links = cuts.links.clone();
        let thread = std::thread::Builder::new()
            .name("zk-peer-proxies".into())
            .spawn(move || {
                runtime.block_on(async move {
                    for (listener, route) in routes {
                        if let Ok(listener) = TcpListener::from_std(listener) {
                            tokio::spawn(accept(listener, route, links.clone()));
                        }
                    }
                    let _ = stopped.await;
                });
            })
            .map_err(|e| io_error("starting the peer proxies' thread".into(), e))?;
        Ok(PeerProxies {
            views,
            cuts,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The proxies by which server `from` reaches server `to`.
    pub fn view(&self, from: usize, to: usize) -> Option<PeerPorts> {
        self.views.get(from)?.get(to).copied().flatten()
    }

    /// A handle that cuts and heals.
    pub fn cuts(&self) -> PeerCuts {
        self.cuts.clone()
    }
}

impl Drop for PeerProxies {
    /// Stops the proxies: every listener and connection closes with their runtime.
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The ordered pairs of distinct servers among `servers`.
fn pairs(servers: u16) -> impl Iterator<Item = (u16, u16)> {
    (0..servers).flat_map(move |i| (0..servers).filter(move |&j| j != i).map(move |j| (i, j)))
}

/// Reads the initial message of an election connection from `from` and returns it with its
/// election address replaced by `reply_at`; `None` when the stream ends or is not such a
/// message. ZooKeeper 3.8's `QuorumCnxManager` writes a long (a protocol version, negative;
/// a non-negative one is an old server's id alone, passed on as it is), the server's id (a
/// long), then the address as a length (an int) and that many bytes.
pub(crate) async fn initial_message(from: &mut OwnedReadHalf, reply_at: &str) -> Option<Vec<u8>> {
    let version = from.read_i64().await.ok()?;
    if version >= 0 {
        return Some(version.to_be_bytes().to_vec());
    }
    let sid = from.read_i64().await.ok()?;
    let length = usize::try_from(from.read_i32().await.ok()?).ok()?;
    if length > MAX_ADDRESS {
        return None;
    }
    let mut address = vec![0; length];
    from.read_exact(&mut address).await.ok()?;
    Some(rewritten(version, sid, reply_at))
}

/// An initial message of protocol `version` from server `sid` naming `address`.
fn rewritten(version: i64, sid: i64, address: &str) -> Vec<u8> {
    let length = i32::try_from(address.len()).unwrap_or(i32::MAX);
    [
        &version.to_be_bytes()[..],
        &sid.to_be_bytes(),
        &length.to_be_bytes(),
        address.as_bytes(),
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpStream;

    #[tokio::test]
    async fn an_election_initial_message_names_the_proxy_back_and_the_rest_passes() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let mut sender = TcpStream::connect(address).await.unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        let (mut from, _) = accepted.into_split();
        let sent = rewritten(-65536, 1, "127.0.0.1:40001");
        sender.write_all(&sent).await.unwrap();
        sender.write_all(b"rest").await.unwrap();
        let read = initial_message(&mut from, "127.0.0.1:5").await.unwrap();
        assert_eq!(read, rewritten(-65536, 1, "127.0.0.1:5"));
        let mut rest = [0; 4];
        from.read_exact(&mut rest).await.unwrap();
        assert_eq!(&rest, b"rest", "only the initial message is read");
    }

    /// Writes `byte` to server `to` through server `from`'s proxy and reads it at `target`:
    /// how long it took, or `None` when nothing arrived within 200 ms.
    async fn passes(
        proxies: &PeerProxies,
        target: &TcpListener,
        (from, to): (usize, usize),
        byte: u8,
    ) -> (TcpStream, TcpStream, Option<std::time::Duration>) {
        let mut sender = TcpStream::connect(proxies.view(from, to).unwrap().quorum)
            .await
            .unwrap();
        let (mut receiver, _) = target.accept().await.unwrap();
        let sent = tokio::time::Instant::now();
        sender.write_all(&[byte]).await.unwrap();
        let mut read = [0; 1];
        let wait = std::time::Duration::from_millis(200);
        let took = match tokio::time::timeout(wait, receiver.read_exact(&mut read)).await {
            Ok(read_ok) => {
                read_ok.unwrap();
                assert_eq!(read, [byte]);
                Some(sent.elapsed())
            }
            Err(_) => None,
        };
        (sender, receiver, took)
    }

    /// Three servers that all listen at one address, and their proxies.
    async fn three_servers() -> (TcpListener, PeerProxies) {
        let target = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let real = target.local_addr().unwrap();
        let ports = [PeerPorts {
            quorum: real,
            election: real,
        }; 3];
        (target, PeerProxies::start(&ports).unwrap())
    }

    #[tokio::test]
    async fn a_split_holds_what_crosses_between_groups_both_ways_until_the_heal() {
        let (target, proxies) = three_servers().await;
        let cuts = proxies.cuts();
        cuts.split(4, &[vec![0], vec![1, 2]]);
        let (_, _, within) = passes(&proxies, &target, (1, 2), b'a').await;
        assert!(within.is_some(), "one group's servers reach each other");
        let (_, _, out) = passes(&proxies, &target, (0, 2), b'b').await;
        assert_eq!(out, None, "held from the minority");
        let (_, mut held, into) = passes(&proxies, &target, (1, 0), b'c').await;
        assert_eq!(into, None, "held into the minority");
        assert!(cuts.heal(4));
        let mut byte = [0; 1];
        held.read_exact(&mut byte).await.unwrap();
        assert_eq!(&byte, b"c", "passed on at the heal");
    }

    #[tokio::test]
    async fn slow_links_pass_each_piece_a_drawn_delay_late_in_order() {
        let (target, proxies) = three_servers().await;
        let cuts = proxies.cuts();
        let late = std::time::Duration::from_millis(100);
        cuts.slow(5, Some(2), (100, 100, 0), SplitMix64::new(1));
        let (_, _, to_slow) = passes(&proxies, &target, (0, 2), b'a').await;
        assert!(to_slow.is_some_and(|took| took >= late), "{to_slow:?}");
        let (_, _, from_slow) = passes(&proxies, &target, (2, 1), b'b').await;
        assert!(from_slow.is_some_and(|took| took >= late), "{from_slow:?}");
        let (_, _, elsewhere) = passes(&proxies, &target, (0, 1), b'c').await;
        assert!(elsewhere.is_some_and(|took| took < late), "{elsewhere:?}");
        assert!(cuts.heal(5));
        // Lossy links: a lost piece waits a retransmission timeout (200 ms), and those
        // behind it wait for it.
        cuts.slow(6, None, (0, 10, 30), SplitMix64::new(2));
        let mut sender = TcpStream::connect(proxies.view(0, 1).unwrap().quorum)
            .await
            .unwrap();
        let (mut receiver, _) = target.accept().await.unwrap();
        let sent = tokio::time::Instant::now();
        for byte in 0..20u8 {
            sender.write_all(&[byte]).await.unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let mut read = [0; 20];
        receiver.read_exact(&mut read).await.unwrap();
        assert_eq!(read.to_vec(), (0..20).collect::<Vec<u8>>(), "in order");
        assert!(sent.elapsed() >= std::time::Duration::from_millis(200));
    }

    #[tokio::test]
    async fn a_cut_server_s_peers_hear_nothing_from_it_until_the_heal() {
        let (target, proxies) = three_servers().await;
        let cuts = proxies.cuts();
        cuts.cut_off(4, 2);
        let view = |from, to| proxies.view(from, to).unwrap().quorum;
        // Server 0 reaches server 1 as before; server 0's bytes to server 2 are held.
        let mut to_one = TcpStream::connect(view(0, 1)).await.unwrap();
        let (mut one, _) = target.accept().await.unwrap();
        to_one.write_all(b"a").await.unwrap();
        let mut byte = [0; 1];
        one.read_exact(&mut byte).await.unwrap();
        let mut to_two = TcpStream::connect(view(0, 2)).await.unwrap();
        let (mut two, _) = target.accept().await.unwrap();
        to_two.write_all(b"b").await.unwrap();
        let held = tokio::time::timeout(std::time::Duration::from_millis(200), two.read(&mut byte));
        assert!(held.await.is_err(), "held while cut");
        assert!(cuts.heal(4));
        two.read_exact(&mut byte).await.unwrap();
        assert_eq!(&byte, b"b", "passed on at the heal");
    }
}
