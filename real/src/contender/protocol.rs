//! The contender protocol's messages (book: `reference/contender-protocol.md`): one JSON
//! object a line, [`Command`]s from the executor on the contender's stdin, [`Report`]s from
//! the contender on its stdout, each stamped with the contender's `CLOCK_MONOTONIC`
//! nanoseconds ([`Stamped`]). What a report means to a run is its [`Meaning`].

use coordination::fencing::Token;
use coordination::recipes::{Call, FailReason, Mode, Notice};
use coordination::retry::RetryPolicy;
use coordination::zk::ZkError;
use runtime::workload::OWNER;
use serde::{Deserialize, Serialize};

/// What the executor tells a contender, one a line on its stdin. The end of stdin tells it to
/// close its session and exit with status 0.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Command {
    /// The first line: who the contender is and where it connects. It answers
    /// [`Report::Ready`] once it has a session.
    Hello(Hello),
    /// Take a hold of `mode` (left out: exclusive), giving up after `timeout_ms` when given.
    /// Answered by [`Report::Acquired`], [`Report::TimedOut`] or [`Report::Failed`].
    Acquire {
        /// What kind of hold (`read`, `write` on a read-write lock, `lease` on a semaphore).
        #[serde(default, skip_serializing_if = "Mode::is_exclusive")]
        mode: Mode,
        /// How long to wait at most.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Give the hold of `mode` back. Answered by [`Report::Released`] or [`Report::Failed`].
    Release {
        /// Which kind of hold.
        #[serde(default, skip_serializing_if = "Mode::is_exclusive")]
        mode: Mode,
    },
    /// Join the election; [`Report::IsLeader`] and [`Report::NotLeader`] follow as the library
    /// tells them.
    Start,
    /// Queue again for leadership after a leadership or an attempt ended (a selector's
    /// `requeue`); like [`Command::Start`], nothing answers it.
    Requeue,
    /// End the leadership held (a selector's `takeLeadership` returns). Answered by
    /// [`Report::Released`] or [`Report::Failed`].
    Relinquish,
    /// Leave the election (with `notify`, a leader is told it leads no more). Answered by
    /// [`Report::Closed`] or [`Report::Failed`].
    Close {
        /// Tell a leader it is not leader any more.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        notify: bool,
    },
    /// Wait to lead, at most `timeout_ms` when given. Answered by [`Report::Awaited`].
    Await {
        /// How long to wait at most.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Ask the library whether the contender leads now. Answered by [`Report::Leadership`].
    HasLeadership,
    /// Read the fenced resource with `token`: answered by [`Report::Read`] when the contender
    /// does it (the resource is the executor's; the read takes place when that report arrives).
    Read {
        /// The hold's fencing token.
        token: u64,
    },
    /// Write `value` to the fenced resource with `token`: answered by [`Report::Write`] when
    /// the contender does it.
    Write {
        /// The hold's fencing token.
        token: u64,
        /// The value to write.
        value: u64,
    },
}

impl Command {
    /// The command that makes `call`; `Err` names a call the protocol has no command for.
    pub fn of(call: Call) -> Result<Command, String> {
        let ms = |timeout: Option<std::time::Duration>| {
            timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX))
        };
        Ok(match call {
            Call::Acquire { timeout, mode, .. } => Command::Acquire {
                mode,
                timeout_ms: ms(timeout),
            },
            Call::Release { mode, .. } => Command::Release { mode },
            Call::Start { .. } => Command::Start,
            Call::Requeue { .. } => Command::Requeue,
            Call::Relinquish { .. } => Command::Relinquish,
            Call::Close { notify, .. } => Command::Close { notify },
            Call::Await { timeout, .. } => Command::Await {
                timeout_ms: ms(timeout),
            },
            Call::HasLeadership { .. } => Command::HasLeadership,
            other => {
                return Err(format!(
                    "the contender protocol has no command for `{}`",
                    other.name()
                ));
            }
        })
    }
}

/// Who a contender is and where it connects ([`Command::Hello`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// Its client slot in the run's trace.
    pub client: u16,
    /// The scenario's recipe (`mutex`, `semaphore-mutex`, `leader-latch`, ...): the contender
    /// runs its library's counterpart.
    pub recipe: String,
    /// The ZooKeeper connect string.
    pub connect: String,
    /// The path the recipe works under.
    pub lock_path: String,
    /// How many leases a `semaphore` gives out at once (left out for other recipes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_leases: Option<u32>,
    /// The session timeout to ask for.
    pub session_timeout_ms: u64,
    /// How long a connection attempt may take (Curator's `connectionTimeoutMs`).
    pub connection_timeout_ms: u64,
    /// The retry policy (Curator's): `exponential-backoff:<base-sleep-ms>:<max-retries>`,
    /// `n-times:<sleep-ms>:<n>` or `forever:<sleep-ms>`.
    pub retry: String,
}

/// `policy` as [`Hello::retry`] spells it.
pub fn retry_spec(policy: RetryPolicy) -> String {
    let (limit, sleep_ms) = policy.limit_and_sleep_ms();
    match limit {
        Some(limit) => format!("{}:{sleep_ms}:{limit}", policy.name()),
        None => format!("{}:{sleep_ms}", policy.name()),
    }
}

/// A report with the contender's stamp: one line of its stdout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamped {
    /// When, in nanoseconds of the contender's `CLOCK_MONOTONIC` (Java's `System.nanoTime()`,
    /// Python's `time.monotonic_ns()`).
    pub t: u64,
    /// What.
    #[serde(flatten)]
    pub report: Report,
}

/// What a contender tells the executor: what its library told it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Report {
    /// Connected, with session `session_id` whose password is `password` (hex).
    Ready {
        /// The session's id.
        session_id: i64,
        /// The session's password, in hex.
        password: String,
    },
    /// Connected again on a new session (the last one expired): `session_id`, whose password
    /// is `password` (hex).
    Session {
        /// The new session's id.
        session_id: i64,
        /// Its password, in hex.
        password: String,
    },
    /// A hold of `mode` was granted; `token` (the lock node's czxid) fences its accesses.
    Acquired {
        /// The fencing token.
        token: u64,
        /// What kind of hold.
        #[serde(default, skip_serializing_if = "Mode::is_exclusive")]
        mode: Mode,
    },
    /// The hold of `mode` was given back.
    Released {
        /// What kind of hold.
        #[serde(default, skip_serializing_if = "Mode::is_exclusive")]
        mode: Mode,
    },
    /// The acquire or await gave up after its timeout.
    TimedOut,
    /// The command failed: `error` names why ([`fail_reason`]), `message` is the library's text.
    Failed {
        /// `connection_loss`, `session_expired`, `no_node`, `not_held`, ...
        error: String,
        /// The library's own error text.
        #[serde(default)]
        message: String,
    },
    /// The library said the connection is suspended (while the contender holds).
    Suspended,
    /// The library said the connection is back, same session (while the contender holds).
    Reconnected,
    /// The library said the session is lost (while the contender holds).
    Lost,
    /// The contender leads; `token` (its election node's czxid) fences its accesses.
    IsLeader {
        /// The fencing token.
        token: u64,
    },
    /// The contender leads no more.
    NotLeader,
    /// The answer to [`Command::Await`].
    Awaited {
        /// Whether it leads.
        leader: bool,
    },
    /// The answer to [`Command::HasLeadership`].
    Leadership {
        /// Whether it leads.
        leader: bool,
    },
    /// The contender left the election.
    Closed,
    /// The contender reads the resource with `token` now ([`Command::Read`]).
    Read {
        /// The token presented.
        token: u64,
    },
    /// The contender writes `value` with `token` now ([`Command::Write`]).
    Write {
        /// The token presented.
        token: u64,
        /// The value written.
        value: u64,
    },
}

/// What a report means to a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Meaning {
    /// The contender has session `session_id` (its password in hex): its first (`ready`) or
    /// a new one (`session`, when `again`).
    Ready {
        /// The session's id.
        session_id: i64,
        /// The session's password, in hex.
        password: String,
        /// Whether it is a new session after the first.
        again: bool,
    },
    /// A notice of the contender's recipe, for the trace and the workload.
    Notice(Notice),
    /// A `failed` notice, with the library's text for the failure (empty when it gave none).
    Failed(Notice, String),
    /// A read of the resource with this token.
    Read(Token),
    /// A write of the value with the token.
    Write(Token, u64),
}

impl Report {
    /// What the report means; `Err` for a failure whose error has no name in splitbrain.
    pub fn meaning(self) -> Result<Meaning, String> {
        let owner = OWNER;
        let notice = match self {
            Report::Ready {
                session_id,
                password,
            } => {
                return Ok(Meaning::Ready {
                    session_id,
                    password,
                    again: false,
                });
            }
            Report::Session {
                session_id,
                password,
            } => {
                return Ok(Meaning::Ready {
                    session_id,
                    password,
                    again: true,
                });
            }
            Report::Read { token } => return Ok(Meaning::Read(Token(token))),
            Report::Write { token, value } => return Ok(Meaning::Write(Token(token), value)),
            Report::Acquired { token, mode } => Notice::Acquired {
                owner,
                token: Token(token),
                mode,
            },
            Report::Released { mode } => Notice::Released {
                owner,
                remaining: 0,
                mode,
            },
            Report::TimedOut => Notice::TimedOut { owner },
            Report::Failed { error, message } => {
                let reason = fail_reason(&error).ok_or_else(|| {
                    format!(
                        "a failure splitbrain has no name for: `{error}` ({message}); expected \
                         a ZooKeeper error (`connection_loss`, `session_expired`, `no_node`, \
                         ...) or `not_held`, `session_lost`, `node_vanished`, `unsupported`, \
                         `upgrade_would_deadlock`, `already_started`, `not_started`, \
                         `library`"
                    )
                })?;
                return Ok(Meaning::Failed(Notice::Failed { owner, reason }, message));
            }
            Report::Suspended => Notice::Suspended { owner },
            Report::Reconnected => Notice::Reconnected { owner },
            Report::Lost => Notice::Lost { owner },
            Report::IsLeader { token } => Notice::IsLeader {
                owner,
                token: Token(token),
            },
            Report::NotLeader => Notice::NotLeader { owner },
            Report::Awaited { leader } => Notice::Awaited { owner, leader },
            Report::Leadership { leader } => Notice::Leadership { owner, leader },
            Report::Closed => Notice::Closed { owner },
        };
        Ok(Meaning::Notice(notice))
    }
}

/// The failure `error` names: a ZooKeeper error by its snake-case name (`connection_loss`)
/// or another of splitbrain's reasons (`not_held`).
pub fn fail_reason(error: &str) -> Option<FailReason> {
    let name = serde_json::Value::String(error.to_owned());
    (serde_json::from_value::<ZkError>(name).map(FailReason::Zk))
        .or_else(|_| serde_json::from_value(serde_json::json!({ "reason": error })))
        .ok()
}

/// The name a `failed` report gives `reason`: the inverse of [`fail_reason`].
pub fn fail_name(reason: FailReason) -> String {
    let name = match reason {
        FailReason::Zk(error) => serde_json::to_value(error),
        other => serde_json::to_value(other).map(|tagged| tagged["reason"].clone()),
    };
    let name = name.expect("a failure's name is JSON");
    name.as_str()
        .expect("a failure's name is a string")
        .to_owned()
}

/// The report on `line`: its stamp (nanoseconds of `CLOCK_MONOTONIC`) and meaning; `Err`
/// says what was expected.
pub fn parse(line: &str) -> Result<(u64, Meaning), String> {
    let stamped: Stamped = serde_json::from_str(line).map_err(|e| {
        format!(
            "expected a report, a JSON object with a \"type\" (ready, session, acquired, \
             released, timed_out, failed, suspended, reconnected, lost, is_leader, not_leader, \
             awaited, leadership, closed, read, write) and \"t\" (CLOCK_MONOTONIC ns): {e}"
        )
    })?;
    Ok((stamped.t, stamped.report.meaning()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn line(command: &Command) -> String {
        serde_json::to_string(command).unwrap()
    }

    #[test]
    fn commands_are_one_flat_json_object_each_with_defaults_left_out() {
        let acquire = Command::of(Call::acquire(OWNER, None)).unwrap();
        assert_eq!(line(&acquire), r#"{"type":"acquire"}"#);
        let read_side = Call::Acquire {
            owner: OWNER,
            timeout: Some(Duration::from_millis(250)),
            mode: Mode::Read,
        };
        let read_side = Command::of(read_side).unwrap();
        assert_eq!(
            line(&read_side),
            r#"{"type":"acquire","mode":"read","timeout_ms":250}"#
        );
        let close = Command::of(Call::Close {
            owner: OWNER,
            notify: false,
        });
        assert_eq!(line(&close.unwrap()), r#"{"type":"close"}"#);
        let write = Command::Write { token: 9, value: 3 };
        assert_eq!(line(&write), r#"{"type":"write","token":9,"value":3}"#);
        let relinquish = Command::of(Call::Relinquish { owner: OWNER }).unwrap();
        assert_eq!(line(&relinquish), r#"{"type":"relinquish"}"#);
        let interrupt = Command::of(Call::Interrupt { owner: OWNER }).unwrap_err();
        assert!(interrupt.contains("`interrupt`"), "{interrupt}");
    }

    #[test]
    fn reports_mean_the_notices_of_the_trace() {
        let (t, meaning) = parse(r#"{"type":"acquired","t":1500,"token":4294967301}"#).unwrap();
        assert_eq!(t, 1500);
        let acquired = Notice::Acquired {
            owner: OWNER,
            token: Token(4_294_967_301),
            mode: Mode::Exclusive,
        };
        assert_eq!(meaning, Meaning::Notice(acquired));
        let failed = r#"{"type":"failed","t":7,"error":"connection_loss","message":"KeeperErrorCode = ConnectionLoss"}"#;
        let reason = FailReason::Zk(ZkError::ConnectionLoss);
        let failed_notice = Notice::Failed {
            owner: OWNER,
            reason,
        };
        let message = "KeeperErrorCode = ConnectionLoss".to_owned();
        assert_eq!(
            parse(failed).unwrap().1,
            Meaning::Failed(failed_notice, message)
        );
        let not_held = r#"{"type":"failed","t":7,"error":"not_held"}"#;
        let not_held_reason = FailReason::NotHeld;
        assert_eq!(
            parse(not_held).unwrap().1,
            Meaning::Failed(
                Notice::Failed {
                    owner: OWNER,
                    reason: not_held_reason
                },
                String::new()
            )
        );
        let ready = r#"{"type":"ready","t":1,"session_id":72057594037927937,"password":"0a1b"}"#;
        assert!(matches!(
            parse(ready).unwrap().1,
            Meaning::Ready {
                session_id: 72_057_594_037_927_937,
                again: false,
                ..
            }
        ));
        let session =
            r#"{"type":"session","t":9,"session_id":72057594037927938,"password":"0a1c"}"#;
        assert!(matches!(
            parse(session).unwrap().1,
            Meaning::Ready {
                session_id: 72_057_594_037_927_938,
                again: true,
                ..
            }
        ));
        let write = r#"{"type":"write","t":3,"token":12,"value":4}"#;
        assert_eq!(parse(write).unwrap().1, Meaning::Write(Token(12), 4));
    }

    #[test]
    fn every_failure_is_named_as_a_failed_report_names_it() {
        let reasons = [
            FailReason::Zk(ZkError::ConnectionLoss),
            FailReason::Zk(ZkError::SessionExpired),
            FailReason::NotHeld,
            FailReason::Unsupported,
            FailReason::Library,
        ];
        let names: Vec<String> = reasons.into_iter().map(fail_name).collect();
        assert_eq!(
            names,
            [
                "connection_loss",
                "session_expired",
                "not_held",
                "unsupported",
                "library"
            ]
        );
        for (name, reason) in names.iter().zip(reasons) {
            assert_eq!(fail_reason(name), Some(reason));
        }
    }

    #[test]
    fn a_malformed_report_says_what_was_expected() {
        for bad in [
            "",
            "7 acquired 12",
            r#"{"type":"acquired","t":7}"#,
            r#"{"type":"acquired","token":7}"#,
            r#"{"type":"jumped","t":7}"#,
            r#"{"type":"is_leader","t":"soon","token":7}"#,
        ] {
            let error = parse(bad).unwrap_err();
            assert!(error.starts_with("expected a report"), "{bad}: {error}");
        }
        let tired = parse(r#"{"type":"failed","t":7,"error":"tired","message":"zzz"}"#);
        let tired = tired.unwrap_err();
        assert!(tired.contains("`tired` (zzz)"), "{tired}");
    }

    #[test]
    fn the_contenders_read_every_retry_policy_the_scenario_can_name() {
        assert_eq!(
            retry_spec(RetryPolicy::DEFAULT),
            "exponential-backoff:1000:3"
        );
        let n_times = RetryPolicy::NTimes {
            n: 1,
            sleep_ms: 500,
        };
        assert_eq!(retry_spec(n_times), "n-times:500:1");
        let forever = RetryPolicy::Forever { sleep_ms: 250 };
        assert_eq!(retry_spec(forever), "forever:250");
    }
}
