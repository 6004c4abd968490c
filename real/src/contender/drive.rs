//! One contender driven through its workload by the executor: the same [`Workload`] the Rust
//! clients run, whose calls become [`Command`]s and whose timers (the stagger by slot, hold
//! and think times drawn from the seed) are the executor's sleeps. Each report is recorded as
//! it comes, stamped with the contender's own clock; its notices reach the workload while it
//! listens (held back otherwise, in order, as the driving contract allows); its `read` and
//! `write` are the contender's accesses to the run's resource, made as they arrive, and each
//! awaited as a blocking call is: the hold ends (the release is sent) once the write is made.

use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use coordination::ids::ClientSlot;
use coordination::recipes::{Call, Notice};
use coordination::session::RawState;
use coordination::zk::SessionId;
use futures::StreamExt;
use futures::channel::mpsc::UnboundedReceiver;
use recipe_table::family::RecipeSettings;
use recipe_table::recipe_ref::RecipeRef;
use runtime::drive::{timer_duration, workload_of};
use runtime::resource::SharedResource;
use runtime::workload::{OWNER, WorkEffect, WorkInput, WorkTimer, Workload};
use scenarios::scenario::Workload as WorkloadSettings;
use trace::{Event, EventKind};

use super::handle::{Handle, Session};
use super::process::{Output, Process};
use super::protocol::{Command, Hello, Meaning};
use super::{Program, READY_WITHIN};
use crate::clock::{RealClock, RealExecutor, Recorder};

/// The workload's pending timer.
type PendingTimer = Option<(WorkTimer, Pin<Box<tokio::time::Sleep>>)>;

/// A contender and the workload the executor drives it through.
pub(crate) struct Driver {
    pub(crate) slot: ClientSlot,
    pub(crate) process: Process,
    /// What the run's faults reach of it.
    pub(crate) handle: Arc<Handle>,
    pub(crate) outputs: UnboundedReceiver<Output>,
    pub(crate) workload: Workload,
    pub(crate) settings: WorkloadSettings,
    pub(crate) executor: RealExecutor,
    pub(crate) recorder: Recorder,
    pub(crate) clock: RealClock,
    pub(crate) resource: Arc<dyn SharedResource>,
    /// Notices heard while the workload did not listen, in order.
    pub(crate) held: VecDeque<Notice>,
    /// How to start a process of the contender: its first, and one after each crash.
    pub(crate) respawn: Respawn,
    /// How many of its processes were crashed.
    pub(crate) restarts: u32,
}

/// What a process of a contender needs, its first or one after a crash: its program and
/// hello, and what its workload is made of.
pub(crate) struct Respawn {
    /// How to start it.
    pub(crate) program: Program,
    /// Its hello.
    pub(crate) hello: Hello,
    /// The scenario's recipe.
    pub(crate) recipe: RecipeRef,
    /// The recipe's settings.
    pub(crate) recipe_settings: RecipeSettings,
    /// The run's seed.
    pub(crate) seed: u64,
}

impl Respawn {
    /// The workload of `cycles` cycles of `settings` for the contender on `slot`, as a Rust
    /// client in its slot runs it.
    pub(crate) fn workload(
        &self,
        slot: ClientSlot,
        settings: &WorkloadSettings,
        cycles: u32,
    ) -> Workload {
        workload_of(&self.recipe, slot, &self.recipe_settings, settings, cycles)
    }

    /// The seeded source of hold and think times of the contender's process on `slot` after
    /// `restarts` crashes, as a Rust client's process draws them.
    pub(crate) fn executor(&self, slot: ClientSlot, restarts: u32) -> RealExecutor {
        RealExecutor::for_client(self.seed, slot, restarts)
    }
}

/// What a report did, beyond its recording.
enum Heard {
    /// Nothing more.
    Nothing,
    /// A read: the value, unless the token was refused.
    Read(Option<u64>),
    /// A write.
    Wrote,
}

impl Driver {
    /// Says hello and waits for `ready`: the contender's session id (kept and recorded, see
    /// [`Driver::connected`]).
    pub(crate) async fn hello(&mut self, hello: Hello) -> Result<i64, String> {
        self.process.send(&Command::Hello(hello))?;
        match self.next_output().await? {
            (
                t,
                Meaning::Ready {
                    session_id,
                    password,
                    again: false,
                },
            ) => {
                self.connected(t, session_id, &password)?;
                Ok(session_id)
            }
            (_, other) => Err(format!(
                "{}: expected `ready` first, found {other:?}",
                self.process.name()
            )),
        }
    }

    /// Runs the workload to its end, then closes the contender's stdin and waits until it has
    /// exited (with status 0); `Err` with one line naming the contender otherwise. A process
    /// the injector kills (a crash) is followed, once the injector says so, by a new one,
    /// which carries on with the cycles the dead one had not begun ([`Driver::restart`]).
    pub(crate) async fn run(&mut self) -> Result<(), String> {
        let mut ran = self.live().await;
        loop {
            if !self.handle.killed() {
                return ran;
            }
            // Its last reports, so that none comes after the crash's start in the trace.
            while let Some(output) = self.outputs.next().await {
                match output {
                    Output::Report(t, meaning) => {
                        let _ = self.heard(t, meaning);
                    }
                    Output::End(_) => break,
                }
            }
            self.handle.reports_read();
            if self.handle.is_done() {
                return Ok(());
            }
            // A new process killed again before it is ready is crashed as any other.
            ran = match self.restart().await {
                Ok(()) => self.live().await,
                Err(why) => Err(why),
            };
        }
    }

    /// Starts a new process in place of the crashed one once the injector orders it, as a
    /// crashed client restarts: a new hello and session, and a new workload of the cycles the
    /// dead one had not begun, its times drawn from the stream of the client's next process.
    async fn restart(&mut self) -> Result<(), String> {
        self.restarts += 1;
        self.handle.restart_ordered(self.restarts).await;
        let respawn = &self.respawn;
        let spawned = respawn.program.spawn(self.slot, self.restarts);
        let child = spawned.as_ref().map(|(process, _)| process.child());
        self.handle.restarted(child.map_err(Clone::clone));
        (self.process, self.outputs) = spawned?;
        let left = self.workload.cycles_left();
        self.workload = respawn.workload(self.slot, &self.settings, left);
        self.executor = respawn.executor(self.slot, self.restarts);
        self.held.clear();
        let hello = respawn.hello.clone();
        let ready = tokio::time::timeout(READY_WITHIN, self.hello(hello)).await;
        let ready = ready.map_err(|_| {
            let name = self.process.name();
            format!("{name}: not ready (connected) within {READY_WITHIN:?} after its crash")
        })?;
        ready.map(drop)
    }

    /// [`Driver::run`] for one process of the contender.
    async fn live(&mut self) -> Result<(), String> {
        let mut timer = self.workload.pending_timer().map(|kind| self.timer(kind));
        let mut effects = Vec::new();
        loop {
            if self.carry_out(effects, &mut timer).await?.is_break() {
                self.handle.done();
                break;
            }
            let input = self.next_input(&mut timer).await?;
            effects = Vec::new();
            self.workload.handle(input, &mut effects);
        }
        self.process.close();
        loop {
            match self.outputs.next().await {
                Some(Output::Report(t, meaning)) => {
                    self.heard(t, meaning)?;
                }
                Some(Output::End(end)) => return end,
                None => return Err(self.gone()),
            }
        }
    }

    /// Carries out `effects` in order (a read's answer is awaited and fed back, and its
    /// effects carried out, at once); breaks when the workload is done. While a pause stops
    /// the contender nothing is carried out, as a stopped Rust client does nothing: a timer
    /// that fires meanwhile takes effect (its call recorded and sent) once it runs again.
    async fn carry_out(
        &mut self,
        effects: Vec<WorkEffect>,
        timer: &mut PendingTimer,
    ) -> Result<ControlFlow<()>, String> {
        let mut queue = VecDeque::from(effects);
        while let Some(effect) = queue.pop_front() {
            self.handle.running().await;
            match effect {
                WorkEffect::Call(call) => self.call(call)?,
                WorkEffect::SetTimer(kind) => *timer = Some(self.timer(kind)),
                WorkEffect::CancelTimer(_) => *timer = None,
                WorkEffect::Read { token, .. } => {
                    self.process.send(&Command::Read { token: token.0 })?;
                    let Heard::Read(value) = self.access().await? else {
                        return Err(self.unasked("write"));
                    };
                    let mut more = Vec::new();
                    self.workload.handle(WorkInput::ReadDone(value), &mut more);
                    for effect in more.into_iter().rev() {
                        queue.push_front(effect);
                    }
                }
                // The hold ends once the contender has written.
                WorkEffect::Write { token, value, .. } => {
                    let token = token.0;
                    self.process.send(&Command::Write { token, value })?;
                    if let Heard::Read(_) = self.access().await? {
                        return Err(self.unasked("read"));
                    }
                }
                WorkEffect::Done => return Ok(ControlFlow::Break(())),
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Records `call` and sends its command.
    fn call(&mut self, call: Call) -> Result<(), String> {
        let command = Command::of(call).map_err(|e| format!("{}: {e}", self.process.name()))?;
        self.recorder
            .record(Some(self.slot), EventKind::Call { call });
        self.process.send(&command)
    }

    /// The workload's next input: a held notice while it listens, else the pending timer or
    /// (while it listens) the next notice, whichever comes first.
    async fn next_input(&mut self, timer: &mut PendingTimer) -> Result<WorkInput, String> {
        loop {
            if self.workload.listening()
                && let Some(notice) = self.held.pop_front()
            {
                return Ok(WorkInput::Notice(notice));
            }
            let output = match timer.as_mut() {
                Some((kind, sleep)) => {
                    let kind = *kind;
                    tokio::select! {
                        biased;
                        output = self.outputs.next() => output,
                        () = sleep.as_mut() => {
                            *timer = None;
                            return Ok(WorkInput::Timer(kind));
                        }
                    }
                }
                None => self.outputs.next().await,
            };
            let (t, meaning) = self.report(output)?;
            match self.heard(t, meaning)? {
                Heard::Nothing => {}
                Heard::Read(_) => return Err(self.unasked("read")),
                Heard::Wrote => return Err(self.unasked("write")),
            }
        }
    }

    /// Waits for the answer to a read or write command: the access made.
    async fn access(&mut self) -> Result<Heard, String> {
        loop {
            let (t, meaning) = self.next_output().await?;
            match self.heard(t, meaning)? {
                Heard::Nothing => {}
                access => return Ok(access),
            }
        }
    }

    /// A report of an access the contender was not asked for.
    fn unasked(&self, access: &str) -> String {
        format!("{}: a `{access}` it was not asked for", self.process.name())
    }

    /// Records a report stamped `t` and makes its access to the resource; a notice is held
    /// for the workload.
    fn heard(&mut self, t: u64, meaning: Meaning) -> Result<Heard, String> {
        match meaning {
            Meaning::Notice(notice) => Ok(self.noticed(t, notice, String::new())),
            Meaning::Failed(notice, message) => Ok(self.noticed(t, notice, message)),
            Meaning::Read(token) => Ok(Heard::Read(self.resource.read(self.slot, OWNER, token))),
            Meaning::Write(token, value) => {
                self.resource.write(self.slot, OWNER, token, value);
                Ok(Heard::Wrote)
            }
            Meaning::Ready {
                session_id,
                password,
                again: true,
            } => self
                .connected(t, session_id, &password)
                .map(|()| Heard::Nothing),
            Meaning::Ready { again: false, .. } => {
                Err(format!("{}: `ready` again", self.process.name()))
            }
        }
    }

    /// Records `notice`, and the library's text for it when it gave one, and holds the notice
    /// for the workload.
    fn noticed(&mut self, t: u64, notice: Notice, message: String) -> Heard {
        self.push(t, EventKind::Notice { notice });
        if !message.is_empty() {
            self.push(t, EventKind::LibraryError { message });
        }
        self.held.push_back(notice);
        Heard::Nothing
    }

    /// Keeps session `session_id` (its password `hex`), which the contender reported at `t`
    /// (`ready`, or `session` for a new one), for the run's faults, and records it as its
    /// client's connection on it, so that the checkers know whose session the server
    /// expires.
    fn connected(&self, t: u64, session_id: i64, hex: &str) -> Result<(), String> {
        let session = Session::of_ready(session_id, hex)
            .map_err(|e| format!("{}: {e}", self.process.name()))?;
        self.handle.ready(session);
        // The id's bits, as the Rust clients' sessions record theirs.
        let session = SessionId(session_id as u64);
        let timeout = Duration::from_millis(self.respawn.hello.session_timeout_ms);
        let state = RawState::Connected { session, timeout };
        self.push(t, EventKind::RawSession { state });
        Ok(())
    }

    /// Records `kind` on the contender's slot at its stamp `t` (`CLOCK_MONOTONIC` ns).
    fn push(&self, t: u64, kind: EventKind) {
        let t = self.clock.since_start(Duration::from_nanos(t));
        self.recorder.push(Event {
            t: u64::try_from(t.as_nanos()).unwrap_or(u64::MAX),
            client: Some(self.slot),
            kind,
        });
    }

    async fn next_output(&mut self) -> Result<(u64, Meaning), String> {
        let output = self.outputs.next().await;
        self.report(output)
    }

    /// The report `output` carries; `Err` when the output ended instead.
    fn report(&self, output: Option<Output>) -> Result<(u64, Meaning), String> {
        match output {
            Some(Output::Report(t, meaning)) => Ok((t, meaning)),
            Some(Output::End(Err(why))) => Err(why),
            Some(Output::End(Ok(()))) => Err(format!(
                "{}: it exited before its workload was done",
                self.process.name()
            )),
            None => Err(self.gone()),
        }
    }

    fn gone(&self) -> String {
        format!("{}: its reader thread is gone", self.process.name())
    }

    /// A sleep for workload timer `kind`.
    fn timer(&self, kind: WorkTimer) -> (WorkTimer, Pin<Box<tokio::time::Sleep>>) {
        let duration = timer_duration(&self.settings, self.slot, kind, &self.executor);
        (kind, Box::pin(tokio::time::sleep(duration)))
    }
}
