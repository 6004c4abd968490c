//! Expiring a session that another process owns (a contender's), knowing only its id and
//! password: as [`crate::session`] expires its own sessions, and as Curator's test utilities
//! do it, a second connection on the session, closed ([`crate::session::expire_with`]). The
//! `zookeeper-client` crate opens a connection on a session only from its own session
//! records, so this one speaks ZooKeeper's wire itself, with the `jute` crate: a connect
//! request with the session's id and password, then `closeSession`.

use std::time::Duration;

use jute::codes::OpCode;
use jute::frame::{Splitter, body};
use jute::session::{ConnectRequest, ConnectResponse};
use jute::{Record, Reply, ReplyBody, Request, RequestMessage};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::session::{CLOSE_WAIT, expire_with};

/// The xid of the close request (the connection's first request).
const CLOSE_XID: i32 = 1;

/// Ends session `id` (its password `password`) on the servers of `connect_string`
/// (`host:port[,host:port...]`), asking for `timeout` as its owner did: `Ok` once a server
/// confirmed the close, or answered that it knows the session no more (it expired already).
pub(crate) async fn expire(
    connect_string: &str,
    id: i64,
    password: &[u8],
    timeout: Duration,
) -> Result<(), String> {
    let connect = ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        time_out: i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX),
        session_id: id,
        passwd: password.to_vec(),
        read_only: Some(false),
    };
    expire_with(id, || second_connection(connect_string, &connect)).await
}

/// One second connection on the session `connect` names, to the first server of
/// `connect_string` that answers, closed.
async fn second_connection(connect_string: &str, connect: &ConnectRequest) -> Result<(), String> {
    let mut last = format!("no server in the connect string {connect_string:?}");
    for server in connect_string.split(',').filter(|s| !s.is_empty()) {
        match tokio::time::timeout(CLOSE_WAIT, close_on(server, connect)).await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(why)) => last = format!("a second connection to {server}: {why}"),
            Err(_) => last = format!("{server} did not close the session within {CLOSE_WAIT:?}"),
        }
    }
    Err(last)
}

/// Connects to `server` with `connect` and closes the session.
async fn close_on(server: &str, connect: &ConnectRequest) -> Result<(), String> {
    let mut stream = TcpStream::connect(server)
        .await
        .map_err(|e| e.to_string())?;
    let mut frames = Splitter::default();
    send(&mut stream, &connect.to_frame()).await?;
    let answer = next_frame(&mut stream, &mut frames).await?;
    let answer = ConnectResponse::from_bytes(body(&answer)).map_err(|e| e.to_string())?;
    // A server that knows the session no more answers with session 0: it has expired.
    if answer.session_id == 0 {
        return Ok(());
    }
    let close = RequestMessage {
        xid: CLOSE_XID,
        request: Request::CloseSession,
    };
    send(&mut stream, &close.to_frame()).await?;
    loop {
        let frame = next_frame(&mut stream, &mut frames).await?;
        let reply = Reply::from_bytes(body(&frame), Some(OpCode::CloseSession))
            .map_err(|e| e.to_string())?;
        match reply.body {
            ReplyBody::Response(_) if reply.header.xid == CLOSE_XID => {
                return match reply.header.err {
                    0 => Ok(()),
                    err => Err(format!("the server answered the close with error {err}")),
                };
            }
            _ => {}
        }
    }
}

async fn send(stream: &mut TcpStream, frame: &[u8]) -> Result<(), String> {
    stream.write_all(frame).await.map_err(|e| e.to_string())
}

/// The next frame from the server; `Err` when the connection ends first (the session's own
/// connection took it back: "session moved").
async fn next_frame(stream: &mut TcpStream, frames: &mut Splitter) -> Result<Vec<u8>, String> {
    let mut chunk = [0; 512];
    loop {
        if let Some(frame) = frames.next_frame().map_err(|e| e.to_string())? {
            return Ok(frame);
        }
        match stream.read(&mut chunk).await {
            Ok(0) => return Err("the server closed the connection".into()),
            Ok(n) => frames.push(&chunk[..n]),
            Err(e) => return Err(e.to_string()),
        }
    }
}
