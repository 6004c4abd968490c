//! The async driver: runs one [`Client`] over any [`Connector`]'s sessions, turning effects
//! into requests, timers and session changes, and the session's ordered event stream back
//! into inputs.
//!
//! Inputs are taken in a fixed priority (session events, then timers, then user calls) with
//! a biased select, so a run on a deterministic executor is deterministic.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt, select_biased};

use crate::client::{Client, ClientInput};
use crate::ids::{OpId, TimerId};
use crate::recipe::{Effect, Recipe, SessionEvent};
use crate::session::{Connector, Coordination, RawEvent};
use crate::zk::Request;

/// Something the driver saw or did, in the order it happened (for traces).
#[derive(Debug)]
pub enum Observed<'a, R: Recipe> {
    /// A session handle was opened (the first, or a replacement after LOST).
    SessionOpened,
    /// A session handle was closed.
    SessionClosed,
    /// The user made a call (recorded before the client handles it).
    Call(&'a R::Call),
    /// A request went out.
    OpSent {
        /// Its id.
        op: OpId,
        /// The request.
        request: &'a Request,
    },
    /// The session's stream delivered an event.
    Event(&'a RawEvent),
    /// The framework's connection state changed.
    Session(SessionEvent),
    /// The recipe told the user something.
    Notice(&'a R::Notice),
}

/// Receives what the driver observes.
pub trait Observer<R: Recipe>: Send {
    /// Called for every observation, in order.
    fn observe(&mut self, observed: Observed<'_, R>);
}

impl<R: Recipe> Observer<R> for () {
    fn observe(&mut self, _: Observed<'_, R>) {}
}

/// The user's side of a driver: send calls, receive notices. Dropping it closes the session
/// and ends the driver.
pub struct Handle<R: Recipe> {
    calls: UnboundedSender<R::Call>,
    notices: UnboundedReceiver<R::Notice>,
}

/// The driver has stopped (its session was closed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriverStopped;

impl<R: Recipe> Handle<R> {
    /// Sends a call to the client.
    pub fn call(&self, call: R::Call) -> Result<(), DriverStopped> {
        self.calls.unbounded_send(call).map_err(|_| DriverStopped)
    }

    /// The next notice; `None` once the driver has stopped.
    pub async fn next_notice(&mut self) -> Option<R::Notice> {
        self.notices.next().await
    }
}

/// Runs one client. Create with [`Driver::new`], then `run` it as a task.
pub struct Driver<R: Recipe> {
    client: Client<R>,
    calls: UnboundedReceiver<R::Call>,
    notices: UnboundedSender<R::Notice>,
}

type TimerFuture = Pin<Box<dyn Future<Output = (TimerId, u64)> + Send>>;

impl<R: Recipe> Driver<R> {
    /// A driver for `client`, and the handle to talk to it.
    pub fn new(client: Client<R>) -> (Driver<R>, Handle<R>) {
        let (call_tx, call_rx) = unbounded();
        let (notice_tx, notice_rx) = unbounded();
        let driver = Driver {
            client,
            calls: call_rx,
            notices: notice_tx,
        };
        let handle = Handle {
            calls: call_tx,
            notices: notice_rx,
        };
        (driver, handle)
    }

    /// Opens a session with `connector` and runs the client until the handle is dropped
    /// (then closes the session) or the session handle ends by itself. Returns the client's
    /// final state.
    pub async fn run<K: Connector, O: Observer<R>>(
        mut self,
        connector: &K,
        observer: &mut O,
    ) -> Client<R> {
        let mut session = connector.connect().await;
        observer.observe(Observed::SessionOpened);
        let mut timers: FuturesUnordered<TimerFuture> = FuturesUnordered::new();
        // A timer's generation: a cancelled or re-set timer's old sleep is ignored.
        let mut armed: BTreeMap<TimerId, u64> = BTreeMap::new();
        let mut generation = 0u64;
        let mut effects = Vec::new();
        loop {
            let input = select_biased! {
                event = session.next_event().fuse() => match event {
                    Some(event) => {
                        observer.observe(Observed::Event(&event));
                        ClientInput::Event(event)
                    }
                    None => break,
                },
                (timer, generation) = timers.select_next_some() => {
                    if armed.get(&timer) != Some(&generation) {
                        continue;
                    }
                    armed.remove(&timer);
                    ClientInput::Timer(timer)
                },
                call = self.calls.next() => match call {
                    Some(call) => {
                        observer.observe(Observed::Call(&call));
                        ClientInput::Call(call)
                    }
                    None => {
                        session.close().await;
                        observer.observe(Observed::SessionClosed);
                        break;
                    }
                },
            };
            self.client.handle(input, &mut effects);
            for effect in effects.drain(..) {
                match effect {
                    Effect::Op { op, request } => {
                        observer.observe(Observed::OpSent {
                            op,
                            request: &request,
                        });
                        session.submit(op, request).await;
                    }
                    Effect::SetTimer { timer, after } => {
                        generation += 1;
                        armed.insert(timer, generation);
                        let sleep = session.sleep(after);
                        let armed_generation = generation;
                        timers.push(Box::pin(async move {
                            sleep.await;
                            (timer, armed_generation)
                        }));
                    }
                    Effect::CancelTimer(timer) => {
                        armed.remove(&timer);
                    }
                    Effect::CloseSession => {
                        session.close().await;
                        observer.observe(Observed::SessionClosed);
                    }
                    Effect::OpenSession => {
                        session = connector.connect().await;
                        observer.observe(Observed::SessionOpened);
                    }
                    Effect::Session(event) => observer.observe(Observed::Session(event)),
                    Effect::Notify(notice) => {
                        observer.observe(Observed::Notice(&notice));
                        // A user that stopped listening still lets the client finish.
                        let _ = self.notices.unbounded_send(notice);
                    }
                }
            }
        }
        self.client
    }
}
