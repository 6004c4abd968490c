//! Hand-built traces, event by event: the checkers' and reports' unit tests use them, and so
//! can a user's tests of their own checks.

use coordination::fencing::Token;
use coordination::ids::{ClientSlot, OpId, Owner};
use coordination::recipes::{Call, FailReason, Mode, Notice};
use coordination::session::RawState;
use coordination::zk::{
    CreateMode, EventKind as ZkEventKind, OpOk, OpResult, Path, Request, SessionId, Stat,
    WatchedEvent, ZkError, Zxid,
};
use serde_json::Value;

use crate::{Event, EventKind, Meta, ReadFrom, ServerSession, Source, Trace};
use scenarios::fault::Fault;

/// Builds a trace event by event; `t` advances by 1 ms per event unless set.
#[derive(Clone)]
pub struct Build {
    trace: Trace,
    t: u64,
    /// Watch events fired to a connected client, received once the server's firings of the
    /// instant are recorded (before the next event that is not one).
    in_flight: Vec<(u16, WatchedEvent)>,
}

/// The owner every hold of a built trace is asked for by.
pub const OWNER: Owner = Owner(1);

/// A ZooKeeper path from text that is known to be one.
pub fn path(text: &str) -> Path {
    Path::new(text).unwrap()
}

/// [`Build::read_from`]'s read on `session`: the request sent as `op`, applied by `server` at
/// `zxid`, and its answer.
fn read_events((session, op): (u64, u32), node: &str, server: u16, zxid: u64) -> [EventKind; 3] {
    let (op, zxid) = (OpId(op), Zxid(zxid));
    let request = Request::GetChildren {
        path: path(node),
        watch: false,
    };
    let result = Ok(OpOk::Children {
        names: Vec::new(),
        pzxid: Some(zxid),
    });
    let applied = EventKind::OpApplied {
        session: SessionId(session),
        op,
        request: request.clone(),
        result: result.clone(),
        zxid: None,
        read_from: Some(ReadFrom { server, zxid }),
    };
    [
        EventKind::OpSent { op, request },
        applied,
        EventKind::Reply { op, result },
    ]
}

impl Default for Build {
    fn default() -> Build {
        Build::new()
    }
}

impl Build {
    /// An empty trace of a 3-client simulated mutex run.
    pub fn new() -> Build {
        let meta = Meta {
            scenario: "fixture".into(),
            seed: 0,
            source: Source::Sim,
            build: "test".into(),
            recipe: recipe_table::recipes::RecipeKind::Mutex.into(),
            clients: 3,
            settings: Value::Null,
            fault_schedule: Vec::new(),
            scenario_spec: None,
            model_spec: None,
            shrunk_from: None,
        };
        Build {
            trace: Trace {
                meta,
                events: Vec::new(),
            },
            t: 0,
            in_flight: Vec::new(),
        }
    }

    /// The trace built so far, with any watch events still in flight delivered.
    pub fn trace(self) -> Trace {
        self.land().trace
    }

    /// The watch events in flight arrive.
    fn land(mut self) -> Build {
        for (client, event) in std::mem::take(&mut self.in_flight) {
            self = self.push(Some(client), EventKind::WatchDelivered { event });
        }
        self
    }

    /// Sets the time of the next events, in ms.
    pub fn at_ms(mut self, ms: u64) -> Build {
        self.t = ms * 1_000_000;
        self
    }

    /// Appends an event of `kind` by `client` (or the server, with `None`).
    pub fn push(mut self, client: Option<u16>, kind: EventKind) -> Build {
        if !matches!(kind, EventKind::WatchFired { .. }) {
            self = self.land();
        }
        self.trace.events.push(Event {
            t: self.t,
            client: client.map(ClientSlot),
            kind,
        });
        self.t += 1_000_000;
        self
    }

    /// `client` asks for an exclusive hold.
    pub fn acquire(self, client: u16) -> Build {
        let call = Call::acquire(OWNER, None);
        self.push(Some(client), EventKind::Call { call })
    }

    /// `client` releases its exclusive hold.
    pub fn release(self, client: u16) -> Build {
        let call = Call::release(OWNER);
        self.push(Some(client), EventKind::Call { call })
    }

    /// `client` is told `notice`.
    pub fn notice(self, client: u16, notice: Notice) -> Build {
        self.push(Some(client), EventKind::Notice { notice })
    }

    /// `client` is told it holds the exclusive lock with `token`.
    pub fn acquired(self, client: u16, token: u64) -> Build {
        let token = Token(token);
        self.notice(
            client,
            Notice::Acquired {
                owner: OWNER,
                token,
                mode: Mode::Exclusive,
            },
        )
    }

    /// `client` is told it holds a `mode` hold with `token`.
    pub fn acquired_as(self, client: u16, token: u64, mode: Mode) -> Build {
        let token = Token(token);
        let owner = OWNER;
        self.notice(client, Notice::Acquired { owner, token, mode })
    }

    /// `client` releases its `mode` hold.
    pub fn release_as(self, client: u16, mode: Mode) -> Build {
        let call = Call::Release { owner: OWNER, mode };
        self.push(Some(client), EventKind::Call { call })
    }

    /// `client` joins the election.
    pub fn start(self, client: u16) -> Build {
        let call = Call::Start { owner: OWNER };
        self.push(Some(client), EventKind::Call { call })
    }

    /// `client` leaves the election.
    pub fn close(self, client: u16) -> Build {
        let call = Call::Close {
            owner: OWNER,
            notify: false,
        };
        self.push(Some(client), EventKind::Call { call })
    }

    /// `client` is told it leads, with `token`.
    pub fn leads(self, client: u16, token: u64) -> Build {
        let token = Token(token);
        self.notice(
            client,
            Notice::IsLeader {
                owner: OWNER,
                token,
            },
        )
    }

    /// `client` does not lead any more.
    pub fn not_leader(self, client: u16) -> Build {
        self.notice(client, Notice::NotLeader { owner: OWNER })
    }

    /// `client`'s framework reports SUSPENDED.
    pub fn suspended(self, client: u16) -> Build {
        self.notice(client, Notice::Suspended { owner: OWNER })
    }

    /// `client`'s framework reports RECONNECTED on the same session.
    pub fn reconnected(self, client: u16) -> Build {
        self.notice(client, Notice::Reconnected { owner: OWNER })
    }

    /// `client`'s framework reports LOST.
    pub fn lost(self, client: u16) -> Build {
        self.notice(client, Notice::Lost { owner: OWNER })
    }

    /// `client`'s acquire timed out.
    pub fn timed_out(self, client: u16) -> Build {
        self.notice(client, Notice::TimedOut { owner: OWNER })
    }

    /// The client's ask failed because its session was lost.
    pub fn failed(self, client: u16) -> Build {
        self.failed_for(client, FailReason::SessionLost)
    }

    /// `client`'s ask failed for `reason`.
    pub fn failed_for(self, client: u16, reason: FailReason) -> Build {
        self.notice(
            client,
            Notice::Failed {
                owner: OWNER,
                reason,
            },
        )
    }

    /// `fault` starts.
    pub fn fault(self, fault: Fault) -> Build {
        self.push(None, EventKind::FaultStart { fault })
    }

    /// `fault` ends.
    pub fn fault_end(self, fault: Fault) -> Build {
        self.push(None, EventKind::FaultEnd { fault })
    }

    /// The client's framework gives its session up (LOST).
    pub fn session_lost(self, client: u16) -> Build {
        let event = coordination::recipe::SessionEvent::Lost {
            server_confirmed: false,
        };
        self.push(Some(client), EventKind::Session { event })
    }

    /// `client`'s raw session connects as `session`.
    pub fn connected(self, client: u16, session: u64) -> Build {
        let state = RawState::Connected {
            session: SessionId(session),
            timeout: std::time::Duration::from_secs(1),
        };
        self.push(Some(client), EventKind::RawSession { state })
    }

    /// The server's view of `session` changes.
    pub fn server_session(self, session: u64, change: ServerSession) -> Build {
        let session = SessionId(session);
        self.push(None, EventKind::ServerSession { session, change })
    }

    /// Makes the trace a real run's (only the clients' side is recorded).
    pub fn real(mut self) -> Build {
        self.trace.meta.source = Source::Real;
        self
    }

    /// `client` leaves a data watch on `node` with `getData` (its op `op`) and is answered
    /// with the node's stat, created at `czxid`.
    pub fn watching(self, client: u16, op: u32, node: &str, czxid: u64) -> Build {
        let request = Request::GetData {
            path: path(node),
            watch: true,
        };
        let stat = Stat {
            czxid: Zxid(czxid),
            ..Stat::default()
        };
        let result = Ok(OpOk::Data {
            data: Vec::new(),
            stat,
        });
        self.answered(client, OpId(op), request, result)
    }

    /// `client` lists `node`'s children leaving a child watch (its op `op`) and is answered
    /// with the children's `pzxid`.
    pub fn listing(self, client: u16, op: u32, node: &str, pzxid: u64) -> Build {
        let request = Request::GetChildren {
            path: path(node),
            watch: true,
        };
        let result = Ok(OpOk::Children {
            names: Vec::new(),
            pzxid: Some(Zxid(pzxid)),
        });
        self.answered(client, OpId(op), request, result)
    }

    /// `client`, on `session`, lists `node`'s children (its op `op`), which `server` of an
    /// ensemble answers from its tree as applied up to `zxid`.
    pub fn read_from(
        self,
        (client, session, op): (u16, u64, u32),
        node: &str,
        server: u16,
        zxid: u64,
    ) -> Build {
        let [sent, applied, answer] = read_events((session, op), node, server, zxid);
        self.push(Some(client), sent)
            .push(None, applied)
            .push(Some(client), answer)
    }

    /// The read of [`Build::read_from`], whose answer never reaches `client`: its connection
    /// is lost (the client gives the request `ConnectionLoss`) before `server` applies it
    /// when `lost_first`, after it otherwise.
    pub fn read_unanswered(
        self,
        (client, session, op): (u16, u64, u32),
        node: &str,
        (server, zxid): (u16, u64),
        lost_first: bool,
    ) -> Build {
        let [sent, applied, _] = read_events((session, op), node, server, zxid);
        let lost = EventKind::Reply {
            op: OpId(op),
            result: Err(ZkError::ConnectionLoss),
        };
        let sent = self.push(Some(client), sent);
        if lost_first {
            sent.push(Some(client), lost).push(None, applied)
        } else {
            sent.push(None, applied).push(Some(client), lost)
        }
    }

    /// `client` sends `request` as `op` and is answered with `result`.
    fn answered(self, client: u16, op: OpId, request: Request, result: OpResult) -> Build {
        self.push(Some(client), EventKind::OpSent { op, request })
            .push(Some(client), EventKind::Reply { op, result })
    }

    /// `client` receives a watch event of `kind` on `node`.
    pub fn delivered(self, client: u16, kind: ZkEventKind, node: &str) -> Build {
        let event = WatchedEvent {
            kind,
            path: path(node),
        };
        self.push(Some(client), EventKind::WatchDelivered { event })
    }

    /// A NodeDeleted watch on `node` fired for `session` by the change `zxid`, and its event
    /// received by the session's client.
    pub fn deleted_watch(self, session: u64, node: &str, zxid: u64) -> Build {
        self.watch_fired(session, ZkEventKind::NodeDeleted, node, zxid)
    }

    /// A watch of `kind` on `node` fired for `session` by the change `zxid`, and its event
    /// received by the client last connected on `session` (if any).
    pub fn watch_fired(self, session: u64, kind: ZkEventKind, node: &str, zxid: u64) -> Build {
        let client = (self.trace.events.iter().rev()).find_map(|e| match e.kind {
            EventKind::RawSession {
                state: RawState::Connected { session: s, .. },
            } if s == SessionId(session) => e.client,
            _ => None,
        });
        let mut fired = self.watch_fired_unreceived(session, kind, node, zxid);
        if let Some(client) = client {
            let event = WatchedEvent {
                kind,
                path: path(node),
            };
            fired.in_flight.push((client.0, event));
        }
        fired
    }

    /// A watch of `kind` on `node` fired for `session` by the change `zxid`, whose event never
    /// reaches the client (its connection drops first).
    pub fn watch_fired_unreceived(
        self,
        session: u64,
        kind: ZkEventKind,
        node: &str,
        zxid: u64,
    ) -> Build {
        let event = WatchedEvent {
            kind,
            path: path(node),
        };
        let session = SessionId(session);
        let zxid = Some(Zxid(zxid));
        self.push(
            None,
            EventKind::WatchFired {
                session,
                event,
                zxid,
            },
        )
    }

    /// The server applied a successful create of `node` (ephemeral for `owner`, else
    /// persistent) as `zxid`.
    pub fn created(self, session: u64, node: &str, owner: Option<u64>, zxid: u64) -> Build {
        let mode = match owner {
            Some(_) => CreateMode::EphemeralSequential,
            None => CreateMode::PersistentSequential,
        };
        self.created_in(session, node, mode, owner, zxid)
    }

    /// The server applied a successful create of the container `node` as `zxid`.
    pub fn container(self, session: u64, node: &str, zxid: u64) -> Build {
        self.created_in(session, node, CreateMode::Container, None, zxid)
    }

    fn created_in(
        self,
        session: u64,
        node: &str,
        mode: CreateMode,
        owner: Option<u64>,
        zxid: u64,
    ) -> Build {
        let stat = Stat {
            czxid: Zxid(zxid),
            ephemeral_owner: owner.map(SessionId),
            ..Stat::default()
        };
        let request = Request::Create {
            path: path(node),
            data: Vec::new(),
            mode,
        };
        let result = Ok(OpOk::Created {
            path: path(node),
            stat,
        });
        self.applied(session, request, result, Some(zxid))
    }

    /// The server applied a delete of `node` by `session` as `zxid`.
    pub fn deleted(self, session: u64, node: &str, zxid: u64) -> Build {
        let request = Request::Delete {
            path: path(node),
            version: None,
        };
        self.applied(session, request, Ok(OpOk::Deleted), Some(zxid))
    }

    fn applied(
        self,
        session: u64,
        request: Request,
        result: coordination::zk::OpResult,
        zxid: Option<u64>,
    ) -> Build {
        let kind = EventKind::OpApplied {
            session: SessionId(session),
            op: OpId(0),
            request,
            result,
            zxid: zxid.map(Zxid),
            read_from: None,
        };
        self.push(None, kind)
    }

    /// `client` reads `value` from the fenced resource with `token`.
    pub fn read(self, client: u16, token: u64, accepted: bool, value: u64) -> Build {
        let kind = EventKind::ResourceRead {
            owner: OWNER,
            token: Token(token),
            accepted,
            value: accepted.then_some(value),
        };
        self.push(Some(client), kind)
    }

    /// `client` writes `value` to the fenced resource with `token`.
    pub fn write(self, client: u16, token: u64, accepted: bool, value: u64) -> Build {
        let kind = EventKind::ResourceWrite {
            owner: OWNER,
            token: Token(token),
            value,
            accepted,
        };
        self.push(Some(client), kind)
    }
}
