//! Small newtypes for the identities a recipe deals in. Client slots (and the protection ids
//! that embed them) identify a client; the model's symmetry reduction rewrites them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A client's index in a run (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ClientSlot(pub u16);

impl fmt::Display for ClientSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "c{}", self.0)
    }
}

/// A request's id, unique per client for the client's whole life (across sessions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct OpId(pub u32);

/// A timer's id, unique per client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TimerId(pub u32);

/// A caller-chosen identity that holds locks (Curator's "thread"): reentrancy is per owner,
/// and two owners on one recipe instance queue with their own nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Owner(pub u32);

/// The protection id of one protected create (Curator's `_c_<uuid>-` prefix), reused by that
/// create's retries. `nonce` comes from the run's seeded source, so that runs against one real
/// server never collide; `client` and `serial` make it unique within a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ProtectionId {
    /// Per-run random part.
    pub nonce: u32,
    /// The creating client.
    pub client: ClientSlot,
    /// The client's count of protected creates so far.
    pub serial: u32,
}

impl ProtectionId {
    /// The node-name prefix that marks this create: `_c_<id>-`.
    pub fn prefix(&self) -> String {
        let mut prefix = String::with_capacity(Self::PREFIX_LEN);
        self.write_prefix(&mut prefix);
        prefix
    }

    /// Appends [`ProtectionId::prefix`] to `out` (without going through the formatter: a
    /// protected create names its node with it).
    pub fn write_prefix(&self, out: &mut String) {
        out.push_str("_c_");
        push_hex(out, u64::from(self.nonce), 8);
        out.push('-');
        push_hex(out, u64::from(self.client.0), 4);
        out.push('-');
        push_hex(out, u64::from(self.serial), 8);
        out.push('-');
    }

    /// Where the client's four hex digits sit in [`ProtectionId::prefix`] (so that a
    /// relabelling can rewrite them in place).
    pub(crate) const CLIENT_DIGITS: std::ops::Range<usize> = 12..16;

    /// Length of [`ProtectionId::prefix`].
    pub(crate) const PREFIX_LEN: usize = 26;

    /// The client of the protection prefix `name` starts with, reading only the client's
    /// digits (a fast path of [`ProtectionId::parse_prefix`] for relabelling).
    pub(crate) fn prefix_client(name: &str) -> Option<ClientSlot> {
        let bytes = name.as_bytes();
        let shaped = bytes.len() >= Self::PREFIX_LEN
            && bytes.starts_with(b"_c_")
            && bytes[11] == b'-'
            && bytes[16] == b'-'
            && bytes[25] == b'-';
        if !shaped {
            return None;
        }
        let digits = name.get(Self::CLIENT_DIGITS)?;
        u16::from_str_radix(digits, 16).ok().map(ClientSlot)
    }

    /// Reads the protection id back from a node name that starts with one.
    pub fn parse_prefix(name: &str) -> Option<ProtectionId> {
        let rest = name.strip_prefix("_c_")?;
        let mut parts = rest.splitn(4, '-');
        let nonce = u32::from_str_radix(parts.next()?, 16).ok()?;
        let client = u16::from_str_radix(parts.next()?, 16).ok()?;
        let serial = u32::from_str_radix(parts.next()?, 16).ok()?;
        parts.next()?;
        Some(ProtectionId {
            nonce,
            client: ClientSlot(client),
            serial,
        })
    }
}

/// Appends the low `digits` hex digits of `value`, lowercase and zero-padded (`{:0digits$x}`
/// for a value that fits).
fn push_hex(out: &mut String, value: u64, digits: u32) {
    for shift in (0..digits).rev() {
        let nibble = (value >> (4 * shift)) & 0xf;
        out.push(char::from(b"0123456789abcdef"[nibble as usize]));
    }
}

impl fmt::Display for ProtectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:08x}-{:04x}-{:08x}",
            self.nonce, self.client.0, self.serial
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_is_the_formatted_id() {
        for (nonce, client, serial) in [
            (0, 0, 0),
            (0xdead_beef, 3, 17),
            (u32::MAX, u16::MAX, u32::MAX),
        ] {
            let id = ProtectionId {
                nonce,
                client: ClientSlot(client),
                serial,
            };
            assert_eq!(id.prefix(), format!("_c_{id}-"));
        }
    }

    #[test]
    fn protection_prefix_round_trips() {
        let id = ProtectionId {
            nonce: 0xdead_beef,
            client: ClientSlot(3),
            serial: 17,
        };
        let name = format!("{}lock-0000000004", id.prefix());
        assert_eq!(name, "_c_deadbeef-0003-00000011-lock-0000000004");
        assert_eq!(ProtectionId::parse_prefix(&name), Some(id));
        assert_eq!(&name[ProtectionId::CLIENT_DIGITS], "0003");
        assert_eq!(id.prefix().len(), ProtectionId::PREFIX_LEN);
        assert_eq!(ProtectionId::prefix_client(&name), Some(ClientSlot(3)));
        assert_eq!(ProtectionId::prefix_client("_c_x"), None);
        assert_eq!(ProtectionId::parse_prefix("lock-0000000004"), None);
    }
}
