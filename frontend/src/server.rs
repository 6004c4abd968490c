//! [`FrontEnd`]: the tree and the session table, serving each connection's decoded requests
//! and answering with the replies and notifications ZooKeeper would send.

use coordination::zk::tree::{Fired, Tree};
use coordination::zk::watches::WatchSet;
use coordination::zk::{Path, SessionId, Zxid};
use jute::codes::ErrorCode;
use jute::session::{ConnectRequest, ReplyHeader, SetWatches};
use jute::{Reply, ReplyBody, Request, RequestMessage, Response};

use crate::convert;
use crate::handshake::{self, Handshake};
use crate::multi;
use crate::ops::{self, Answer};
use crate::sessions::{Limits, Sessions};

/// A reply frame's body for the connection of `session`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Whose connection it goes to.
    pub session: SessionId,
    /// The reply or notification.
    pub reply: Reply,
}

/// What a request did, before its fired watches became notifications: for a server that
/// delivers them itself, to connections of more than one kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Served {
    /// The watches it fired (to any session), in delivery order, before its reply.
    pub fired: Vec<Fired>,
    /// Its reply, to the requester's connection.
    pub reply: Reply,
    /// Whether the requester's connection closes after it (`closeSession`, or a session
    /// that is no longer live).
    pub close: bool,
}

/// What a request produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// In order: the notifications of the watches it fired (to any session), then its reply.
    pub deliveries: Vec<Delivery>,
    /// Whether the requester's connection closes after them (`closeSession`, or a session
    /// that is no longer live).
    pub close: bool,
}

/// ZooKeeper's client protocol over one data tree and its sessions.
#[derive(Clone, Debug)]
pub struct FrontEnd {
    tree: Tree,
    sessions: Sessions,
    limits: Limits,
}

impl FrontEnd {
    /// A server with an empty tree and no sessions, granting timeouts within `limits`.
    pub fn new(limits: Limits) -> FrontEnd {
        FrontEnd {
            tree: Tree::new(),
            sessions: Sessions::default(),
            limits,
        }
    }

    /// The data tree.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// The sessions.
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// The data tree, for a server that also applies requests of its own to it.
    pub fn tree_mut(&mut self) -> &mut Tree {
        &mut self.tree
    }

    /// Opens a session with a negotiated timeout of `timeout_ms` for a client that does not
    /// speak jute (its own handshake), in the same table as the jute clients' sessions.
    pub fn open(&mut self, timeout_ms: i32) -> SessionId {
        self.sessions.open(timeout_ms)
    }

    /// Answers a connection's connect request.
    pub fn connect(&mut self, request: &ConnectRequest) -> Handshake {
        handshake::connect(&mut self.sessions, &mut self.tree, self.limits, request)
    }

    /// Serves `message`, a request on the connection of `session`.
    pub fn receive(&mut self, session: SessionId, message: &RequestMessage) -> Output {
        let Served {
            fired,
            reply,
            close,
        } = self.serve(session, message);
        let mut deliveries: Vec<Delivery> = fired.into_iter().map(convert::notification).collect();
        deliveries.push(Delivery { session, reply });
        Output { deliveries, close }
    }

    /// Serves `message`, a request on the connection of `session`, leaving the watches it
    /// fired as the tree reports them.
    pub fn serve(&mut self, session: SessionId, message: &RequestMessage) -> Served {
        if !self.sessions.is_live(session) {
            return Served {
                fired: Vec::new(),
                reply: self.reply(message.xid, Err(ErrorCode::SessionExpired)),
                close: true,
            };
        }
        let (answer, close) = match &message.request {
            Request::Ping => (Answer::quiet(Ok(Response::Empty)), false),
            Request::CloseSession => {
                let fired = self.end(session);
                (Answer::quiet(Ok(Response::Empty)).with(fired), true)
            }
            Request::SetWatches(watches) => (self.set_watches(session, watches), false),
            Request::SetWatches2(watches) => {
                let persistent = !watches.persistent_watches.is_empty()
                    || !watches.persistent_recursive_watches.is_empty();
                let answer = match persistent {
                    // The tree has no persistent watches.
                    true => Answer::quiet(Err(ErrorCode::Unimplemented)),
                    false => self.set_watches(
                        session,
                        &SetWatches {
                            relative_zxid: watches.relative_zxid,
                            data_watches: watches.data_watches.clone(),
                            exist_watches: watches.exist_watches.clone(),
                            child_watches: watches.child_watches.clone(),
                        },
                    ),
                };
                (answer, false)
            }
            Request::Multi(request) => (multi::multi(&mut self.tree, session, &request.ops), false),
            Request::MultiRead(request) => (
                multi::multi_read(&mut self.tree, session, &request.ops),
                false,
            ),
            request => (ops::answer(&mut self.tree, session, request), false),
        };
        Served {
            fired: answer.fired,
            reply: self.reply(message.xid, answer.result),
            close,
        }
    }

    /// The connection of `session` is gone (the session lives on until it expires or a
    /// client resumes it): its watches go with it.
    pub fn disconnect(&mut self, session: SessionId) {
        self.tree.drop_watches(session);
    }

    /// `session` expired (the server's clock says so): its ephemerals are deleted, and the
    /// notifications of the watches that fired are returned. Nothing if it was not live.
    pub fn expire(&mut self, session: SessionId) -> Vec<Delivery> {
        let fired = self.end(session);
        fired.into_iter().map(convert::notification).collect()
    }

    /// Ends `session` (closed, or expired by a server that delivers the notifications
    /// itself) in the table and the tree: the watches that fired. Nothing if it was not live.
    pub fn end(&mut self, session: SessionId) -> Vec<Fired> {
        match self.sessions.end(session) {
            true => self.tree.end_session(session),
            false => Vec::new(),
        }
    }

    /// Sets a reconnected session's watches again: those whose node changed after the
    /// client's last zxid fire at once (`DataTree.setWatches`).
    fn set_watches(&mut self, session: SessionId, watches: &SetWatches) -> Answer {
        let paths = |texts: &[String]| {
            texts
                .iter()
                .filter_map(|text| Path::new(text).ok())
                .collect()
        };
        let set = WatchSet {
            data: paths(&watches.data_watches),
            exist: paths(&watches.exist_watches),
            child: paths(&watches.child_watches),
        };
        let last = Zxid(u64::try_from(watches.relative_zxid).unwrap_or(0));
        let fired = self.tree.set_watches(session, last, &set);
        Answer::quiet(Ok(Response::Empty)).with(fired)
    }

    /// The reply to request `xid`: the tree's last zxid, and the error or the response.
    fn reply(&self, xid: i32, result: Result<Response, ErrorCode>) -> Reply {
        let (err, response) = match result {
            Ok(response) => (ErrorCode::Ok, response),
            Err(code) => (code, Response::Empty),
        };
        Reply {
            header: ReplyHeader {
                xid,
                zxid: self.tree.zxid().0 as i64,
                err: err.into(),
            },
            body: ReplyBody::Response(response),
        }
    }
}
