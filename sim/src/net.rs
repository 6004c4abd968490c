//! The run's network: datagram sockets between its nodes, delivered after a LAN latency, and
//! the fault table every datagram consults ([`Links`]), with the faults armed to start at a
//! client's request (`trigger::Triggers`).
//!
//! It takes the place of madsim's endpoints, which cost about a quarter of a hunt's CPU
//! (profiled with `perf` on the bench scenario: `Endpoint::send_to_raw` 14.7 % and
//! `recv_from_raw` 8.7 % inclusive; each send formats the destination address to a string
//! for a service lookup, sleeps 0–5 µs on a timer of its own, and goes through hash maps).
//! What the wire needs is less: a datagram sent now is delivered to whoever is bound at its
//! address after a latency drawn from the run's seed (madsim's default, 1–10 ms), in the
//! order of delivery times; a datagram to an address nobody is bound at is lost.
//!
//! A socket's mailbox holds the datagrams in flight to it, keyed by delivery time. The
//! receiving task is woken by one timer per delivery instant, armed with its waker by the
//! sender (once the receiver has waited) or by the receiver for its earliest delivery.

use std::any::Any;
use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Poll, Waker};
use std::time::Duration;

use madsim::rand::{GlobalRng, Rng};
use madsim::time::Instant;

use crate::alarm::Alarm;
use crate::links::Links;
use crate::time::SimTime;
use crate::trigger::Triggers;

/// What a datagram carries.
pub type Payload = Box<dyn Any + Send + Sync>;

/// madsim's default LAN latency of one datagram.
const LATENCY: std::ops::Range<Duration> = Duration::from_millis(1)..Duration::from_millis(10);

/// The first port handed out to a socket bound at port 0.
const FIRST_EPHEMERAL_PORT: u16 = 32768;

/// The run's network: its fault table, its bound sockets and its clock. Clones share them.
#[derive(Clone)]
pub struct Network {
    links: Arc<Mutex<Links>>,
    triggers: Triggers,
    sockets: Arc<Mutex<Sockets>>,
    time: SimTime,
}

impl Network {
    /// A network with no faults and nothing bound, on the simulation's clock `time` (call it
    /// inside the runtime).
    pub fn new(time: SimTime) -> Network {
        // Handles on the run's seeded source (madsim's `thread_rng` finds it through a
        // thread-local on every call), kept where it is drawn from.
        let rng = madsim::rand::thread_rng();
        let sockets = Sockets {
            bound: BTreeMap::new(),
            next_port: 0,
            rng: rng.clone(),
        };
        Network {
            links: Arc::new(Mutex::new(Links::new(rng))),
            triggers: Triggers::default(),
            sockets: Arc::new(Mutex::new(sockets)),
            time,
        }
    }

    /// The simulation's clock.
    pub fn time(&self) -> &SimTime {
        &self.time
    }

    /// The fault table.
    pub fn links(&self) -> MutexGuard<'_, Links> {
        self.links.lock().expect("links lock")
    }

    /// The faults armed to start at a request.
    pub(crate) fn triggers(&self) -> &Triggers {
        &self.triggers
    }

    /// Starts the faults armed for `client`'s `request`, which is about to be sent.
    pub(crate) fn before_request(&self, client: u16, request: &coordination::zk::Request) {
        self.triggers.fire(client, request, &self.links);
    }

    /// Binds a socket at `addr`; port 0 takes a fresh port. A node that restarts binds
    /// its address again before madsim has dropped the killed node's tasks, so the newest
    /// binding wins.
    pub fn bind(&self, addr: SocketAddr) -> Socket {
        let mut sockets = self.sockets();
        let addr = if addr.port() == 0 {
            sockets.next_port = sockets.next_port.max(FIRST_EPHEMERAL_PORT);
            let port = sockets.next_port;
            sockets.next_port = sockets.next_port.wrapping_add(1);
            SocketAddr::new(addr.ip(), port)
        } else {
            addr
        };
        let mailbox = Arc::new(Mutex::new(Mailbox::new(self.time.clone())));
        sockets.bound.insert(addr, mailbox.clone());
        Socket {
            addr,
            mailbox,
            network: self.clone(),
        }
    }

    /// Whether a socket is bound at `addr`.
    pub fn is_bound(&self, addr: SocketAddr) -> bool {
        self.sockets().bound.contains_key(&addr)
    }

    fn sockets(&self) -> MutexGuard<'_, Sockets> {
        self.sockets.lock().expect("sockets lock")
    }
}

struct Sockets {
    bound: BTreeMap<SocketAddr, Arc<Mutex<Mailbox>>>,
    next_port: u16,
    /// The run's seeded source, for the latencies.
    rng: GlobalRng,
}

/// The datagrams in flight to one socket, by delivery time (then sending order).
struct Mailbox {
    in_flight: BTreeMap<(Instant, u64), (Payload, SocketAddr)>,
    sent: u64,
    /// The receiving task, once it has waited.
    waker: Option<Waker>,
    /// The delivery instants a timer is armed for, for the receiving task.
    alarm: Alarm,
}

impl Mailbox {
    fn new(time: SimTime) -> Mailbox {
        Mailbox {
            in_flight: BTreeMap::new(),
            sent: 0,
            waker: None,
            alarm: Alarm::new(time),
        }
    }
}

/// A bound datagram socket. Dropping it unbinds its address (unless a newer socket took it).
pub struct Socket {
    addr: SocketAddr,
    mailbox: Arc<Mutex<Mailbox>>,
    network: Network,
}

impl Socket {
    /// Where the socket is bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Sends `payload` to `dst`, where it arrives after a LAN latency; false (and nothing
    /// sent) when no socket is bound there.
    pub fn send_to(&self, dst: SocketAddr, payload: Payload) -> bool {
        self.send_no_earlier(dst, payload, None).is_some()
    }

    /// Sends `payload` to `dst` as [`Socket::send_to`] does, but delivered no earlier than
    /// `earliest` (so that a stream of datagrams keeps its order); returns when it is
    /// delivered, `None` (and nothing sent) when no socket is bound there.
    pub fn send_no_earlier(
        &self,
        dst: SocketAddr,
        payload: Payload,
        earliest: Option<Instant>,
    ) -> Option<Instant> {
        // Shared-pointer clones and lock round trips are atomic operations, which `perf
        // annotate` found to be most of a send's time: so the mailbox is borrowed under the
        // sockets' lock (nothing takes the two the other way round) and the latency drawn from
        // the sockets' own handle on the seeded source.
        let mut sockets = self.network.sockets();
        let Sockets { bound, rng, .. } = &mut *sockets;
        let mailbox = bound.get(&dst)?;
        let latency = rng.gen_range(LATENCY);
        let now = self.network.time().now();
        let at = earliest.map_or(now + latency, |earliest| earliest.max(now + latency));
        let mut guard = mailbox.lock().expect("mailbox lock");
        let mailbox = &mut *guard;
        mailbox
            .in_flight
            .insert((at, mailbox.sent), (payload, self.addr));
        mailbox.sent += 1;
        if let Some(waker) = &mailbox.waker {
            mailbox.alarm.arm(at, now, waker);
        }
        Some(at)
    }

    /// Waits for the next datagram delivered to this socket, with its sender's address.
    pub fn recv_from(&self) -> impl Future<Output = (Payload, SocketAddr)> + Send + '_ {
        std::future::poll_fn(move |cx| {
            let mut mailbox = self.mailbox.lock().expect("mailbox lock");
            let time = self.network.time();
            let now = time.now();
            if let Some(entry) = mailbox.in_flight.first_entry()
                && entry.key().0 <= now
            {
                return Poll::Ready(entry.remove());
            }
            if !mailbox
                .waker
                .as_ref()
                .is_some_and(|waker| waker.will_wake(cx.waker()))
            {
                // A new receiving task: the timers armed so far wake the old one.
                mailbox.alarm = Alarm::new(time.clone());
                mailbox.waker = Some(cx.waker().clone());
            }
            // Later deliveries are armed once this one is taken.
            if let Some(&(at, _)) = mailbox.in_flight.keys().next() {
                mailbox.alarm.arm(at, now, cx.waker());
            }
            Poll::Pending
        })
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        let mut sockets = self.network.sockets();
        if sockets
            .bound
            .get(&self.addr)
            .is_some_and(|bound| Arc::ptr_eq(bound, &self.mailbox))
        {
            sockets.bound.remove(&self.addr);
        }
    }
}
