//! What a Curator contender (a mutex, a semaphore mutex or a leader latch) prints, one line per call or outcome: `<System.nanoTime()> <word>
//! [args]` (see `real/java/CuratorContender.java`), read into trace events.

use std::time::Duration;

use coordination::fencing::Token;
use coordination::recipes::{Call, FailReason, Mode, Notice};
use coordination::zk::ZkError;
use runtime::workload::OWNER;
use trace::EventKind;

/// One line of a contender's output.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Line {
    /// Connected; waiting for `go`.
    Ready,
    /// A call or an outcome, for the trace.
    Event(EventKind),
    /// Every acquisition done; about to close the session.
    Done,
}

/// The line `text`: the monotonic time it was stamped with (`CLOCK_MONOTONIC`) and what it
/// says; an error naming what was expected otherwise.
pub(crate) fn parse(text: &str) -> Result<(Duration, Line), String> {
    let expected = || format!("expected `<nanos> <word> [args]`, found {text:?}");
    let mut words = text.split_whitespace();
    let nanos: u64 = (words.next().and_then(|w| w.parse().ok())).ok_or_else(expected)?;
    let line = match (words.next(), words.next()) {
        (Some("ready"), None) => Line::Ready,
        (Some("done"), None) => Line::Done,
        (Some("acquire"), None) => Line::Event(EventKind::Call {
            call: Call::acquire(OWNER, None),
        }),
        (Some("acquired"), Some(czxid)) => Line::Event(EventKind::Notice {
            notice: Notice::Acquired {
                owner: OWNER,
                token: Token(czxid.parse().map_err(|_| expected())?),
                mode: Mode::Exclusive,
            },
        }),
        (Some("release"), None) => Line::Event(EventKind::Call {
            call: Call::release(OWNER),
        }),
        (Some("failed"), Some(error)) => Line::Event(EventKind::Notice {
            notice: Notice::Failed {
                owner: OWNER,
                reason: FailReason::Zk(zk_error(error).ok_or_else(expected)?),
            },
        }),
        (Some("released"), None) => Line::Event(EventKind::Notice {
            notice: Notice::Released {
                owner: OWNER,
                remaining: 0,
                mode: Mode::Exclusive,
            },
        }),
        (Some("start"), None) => Line::Event(EventKind::Call {
            call: Call::Start { owner: OWNER },
        }),
        (Some("leader"), Some(czxid)) => Line::Event(EventKind::Notice {
            notice: Notice::IsLeader {
                owner: OWNER,
                token: Token(czxid.parse().map_err(|_| expected())?),
            },
        }),
        // Curator's default close mode, SILENT: a leader is not told `NotLeader`.
        (Some("close"), None) => Line::Event(EventKind::Call {
            call: Call::Close {
                owner: OWNER,
                notify: false,
            },
        }),
        (Some("closed"), None) => Line::Event(EventKind::Notice {
            notice: Notice::Closed { owner: OWNER },
        }),
        _ => return Err(expected()),
    };
    Ok((Duration::from_nanos(nanos), line))
}

/// The error a contender names by its snake-case name (`connection_loss`, ...).
fn zk_error(name: &str) -> Option<ZkError> {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grant_carries_the_lock_nodes_czxid_as_its_token() {
        let (t, line) = parse("1500 acquired 4294967301 /locks/x/_c_1-lock-0000000003").unwrap();
        assert_eq!(t, Duration::from_nanos(1500));
        let Line::Event(EventKind::Notice {
            notice: Notice::Acquired { token, .. },
        }) = line
        else {
            panic!("{line:?}");
        };
        assert_eq!(token, Token(4_294_967_301));
    }

    #[test]
    fn calls_and_markers_are_read_and_anything_else_is_refused() {
        assert_eq!(parse("7 ready").unwrap().1, Line::Ready);
        assert_eq!(parse("7 done").unwrap().1, Line::Done);
        let release = parse("9 release").unwrap().1;
        assert_eq!(
            release,
            Line::Event(EventKind::Call {
                call: Call::release(OWNER)
            })
        );
        let leader = parse("9 leader 12 /e/_c_1-latch-0000000001").unwrap().1;
        assert_eq!(
            leader,
            Line::Event(EventKind::Notice {
                notice: Notice::IsLeader {
                    owner: OWNER,
                    token: Token(12)
                }
            })
        );
        let failed = parse("9 failed connection_loss").unwrap().1;
        assert_eq!(
            failed,
            Line::Event(EventKind::Notice {
                notice: Notice::Failed {
                    owner: OWNER,
                    reason: FailReason::Zk(ZkError::ConnectionLoss)
                }
            })
        );
        for bad in [
            "",
            "x acquire",
            "7 acquired",
            "7 acquired nine",
            "7 leader",
            "7 jump",
            "7 failed",
            "7 failed tired",
        ] {
            let error = parse(bad).unwrap_err();
            assert!(error.contains("expected `<nanos> <word>"), "{error}");
        }
    }
}
