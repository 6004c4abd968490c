//! The one vocabulary every recipe speaks: user calls in, notices out. One pair of types for
//! locks, semaphores and elections keeps the driver, the trace, the checkers, the reports, the
//! simulator's workload and the model generic; a recipe answers a call it does not serve with
//! `Failed { reason: Unsupported }`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::fencing::Token;
use crate::ids::Owner;
use crate::zk::ZkError;

/// What kind of hold an acquire asks for, or a notice is about.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The lock alone (mutexes, multi-locks).
    #[default]
    Exclusive,
    /// The read side of a read-write lock: shared with other readers.
    Read,
    /// The write side of a read-write lock: excludes everyone else.
    Write,
    /// One lease of a counting semaphore.
    Lease,
}

impl Mode {
    /// True for the default mode, which traces leave out.
    pub fn is_exclusive(&self) -> bool {
        *self == Mode::Exclusive
    }
}

/// A user call on a recipe (Curator's method calls).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum Call {
    /// Acquire a hold of `mode` for `owner`, giving up after `timeout` if one is given. Again
    /// while `owner` holds: `Mutex` and `NaiveHerdMutex` are reentrant per owner (one more
    /// hold at once); `SemaphoreMutex` is not (the acquire waits for the owner's own release);
    /// `ReadWriteLock` is reentrant per owner and side, grants a write holder's read at once
    /// (a downgrade) and fails a reader's write with `UpgradeWouldDeadlock`.
    Acquire {
        /// Who acquires.
        owner: Owner,
        /// How long to wait at most.
        timeout: Option<Duration>,
        /// What kind of hold.
        #[serde(default, skip_serializing_if = "Mode::is_exclusive")]
        mode: Mode,
    },
    /// Release one hold of `mode` of `owner`.
    Release {
        /// Who releases.
        owner: Owner,
        /// Which kind of hold.
        #[serde(default, skip_serializing_if = "Mode::is_exclusive")]
        mode: Mode,
    },
    /// Join an election (`LeaderLatch.start`, `LeaderSelector.start`).
    Start {
        /// The participant.
        owner: Owner,
    },
    /// Leave an election (`close`); with `notify`, a leader hears `NotLeader` (LeaderLatch's
    /// `CloseMode.NOTIFY_LEADER`).
    Close {
        /// The participant.
        owner: Owner,
        /// Tell a leader it is not leader any more.
        #[serde(default)]
        notify: bool,
    },
    /// Wait to become leader, at most `timeout` (`LeaderLatch.await`); answered by `Awaited`.
    Await {
        /// The participant.
        owner: Owner,
        /// How long to wait at most.
        timeout: Option<Duration>,
    },
    /// Ask whether the participant leads now (`hasLeadership`); answered by `Leadership`.
    HasLeadership {
        /// The participant.
        owner: Owner,
    },
    /// The leader is done leading (`takeLeadership` returned).
    Relinquish {
        /// The leader.
        owner: Owner,
    },
    /// Queue again for leadership (`LeaderSelector.requeue`).
    Requeue {
        /// The participant.
        owner: Owner,
    },
    /// Cancel the current leadership (`LeaderSelector.interruptLeadership`).
    Interrupt {
        /// The participant.
        owner: Owner,
    },
    /// Let other clients ask `owner` to release its hold (`makeRevocable`).
    MakeRevocable {
        /// The holder.
        owner: Owner,
    },
    /// Ask the lock's current holder to release (`Revoker.attemptRevoke`).
    AttemptRevoke {
        /// Who asks.
        owner: Owner,
    },
}

impl Call {
    /// The owner the call is for.
    pub fn owner(&self) -> Owner {
        match *self {
            Call::Acquire { owner, .. }
            | Call::Release { owner, .. }
            | Call::Start { owner }
            | Call::Close { owner, .. }
            | Call::Await { owner, .. }
            | Call::HasLeadership { owner }
            | Call::Relinquish { owner }
            | Call::Requeue { owner }
            | Call::Interrupt { owner }
            | Call::MakeRevocable { owner }
            | Call::AttemptRevoke { owner } => owner,
        }
    }

    /// The call's name as traces spell it (`acquire`, `start`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Call::Acquire { .. } => "acquire",
            Call::Release { .. } => "release",
            Call::Start { .. } => "start",
            Call::Close { .. } => "close",
            Call::Await { .. } => "await",
            Call::HasLeadership { .. } => "has_leadership",
            Call::Relinquish { .. } => "relinquish",
            Call::Requeue { .. } => "requeue",
            Call::Interrupt { .. } => "interrupt",
            Call::MakeRevocable { .. } => "make_revocable",
            Call::AttemptRevoke { .. } => "attempt_revoke",
        }
    }

    /// An exclusive acquire.
    pub fn acquire(owner: Owner, timeout: Option<Duration>) -> Call {
        Call::Acquire {
            owner,
            timeout,
            mode: Mode::Exclusive,
        }
    }

    /// An exclusive release.
    pub fn release(owner: Owner) -> Call {
        Call::Release {
            owner,
            mode: Mode::Exclusive,
        }
    }
}

/// Why a call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "reason", content = "error", rename_all = "snake_case")]
pub enum FailReason {
    /// The owner is already waiting for this lock.
    AlreadyAcquiring,
    /// Release by an owner that does not hold the lock.
    NotHeld,
    /// The session was lost while waiting; the waiter's node is deleted.
    SessionLost,
    /// The waiter's own node disappeared (its session expired on the server).
    NodeVanished,
    /// The server refused a request.
    Zk(ZkError),
    /// The recipe does not serve this call (or this mode).
    Unsupported,
    /// A write acquire by an owner that holds the read lock (and not the write lock): its
    /// read hold sits ahead of any write node it could create, so it would wait for itself
    /// forever (a read-write lock cannot be upgraded).
    UpgradeWouldDeadlock,
    /// `Start` by a participant that has started already (Curator's IllegalStateException,
    /// "Cannot be started more than once").
    AlreadyStarted,
    /// A participant call by an owner that has not started, or has closed (Curator's
    /// IllegalStateException, "close() has already been called").
    NotStarted,
    /// The client library failed the call with an error that carries no ZooKeeper error code
    /// (zookeeper-client's connect `Timeout`, `ClientClosed`, `NoHosts`): only a program on a
    /// client library reports it (`splitbrain-programs`).
    Library,
}

/// What a recipe tells its user. `Suspended`, `Reconnected` and `Lost` go to the owners that
/// hold a lock at that moment; elections say `IsLeader` and `NotLeader` instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "notice", rename_all = "snake_case")]
pub enum Notice {
    /// `owner` holds a `mode` hold; `token` fences its accesses.
    Acquired {
        /// Who holds.
        owner: Owner,
        /// The fencing token (the lock node's czxid).
        token: Token,
        /// What kind of hold.
        #[serde(default, skip_serializing_if = "Mode::is_exclusive")]
        mode: Mode,
    },
    /// One hold of `owner` was released; with `remaining == 0` none of that mode is left.
    Released {
        /// Who released.
        owner: Owner,
        /// Reentrant holds left.
        remaining: u32,
        /// What kind of hold.
        #[serde(default, skip_serializing_if = "Mode::is_exclusive")]
        mode: Mode,
    },
    /// The acquire (or await) gave up after its timeout; the waiter's node is deleted.
    TimedOut {
        /// Who waited.
        owner: Owner,
    },
    /// A call failed.
    Failed {
        /// Whose call failed.
        owner: Owner,
        /// Why.
        reason: FailReason,
    },
    /// The connection dropped: the lock is no longer safely held.
    Suspended {
        /// The holder.
        owner: Owner,
    },
    /// Reconnected with the same session: the lock is held again, with the same token.
    Reconnected {
        /// The holder.
        owner: Owner,
    },
    /// The session is gone: the lock is not held any more (the node is deleted).
    Lost {
        /// The former holder.
        owner: Owner,
    },
    /// `owner` leads now; `token` (its election node's czxid) fences its accesses.
    IsLeader {
        /// The leader.
        owner: Owner,
        /// The fencing token.
        token: Token,
    },
    /// `owner` does not lead any more (or the leadership was cancelled: stop now).
    NotLeader {
        /// The former leader.
        owner: Owner,
    },
    /// The answer to `Await`: whether `owner` leads.
    Awaited {
        /// The participant.
        owner: Owner,
        /// True when it leads.
        leader: bool,
    },
    /// The answer to `HasLeadership`.
    Leadership {
        /// The participant.
        owner: Owner,
        /// True when it leads.
        leader: bool,
    },
    /// The participant has left the election; its node is deleted (guaranteed).
    Closed {
        /// The participant.
        owner: Owner,
    },
    /// Another client asked the holder to release (`RevocationListener.revocationRequested`).
    RevocationRequested {
        /// The holder asked.
        owner: Owner,
    },
    /// The answer to `AttemptRevoke`: whether a holder was found and asked.
    RevokeAttempted {
        /// Who asked.
        owner: Owner,
        /// True when a holder's node was marked.
        delivered: bool,
    },
}

impl Notice {
    /// The owner the notice is for.
    pub fn owner(&self) -> Owner {
        match *self {
            Notice::Acquired { owner, .. }
            | Notice::Released { owner, .. }
            | Notice::TimedOut { owner }
            | Notice::Failed { owner, .. }
            | Notice::Suspended { owner }
            | Notice::Reconnected { owner }
            | Notice::Lost { owner }
            | Notice::IsLeader { owner, .. }
            | Notice::NotLeader { owner }
            | Notice::Awaited { owner, .. }
            | Notice::Leadership { owner, .. }
            | Notice::Closed { owner }
            | Notice::RevocationRequested { owner }
            | Notice::RevokeAttempted { owner, .. } => owner,
        }
    }

    /// The token of a hold this notice grants (`Acquired`, `IsLeader`).
    pub fn granted(&self) -> Option<Token> {
        match *self {
            Notice::Acquired { token, .. } | Notice::IsLeader { token, .. } => Some(token),
            _ => None,
        }
    }

    /// True when the notice ends a wait without a hold (`TimedOut`, `Failed`).
    pub fn refused(&self) -> bool {
        matches!(self, Notice::TimedOut { .. } | Notice::Failed { .. })
    }

    /// True when the notice answers an end call (`Release`, `Relinquish`, `Close`): every end
    /// call gets exactly one of `Released { remaining: 0 }` (the last hold given back; a
    /// reentrant release says how many are left), `Closed` or `Failed`.
    pub fn answers_end(&self) -> bool {
        matches!(
            self,
            Notice::Released { remaining: 0, .. } | Notice::Closed { .. } | Notice::Failed { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_names_are_the_json_tags() {
        let owner = Owner(0);
        let calls = [
            Call::acquire(owner, None),
            Call::release(owner),
            Call::Start { owner },
            Call::Close {
                owner,
                notify: true,
            },
            Call::Await {
                owner,
                timeout: None,
            },
            Call::HasLeadership { owner },
            Call::Relinquish { owner },
            Call::Requeue { owner },
            Call::Interrupt { owner },
            Call::MakeRevocable { owner },
            Call::AttemptRevoke { owner },
        ];
        for call in calls {
            let json = serde_json::to_value(call).unwrap();
            assert_eq!(json["call"], call.name());
        }
    }

    #[test]
    fn exclusive_mode_is_left_out_of_json_and_read_back_as_default() {
        let call = Call::acquire(Owner(1), None);
        let json = serde_json::to_string(&call).unwrap();
        assert_eq!(json, r#"{"call":"acquire","owner":1,"timeout":null}"#);
        assert_eq!(serde_json::from_str::<Call>(&json).unwrap(), call);
        let read = Call::Acquire {
            owner: Owner(1),
            timeout: None,
            mode: Mode::Read,
        };
        let json = serde_json::to_string(&read).unwrap();
        assert!(json.contains(r#""mode":"read""#), "{json}");
        assert_eq!(serde_json::from_str::<Call>(&json).unwrap(), read);
    }
}
