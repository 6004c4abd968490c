//! The sessions a [`FrontEnd`](crate::FrontEnd) knows: their ids, passwords and negotiated
//! timeouts. Deadlines are the server's: the table holds no time.

use std::collections::BTreeMap;

use coordination::zk::SessionId;

/// The bounds ZooKeeper puts on a session's timeout (`minSessionTimeout`,
/// `maxSessionTimeout`), in ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The shortest timeout granted.
    pub min_timeout_ms: i32,
    /// The longest timeout granted.
    pub max_timeout_ms: i32,
}

impl Limits {
    /// ZooKeeper's defaults for a tick of `tick_ms`: 2 to 20 ticks.
    pub fn from_tick(tick_ms: i32) -> Limits {
        Limits {
            min_timeout_ms: tick_ms.saturating_mul(2),
            max_timeout_ms: tick_ms.saturating_mul(20),
        }
    }

    /// The timeout granted to a client asking for `asked` ms.
    pub fn negotiate(&self, asked: i32) -> i32 {
        asked.clamp(
            self.min_timeout_ms,
            self.max_timeout_ms.max(self.min_timeout_ms),
        )
    }
}

/// The password of session `id`: a function of the id, as ZooKeeper's is (it seeds a random
/// generator with the id and a secret), so that the same run hands out the same passwords.
pub fn password(id: SessionId) -> Vec<u8> {
    let mut state = id.0;
    let mut next = move || {
        // splitmix64.
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    [next(), next()]
        .iter()
        .flat_map(|word| word.to_be_bytes())
        .collect()
}

/// The live sessions and their negotiated timeouts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sessions {
    last: u64,
    timeouts: BTreeMap<SessionId, i32>,
}

impl Sessions {
    /// Opens a new session with a negotiated timeout of `timeout_ms`.
    pub fn open(&mut self, timeout_ms: i32) -> SessionId {
        self.last += 1;
        let id = SessionId(self.last);
        self.timeouts.insert(id, timeout_ms);
        id
    }

    /// Whether `id` is live and `passwd` is its password.
    pub fn admits(&self, id: SessionId, passwd: &[u8]) -> bool {
        self.timeouts.contains_key(&id) && passwd == password(id)
    }

    /// Whether `id` is live.
    pub fn is_live(&self, id: SessionId) -> bool {
        self.timeouts.contains_key(&id)
    }

    /// Sets a live session's timeout (a reconnecting client negotiates it again).
    pub fn renew(&mut self, id: SessionId, timeout_ms: i32) {
        if let Some(timeout) = self.timeouts.get_mut(&id) {
            *timeout = timeout_ms;
        }
    }

    /// A live session's negotiated timeout.
    pub fn timeout(&self, id: SessionId) -> Option<i32> {
        self.timeouts.get(&id).copied()
    }

    /// Forgets `id` (closed or expired); whether it was live.
    pub fn end(&mut self, id: SessionId) -> bool {
        self.timeouts.remove(&id).is_some()
    }
}

#[cfg(test)]
mod tests {
    use jute::session::PASSWORD_LEN;

    use super::*;

    #[test]
    fn timeouts_are_clamped_to_the_tick_s_bounds() {
        let limits = Limits::from_tick(200);
        assert_eq!(limits.negotiate(100), 400);
        assert_eq!(limits.negotiate(4_000), 4_000);
        assert_eq!(limits.negotiate(60_000), 4_000);
    }

    #[test]
    fn passwords_are_per_session_and_checked() {
        let mut sessions = Sessions::default();
        let a = sessions.open(4_000);
        let b = sessions.open(4_000);
        assert_eq!(password(a).len(), PASSWORD_LEN);
        assert_ne!(password(a), password(b));
        assert!(sessions.admits(a, &password(a)));
        assert!(!sessions.admits(a, &password(b)));
        assert!(sessions.end(a));
        assert!(!sessions.admits(a, &password(a)), "ended");
    }
}
