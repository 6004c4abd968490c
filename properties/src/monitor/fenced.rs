//! [`Fenced`]: the resource's accepted accesses — the monitor of `mutual_exclusion_fenced`
//! (and of `leader_unique_fenced`, the same rule on the leaders' accesses).
//!
//! The accepted accesses must come in non-interleaved blocks in increasing token order: an
//! accessor's reads and writes with one token, each write the value its own read returned plus
//! one. KeptRun access by access, against only what the next access needs: the highest token
//! so far; the block under way (who made the last access and the value it read and has not
//! written yet), forgotten once the accessor of the highest token has written; a block of the
//! highest token that a stale access interrupted; and how many writes were accepted, with the
//! last value written (an update is lost when the two differ). Rejected accesses do not count.

use coordination::fencing::Token;
use coordination::ids::{ClientSlot, Owner};
use coordination::relabel::Relabel;

/// Who made an access: a client's owner (the client unknown in a hand-written trace) presenting
/// one token.
pub type Accessor = (Option<ClientSlot>, Owner, Token);

/// One accepted access to the resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A read that returned this value.
    Read(u64),
    /// A write of this value.
    Write(u64),
}

/// What one access broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Breach {
    /// The first access of a block carried a token below `top`, the highest one used before.
    OutOfOrder {
        /// The highest token used before.
        top: Token,
    },
    /// The accessor of the highest token came back to its block after `between` had accessed.
    Interleaved {
        /// The accessor of the access in between.
        between: Accessor,
    },
    /// A write that is not the value of its own read (`read`) plus one.
    NotIncrement {
        /// The value its read returned.
        read: u64,
    },
    /// A write with no read of its own before it.
    Unread,
}

/// An accessor with the value it read and has not written yet.
type Block = (Accessor, Option<u64>);

/// The fenced-access monitor of [`crate::monitor`].
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct Fenced {
    /// The highest token so far.
    top: Option<Token>,
    /// The block under way (none once the accessor of the highest token has written).
    last: Option<Block>,
    /// A block of the highest token that an access with a lower one interrupted.
    interrupted: Option<Block>,
    /// Writes accepted.
    writes: u64,
    /// The value last written.
    value: u64,
    /// An access broke the order or an increment (sticky).
    breached: bool,
}

impl Fenced {
    /// Takes in one accepted access by `who`; what it broke, if anything (an out-of-order
    /// block is judged by its first access only, as one breach).
    pub fn observe(&mut self, who: Accessor, access: Access) -> Option<Breach> {
        let block_of = |block: Option<Block>| block.filter(|(a, _)| *a == who).map(|(_, r)| r);
        let continues = block_of(self.last);
        let returns = block_of(self.interrupted);
        let mut breach = None;
        if continues.is_none() {
            if let Some(top) = self.top.filter(|top| who.2 < *top) {
                breach = Some(Breach::OutOfOrder { top });
                // A stale access into a block of the highest token: the block is interrupted.
                let open = self
                    .last
                    .filter(|((_, _, token), read)| *token == top && read.is_some());
                self.interrupted = self.interrupted.or(open);
            } else if let (Some(_), Some((between, _))) = (returns, self.last) {
                breach = Some(Breach::Interleaved { between });
            }
        }
        if returns.is_some() {
            self.interrupted = None;
        }
        let mut read = continues.or(returns).flatten();
        match access {
            Access::Read(value) => read = Some(value),
            Access::Write(written) => {
                let increment = match read {
                    Some(value) if written != value + 1 => {
                        Some(Breach::NotIncrement { read: value })
                    }
                    Some(_) => None,
                    None => Some(Breach::Unread),
                };
                breach = breach.or(increment);
                read = None;
                self.writes += 1;
                self.value = written;
            }
        }
        self.top = self.top.max(Some(who.2));
        let done = read.is_none() && self.top == Some(who.2) && self.interrupted.is_none();
        self.last = (!done).then_some((who, read));
        self.breached |= breach.is_some();
        breach
    }

    /// Whether no access has broken the order or an increment so far.
    pub fn in_order(&self) -> bool {
        !self.breached
    }

    /// The value last written and the writes accepted, when they differ: updates were lost.
    pub fn lost_update(&self) -> Option<(u64, u64)> {
        (self.value != self.writes).then_some((self.value, self.writes))
    }

    /// Whether the accesses so far pass: in order, and no update lost.
    pub fn holds(&self) -> bool {
        self.in_order() && self.lost_update().is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by(client: u16, token: u64) -> Accessor {
        (Some(ClientSlot(client)), Owner(0), Token(token))
    }

    fn run(accesses: &[(Accessor, Access)]) -> (Vec<Breach>, Fenced) {
        let mut fenced = Fenced::default();
        let breaches = (accesses.iter())
            .filter_map(|(who, access)| fenced.observe(*who, *access))
            .collect();
        (breaches, fenced)
    }

    #[test]
    fn serial_increments_in_token_order_pass() {
        let (breaches, fenced) = run(&[
            (by(0, 5), Access::Read(0)),
            (by(0, 5), Access::Write(1)),
            (by(1, 7), Access::Read(1)),
            (by(1, 7), Access::Write(2)),
        ]);
        assert_eq!(breaches, []);
        assert!(fenced.holds());
    }

    #[test]
    fn a_stale_block_and_the_block_it_interleaved_are_each_caught_once() {
        let (breaches, fenced) = run(&[
            (by(1, 7), Access::Read(0)),
            (by(0, 5), Access::Read(0)),
            (by(0, 5), Access::Write(1)),
            (by(1, 7), Access::Write(1)),
        ]);
        assert_eq!(
            breaches,
            [
                Breach::OutOfOrder { top: Token(7) },
                Breach::Interleaved { between: by(0, 5) }
            ]
        );
        assert_eq!(fenced.lost_update(), Some((1, 2)));
    }

    #[test]
    fn writes_must_increment_their_own_read() {
        let (breaches, _) = run(&[(by(0, 5), Access::Write(1))]);
        assert_eq!(breaches, [Breach::Unread]);
        let (breaches, fenced) = run(&[(by(0, 5), Access::Read(3)), (by(0, 5), Access::Write(3))]);
        assert_eq!(breaches, [Breach::NotIncrement { read: 3 }]);
        assert!(!fenced.in_order());
    }
}
