//! [`Lock`]: what every lock recipe does with its inputs, and the one [`Recipe::handle`] that
//! routes them.

use std::convert::Infallible;
use std::fmt::Debug;
use std::hash::Hash;
use std::time::Duration;

use super::kit::refuse;
use super::{Call, Mode, Notice};
use crate::ids::Owner;
use crate::recipe::{Ctx, Input, Recipe};

/// What reaches a lock besides its user's calls: replies, watches, session changes, timers.
pub type Event = Input<Infallible>;

/// The context a recipe in the shared vocabulary acts through.
pub type Cx<'a> = Ctx<'a, Notice>;

/// A lock recipe in the shared vocabulary ([`Call`], [`Notice`]): the modes it serves, what
/// acquiring and releasing do, and what it does with every other input. Implementing it
/// implements [`Recipe`]: an `Acquire` or `Release` in a mode the lock [`serves`](Lock::serves)
/// goes to [`Lock::acquire`] or [`Lock::release`], any other call to [`Lock::other_call`], and
/// everything else to [`Lock::react`].
pub trait Lock: Clone + Eq + Ord + Hash + Debug + Send + Sync {
    /// Whether the lock serves `Acquire` and `Release` in `mode` (the mutexes: exclusive only).
    fn serves(&self, mode: Mode) -> bool {
        mode == Mode::Exclusive
    }

    /// `owner` asks for a hold in `mode` (one the lock serves), waiting at most `timeout`.
    fn acquire(&mut self, owner: Owner, timeout: Option<Duration>, mode: Mode, cx: &mut Cx<'_>);

    /// `owner` gives back one hold in `mode` (one the lock serves).
    fn release(&mut self, owner: Owner, mode: Mode, cx: &mut Cx<'_>);

    /// Any other call: refused (`Failed` with
    /// [`FailReason::Unsupported`](super::FailReason::Unsupported)) unless the lock serves
    /// it, as the mutex serves revocation.
    fn other_call(&mut self, call: Call, cx: &mut Cx<'_>) {
        refuse(call, cx)
    }

    /// A reply, watch, session change or timer.
    fn react(&mut self, event: Event, cx: &mut Cx<'_>);
}

impl<L: Lock> Recipe for L {
    type Call = Call;
    type Notice = Notice;

    fn handle(&mut self, input: Input<Call>, cx: &mut Cx<'_>) {
        match input.into_call() {
            Ok(Call::Acquire {
                owner,
                timeout,
                mode,
            }) if self.serves(mode) => self.acquire(owner, timeout, mode, cx),
            Ok(Call::Release { owner, mode }) if self.serves(mode) => self.release(owner, mode, cx),
            Ok(other) => self.other_call(other, cx),
            Err(event) => self.react(event, cx),
        }
    }
}
