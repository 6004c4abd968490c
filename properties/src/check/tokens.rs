//! [`Tokens`]: each hold's fencing token, from its latest grant. The monitors keep no tokens
//! (see [`crate::monitor`]); what tells a hold, in a message or on the timeline, reads them
//! here, beside the monitor it folds.

use std::collections::BTreeMap;

use coordination::fencing::Token;
use coordination::recipes::Notice;

use crate::monitor::{Key, Observation, Role};

/// Each hold's token, from its latest grant (`Acquired`, `IsLeader`).
#[derive(Clone, Debug, Default)]
pub(super) struct Tokens(BTreeMap<Key, Token>);

impl Tokens {
    /// Takes in one observation: a grant sets its hold's token.
    pub(super) fn observe(&mut self, seen: Observation) {
        if let Observation::Notice(client, notice) = seen
            && let (Some(token), Some(role)) = (notice.granted(), granted_role(&notice))
        {
            self.0.insert(((client, notice.owner()), role), token);
        }
    }

    /// `key`'s token, from its latest grant (none before the first).
    pub(super) fn get(&self, key: &Key) -> Option<Token> {
        self.0.get(key).copied()
    }
}

/// The role of the hold `notice` grants.
fn granted_role(notice: &Notice) -> Option<Role> {
    match *notice {
        Notice::Acquired { mode, .. } => Some(Role::Lock(mode)),
        Notice::IsLeader { .. } => Some(Role::Leader),
        _ => None,
    }
}
