//! ZooKeeper's frames: a 4-byte big-endian length, then that many bytes of body. Every
//! message either way is one frame; [`Splitter`] cuts a byte stream, read in chunks of any
//! size, into whole frames.

use crate::error::FrameError;

/// ZooKeeper's default `jute.maxbuffer`: the largest body a server or client accepts.
pub const JUTE_MAX_BUFFER: usize = 0xfffff;

/// The largest frame length accepted: [`JUTE_MAX_BUFFER`] with room for the headers (the
/// server's `zookeeper.jute.maxbuffer.extrasize` allows more than the buffer alone).
pub const MAX_FRAME: usize = JUTE_MAX_BUFFER + 1024;

/// A frame whose body `write` appends: its length is filled in once the body is written.
pub fn framed(write: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut frame = vec![0; 4];
    write(&mut frame);
    let length = u32::try_from(frame.len() - 4).unwrap_or(u32::MAX);
    frame[..4].copy_from_slice(&length.to_be_bytes());
    frame
}

/// The frames of one direction of a connection, from bytes pushed as they are read.
#[derive(Clone, Debug, Default)]
pub struct Splitter {
    buffer: Vec<u8>,
}

impl Splitter {
    /// Appends bytes read from the connection.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// The next whole frame (its length and body), once all of it is in; `Ok(None)` while
    /// it is not. A length below zero or past [`MAX_FRAME`] is an error, and stays one: the
    /// bytes are left in place (see [`Splitter::take_rest`]).
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        let Some(&[a, b, c, d]) = self.buffer.get(..4) else {
            return Ok(None);
        };
        let length = i32::from_be_bytes([a, b, c, d]);
        let body = usize::try_from(length)
            .ok()
            .filter(|&l| l <= MAX_FRAME)
            .ok_or(FrameError { length })?;
        if self.buffer.len() < 4 + body {
            return Ok(None);
        }
        Ok(Some(self.buffer.drain(..4 + body).collect()))
    }

    /// Everything buffered and not yet returned as a frame (a partial frame at the end of
    /// a stream, or the bytes from an out-of-bounds length on).
    pub fn take_rest(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buffer)
    }
}

/// The body of `frame` (a whole frame, as [`Splitter::next_frame`] returns it).
pub fn body(frame: &[u8]) -> &[u8] {
    frame.get(4..).unwrap_or_default()
}
