//! splitbrain's `async-net`: the surface `zookeeper-client` uses ([`TcpStream::connect`] and
//! the stream's `futures-io` traits), switched at run time.
//!
//! Inside a madsim simulation a connection is opened by the dialer the simulator put in
//! scope for the client node whose code runs ([`simio`]): its bytes travel over the
//! simulator's wire, with its partitions, resets and TCP retransmission timing. Outside a
//! simulation it is opened by the dialer in scope when there is one (a real client process
//! of splitbrain's, which reads the client's bytes as they pass), else it is async-net 1's
//! real TCP (the same API; the real side cannot be async-net 2 itself, see
//! `shims/README.md`).

use std::fmt;
use std::io::{self, IoSlice, IoSliceMut};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_io::{AsyncRead, AsyncWrite};

/// Where to connect: addresses, or a host and port that the real side resolves (a
/// simulation has no resolver, so there the host must be an IP literal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Addresses to try in order.
    Addrs(Vec<SocketAddr>),
    /// A host (a name or an IP literal) and a port.
    HostPort(String, u16),
}

/// What [`TcpStream::connect`] accepts: the address forms of async-net's trait of the same
/// name.
pub trait AsyncToSocketAddrs {
    /// The target these addresses name.
    fn target(self) -> io::Result<Target>;
}

impl AsyncToSocketAddrs for SocketAddr {
    fn target(self) -> io::Result<Target> {
        Ok(Target::Addrs(vec![self]))
    }
}

impl AsyncToSocketAddrs for SocketAddrV4 {
    fn target(self) -> io::Result<Target> {
        SocketAddr::V4(self).target()
    }
}

impl AsyncToSocketAddrs for SocketAddrV6 {
    fn target(self) -> io::Result<Target> {
        SocketAddr::V6(self).target()
    }
}

impl AsyncToSocketAddrs for (IpAddr, u16) {
    fn target(self) -> io::Result<Target> {
        SocketAddr::new(self.0, self.1).target()
    }
}

impl AsyncToSocketAddrs for (Ipv4Addr, u16) {
    fn target(self) -> io::Result<Target> {
        (IpAddr::V4(self.0), self.1).target()
    }
}

impl AsyncToSocketAddrs for (Ipv6Addr, u16) {
    fn target(self) -> io::Result<Target> {
        (IpAddr::V6(self.0), self.1).target()
    }
}

impl AsyncToSocketAddrs for (&str, u16) {
    fn target(self) -> io::Result<Target> {
        Ok(Target::HostPort(self.0.to_owned(), self.1))
    }
}

impl AsyncToSocketAddrs for (String, u16) {
    fn target(self) -> io::Result<Target> {
        Ok(Target::HostPort(self.0, self.1))
    }
}

impl AsyncToSocketAddrs for &str {
    fn target(self) -> io::Result<Target> {
        if let Ok(addr) = self.parse::<SocketAddr>() {
            return addr.target();
        }
        let invalid = || {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{self:?} is not HOST:PORT"),
            )
        };
        let (host, port) = self.rsplit_once(':').ok_or_else(invalid)?;
        let port = port.parse().map_err(|_| invalid())?;
        Ok(Target::HostPort(host.to_owned(), port))
    }
}

impl AsyncToSocketAddrs for String {
    fn target(self) -> io::Result<Target> {
        self.as_str().target()
    }
}

impl AsyncToSocketAddrs for &[SocketAddr] {
    fn target(self) -> io::Result<Target> {
        Ok(Target::Addrs(self.to_vec()))
    }
}

/// A TCP connection: real, or over the simulator's wire.
pub struct TcpStream(Stream);

enum Stream {
    Real(network::TcpStream),
    Dialed(Box<dyn simio::Connection>),
}

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut tuple = f.debug_tuple("TcpStream");
        match &self.0 {
            Stream::Real(stream) => tuple.field(stream),
            Stream::Dialed(stream) => tuple.field(stream),
        };
        tuple.finish()
    }
}

impl TcpStream {
    /// Connects to `addr`: over the simulator's wire inside a simulation, else through the
    /// dialer in scope, else over the real network.
    pub async fn connect<A: AsyncToSocketAddrs>(addr: A) -> io::Result<TcpStream> {
        let target = addr.target()?;
        let stream = if madsim::runtime::Handle::try_current().is_ok() || simio::in_scope() {
            Stream::Dialed(connect_dialed(target).await?)
        } else {
            Stream::Real(match target {
                Target::Addrs(addrs) => network::TcpStream::connect(&addrs[..]).await?,
                Target::HostPort(host, port) => network::TcpStream::connect((host, port)).await?,
            })
        };
        Ok(TcpStream(stream))
    }

    fn io(self: Pin<&mut Self>) -> Pin<&mut dyn Io> {
        match &mut self.get_mut().0 {
            Stream::Real(stream) => Pin::new(stream),
            Stream::Dialed(stream) => Pin::new(stream),
        }
    }
}

/// Dials each address of `target` in turn with the dialer in scope: the first connection
/// made, or the last error.
async fn connect_dialed(target: Target) -> io::Result<Box<dyn simio::Connection>> {
    let addrs = match target {
        Target::Addrs(addrs) => addrs,
        Target::HostPort(host, port) => {
            let ip = host.parse::<IpAddr>().map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "cannot resolve {host:?} through splitbrain's dialer (a simulation has no \
                         DNS): connect to the server's IP address"
                    ),
                )
            })?;
            vec![SocketAddr::new(ip, port)]
        }
    };
    let mut last = io::Error::new(io::ErrorKind::InvalidInput, "no address to connect to");
    for addr in addrs {
        let connecting = simio::dial(addr).ok_or_else(|| {
            io::Error::other(format!(
                "connect to {addr} inside a simulation but not from a simulated client node (no \
                 splitbrain dialer in scope): run client code through splitbrain's run loop"
            ))
        })?;
        match connecting.await {
            Ok(connection) => return Ok(connection),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Both kinds of stream, as the I/O traits' methods see them.
trait Io: AsyncRead + AsyncWrite + Unpin {}

impl<T: AsyncRead + AsyncWrite + Unpin + ?Sized> Io for T {}

impl AsyncRead for TcpStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.io().poll_read(cx, buf)
    }

    fn poll_read_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &mut [IoSliceMut<'_>],
    ) -> Poll<io::Result<usize>> {
        self.io().poll_read_vectored(cx, bufs)
    }
}

impl AsyncWrite for TcpStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.io().poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.io().poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io().poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io().poll_close(cx)
    }
}

#[cfg(test)]
mod tests;
