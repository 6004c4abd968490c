//! What one client does with its recipe, as a sans-IO state machine that every executor
//! drives: the simulator (durations drawn from the seed), the model checker (a pending timer
//! fires at any point) and, later, a real client (it sleeps).
//!
//! A client runs cycles of its recipe [`Family`]'s [`Usage`]: ask for a hold (after making
//! the lock revocable and asking the holder to give way, when the recipe is revocable), use
//! the resource (holds whose usage writes read it with the token, hold, then write the value
//! read plus one), give the hold back, think. See [`Workload`] for the driving contract.

use std::time::Duration;

use coordination::fencing::Token;
use coordination::ids::{ClientSlot, Owner};
use coordination::recipes::{Call, Notice};
use coordination::relabel::{ClientMap, Relabel};

use recipe_table::family::{Family, RecipeSettings, Usage};

/// The one owner each client's workload acquires for (the simulator and the model alike).
pub const OWNER: Owner = Owner(0);

/// A workload timer. A workload has at most one pending at a time, so a timer is named by
/// what it waits for: its duration is the executor's business (the simulator draws it from
/// the seed per kind, the model fires a pending timer at any point).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WorkTimer {
    /// The first start of a process (the simulator staggers clients by slot).
    Start,
    /// The hold: when it fires, the holder writes (if it uses the resource) and gives back.
    Hold,
    /// The pause between a cycle's end and the next cycle (or the end of the workload).
    Think,
}

/// What an executor feeds a [`Workload`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkInput {
    /// The pending timer fired.
    Timer(WorkTimer),
    /// The recipe told the client something.
    Notice(Notice),
    /// The answer to [`WorkEffect::Read`]: the counter's value, or `None` when the resource
    /// refused the token.
    ReadDone(Option<u64>),
}

/// What a [`Workload`] asks its executor to do, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkEffect {
    /// Make this call on the recipe.
    Call(Call),
    /// Start `timer` (replacing none: the workload has no other timer pending).
    SetTimer(WorkTimer),
    /// Forget `timer` (it has not fired).
    CancelTimer(WorkTimer),
    /// Read the protected resource with `token`, and feed the answer back at once
    /// ([`WorkInput::ReadDone`]) before carrying out any later effect.
    Read {
        /// Who reads.
        owner: Owner,
        /// The hold's fencing token.
        token: Token,
    },
    /// Write `value` to the protected resource with `token` (nothing is fed back).
    Write {
        /// Who writes.
        owner: Owner,
        /// The hold's fencing token.
        token: Token,
        /// The value read plus one.
        value: u64,
    },
    /// Every cycle is over: the client may close its session.
    Done,
}

/// Where a workload is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Waits for its [`WorkTimer::Start`] timer.
    Starting,
    /// Asked for a hold and waits for the answer, holding `holds` nested holds already (a
    /// reentrant acquire asks again once granted).
    Acquiring {
        /// Holds granted so far in this cycle.
        holds: u32,
        /// Their token (`None` before the first grant).
        token: Option<Token>,
    },
    /// Granted with `token`; the read is out ([`WorkEffect::Read`]).
    Reading {
        /// The hold's fencing token.
        token: Token,
        /// Holds granted.
        holds: u32,
    },
    /// Leads, as its first `Await` said ([`Usage::awaits`]), and asks `Await` again, without
    /// a timeout, before its hold, as Curator's work loop `while (running) { latch.await();
    /// work(); }` does before each unit of work: a leader's `Await` answers at once. Its
    /// token is the leadership's (`None` once taken back: the user then waits until it
    /// leads again).
    Reawaiting {
        /// The token of the leadership announced.
        token: Option<Token>,
    },
    /// Asked `HasLeadership` at the end of its hold ([`Usage::awaits`]) and waits for the
    /// answer: it writes `write` only if the answer says it still leads.
    Confirming {
        /// The write the hold ends with, as in [`Phase::Holding`].
        write: Option<(Token, u64)>,
        /// Holds granted.
        holds: u32,
    },
    /// Holds until its [`WorkTimer::Hold`] timer fires (or a revocation request comes).
    Holding {
        /// The write the hold ends with: the token and the value read plus one; `None` for
        /// holds that do not use the resource, or whose read was refused (so that holds
        /// that differ only in a token they will not use are one state).
        write: Option<(Token, u64)>,
        /// Holds granted.
        holds: u32,
    },
    /// Gave a hold back and waits for the answer; `left` more end calls follow (one per
    /// nested hold).
    Ending {
        /// End calls still to make after this one's answer.
        left: u32,
    },
    /// Waits for its [`WorkTimer::Think`] timer.
    Thinking,
    /// Every cycle is over.
    Done,
}

/// One client's workload: `cycles` times ask for a hold, use it, give it back, think.
///
/// # Driving contract
///
/// The workload never sees time, does no I/O and draws nothing: it takes [`WorkInput`]s
/// through [`Workload::handle`] and appends [`WorkEffect`]s, which the executor carries out
/// in order.
///
/// 1. A new workload (and a [`restarted`](Workload::restarted) one) waits for its
///    [`WorkTimer::Start`] timer: the executor starts it ([`Workload::pending_timer`] says
///    which timer is pending at any moment; effects say when it changes).
/// 2. When a pending timer fires, the executor feeds [`WorkInput::Timer`]. A cycle begins on
///    `Start` or `Think` while cycles are left: with revocation on, `MakeRevocable` and
///    `AttemptRevoke` calls come first, then the usage's begin call (an acquire carries the
///    workload's timeout: the recipe sets its own timer and answers `TimedOut`). With no
///    cycle left the workload says [`WorkEffect::Done`]. When `Hold` fires, a holder that
///    read writes the value plus one, then gives the hold back (one end call per nested hold,
///    each after the previous one's answer).
/// 3. Every recipe notice is fed as [`WorkInput::Notice`], in the order the recipe emitted
///    them. While [`Workload::listening`] is false the workload ignores every notice but a
///    revocation request (which it remembers), so an executor may hold notices back then and
///    feed them when it listens again, in order: the simulator does, so that its task wakes
///    only for what it waits for; the model feeds each notice at once. (The two differ only
///    for an answer-like notice — `Failed`, `Released` — that comes during a hold: held back,
///    it is heard as the answer to the end call.)
/// 4. A [`WorkEffect::Read`] is answered with [`WorkInput::ReadDone`] right away, before
///    any later effect is carried out.
///
/// A holder is Curator's `acquire(); try { work } finally { release(); }`: connection states
/// reach a listener, not the thread at work, so a plain holder hears nothing during its hold.
/// When its hold survives LOST (Curator's [`OnLost`](coordination::framework::OnLost) default), it
/// finishes its hold, writes with its token (fenced) and releases, deleting the old node; when
/// the recipe ended the hold at LOST, the release answers `Failed { NotHeld }`, also taken as
/// the answer to the end call.
///
/// The grant of a hold (`Acquired`, `IsLeader`) starts the `Hold` timer and, for holds that
/// use the resource, reads it. A revocable holder asked to release (a
/// `RevocationRequested` before its grant or during its hold) cuts the hold short: the
/// `Hold` timer is cancelled and the hold ends at once. A refused ask (`TimedOut`, `Failed`)
/// goes straight to thinking.
///
/// The state holds no client identity (the owner is [`OWNER`], tokens are global), so
/// relabelling clients leaves it as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Workload {
    /// The calls of the first cycle of a process (a selector starts).
    first: Usage,
    /// The calls of its later cycles (a selector requeues).
    later: Usage,
    /// Whether cycles make the lock revocable and ask the holder to give way.
    revocable: bool,
    /// Acquires per hold (reentrant holds); 1 for calls that are not acquires.
    nested: u32,
    /// The timeout of an acquire, and of an `Await` ([`Usage::awaits`]).
    timeout: Option<Duration>,
    /// Cycles not begun yet (across restarts).
    cycles_left: u32,
    /// Whether this process has begun a cycle.
    begun: bool,
    /// A revocation request came since the last hold ended (or ask was refused).
    asked: bool,
    /// Where the workload is.
    phase: Phase,
}

impl Workload {
    /// The workload of the client on `slot` running a recipe of `family`: `cycles` cycles,
    /// acquires without timeout, one acquire per hold.
    pub fn new(
        family: Family,
        slot: ClientSlot,
        settings: &RecipeSettings,
        cycles: u32,
    ) -> Workload {
        let usage = |cycle| family.usage(OWNER, slot, cycle, None, settings);
        Workload {
            first: usage(0),
            later: usage(1),
            revocable: settings.revocable,
            nested: 1,
            timeout: None,
            cycles_left: cycles,
            begun: false,
            asked: false,
            phase: Phase::Starting,
        }
    }

    /// The same workload whose acquires (and `Await`s) give up after `timeout` (`None`: wait
    /// forever).
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Workload {
        self.timeout = timeout;
        for usage in [&mut self.first, &mut self.later] {
            if let Call::Acquire { timeout: t, .. } = &mut usage.begin {
                *t = timeout;
            }
        }
        self
    }

    /// The same workload acquiring `nested` times per hold (reentrantly) and releasing as
    /// many times; calls that are not acquires are made once whatever `nested` says. A recipe
    /// that is not reentrant (`semaphore-mutex`) waits for its own release then, as Curator's
    /// does: only a timeout ends that wait.
    pub fn with_nested(mut self, nested: u32) -> Workload {
        self.nested = nested.max(1);
        self
    }

    /// The workload of the same client after its process restarted: a fresh start with the
    /// cycles that were not begun.
    pub fn restarted(&self) -> Workload {
        Workload {
            begun: false,
            asked: false,
            phase: Phase::Starting,
            ..*self
        }
    }

    /// Where the workload is.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Cycles not begun yet.
    pub fn cycles_left(&self) -> u32 {
        self.cycles_left
    }

    /// The timer the workload waits for, if any.
    pub fn pending_timer(&self) -> Option<WorkTimer> {
        match self.phase {
            Phase::Starting => Some(WorkTimer::Start),
            Phase::Holding { .. } => Some(WorkTimer::Hold),
            Phase::Thinking => Some(WorkTimer::Think),
            Phase::Acquiring { .. }
            | Phase::Reawaiting { .. }
            | Phase::Reading { .. }
            | Phase::Confirming { .. }
            | Phase::Ending { .. } => None,
            Phase::Done => None,
        }
    }

    /// Whether a notice can change what the workload does next, other than by a revocation
    /// request: while it asks for a hold or gives one back, and while a revocable workload
    /// holds.
    pub fn listening(&self) -> bool {
        match self.phase {
            Phase::Acquiring { .. }
            | Phase::Reawaiting { .. }
            | Phase::Confirming { .. }
            | Phase::Ending { .. } => true,
            Phase::Holding { .. } => self.revocable,
            _ => false,
        }
    }

    /// Whether the workload uses the resource in its holds.
    pub fn writes(&self) -> bool {
        self.first.writes
    }

    /// Handles one input, appending the effects to `out` in the order they must be carried
    /// out.
    pub fn handle(&mut self, input: WorkInput, out: &mut Vec<WorkEffect>) {
        match input {
            WorkInput::Timer(timer) if self.pending_timer() == Some(timer) => match timer {
                WorkTimer::Start | WorkTimer::Think => self.next_cycle(out),
                WorkTimer::Hold => self.end_hold(out),
            },
            WorkInput::Timer(_) => {}
            WorkInput::Notice(notice) => self.notice(notice, out),
            WorkInput::ReadDone(value) => {
                if let Phase::Reading { token, holds } = self.phase {
                    self.phase = Phase::Holding {
                        write: value.map(|value| (token, value + 1)),
                        holds,
                    };
                    if self.asked {
                        out.push(WorkEffect::CancelTimer(WorkTimer::Hold));
                        self.end_hold(out);
                    }
                }
            }
        }
    }

    /// The usage of the cycle under way (or about to begin).
    fn usage(&self) -> Usage {
        if self.begun { self.later } else { self.first }
    }

    /// Acquires per hold for `usage`'s begin call.
    fn nested_for(&self, usage: Usage) -> u32 {
        if matches!(usage.begin, Call::Acquire { .. }) {
            self.nested
        } else {
            1
        }
    }

    fn next_cycle(&mut self, out: &mut Vec<WorkEffect>) {
        if self.cycles_left == 0 {
            self.phase = Phase::Done;
            out.push(WorkEffect::Done);
            return;
        }
        let usage = self.usage();
        self.cycles_left -= 1;
        self.begun = true;
        if self.revocable {
            // Curator's testRevoking: revocable, and the holder is asked to give way.
            out.push(WorkEffect::Call(Call::MakeRevocable { owner: OWNER }));
            out.push(WorkEffect::Call(Call::AttemptRevoke { owner: OWNER }));
        }
        self.phase = Phase::Acquiring {
            holds: 0,
            token: None,
        };
        out.push(WorkEffect::Call(usage.begin));
        if usage.awaits {
            out.push(WorkEffect::Call(Call::Await {
                owner: OWNER,
                timeout: self.timeout,
            }));
        }
    }

    fn notice(&mut self, notice: Notice, out: &mut Vec<WorkEffect>) {
        let requested = matches!(notice, Notice::RevocationRequested { .. });
        match self.phase {
            Phase::Acquiring { token, .. } if self.usage().awaits => {
                self.awaiting(notice, token, false, out)
            }
            Phase::Reawaiting { token } => self.awaiting(notice, token, true, out),
            Phase::Acquiring { holds, token } => {
                if let Some(token) = notice.granted() {
                    self.granted(token, holds + 1, out);
                } else if notice.refused() {
                    match token {
                        // A nested acquire refused: the holds granted are used as they are.
                        Some(token) => self.granted_all(token, holds, out),
                        None => {
                            self.asked = false;
                            self.think(out);
                        }
                    }
                } else if requested && self.revocable {
                    self.asked = true;
                }
            }
            Phase::Holding { .. } if requested && self.revocable => {
                out.push(WorkEffect::CancelTimer(WorkTimer::Hold));
                self.end_hold(out);
            }
            Phase::Confirming { write, holds } => {
                if let Notice::Leadership { leader, .. } = notice {
                    self.give_back(write.filter(|_| leader), holds, out);
                }
            }
            Phase::Ending { left } => match notice {
                Notice::Released { remaining, .. } if remaining > 0 && left > 0 => {
                    self.phase = Phase::Ending { left: left - 1 };
                    out.push(WorkEffect::Call(self.usage().end));
                }
                _ if notice.answers_end() => self.think(out),
                _ => {}
            },
            Phase::Starting | Phase::Thinking if requested && self.revocable => self.asked = true,
            _ => {}
        }
    }

    /// A latch user waiting in `Await` ([`Usage::awaits`]), with the token of the leadership
    /// the recipe announced (`IsLeader`, taken back by `NotLeader`): the first `Await`'s
    /// `true` makes it ask again (`again`: [`Phase::Reawaiting`]), whose `true` begins the
    /// hold with that token (a `true` without a leadership announced is not believed: the
    /// user waits on); a `false` (the first one's timeout) closes the latch, as a refused
    /// acquire thinks.
    fn awaiting(
        &mut self,
        notice: Notice,
        token: Option<Token>,
        again: bool,
        out: &mut Vec<WorkEffect>,
    ) {
        let waiting = |token| match again {
            true => Phase::Reawaiting { token },
            false => Phase::Acquiring { holds: 0, token },
        };
        match notice {
            Notice::IsLeader { token, .. } => self.phase = waiting(Some(token)),
            Notice::NotLeader { .. } => self.phase = waiting(None),
            Notice::Awaited { leader: true, .. } => match token {
                Some(token) if again => self.granted_all(token, 1, out),
                Some(token) => {
                    self.phase = Phase::Reawaiting { token: Some(token) };
                    out.push(WorkEffect::Call(Call::Await {
                        owner: OWNER,
                        timeout: None,
                    }));
                }
                None => {}
            },
            Notice::Awaited { leader: false, .. } => {
                self.phase = Phase::Ending { left: 0 };
                out.push(WorkEffect::Call(self.usage().end));
            }
            _ if notice.refused() => self.think(out),
            _ => {}
        }
    }

    /// A grant of the `holds`-th hold in this cycle: ask again while fewer than `nested`,
    /// else begin the hold.
    fn granted(&mut self, token: Token, holds: u32, out: &mut Vec<WorkEffect>) {
        let usage = self.usage();
        if holds < self.nested_for(usage) {
            self.phase = Phase::Acquiring {
                holds,
                token: Some(token),
            };
            out.push(WorkEffect::Call(usage.begin));
        } else {
            self.granted_all(token, holds, out);
        }
    }

    /// The hold begins with `holds` holds: the hold timer starts and a holder that uses the
    /// resource reads it; one asked to give way already ends at once.
    fn granted_all(&mut self, token: Token, holds: u32, out: &mut Vec<WorkEffect>) {
        out.push(WorkEffect::SetTimer(WorkTimer::Hold));
        if self.usage().writes {
            self.phase = Phase::Reading { token, holds };
            out.push(WorkEffect::Read {
                owner: OWNER,
                token,
            });
            return;
        }
        self.phase = Phase::Holding { write: None, holds };
        if self.asked {
            out.push(WorkEffect::CancelTimer(WorkTimer::Hold));
            self.end_hold(out);
        }
    }

    /// The hold is over: a latch user that awaits asks whether it still leads first;
    /// otherwise [`give_back`](Self::give_back).
    fn end_hold(&mut self, out: &mut Vec<WorkEffect>) {
        let Phase::Holding { write, holds } = self.phase else {
            return;
        };
        if self.usage().awaits {
            self.phase = Phase::Confirming { write, holds };
            out.push(WorkEffect::Call(Call::HasLeadership { owner: OWNER }));
            return;
        }
        self.give_back(write, holds, out);
    }

    /// Writes back what was read plus one (`write`), then gives the first hold back.
    fn give_back(&mut self, write: Option<(Token, u64)>, holds: u32, out: &mut Vec<WorkEffect>) {
        if let Some((token, value)) = write {
            out.push(WorkEffect::Write {
                owner: OWNER,
                token,
                value,
            });
        }
        self.asked = false;
        self.phase = Phase::Ending { left: holds - 1 };
        out.push(WorkEffect::Call(self.usage().end));
    }

    fn think(&mut self, out: &mut Vec<WorkEffect>) {
        self.phase = Phase::Thinking;
        out.push(WorkEffect::SetTimer(WorkTimer::Think));
    }
}

impl Relabel for Workload {
    /// A workload holds no client identity.
    fn relabel(&self, _: &ClientMap) -> Self {
        *self
    }
}

#[cfg(test)]
mod tests {
    use coordination::recipes::{FailReason, Mode};

    use super::*;

    const TOKEN: Token = Token(7);

    fn mutex(cycles: u32) -> Workload {
        Workload::new(
            Family::Lock,
            ClientSlot(0),
            &RecipeSettings::default(),
            cycles,
        )
    }

    fn revocable_mutex(cycles: u32) -> Workload {
        let settings = RecipeSettings {
            revocable: true,
            ..RecipeSettings::default()
        };
        Workload::new(Family::Lock, ClientSlot(0), &settings, cycles)
    }

    /// Feeds `input` and returns the effects.
    fn feed(workload: &mut Workload, input: WorkInput) -> Vec<WorkEffect> {
        let mut out = Vec::new();
        workload.handle(input, &mut out);
        out
    }

    fn fire(workload: &mut Workload, timer: WorkTimer) -> Vec<WorkEffect> {
        feed(workload, WorkInput::Timer(timer))
    }

    fn hear(workload: &mut Workload, notice: Notice) -> Vec<WorkEffect> {
        feed(workload, WorkInput::Notice(notice))
    }

    fn acquired(mode: Mode) -> Notice {
        Notice::Acquired {
            owner: OWNER,
            token: TOKEN,
            mode,
        }
    }

    fn released(remaining: u32, mode: Mode) -> Notice {
        Notice::Released {
            owner: OWNER,
            remaining,
            mode,
        }
    }

    fn call(call: Call) -> WorkEffect {
        WorkEffect::Call(call)
    }

    #[test]
    fn a_plain_cycle_reads_holds_writes_releases_and_thinks() {
        let mut w = mutex(1);
        assert_eq!(w.pending_timer(), Some(WorkTimer::Start));
        assert!(!w.listening());
        let acquire = Call::acquire(OWNER, None);
        assert_eq!(fire(&mut w, WorkTimer::Start), [call(acquire)]);
        assert!(w.listening());
        let read = WorkEffect::Read {
            owner: OWNER,
            token: TOKEN,
        };
        let grant = hear(&mut w, acquired(Mode::Exclusive));
        assert_eq!(grant, [WorkEffect::SetTimer(WorkTimer::Hold), read]);
        assert!(feed(&mut w, WorkInput::ReadDone(Some(4))).is_empty());
        assert_eq!(w.pending_timer(), Some(WorkTimer::Hold));
        assert!(!w.listening(), "a plain holder ignores notices");
        let write = WorkEffect::Write {
            owner: OWNER,
            token: TOKEN,
            value: 5,
        };
        let end = fire(&mut w, WorkTimer::Hold);
        assert_eq!(end, [write, call(Call::release(OWNER))]);
        // Other notices while it waits for the answer change nothing.
        assert!(hear(&mut w, Notice::Suspended { owner: OWNER }).is_empty());
        let answer = hear(&mut w, released(0, Mode::Exclusive));
        assert_eq!(answer, [WorkEffect::SetTimer(WorkTimer::Think)]);
        assert_eq!(fire(&mut w, WorkTimer::Think), [WorkEffect::Done]);
        assert_eq!(w.phase(), Phase::Done);
        assert_eq!(w.pending_timer(), None);
    }

    #[test]
    fn a_refused_read_skips_the_write() {
        let mut w = mutex(1);
        fire(&mut w, WorkTimer::Start);
        hear(&mut w, acquired(Mode::Exclusive));
        feed(&mut w, WorkInput::ReadDone(None));
        let end = fire(&mut w, WorkTimer::Hold);
        assert_eq!(end, [call(Call::release(OWNER))]);
    }

    #[test]
    fn a_reader_holds_without_touching_the_resource() {
        let settings = RecipeSettings::default();
        let mut w = Workload::new(Family::ReadWrite, ClientSlot(1), &settings, 1);
        assert!(!w.writes());
        let begin = fire(&mut w, WorkTimer::Start);
        assert!(matches!(
            begin[..],
            [WorkEffect::Call(Call::Acquire {
                mode: Mode::Read,
                ..
            })]
        ));
        let grant = hear(&mut w, acquired(Mode::Read));
        assert_eq!(grant, [WorkEffect::SetTimer(WorkTimer::Hold)]);
        let end = fire(&mut w, WorkTimer::Hold);
        assert!(matches!(
            end[..],
            [WorkEffect::Call(Call::Release {
                mode: Mode::Read,
                ..
            })]
        ));
    }

    #[test]
    fn a_timed_out_acquire_carries_its_timeout_and_goes_to_thinking() {
        let timeout = Some(Duration::from_millis(300));
        let mut w = mutex(2).with_timeout(timeout);
        let begin = fire(&mut w, WorkTimer::Start);
        assert_eq!(begin, [call(Call::acquire(OWNER, timeout))]);
        let answer = hear(&mut w, Notice::TimedOut { owner: OWNER });
        assert_eq!(answer, [WorkEffect::SetTimer(WorkTimer::Think)]);
        assert_eq!(w.cycles_left(), 1);
        // The next cycle asks again; a failed ask is refused the same way.
        assert_eq!(fire(&mut w, WorkTimer::Think), begin);
        let failed = Notice::Failed {
            owner: OWNER,
            reason: FailReason::SessionLost,
        };
        assert_eq!(
            hear(&mut w, failed),
            [WorkEffect::SetTimer(WorkTimer::Think)]
        );
        assert_eq!(fire(&mut w, WorkTimer::Think), [WorkEffect::Done]);
    }

    #[test]
    fn a_revocable_cycle_asks_the_holder_first_and_is_cut_short_during_its_hold() {
        let mut w = revocable_mutex(1);
        let begin = fire(&mut w, WorkTimer::Start);
        assert_eq!(
            begin,
            [
                call(Call::MakeRevocable { owner: OWNER }),
                call(Call::AttemptRevoke { owner: OWNER }),
                call(Call::acquire(OWNER, None)),
            ]
        );
        hear(&mut w, acquired(Mode::Exclusive));
        feed(&mut w, WorkInput::ReadDone(Some(0)));
        assert!(w.listening(), "a revocable holder listens");
        let request = Notice::RevocationRequested { owner: OWNER };
        let end = hear(&mut w, request);
        assert_eq!(
            end,
            [
                WorkEffect::CancelTimer(WorkTimer::Hold),
                WorkEffect::Write {
                    owner: OWNER,
                    token: TOKEN,
                    value: 1
                },
                call(Call::release(OWNER)),
            ]
        );
    }

    #[test]
    fn a_request_before_the_grant_ends_the_hold_once_read() {
        let mut w = revocable_mutex(2);
        fire(&mut w, WorkTimer::Start);
        let request = Notice::RevocationRequested { owner: OWNER };
        assert!(hear(&mut w, request).is_empty());
        let grant = hear(&mut w, acquired(Mode::Exclusive));
        assert_eq!(grant[0], WorkEffect::SetTimer(WorkTimer::Hold));
        let end = feed(&mut w, WorkInput::ReadDone(Some(2)));
        assert_eq!(end[0], WorkEffect::CancelTimer(WorkTimer::Hold));
        assert_eq!(end[2], call(Call::release(OWNER)));
        // The request was answered: the next hold runs its course.
        hear(&mut w, released(0, Mode::Exclusive));
        fire(&mut w, WorkTimer::Think);
        hear(&mut w, acquired(Mode::Exclusive));
        assert!(feed(&mut w, WorkInput::ReadDone(Some(3))).is_empty());
        assert_eq!(w.pending_timer(), Some(WorkTimer::Hold));
    }

    #[test]
    fn requests_to_a_workload_that_is_not_revocable_change_nothing() {
        let mut w = mutex(1);
        fire(&mut w, WorkTimer::Start);
        let request = Notice::RevocationRequested { owner: OWNER };
        hear(&mut w, request);
        hear(&mut w, acquired(Mode::Exclusive));
        feed(&mut w, WorkInput::ReadDone(Some(0)));
        assert!(hear(&mut w, request).is_empty());
        assert_eq!(w.pending_timer(), Some(WorkTimer::Hold));
    }

    #[test]
    fn reentrant_holds_acquire_and_release_as_many_times() {
        let mut w = mutex(1).with_nested(3);
        let acquire = call(Call::acquire(OWNER, None));
        assert_eq!(fire(&mut w, WorkTimer::Start), [acquire]);
        assert_eq!(hear(&mut w, acquired(Mode::Exclusive)), [acquire]);
        assert_eq!(hear(&mut w, acquired(Mode::Exclusive)), [acquire]);
        let grant = hear(&mut w, acquired(Mode::Exclusive));
        assert_eq!(grant[0], WorkEffect::SetTimer(WorkTimer::Hold));
        feed(&mut w, WorkInput::ReadDone(Some(0)));
        let release = call(Call::release(OWNER));
        assert_eq!(fire(&mut w, WorkTimer::Hold)[1], release);
        assert_eq!(hear(&mut w, released(2, Mode::Exclusive)), [release]);
        assert_eq!(hear(&mut w, released(1, Mode::Exclusive)), [release]);
        let last = hear(&mut w, released(0, Mode::Exclusive));
        assert_eq!(last, [WorkEffect::SetTimer(WorkTimer::Think)]);
    }

    #[test]
    fn a_refused_nested_acquire_uses_the_holds_it_has() {
        let mut w = mutex(1).with_nested(2);
        fire(&mut w, WorkTimer::Start);
        hear(&mut w, acquired(Mode::Exclusive));
        let refused = hear(&mut w, Notice::TimedOut { owner: OWNER });
        assert_eq!(refused[0], WorkEffect::SetTimer(WorkTimer::Hold));
        feed(&mut w, WorkInput::ReadDone(Some(0)));
        fire(&mut w, WorkTimer::Hold);
        let answer = hear(&mut w, released(0, Mode::Exclusive));
        assert_eq!(answer, [WorkEffect::SetTimer(WorkTimer::Think)]);
    }

    #[test]
    fn elections_are_not_nested_and_a_selector_requeues_after_its_first_cycle() {
        let settings = RecipeSettings::default();
        let mut w = Workload::new(Family::Selector, ClientSlot(0), &settings, 2).with_nested(3);
        let owner = OWNER;
        assert_eq!(
            fire(&mut w, WorkTimer::Start),
            [call(Call::Start { owner })]
        );
        let leads = Notice::IsLeader {
            owner,
            token: TOKEN,
        };
        hear(&mut w, leads);
        feed(&mut w, WorkInput::ReadDone(Some(0)));
        let end = fire(&mut w, WorkTimer::Hold);
        assert_eq!(end[1], call(Call::Relinquish { owner }));
        hear(&mut w, released(0, Mode::Exclusive));
        assert_eq!(
            fire(&mut w, WorkTimer::Think),
            [call(Call::Requeue { owner })]
        );
    }

    #[test]
    fn a_restarted_workload_starts_afresh_with_the_cycles_it_had_left() {
        let settings = RecipeSettings::default();
        let mut w = Workload::new(Family::Selector, ClientSlot(0), &settings, 3);
        fire(&mut w, WorkTimer::Start);
        let restarted = w.restarted();
        assert_eq!(restarted.cycles_left(), 2);
        assert_eq!(restarted.pending_timer(), Some(WorkTimer::Start));
        let mut fresh = Workload::new(Family::Selector, ClientSlot(0), &settings, 2);
        assert_eq!(restarted, fresh);
        // A new process starts its election again.
        assert!(matches!(
            fire(&mut fresh, WorkTimer::Start)[..],
            [WorkEffect::Call(Call::Start { .. })]
        ));
    }

    fn awaiting_latch() -> Workload {
        let settings = RecipeSettings {
            awaits: true,
            ..RecipeSettings::default()
        };
        Workload::new(Family::Latch, ClientSlot(0), &settings, 2)
            .with_timeout(Some(Duration::from_millis(700)))
    }

    fn awaited(leader: bool) -> Notice {
        Notice::Awaited {
            owner: OWNER,
            leader,
        }
    }

    fn is_leader() -> Notice {
        Notice::IsLeader {
            owner: OWNER,
            token: TOKEN,
        }
    }

    #[test]
    fn an_awaiting_latch_user_leads_at_await_true_after_is_leader_and_confirms_before_writing() {
        let mut w = awaiting_latch();
        let timeout = Some(Duration::from_millis(700));
        assert_eq!(
            fire(&mut w, WorkTimer::Start),
            [
                call(Call::Start { owner: OWNER }),
                call(Call::Await {
                    owner: OWNER,
                    timeout
                }),
            ]
        );
        // IsLeader alone is not the grant: the user waits in `await`.
        assert!(hear(&mut w, is_leader()).is_empty());
        assert!(w.listening());
        // Its `true` sends the work loop's `await()`, which a leader answers at once.
        let again = call(Call::Await {
            owner: OWNER,
            timeout: None,
        });
        assert_eq!(hear(&mut w, awaited(true)), [again]);
        assert!(w.listening());
        let grant = hear(&mut w, awaited(true));
        assert_eq!(grant[0], WorkEffect::SetTimer(WorkTimer::Hold));
        feed(&mut w, WorkInput::ReadDone(Some(4)));
        let confirm = fire(&mut w, WorkTimer::Hold);
        assert_eq!(confirm, [call(Call::HasLeadership { owner: OWNER })]);
        assert!(w.listening(), "it waits for the answer");
        let end = hear(
            &mut w,
            Notice::Leadership {
                owner: OWNER,
                leader: true,
            },
        );
        let close = call(Call::Close {
            owner: OWNER,
            notify: false,
        });
        let write = WorkEffect::Write {
            owner: OWNER,
            token: TOKEN,
            value: 5,
        };
        assert_eq!(end, [write, close]);
    }

    #[test]
    fn an_awaiting_latch_user_ignores_a_true_it_was_not_told_of_and_writes_nothing_unled() {
        let mut w = awaiting_latch();
        fire(&mut w, WorkTimer::Start);
        // `true` before any IsLeader (or after a NotLeader) is not believed.
        assert!(hear(&mut w, awaited(true)).is_empty());
        hear(&mut w, is_leader());
        hear(&mut w, Notice::NotLeader { owner: OWNER });
        assert!(hear(&mut w, awaited(true)).is_empty());
        assert!(matches!(w.phase(), Phase::Acquiring { token: None, .. }));
        hear(&mut w, is_leader());
        hear(&mut w, awaited(true));
        // Leadership taken back before the work loop's `await()` answers: no hold until it
        // leads again.
        hear(&mut w, Notice::NotLeader { owner: OWNER });
        assert!(hear(&mut w, awaited(true)).is_empty());
        assert!(matches!(w.phase(), Phase::Reawaiting { token: None }));
        hear(&mut w, is_leader());
        hear(&mut w, awaited(true));
        feed(&mut w, WorkInput::ReadDone(Some(0)));
        fire(&mut w, WorkTimer::Hold);
        let unled = Notice::Leadership {
            owner: OWNER,
            leader: false,
        };
        let close = call(Call::Close {
            owner: OWNER,
            notify: false,
        });
        assert_eq!(hear(&mut w, unled), [close], "no write without leadership");
    }

    #[test]
    fn an_await_that_times_out_closes_the_latch_and_the_user_thinks() {
        let mut w = awaiting_latch();
        fire(&mut w, WorkTimer::Start);
        let close = call(Call::Close {
            owner: OWNER,
            notify: false,
        });
        assert_eq!(hear(&mut w, awaited(false)), [close]);
        let closed = Notice::Closed { owner: OWNER };
        assert_eq!(
            hear(&mut w, closed),
            [WorkEffect::SetTimer(WorkTimer::Think)]
        );
    }

    #[test]
    fn a_timer_that_is_not_pending_is_ignored() {
        let mut w = mutex(1);
        assert!(fire(&mut w, WorkTimer::Hold).is_empty());
        assert!(fire(&mut w, WorkTimer::Think).is_empty());
        assert_eq!(w.phase(), Phase::Starting);
    }
}
