//! Hand-built traces, shaped like the simulator's: three clients on a ZooKeeper mutex with a
//! 6 s session timeout, a few quiet lock cycles, then the classic GC-pause split brain — c0
//! holds the lock, pauses for 8 s, its session expires and its node goes, c1 acquires, and
//! c0 resumes and writes with its old token (rejected when fenced, a lost update when not).

use std::collections::BTreeMap;
use std::time::Duration;

use coordination::fencing::Token;
use coordination::ids::{ClientSlot, OpId, Owner, ProtectionId};
use coordination::recipe::SessionEvent;
use coordination::recipes::{Call, Mode, Notice};
use coordination::session::RawState;
use coordination::zk::{
    CreateMode, EventKind as Watch, OpOk, OpResult, Path, Request, SessionId, Stat, WatchedEvent,
    Zxid,
};
use properties::check::{self, Context};
use recipe_table::property::{Property, Violation};
use scenarios::fault::{Fault, ScheduledFault};
use trace::{Event, EventKind, Meta, ServerSession, Source, Trace};

/// The lock path of the ordinary fixtures.
pub const LOCK: &str = "/locks/gc-pause";
/// The owner every client acquires as.
const OWNER: Owner = Owner(1);
/// Milliseconds to trace nanoseconds.
const MS: u64 = 1_000_000;
/// The negotiated session timeout.
const SESSION_TIMEOUT: Duration = Duration::from_secs(6);
/// When c0's GC pause begins, relative to the start of the split brain, and how long it is.
const PAUSE_AT_MS: u64 = 2_000;
const PAUSE_MS: u64 = 8_000;

/// A trace under construction, with the server's counters.
pub struct Builder {
    events: Vec<Event>,
    lock: Path,
    zxid: u64,
    cversion: u32,
    ops: BTreeMap<u16, u32>,
    serials: BTreeMap<u16, u32>,
    sessions: BTreeMap<u16, SessionId>,
    next_session: u64,
    value: u64,
}

/// One client's lock node.
#[derive(Clone, Debug)]
pub struct Node {
    path: Path,
    token: Token,
}

impl Builder {
    /// An empty run on lock path `lock` with clients 0..3 connected at t=0.
    pub fn new(lock: &str) -> Builder {
        let mut b = Builder {
            events: Vec::new(),
            lock: Path::new(lock).expect("fixture lock paths are valid"),
            zxid: 1,
            cversion: 0,
            ops: BTreeMap::new(),
            serials: BTreeMap::new(),
            sessions: BTreeMap::new(),
            next_session: 0x1000,
            value: 0,
        };
        for c in 0..3 {
            b.connect(u64::from(c) * 5, c, false);
        }
        b
    }

    fn push(&mut self, t_ms: u64, client: Option<u16>, kind: EventKind) -> usize {
        self.events.push(Event {
            t: t_ms * MS,
            client: client.map(ClientSlot),
            kind,
        });
        self.events.len() - 1
    }

    fn next_zxid(&mut self) -> Zxid {
        self.zxid += 1;
        Zxid(self.zxid)
    }

    /// A new session for `c`: the server creates it, the client connects.
    fn connect(&mut self, t: u64, c: u16, again: bool) {
        let session = SessionId(self.next_session);
        self.next_session += 1;
        self.sessions.insert(c, session);
        self.push(
            t,
            None,
            EventKind::ServerSession {
                session,
                change: ServerSession::Created,
            },
        );
        let state = RawState::Connected {
            session,
            timeout: SESSION_TIMEOUT,
        };
        self.push(t + 1, Some(c), EventKind::RawSession { state });
        if again {
            let event = SessionEvent::Reconnected {
                session_changed: true,
            };
            self.push(t + 1, Some(c), EventKind::Session { event });
        }
    }

    /// `c` sends `request`; the server applies it 1 ms later, the reply is back 1 ms after.
    fn request(&mut self, t: u64, c: u16, request: Request, result: OpResult, zxid: Option<Zxid>) {
        let op = self.ops.entry(c).or_insert(0);
        *op += 1;
        let op = OpId(*op);
        let session = self.sessions[&c];
        self.push(
            t,
            Some(c),
            EventKind::OpSent {
                op,
                request: request.clone(),
            },
        );
        let applied = EventKind::OpApplied {
            session,
            op,
            request,
            result: result.clone(),
            zxid,
            read_from: None,
        };
        self.push(t + 1, None, applied);
        self.push(t + 2, Some(c), EventKind::Reply { op, result });
    }

    /// `c` calls acquire and creates its protected, ephemeral sequential node.
    pub fn enqueue(&mut self, t: u64, c: u16) -> Node {
        self.push(
            t,
            Some(c),
            EventKind::Call {
                call: Call::acquire(OWNER, None),
            },
        );
        let serial = self.serials.entry(c).or_insert(0);
        *serial += 1;
        let protection = ProtectionId {
            nonce: 0x5eed_0042,
            client: ClientSlot(c),
            serial: *serial,
        };
        let prefix = format!("{}/{}lock-", self.lock, protection.prefix());
        let path = Path::new(&format!("{prefix}{:010}", self.cversion)).expect("valid node path");
        self.cversion += 1;
        let zxid = self.next_zxid();
        let stat = Stat {
            czxid: zxid,
            mzxid: zxid,
            pzxid: zxid,
            ephemeral_owner: Some(self.sessions[&c]),
            ..Stat::default()
        };
        let create = Request::Create {
            path: Path::new(&prefix).expect("valid prefix"),
            data: Vec::new(),
            mode: CreateMode::EphemeralSequential,
        };
        self.request(
            t + 1,
            c,
            create,
            Ok(OpOk::Created {
                path: path.clone(),
                stat,
            }),
            Some(zxid),
        );
        let list = Request::GetChildren {
            path: self.lock.clone(),
            watch: false,
        };
        let names = vec![path.name().to_owned()];
        self.request(
            t + 4,
            c,
            list,
            Ok(OpOk::Children { names, pzxid: None }),
            None,
        );
        Node {
            path,
            token: Token(zxid.0),
        }
    }

    /// `c` watches the node ahead of it.
    pub fn watch(&mut self, t: u64, c: u16, ahead: &Node) {
        let stat = Stat {
            czxid: Zxid(ahead.token.0),
            ..Stat::default()
        };
        let exists = Request::Exists {
            path: ahead.path.clone(),
            watch: true,
        };
        self.request(t, c, exists, Ok(OpOk::Exists { stat: Some(stat) }), None);
    }

    /// `c` is told it holds the lock.
    pub fn acquired(&mut self, t: u64, c: u16, node: &Node) -> usize {
        let notice = Notice::Acquired {
            owner: OWNER,
            token: node.token,
            mode: Mode::Exclusive,
        };
        self.push(t, Some(c), EventKind::Notice { notice })
    }

    /// `c` reads the counter and writes it plus one (each access fenced with `token`);
    /// `accepted` says whether the resource took the write. Returns the write's index.
    pub fn increment(&mut self, t: u64, c: u16, node: &Node, read: u64, accepted: bool) -> usize {
        let token = node.token;
        let read_event = EventKind::ResourceRead {
            owner: OWNER,
            token,
            accepted: true,
            value: Some(read),
        };
        self.push(t, Some(c), read_event);
        if accepted {
            self.value = read + 1;
        }
        let write = EventKind::ResourceWrite {
            owner: OWNER,
            token,
            value: read + 1,
            accepted,
        };
        self.push(t + 300, Some(c), write)
    }

    /// `c` releases: the call, the delete, the notice; `woken` (client and node) is told.
    pub fn release(&mut self, t: u64, c: u16, node: &Node, woken: Option<(u16, &Node)>) {
        self.push(
            t,
            Some(c),
            EventKind::Call {
                call: Call::release(OWNER),
            },
        );
        let zxid = self.next_zxid();
        self.cversion += 1;
        let delete = Request::Delete {
            path: node.path.clone(),
            version: None,
        };
        self.request(t + 1, c, delete, Ok(OpOk::Deleted), Some(zxid));
        if let Some((w, _)) = woken {
            self.deleted_watch(t + 2, w, &node.path, zxid);
        }
        self.push(
            t + 4,
            Some(c),
            EventKind::Notice {
                notice: Notice::Released {
                    owner: OWNER,
                    remaining: 0,
                    mode: Mode::Exclusive,
                },
            },
        );
    }

    /// The server fires `c`'s watch on `path`; the event reaches `c` 1 ms later.
    fn deleted_watch(&mut self, t: u64, c: u16, path: &Path, zxid: Zxid) {
        let event = WatchedEvent {
            kind: Watch::NodeDeleted,
            path: path.clone(),
        };
        let session = self.sessions[&c];
        self.push(
            t,
            None,
            EventKind::WatchFired {
                session,
                event: event.clone(),
                zxid: Some(zxid),
            },
        );
        self.push(t + 1, Some(c), EventKind::WatchDelivered { event });
    }

    /// One quiet cycle of `c`, taking `hold` ms, starting at `t`.
    pub fn cycle(&mut self, t: u64, c: u16, hold: u64) {
        let node = self.enqueue(t, c);
        self.acquired(t + 8, c, &node);
        let value = self.value;
        self.increment(t + 20, c, &node, value, true);
        self.release(t + hold, c, &node, None);
    }

    /// The split brain, starting at `t0`; `fenced` decides whether c0's stale write is
    /// rejected. Returns the time it ends.
    pub fn split_brain(&mut self, t0: u64, fenced: bool) -> u64 {
        let n0 = self.enqueue(t0, 0);
        self.acquired(t0 + 8, 0, &n0);
        let n1 = self.enqueue(t0 + 200, 1);
        self.watch(t0 + 206, 1, &n0);
        let n2 = self.enqueue(t0 + 400, 2);
        self.watch(t0 + 406, 2, &n1);
        let before = self.value;
        let read = EventKind::ResourceRead {
            owner: OWNER,
            token: n0.token,
            accepted: true,
            value: Some(before),
        };
        self.push(t0 + 1_900, Some(0), read);
        // c0 stops the world right after its read, before its write.
        let pause = Fault::Pause {
            client: 0,
            for_ms: PAUSE_MS,
        };
        let pause_at = t0 + PAUSE_AT_MS;
        self.push(
            pause_at,
            None,
            EventKind::FaultStart {
                fault: pause.clone(),
            },
        );
        // The server last heard from c0 at the pause: it expires the session a timeout later.
        let expiry = pause_at + SESSION_TIMEOUT.as_millis() as u64 + 100;
        let zxid = self.next_zxid();
        self.cversion += 1;
        let session = self.sessions[&0];
        self.push(
            expiry,
            None,
            EventKind::ServerSession {
                session,
                change: ServerSession::Expired,
            },
        );
        self.deleted_watch(expiry + 1, 1, &n0.path, zxid);
        let list = Request::GetChildren {
            path: self.lock.clone(),
            watch: false,
        };
        let names = vec![n1.path.name().to_owned(), n2.path.name().to_owned()];
        self.request(
            expiry + 40,
            1,
            list,
            Ok(OpOk::Children { names, pzxid: None }),
            None,
        );
        self.acquired(expiry + 100, 1, &n1);
        self.increment(expiry + 200, 1, &n1, before, true);
        // c0 resumes and finishes its read-modify-write with the token it still believes in.
        let resume = pause_at + PAUSE_MS;
        self.push(resume, None, EventKind::FaultEnd { fault: pause });
        let stale = EventKind::ResourceWrite {
            owner: OWNER,
            token: n0.token,
            value: before + 1,
            accepted: !fenced,
        };
        self.push(resume + 2, Some(0), stale);
        self.push(
            resume + 10,
            Some(0),
            EventKind::RawSession {
                state: RawState::Disconnected,
            },
        );
        self.push(
            resume + 10,
            Some(0),
            EventKind::Session {
                event: SessionEvent::Suspended,
            },
        );
        self.push(
            resume + 10,
            Some(0),
            EventKind::Notice {
                notice: Notice::Suspended { owner: OWNER },
            },
        );
        self.push(
            resume + 40,
            Some(0),
            EventKind::RawSession {
                state: RawState::Expired,
            },
        );
        let lost = SessionEvent::Lost {
            server_confirmed: true,
        };
        self.push(resume + 40, Some(0), EventKind::Session { event: lost });
        self.push(
            resume + 40,
            Some(0),
            EventKind::Notice {
                notice: Notice::Lost { owner: OWNER },
            },
        );
        self.connect(resume + 100, 0, true);
        let handover = resume + 1_000;
        self.release(handover, 1, &n1, Some((2, &n2)));
        self.acquired(handover + 60, 2, &n2);
        let value = self.value;
        self.increment(handover + 100, 2, &n2, value, true);
        self.release(handover + 900, 2, &n2, None);
        handover + 1_000
    }

    /// The finished trace.
    pub fn trace(self, scenario: &str, fenced: bool, schedule_at_ms: u64) -> Trace {
        let settings = serde_json::json!({
            "session_timeout_ms": SESSION_TIMEOUT.as_millis() as u64,
            "fenced": fenced,
            "lock_path": self.lock.as_str(),
        });
        Trace {
            meta: Meta {
                scenario: scenario.to_owned(),
                seed: 42,
                source: Source::Sim,
                build: "splitbrain 0.1.0 (fixture)".to_owned(),
                recipe: recipe_table::recipes::RecipeKind::Mutex.into(),
                clients: 3,
                settings,
                fault_schedule: vec![ScheduledFault::at(
                    schedule_at_ms + PAUSE_AT_MS,
                    Fault::Pause {
                        client: 0,
                        for_ms: PAUSE_MS,
                    },
                )],
                scenario_spec: None,
                model_spec: None,
                shrunk_from: None,
            },
            events: self.events,
        }
    }
}

/// What the real checkers find in `trace` (lock nodes under `lock`).
pub fn violations(trace: &Trace, lock: &str) -> Vec<Violation> {
    let cx = Context {
        lock_path: Path::new(lock).expect("valid lock path"),
        horizon: trace.events.last().map_or(0, |e| e.t),
        progress_grace: 0,
        max_leases: 1,
        error_policy: Default::default(),
    };
    check::check_all(
        trace,
        &[
            Property::MutualExclusionBelief,
            Property::MutualExclusionFenced,
        ],
        &cx,
    )
}

/// The GC-pause split brain on `lock`, with the checkers' verdicts.
pub fn gc_pause_on(lock: &str, scenario: &str, fenced: bool) -> (Trace, Vec<Violation>) {
    let mut b = Builder::new(lock);
    b.cycle(200, 0, 900);
    b.cycle(1_300, 1, 900);
    b.cycle(2_400, 2, 900);
    b.split_brain(10_000, fenced);
    let trace = b.trace(scenario, fenced, 10_000);
    let found = violations(&trace, lock);
    (trace, found)
}

/// The GC-pause split brain, fenced (c0's stale write is rejected) or not (an update is lost).
pub fn gc_pause(fenced: bool) -> (Trace, Vec<Violation>) {
    let name = if fenced {
        "gc-pause-fenced"
    } else {
        "gc-pause-split-brain"
    };
    gc_pause_on(LOCK, name, fenced)
}

/// A long run of at least `events` events: quiet cycles round the three clients, then the
/// split brain.
pub fn long_run(events: usize) -> (Trace, Vec<Violation>) {
    let mut b = Builder::new(LOCK);
    let mut t = 200;
    let mut c = 0;
    while b.events.len() < events {
        b.cycle(t, c, 700);
        t += 1_000;
        c = (c + 1) % 3;
    }
    b.split_brain(t, true);
    let trace = b.trace("long-run", true, t);
    let found = violations(&trace, LOCK);
    (trace, found)
}
