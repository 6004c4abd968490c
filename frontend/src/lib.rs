//! ZooKeeper 3.8's client protocol served from the shared data tree
//! ([`coordination::zk::tree::Tree`]), as a pure state machine: no I/O, no async, no clock.
//!
//! A server decodes a connection's frames with [`jute`] and hands them to a [`FrontEnd`]: the
//! connect request to [`FrontEnd::connect`], each request after it to [`FrontEnd::receive`].
//! What comes back is what ZooKeeper would send: the connect response (or the all-zero one
//! for an expired session, or nothing for a client ahead of the server), and replies and
//! notifications, each addressed to the session whose connection gets it. Time stays the
//! server's: it decides when a session expires ([`FrontEnd::expire`]) and when a connection
//! is gone ([`FrontEnd::disconnect`]).
//!
//! - [`sessions`]: the session table, passwords and timeout negotiation;
//! - [`handshake`]: the connect request's answer (`ZooKeeperServer.processConnectRequest`);
//! - [`convert`]: between jute's records and the tree's vocabulary;
//! - [`ops`]: one request on a node, applied to the tree and answered;
//! - [`multi`]: `multi` and `multiRead`;
//! - [`replies`]: a reply read back into the tree's vocabulary (for a client's tap);
//! - [`server`]: [`FrontEnd`], which routes a connection's requests to the above.
//!
//! It lives in a crate of its own: it needs nothing from madsim (so the simulator, the
//! differential test against a real ZooKeeper and any other server can use it), and keeping
//! it out of `coordination` keeps the wire format out of the recipes' crate.

pub mod convert;
pub mod handshake;
pub mod multi;
pub mod ops;
pub mod replies;
pub mod server;
pub mod sessions;

pub use handshake::Handshake;
pub use server::{Delivery, FrontEnd, Output, Served};
pub use sessions::Limits;
