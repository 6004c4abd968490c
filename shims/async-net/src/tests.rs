use std::sync::Arc;

use futures::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

#[test]
fn address_forms_name_their_targets() -> io::Result<()> {
    let server: SocketAddr = "10.0.0.1:2181".parse().unwrap();
    let addrs = |addr| io::Result::Ok(Target::Addrs(vec![addr]));
    assert_eq!(server.target()?, addrs(server)?);
    assert_eq!("10.0.0.1:2181".target()?, addrs(server)?);
    assert_eq!((server.ip(), 2181).target()?, addrs(server)?);
    assert_eq!(
        ("zk.example", 2181).target()?,
        Target::HostPort("zk.example".into(), 2181)
    );
    assert_eq!(
        "zk.example:2181".target()?,
        Target::HostPort("zk.example".into(), 2181)
    );
    let error = "zk.example".target().unwrap_err();
    assert_eq!(error.to_string(), r#""zk.example" is not HOST:PORT"#);
    Ok(())
}

/// Runs `body` in a madsim simulation with seed 1.
fn simulated<T: Send + 'static>(body: impl Future<Output = T> + Send + 'static) -> T {
    madsim::runtime::Runtime::with_seed_and_config(1, madsim::Config::default()).block_on(body)
}

#[test]
fn inside_a_simulation_a_connection_outside_any_client_node_is_refused_with_the_reason() {
    let error = simulated(async { TcpStream::connect("10.0.0.1:2181").await.unwrap_err() });
    assert!(
        error.to_string().contains("no splitbrain dialer in scope"),
        "{error}"
    );
    let error = simulated(async { TcpStream::connect(("zk.example", 2181)).await.unwrap_err() });
    assert!(
        error.to_string().contains("a simulation has no DNS"),
        "{error}"
    );
}

/// Connects every address to a loopback stream.
struct Loopback;

impl simio::Dial for Loopback {
    fn dial(&self, _addr: SocketAddr) -> simio::Connecting {
        Box::pin(async { Ok(Box::new(Duplex::default()) as Box<dyn simio::Connection>) })
    }
}

/// A loopback stream: what is written is read back.
#[derive(Debug, Default)]
struct Duplex(std::collections::VecDeque<u8>);

impl AsyncRead for Duplex {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let n = buf.len().min(this.0.len());
        for (slot, byte) in buf.iter_mut().zip(this.0.drain(..n)) {
            *slot = byte;
        }
        Poll::Ready(Ok(n))
    }
}

impl AsyncWrite for Duplex {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().0.extend(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Connects through the loopback dialer and says `ruok`: what was read back.
async fn echo_through_the_dialer() -> io::Result<[u8; 4]> {
    simio::Dialing::new(Arc::new(Loopback), async {
        let mut stream = TcpStream::connect("10.0.0.1:2181").await?;
        assert!(format!("{stream:?}").starts_with("TcpStream(Duplex("));
        stream.write_all(b"ruok").await?;
        let mut answer = [0; 4];
        stream.read_exact(&mut answer).await?;
        Ok(answer)
    })
    .await
}

#[test]
fn inside_a_simulation_a_client_nodes_connection_is_its_dialers() {
    assert_eq!(&simulated(echo_through_the_dialer()).unwrap(), b"ruok");
}

#[test]
fn outside_a_simulation_a_dialer_in_scope_opens_the_connection() {
    let echoed = futures::executor::block_on(echo_through_the_dialer());
    assert_eq!(&echoed.unwrap(), b"ruok");
}

#[test]
fn outside_a_simulation_a_connection_is_real_tcp() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (mut peer, _) = listener.accept().unwrap();
        std::io::Write::write_all(&mut peer, b"imok").unwrap();
    });
    let answer = futures::executor::block_on(async move {
        let mut stream = TcpStream::connect(addr).await?;
        let debug = format!("{stream:?}");
        assert!(debug.contains("127.0.0.1"), "{debug}");
        let mut answer = [0; 4];
        stream.read_exact(&mut answer).await?;
        io::Result::Ok(answer)
    });
    server.join().unwrap();
    assert_eq!(&answer.unwrap(), b"imok");
}
