//! ZooKeeper 3.8's client protocol, jute, as pure functions over bytes: no I/O, no runtime.
//! It serves both ends of a connection: a server decodes requests and encodes replies, a
//! client or a proxy encodes requests and decodes replies.
//!
//! - [`frame`]: a 4-byte big-endian length and a body; [`frame::Splitter`] splits a byte
//!   stream read in arbitrary chunks into whole frames.
//! - [`primitives`]: jute's int, long, boolean, buffer, ustring and vector ([`Reader`],
//!   [`Field`]); [`mod@record`]: the [`Record`] trait every record implements.
//! - [`codes`]: op codes, error codes, create modes, watcher event types and states, and the
//!   special xids.
//! - [`data`]: `Id`, `ACL` and `Stat`; [`session`]: the connect handshake, the request and
//!   reply headers, watcher events, auth and set-watches packets.
//! - [`requests`] and [`responses`]: every request and response record, [`RequestMessage`]
//!   (a request frame's body) and [`Reply`] (a reply frame's body); [`multi`]: the bodies of
//!   `multi` and `multiRead`.
//!
//! Field order and types follow `zookeeper.jute`, `MultiOperationRecord`, `MultiResponse`,
//! `ClientCnxn` and the server's `FinalRequestProcessor`. Decoding never panics: a malformed
//! input is an [`Error`] naming the record and field and what was expected there.

mod build;
pub mod codes;
pub mod data;
pub mod error;
pub mod frame;
pub mod multi;
pub mod primitives;
pub mod record;
pub mod requests;
pub mod responses;
pub mod session;

pub use error::{Error, ErrorKind, FrameError, Result, UnknownCode};
pub use primitives::{Field, Reader};
pub use record::Record;
pub use requests::{Request, RequestMessage};
pub use responses::{Reply, ReplyBody, Response};
