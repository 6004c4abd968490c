//! The step world: an abstract ZooKeeper server (the shared data [`Tree`] and the sessions
//! it holds) and each client's session [`Handle`] (its connection and two FIFO queues), with
//! nothing happening until somebody steps it. One component for everything that runs
//! clients step by step: the model checker's transition function takes a step per action, and
//! the recipe unit tests take the steps they are about by hand.
//!
//! The queues keep the [`Coordination`](crate::session::Coordination) contract: a
//! handle's requests reach the server in the order they were sent, and its replies, watch
//! events and raw session states come back on one ordered stream (a watch event before any
//! later reply that reflects the change; `ConnectionLoss` for every request cut off, before
//! the `Disconnected` that explains it).

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use crate::ids::OpId;
use crate::relabel::Relabel;
use crate::session::{RawEvent, RawState};
use crate::zk::tree::{Applied, Fired, Tree};
use crate::zk::{OpResult, Request, SessionId, WatchedEvent, ZkError, Zxid};

/// The server: the data tree and the sessions it holds (neither expired nor closed).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct Server {
    /// The data tree.
    pub tree: Tree,
    /// The sessions the server holds.
    pub live: BTreeSet<SessionId>,
}

/// A request the server applied, as [`Server::apply_next`] returns it: what a trace records
/// of it, and the watches it fired, which the caller routes before it answers the request
/// ([`Handle::answer`]).
#[derive(Clone, Debug)]
pub struct AppliedRequest {
    /// The request's id on its handle.
    pub op: OpId,
    /// The request.
    pub request: Request,
    /// Its outcome on the server (the client may hear `ConnectionLoss` instead).
    pub result: OpResult,
    /// The zxid it got, if it changed the tree.
    pub zxid: Option<Zxid>,
    /// The watches it fired, in delivery order.
    pub fired: Vec<Fired>,
}

impl Server {
    /// A server over `tree`, holding no session yet.
    pub fn new(tree: Tree) -> Server {
        Server {
            tree,
            live: BTreeSet::new(),
        }
    }

    /// Starts holding `session`.
    pub fn open(&mut self, session: SessionId) {
        self.live.insert(session);
    }

    /// Applies `handle`'s oldest request, if it can be applied now
    /// ([`Handle::applicable`]): on this server's tree, or, on a follower cut off from the
    /// leader ([`Handle::cut`]), a read on the follower's own tree, which nothing else changes
    /// (it fires no watch, and a watch it leaves never fires). The caller then routes
    /// the watches it fired and only then answers it with [`Handle::answer`]: ZooKeeper sends
    /// the watch events a request triggers before its response, so a client sees its own
    /// request's watch events before the reply.
    pub fn apply_next(&mut self, handle: &mut Handle) -> Option<AppliedRequest> {
        if !handle.applicable() {
            return None;
        }
        let (op, request) = handle.requests.pop_front()?;
        let tree = match &mut handle.cut {
            Some(follower) => Arc::make_mut(follower),
            None => &mut self.tree,
        };
        let Applied {
            result,
            fired,
            zxid,
        } = tree.apply(handle.session, &request);
        Some(AppliedRequest {
            op,
            request,
            result,
            zxid,
            fired,
        })
    }

    /// Ends `session` (closed or expired): its watches are dropped and its ephemerals deleted
    /// in one zxid. The watches that fires, or `None` if the server did not hold it.
    pub fn end(&mut self, session: SessionId) -> Option<Vec<Fired>> {
        self.live
            .remove(&session)
            .then(|| self.tree.end_session(session))
    }
}

/// The state of a handle's connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Link {
    /// Requests reach the server, and its watch events reach the client.
    Up,
    /// The server has expired the session and the client has been told (`Expired` is queued
    /// on the stream): nothing sent on this handle is applied any more, and no watch event
    /// reaches it.
    Dead,
    /// The connection dropped and has not come back: a request sent now is answered
    /// `ConnectionLoss` at once (the client knows its socket is gone), and watch events wait
    /// on the stream for the reconnection.
    Down,
}

/// A client's session handle: the connection to the server and its two FIFO queues.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct Handle {
    /// The session.
    pub session: SessionId,
    /// The state of the connection.
    #[relabel(skip)]
    pub link: Link,
    /// Requests sent and not yet applied, in order.
    pub requests: VecDeque<(OpId, Request)>,
    /// Replies, watch events and raw states not yet handled: one ordered stream.
    pub events: VecDeque<RawEvent>,
    /// While the client's server is a follower cut off from the leader ([`Handle::cut_off`]):
    /// that server's tree, as it was when the cut began. The follower keeps the connection
    /// (it answers the client's pings), answers its reads from this tree and holds its writes,
    /// forwarded to a leader it cannot reach, until it gives up on the leader and drops the
    /// connection ([`Handle::drop_connection`]). `None` on a server that hears the leader.
    /// Shared, so that copies of the handle share one tree until a read leaves a watch in it.
    pub cut: Option<Arc<Tree>>,
}

impl Handle {
    /// A handle on a session just opened with `timeout`: `Connected` is its first event.
    pub fn open(session: SessionId, timeout: Duration) -> Handle {
        Handle {
            session,
            link: Link::Up,
            requests: VecDeque::new(),
            events: [connected(session, timeout)].into(),
            cut: None,
        }
    }

    /// Whether the connection is up on a server that hears the leader (not on a cut-off
    /// follower, [`Handle::cut`]).
    pub fn served(&self) -> bool {
        self.link == Link::Up && self.cut.is_none()
    }

    /// Whether the server can apply the oldest request now: the connection is up, and on a
    /// cut-off follower ([`Handle::cut`]) it is not a write. A write waits there for the
    /// leader, and every request behind it with it, as a server takes a session's requests in
    /// order.
    pub fn applicable(&self) -> bool {
        let front = self.requests.front();
        self.link == Link::Up
            && front.is_some_and(|(_, request)| self.cut.is_none() || !request.is_write())
    }

    /// The client's server, a follower, is cut off from the leader, its tree `tree` as the
    /// cut finds it: the connection stays up, and the server answers reads from `tree` and
    /// holds writes ([`Handle::cut`]) until the connection drops.
    pub fn cut_off(&mut self, tree: Arc<Tree>) {
        self.cut = Some(tree);
    }

    /// Queues the reply to `applied` (routed already) on the stream: its outcome, or
    /// `ConnectionLoss` when `lost` (the connection broke after the server applied it).
    pub fn answer(&mut self, applied: &AppliedRequest, lost: bool) {
        let result = if lost {
            Err(ZkError::ConnectionLoss)
        } else {
            applied.result.clone()
        };
        self.events.push_back(RawEvent::Reply {
            op: applied.op,
            result,
        });
    }

    /// The client sends `request` as `op`: true when it is queued for the server, false when
    /// the connection is down and it is answered `ConnectionLoss` at once.
    pub fn send(&mut self, op: OpId, request: Request) -> bool {
        if self.link == Link::Down {
            self.events.push_back(RawEvent::Reply {
                op,
                result: Err(ZkError::ConnectionLoss),
            });
            return false;
        }
        self.requests.push_back((op, request));
        true
    }

    /// The client's next event, taken off the stream.
    pub fn next_event(&mut self) -> Option<RawEvent> {
        self.events.pop_front()
    }

    /// A watch of this session fired: its event joins the stream unless the handle is dead.
    pub fn watch(&mut self, event: WatchedEvent) {
        if self.link != Link::Dead {
            self.events.push_back(RawEvent::Watch { event });
        }
    }

    /// The connection drops: every request not yet applied gets `ConnectionLoss`, then the
    /// stream says `Disconnected` (the order the `Coordination` contract promises). A cut-off
    /// follower's hold on the client ends with it ([`Handle::cut`]).
    pub fn drop_connection(&mut self) {
        self.cut = None;
        let lost = self.requests.drain(..).map(|(op, _)| RawEvent::Reply {
            op,
            result: Err(ZkError::ConnectionLoss),
        });
        self.events.extend(lost);
        self.events.push_back(RawEvent::State {
            state: RawState::Disconnected,
        });
        if self.link == Link::Up {
            self.link = Link::Down;
        }
    }

    /// Whether the client is not yet (re)connected: its connection is down, or the stream
    /// still has to tell it that it connected.
    pub fn reconnecting(&self) -> bool {
        self.link == Link::Down || self.connected_at().is_some()
    }

    /// A connection attempt fails while the client is not yet (re)connected: the stream says
    /// `Disconnected` once more, as ZooKeeper's client does at the end of every failed attempt
    /// (`ClientCnxn.cleanAndNotifyState`), before the `Connected` of the attempt that
    /// succeeds when that is queued already (the model queues it with the drop). False, and
    /// nothing happens, when the client is connected.
    pub fn fail_attempt(&mut self) -> bool {
        let disconnected = RawEvent::State {
            state: RawState::Disconnected,
        };
        match self.connected_at() {
            Some(at) => self.events.insert(at, disconnected),
            None if self.link == Link::Down => self.events.push_back(disconnected),
            None => return false,
        }
        true
    }

    /// Where the stream's next `Connected` is, if it has one.
    fn connected_at(&self) -> Option<usize> {
        (self.events.iter()).position(|event| {
            matches!(
                event,
                RawEvent::State {
                    state: RawState::Connected { .. }
                }
            )
        })
    }

    /// The connection comes back to the same session (which the server must still hold).
    pub fn reconnect(&mut self, timeout: Duration) {
        self.link = Link::Up;
        self.events.push_back(connected(self.session, timeout));
    }

    /// The client is told that the server expired its session: requests not yet applied are
    /// dropped (they never will be), the stream says `Expired`, and the handle is dead.
    pub fn expire(&mut self) {
        self.link = Link::Dead;
        self.requests.clear();
        self.events.push_back(RawEvent::State {
            state: RawState::Expired,
        });
    }

    /// The client's server drops it after the session has ended on the leader, and the next
    /// server it reaches says the session expired: [`Handle::drop_connection`] (`ConnectionLoss`
    /// for what was in flight, `Disconnected`), then [`Handle::expire`].
    pub fn lose_session(&mut self) {
        self.drop_connection();
        self.expire();
    }
}

fn connected(session: SessionId, timeout: Duration) -> RawEvent {
    RawEvent::State {
        state: RawState::Connected { session, timeout },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::{CreateMode, Path};

    const T: Duration = Duration::from_secs(6);

    fn create(name: &str) -> Request {
        Request::Create {
            path: Path::new(name).unwrap(),
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
        }
    }

    fn stream(handle: &Handle) -> Vec<&RawEvent> {
        handle.events.iter().collect()
    }

    #[test]
    fn requests_are_applied_in_order_and_answered_on_the_stream() {
        let mut server = Server::default();
        server.open(SessionId(1));
        let mut handle = Handle::open(SessionId(1), T);
        handle.send(OpId(1), create("/a"));
        handle.send(OpId(2), create("/a"));
        let first = server.apply_next(&mut handle).unwrap();
        assert_eq!((first.op, first.result.is_ok()), (OpId(1), true));
        handle.answer(&first, false);
        let second = server.apply_next(&mut handle).unwrap();
        assert_eq!(second.result, Err(ZkError::NodeExists));
        handle.answer(&second, true);
        assert!(server.apply_next(&mut handle).is_none());
        let replies: Vec<_> = handle.events.iter().skip(1).collect();
        assert!(matches!(
            replies[0],
            RawEvent::Reply {
                op: OpId(1),
                result: Ok(_)
            }
        ));
        assert_eq!(
            replies[1],
            &RawEvent::Reply {
                op: OpId(2),
                result: Err(ZkError::ConnectionLoss)
            },
            "a lost reply says ConnectionLoss whatever the server did"
        );
    }

    #[test]
    fn a_dropped_connection_answers_what_was_cut_off_and_what_is_sent_until_it_is_back() {
        let mut handle = Handle::open(SessionId(1), T);
        handle.next_event();
        handle.send(OpId(1), create("/a"));
        handle.drop_connection();
        handle.send(OpId(2), create("/b"));
        let lost = |op| RawEvent::Reply {
            op,
            result: Err(ZkError::ConnectionLoss),
        };
        let disconnected = RawEvent::State {
            state: RawState::Disconnected,
        };
        assert_eq!(
            stream(&handle),
            [&lost(OpId(1)), &disconnected, &lost(OpId(2))]
        );
        handle.reconnect(T);
        handle.send(OpId(3), create("/c"));
        assert_eq!(handle.requests.len(), 1, "sent again once connected");
    }

    #[test]
    fn a_failed_attempt_says_disconnected_again_before_the_client_hears_it_is_connected() {
        let mut handle = Handle::open(SessionId(1), T);
        let disconnected = RawEvent::State {
            state: RawState::Disconnected,
        };
        assert!(handle.fail_attempt(), "the first attempt fails");
        assert_eq!(
            stream(&handle),
            [&disconnected, &connected(SessionId(1), T)]
        );
        handle.events.clear();
        assert!(!handle.reconnecting());
        assert!(!handle.fail_attempt(), "connected: nothing to fail");
        handle.drop_connection();
        assert!(handle.fail_attempt(), "cut off, and not reconnected yet");
        handle.reconnect(T);
        assert!(
            handle.fail_attempt(),
            "reconnected, but the client has not heard it yet"
        );
        assert_eq!(
            stream(&handle),
            [
                &disconnected,
                &disconnected,
                &disconnected,
                &connected(SessionId(1), T)
            ]
        );
    }

    #[test]
    fn a_cut_off_follower_answers_reads_from_its_tree_and_holds_writes_until_it_lets_go() {
        let mut server = Server::default();
        server.open(SessionId(1));
        let mut handle = Handle::open(SessionId(1), T);
        handle.next_event();
        handle.send(OpId(1), create("/a"));
        let created = server.apply_next(&mut handle).unwrap();
        handle.answer(&created, false);
        handle.cut_off(Arc::new(server.tree.clone()));
        server.end(SessionId(1));
        let exists = |op| {
            let path = Path::new("/a").unwrap();
            (op, Request::Exists { path, watch: true })
        };
        handle
            .requests
            .extend([exists(OpId(2)), (OpId(3), create("/b")), exists(OpId(4))]);
        let read = server.apply_next(&mut handle).unwrap();
        assert!(
            matches!(read.result, Ok(crate::zk::OpOk::Exists { stat: Some(_) })),
            "the follower still has the node the leader deleted: {:?}",
            read.result
        );
        assert!(
            !handle.applicable(),
            "the write waits, the read behind it too"
        );
        assert!(server.apply_next(&mut handle).is_none());
        assert!(server.tree.get(&Path::new("/b").unwrap()).is_none());
        handle.lose_session();
        let lost = |op| RawEvent::Reply {
            op,
            result: Err(ZkError::ConnectionLoss),
        };
        let tail: Vec<_> = handle.events.iter().skip(1).collect();
        assert_eq!(
            tail,
            [
                &lost(OpId(3)),
                &lost(OpId(4)),
                &RawEvent::State {
                    state: RawState::Disconnected
                },
                &RawEvent::State {
                    state: RawState::Expired
                }
            ]
        );
        assert_eq!((handle.link, handle.cut.is_none()), (Link::Dead, true));
    }

    #[test]
    fn an_expired_handle_applies_nothing_and_hears_no_watch() {
        let mut server = Server::default();
        server.open(SessionId(1));
        let mut handle = Handle::open(SessionId(1), T);
        handle.send(OpId(1), create("/a"));
        handle.expire();
        handle.send(OpId(2), create("/b"));
        assert!(server.apply_next(&mut handle).is_none());
        handle.watch(WatchedEvent {
            kind: crate::zk::EventKind::NodeDeleted,
            path: Path::new("/a").unwrap(),
        });
        assert_eq!(
            handle.events.back(),
            Some(&RawEvent::State {
                state: RawState::Expired
            })
        );
        assert_eq!(server.end(SessionId(1)), Some(Vec::new()));
        assert_eq!(server.end(SessionId(1)), None, "ended once");
    }
}
