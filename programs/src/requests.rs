//! What a program's client says and hears on its connections, read off the bytes as they
//! leave and reach the client node, recorded on the program's client at that instant as the
//! built-in client records it:
//! - each request the simulated server's tree serves (creates, deletes, reads, lists,
//!   `setData`, watch removals) as an `op_sent` event, its xid as the op's id (pings,
//!   `setWatches`, `multi`, `check`, `sync` and `closeSession` are not recorded);
//! - the handshake's answer as the raw session state: `connected` with the session and its
//!   negotiated timeout, or `expired`; the connection's end (the server closed it, it was
//!   reset, or the client gave it up) as `disconnected`;
//! - each watch event the client reads as `watch_delivered`;
//! - the reply to each recorded request as `reply`, matched by its xid, in the tree's words
//!   (`frontend::replies`).
//!
//! So a program's trace shows what the client library asked for and when, a request that
//! never reached the server included, what it was answered, and whom each watch event woke:
//! what the checkers and reports read of splitbrain's own clients.
//!
//! In a simulation the tap also starts the faults armed for a request (a scenario fault's
//! `on_request`) just before a matching request leaves, as the built-in client does
//! ([`Recording::before_each_request`]). It also keeps the newest session's id and password ([`Recording::newest_session`]):
//! what an executor needs to expire the session from outside, as Curator's test utilities do.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use coordination::ids::{ClientSlot, OpId};
use coordination::session::RawState;
use coordination::zk::{EventKind as ZkEventKind, Path, Request, SessionId, WatchedEvent};
use frontend::ops::translate;
use frontend::replies;
use futures::FutureExt;
use futures::io::{AsyncRead, AsyncWrite};
use jute::codes::EventType;
use jute::codes::OpCode;
use jute::frame::{Splitter, body};
use jute::session::ConnectResponse;
use jute::{Record, Reply, ReplyBody, RequestMessage};
use simio::{Connecting, Connection, Dial};
use trace::EventKind;

use crate::contender::Backend;

/// Dials through `dialer`, and records the requests sent on each connection it opens.
pub struct Recording {
    dialer: Arc<dyn Dial>,
    slot: ClientSlot,
    recorder: Arc<dyn Backend>,
    newest: Arc<Mutex<Option<SessionKeys>>>,
    before_request: Option<BeforeRequest>,
}

/// What is called with each request just before it leaves.
type BeforeRequest = Arc<dyn Fn(&Request) + Send + Sync>;

/// What opens a session on a second connection: its id and password, and the timeout it was
/// given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionKeys {
    /// The session's id.
    pub id: i64,
    /// Its password.
    pub password: Vec<u8>,
    /// Its negotiated timeout.
    pub timeout: Duration,
}

impl Recording {
    /// Records with `recorder`, as client `slot`, what is sent on connections `dialer` opens.
    pub fn new(dialer: Arc<dyn Dial>, slot: ClientSlot, recorder: Arc<dyn Backend>) -> Recording {
        Recording {
            dialer,
            slot,
            recorder,
            newest: Arc::default(),
            before_request: None,
        }
    }

    /// Calls `before` with each request (of those it records) just before its first byte
    /// leaves: in a simulation, what starts the faults armed for it.
    pub fn before_each_request(
        mut self,
        before: impl Fn(&Request) + Send + Sync + 'static,
    ) -> Self {
        self.before_request = Some(Arc::new(before));
        self
    }

    /// The newest session a handshake on these connections was given, if any.
    pub fn newest_session(&self) -> Option<SessionKeys> {
        self.newest.lock().expect("newest session").clone()
    }
}

impl Dial for Recording {
    fn dial(&self, addr: SocketAddr) -> Connecting {
        let connecting = self.dialer.dial(addr);
        let (slot, recorder) = (self.slot, self.recorder.clone());
        let newest = self.newest.clone();
        let before_request = self.before_request.clone();
        async move {
            let connection = connecting.await?;
            let tapped = Tapped {
                connection,
                frames: Splitter::default(),
                sent_frames: 0,
                before_request,
                previewed: 0,
                heard: Splitter::default(),
                connected: None,
                slot,
                recorder,
                newest,
                awaiting: BTreeMap::new(),
            };
            Ok(Box::new(tapped) as Box<dyn Connection>)
        }
        .boxed()
    }
}

/// A connection whose written bytes are read as ZooKeeper's frames.
struct Tapped {
    connection: Box<dyn Connection>,
    /// The frames written so far, split as they complete.
    frames: Splitter,
    /// How many frames have gone, the handshake (the first) included.
    sent_frames: usize,
    /// Called with each request before it leaves.
    before_request: Option<BeforeRequest>,
    /// How many frames (from the first) have been shown to `before_request`.
    previewed: usize,
    /// The frames read so far, split as they complete.
    heard: Splitter,
    /// Whether the handshake was answered with a session (`Some(true)`), refused (`Some(false)`:
    /// expired), or not yet answered.
    connected: Option<bool>,
    slot: ClientSlot,
    recorder: Arc<dyn Backend>,
    /// Where the newest session's keys are kept.
    newest: Arc<Mutex<Option<SessionKeys>>>,
    /// The recorded requests not yet answered, by xid.
    awaiting: BTreeMap<i32, Sent>,
}

/// A request the tap recorded: what its reply is read against.
struct Sent {
    /// Its xid.
    xid: i32,
    /// The op id it was recorded with (its xid).
    op: OpId,
    /// Its op code, which says how to read the reply's body.
    code: Option<OpCode>,
    /// The request, in the tree's words.
    request: Request,
}

impl Tapped {
    /// Shows `before_request` each request that `bytes`, about to be written, complete and
    /// that it has not seen.
    fn about_to_send(&mut self, bytes: &[u8]) {
        let Some(before_request) = &self.before_request else {
            return;
        };
        let mut preview = self.frames.clone();
        preview.push(bytes);
        let mut index = self.sent_frames;
        while let Ok(Some(frame)) = preview.next_frame() {
            if index >= self.previewed
                && let Some(sent) = request_of(index, &frame)
            {
                before_request(&sent.request);
            }
            index += 1;
        }
        self.previewed = self.previewed.max(index);
    }

    /// Reads the frames `bytes` complete, recording each request the tree serves.
    fn sent(&mut self, bytes: &[u8]) {
        self.frames.push(bytes);
        // A frame that does not parse is the server's to refuse; the tap only watches.
        while let Ok(Some(frame)) = self.frames.next_frame() {
            let index = self.sent_frames;
            self.sent_frames += 1;
            if let Some(sent) = request_of(index, &frame) {
                let (op, request) = (sent.op, sent.request.clone());
                self.record(EventKind::OpSent { op, request });
                self.awaiting.insert(sent.xid, sent);
            }
        }
    }

    /// Reads the frames `bytes` complete: the handshake's answer, then watch events.
    fn heard(&mut self, bytes: &[u8]) {
        self.heard.push(bytes);
        while let Ok(Some(frame)) = self.heard.next_frame() {
            if self.connected.is_none() {
                self.answered(body(&frame));
                continue;
            }
            let body = body(&frame);
            let xid = body
                .get(..4)
                .map(|xid| i32::from_be_bytes([xid[0], xid[1], xid[2], xid[3]]));
            match xid.and_then(|xid| self.awaiting.remove(&xid)) {
                Some(sent) => self.replied(&sent, body),
                None => self.notified(body),
            }
        }
    }

    /// Records the reply `body` to `sent`, when the tree's words can say it.
    fn replied(&mut self, sent: &Sent, body: &[u8]) {
        if let Ok(Reply {
            header,
            body: ReplyBody::Response(response),
        }) = Reply::from_bytes(body, sent.code)
            && let Some(result) = replies::result(&sent.request, header.err, &response)
        {
            self.record(EventKind::Reply {
                op: sent.op,
                result,
            });
        }
    }

    /// Records the watch event `body` tells, if it is one.
    fn notified(&mut self, body: &[u8]) {
        if let Ok(Reply {
            body: ReplyBody::Notification(event),
            ..
        }) = Reply::from_bytes(body, None)
            && let Some(event) = watched_event(event.event_type, &event.path)
        {
            self.record(EventKind::WatchDelivered { event });
        }
    }

    /// Records the handshake's answer `frame`: the session, or its expiry.
    fn answered(&mut self, frame: &[u8]) {
        let Ok(response) = ConnectResponse::from_bytes(frame) else {
            return;
        };
        let timeout = Duration::from_millis(response.time_out.max(0) as u64);
        let state = match response.session_id {
            0 => RawState::Expired,
            id => {
                let keys = SessionKeys {
                    id,
                    password: response.passwd.clone(),
                    timeout,
                };
                *self.newest.lock().expect("newest session") = Some(keys);
                RawState::Connected {
                    session: SessionId(id as u64),
                    timeout,
                }
            }
        };
        self.connected = Some(matches!(state, RawState::Connected { .. }));
        self.record(EventKind::RawSession { state });
    }

    /// Records that the connection is over, once, if it had a session.
    fn ended(&mut self) {
        if self.connected.take() == Some(true) {
            let state = RawState::Disconnected;
            self.record(EventKind::RawSession { state });
        }
    }

    fn record(&self, kind: EventKind) {
        self.recorder.record(self.slot, kind);
    }
}

/// The request that `frame`, the connection's frame number `index`, carries, when the tree
/// serves it: none in the handshake (frame 0), pings, `multi` and the like.
fn request_of(index: usize, frame: &[u8]) -> Option<Sent> {
    if index == 0 {
        return None;
    }
    let message = RequestMessage::from_bytes(body(frame)).ok()?;
    let op = OpId(u32::try_from(message.xid).ok()?);
    let request = translate(&message.request).ok()?;
    Some(Sent {
        xid: message.xid,
        op,
        code: OpCode::try_from(message.request.op()).ok(),
        request,
    })
}

/// The node event a notification of `event_type` on `path` tells; `None` for another kind.
fn watched_event(event_type: i32, path: &str) -> Option<WatchedEvent> {
    let kind = match EventType::try_from(event_type).ok()? {
        EventType::NodeCreated => ZkEventKind::NodeCreated,
        EventType::NodeDeleted => ZkEventKind::NodeDeleted,
        EventType::NodeDataChanged => ZkEventKind::NodeDataChanged,
        EventType::NodeChildrenChanged => ZkEventKind::NodeChildrenChanged,
        _ => return None,
    };
    let path = Path::new(path).ok()?;
    Some(WatchedEvent { kind, path })
}

impl Drop for Tapped {
    fn drop(&mut self) {
        self.ended();
    }
}

impl fmt::Debug for Tapped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tapped")
            .field("connection", &self.connection)
            .field("slot", &self.slot)
            .finish_non_exhaustive()
    }
}

impl AsyncRead for Tapped {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let read = Pin::new(&mut this.connection).poll_read(cx, buf);
        match &read {
            Poll::Ready(Ok(0) | Err(_)) => this.ended(),
            Poll::Ready(Ok(count)) => this.heard(&buf[..*count]),
            Poll::Pending => {}
        }
        read
    }
}

impl AsyncWrite for Tapped {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.about_to_send(buf);
        let written = Pin::new(&mut this.connection).poll_write(cx, buf);
        if let Poll::Ready(Ok(count)) = written {
            this.sent(&buf[..count]);
        }
        written
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().connection).poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().connection).poll_close(cx)
    }
}
