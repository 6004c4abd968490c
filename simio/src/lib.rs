//! The seam between the simulator and the I/O shims of `shims/` (see `shims/README.md`).
//!
//! Unmodified client code (`zookeeper-client`) opens its connections with
//! `async_net::TcpStream::connect`. Inside a simulation the shimmed `async-net` asks this
//! crate for the **dialer** in scope, which the simulator set for the client node whose code
//! is running: the connection then travels over the simulator's own wire, with its faults.
//! Outside any scope the shim uses the real network.
//!
//! The scope is per task, not per thread: madsim runs every node of a simulation on one
//! thread, so [`Dialing`] enters its dialer for the duration of each poll of the future it
//! wraps, and the simulator wraps every task a client spawns in the same way.

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_io::{AsyncRead, AsyncWrite};

/// A byte stream as the client sees a TCP connection: it sends what is written at once (no
/// flush needed, as with a kernel socket) and reads what has arrived, in order.
pub trait Connection: AsyncRead + AsyncWrite + Send + Unpin + fmt::Debug {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + fmt::Debug> Connection for T {}

/// A connection being opened.
pub type Connecting = Pin<Box<dyn Future<Output = io::Result<Box<dyn Connection>>> + Send>>;

/// Opens connections from one simulated node.
pub trait Dial: Send + Sync {
    /// Opens a connection to `addr`: refused, reset or blackholed as the simulated network
    /// decides.
    fn dial(&self, addr: SocketAddr) -> Connecting;
}

thread_local! {
    static DIALER: RefCell<Option<Arc<dyn Dial>>> = const { RefCell::new(None) };
}

/// Opens a connection to `addr` with the dialer in scope, or `None` outside every scope.
pub fn dial(addr: SocketAddr) -> Option<Connecting> {
    DIALER.with(|dialer| dialer.borrow().as_ref().map(|dialer| dialer.dial(addr)))
}

/// Whether a dialer is in scope.
pub fn in_scope() -> bool {
    DIALER.with(|dialer| dialer.borrow().is_some())
}

/// A future polled with `dialer` in scope, so that the connections it opens are the
/// dialer's.
pub struct Dialing<F> {
    dialer: Arc<dyn Dial>,
    future: Pin<Box<F>>,
}

impl<F: Future> Dialing<F> {
    /// Wraps `future`: each poll runs with `dialer` in scope.
    pub fn new(dialer: Arc<dyn Dial>, future: F) -> Dialing<F> {
        Dialing {
            dialer,
            future: Box::pin(future),
        }
    }
}

impl<F: Future> Future for Dialing<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        let _scope = Scope::enter(this.dialer.clone());
        this.future.as_mut().poll(cx)
    }
}

/// The dialer in scope until drop, then the one before it (scopes nest).
struct Scope {
    before: Option<Arc<dyn Dial>>,
}

impl Scope {
    fn enter(dialer: Arc<dyn Dial>) -> Scope {
        let before = DIALER.with(|slot| slot.borrow_mut().replace(dialer));
        Scope { before }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        DIALER.with(|slot| *slot.borrow_mut() = self.before.take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Waker;

    /// Refuses every connection, naming the address it was asked for.
    struct Refusing(&'static str);

    impl Dial for Refusing {
        fn dial(&self, addr: SocketAddr) -> Connecting {
            let message = format!("{} refuses {addr}", self.0);
            Box::pin(async move { Err(io::Error::new(io::ErrorKind::ConnectionRefused, message)) })
        }
    }

    fn poll_once<F: Future>(future: F) -> Poll<F::Output> {
        let mut future = Box::pin(future);
        future
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
    }

    fn refusal(connecting: Option<Connecting>) -> String {
        match poll_once(connecting.expect("a dialer is in scope")) {
            Poll::Ready(Err(e)) => e.to_string(),
            _ => panic!("the test dialer refuses at once"),
        }
    }

    #[test]
    fn a_dialer_is_in_scope_only_while_its_future_is_polled_and_scopes_nest() {
        let addr: SocketAddr = "10.0.0.1:2181".parse().unwrap();
        assert!(!in_scope());
        let inner = Dialing::new(
            Arc::new(Refusing("inner")),
            async move { refusal(dial(addr)) },
        );
        let outer = Dialing::new(Arc::new(Refusing("outer")), async move {
            let before = refusal(dial(addr));
            let nested = inner.await;
            let after = refusal(dial(addr));
            (before, nested, after)
        });
        let Poll::Ready((before, nested, after)) = poll_once(outer) else {
            panic!("nothing here waits");
        };
        assert_eq!(before, "outer refuses 10.0.0.1:2181");
        assert_eq!(nested, "inner refuses 10.0.0.1:2181");
        assert_eq!(after, "outer refuses 10.0.0.1:2181");
        assert!(!in_scope());
        assert!(dial(addr).is_none());
    }
}
