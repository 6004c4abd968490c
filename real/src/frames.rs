//! ZooKeeper's frames in a client's byte stream to the server, read by the proxy so that a
//! request can start a fault (a scenario fault's `on_request`, see `real::proxy`).
//!
//! The `jute` crate splits the stream into frames and reads them. The first frame of a
//! connection is its `ConnectRequest`; every later one begins with the request header, and
//! each request a trigger can name (create, delete, exists, getData, setData, getChildren,
//! removeWatches) then has its path: only the header and the path are read. A stream that is
//! not framed so (a length past `jute::frame::MAX_FRAME` or below zero) is passed on as it
//! comes, unread.

use jute::frame::{Splitter, body};
use jute::requests::peek_path;
use scenarios::fault::RequestOp;

/// A request found in a frame: its kind and path.
pub(crate) type FoundRequest = (RequestOp, String);

/// The frames of one connection's client-to-server stream.
#[derive(Default)]
pub(crate) struct Frames {
    splitter: Splitter,
    /// Frames split off so far (the first is the connect request).
    seen: u64,
    /// The stream is not framed as ZooKeeper's: pass it on unread.
    unframed: bool,
}

impl Frames {
    /// Appends bytes read from the client.
    pub fn push(&mut self, bytes: &[u8]) {
        self.splitter.push(bytes);
    }

    /// The next bytes to pass on, once a whole frame is in (with the request it carries, if
    /// a trigger can name it), or everything buffered when the stream is not framed.
    pub fn next(&mut self) -> Option<(Vec<u8>, Option<FoundRequest>)> {
        if self.unframed {
            let rest = self.splitter.take_rest();
            return (!rest.is_empty()).then_some((rest, None));
        }
        let Ok(frame) = self.splitter.next_frame() else {
            self.unframed = true;
            return self.next();
        };
        let frame = frame?;
        self.seen += 1;
        let request = (self.seen > 1).then(|| request_of(body(&frame))).flatten();
        Some((frame, request))
    }

    /// Whatever is left (a partial frame at the end of the stream).
    pub fn rest(&mut self) -> Vec<u8> {
        self.splitter.take_rest()
    }
}

/// The kind and path of the request in `body` (a frame after the connect request, without
/// its length), if a trigger can name its kind.
fn request_of(body: &[u8]) -> Option<FoundRequest> {
    let (header, path) = peek_path(body).ok()?;
    Some((RequestOp::of_code(header.op)?, path?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut frame = (body.len() as i32).to_be_bytes().to_vec();
        frame.extend_from_slice(body);
        frame
    }

    fn request(xid: i32, op: i32, path: &str) -> Vec<u8> {
        let mut body = xid.to_be_bytes().to_vec();
        body.extend_from_slice(&op.to_be_bytes());
        body.extend_from_slice(&(path.len() as i32).to_be_bytes());
        body.extend_from_slice(path.as_bytes());
        body.extend_from_slice(&[0, 0, 0, 0]);
        frame(&body)
    }

    #[test]
    fn requests_after_the_connect_request_are_read_across_split_reads() {
        let connect = frame(&[0; 44]);
        let create = request(1, 15, "/locks/x/leases/_c_a-lease-");
        let ping = frame(&[0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 11]);
        let list = request(2, 12, "/locks/x/leases");
        let stream = [connect.clone(), create.clone(), ping.clone(), list.clone()].concat();
        let mut frames = Frames::default();
        let mut out = Vec::new();
        for bytes in stream.chunks(5) {
            frames.push(bytes);
            while let Some(next) = frames.next() {
                out.push(next);
            }
        }
        let create_path = "/locks/x/leases/_c_a-lease-".to_owned();
        let expected = vec![
            (connect, None),
            (create, Some((RequestOp::Create, create_path))),
            (ping, None),
            (
                list,
                Some((RequestOp::GetChildren, "/locks/x/leases".to_owned())),
            ),
        ];
        assert_eq!(out, expected);
        assert!(frames.rest().is_empty());
    }

    #[test]
    fn a_stream_that_is_not_framed_is_passed_on_unread() {
        let mut frames = Frames::default();
        frames.push(b"ruok and more");
        assert_eq!(frames.next(), Some((b"ruok and more".to_vec(), None)));
        frames.push(b"!");
        assert_eq!(frames.next(), Some((b"!".to_vec(), None)));
        assert_eq!(frames.next(), None);
    }

    #[test]
    fn a_partial_frame_waits_and_is_left_at_the_end() {
        let mut frames = Frames::default();
        let connect = frame(&[7; 10]);
        frames.push(&connect[..6]);
        assert_eq!(frames.next(), None);
        assert_eq!(frames.rest(), connect[..6].to_vec());
    }
}
