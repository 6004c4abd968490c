//! How the nodes of a lock built on [`Mutex`](super::Mutex) queue: what an acquisition names
//! its node, and whom a waiter waits for (Curator's `LockInternalsDriver`: `createsTheLock`
//! and `getsTheLock`). The mutex and the two sides of the read-write lock differ only here.

use super::LOCK_NAME;
use super::kit::{Place, place, place_by, queue_of};
use super::read_write_lock::{READ_NAME, WRITE_NAME};

/// The queue discipline of one [`Mutex`](super::Mutex).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Queue {
    /// InterProcessMutex: `lock-` nodes; a waiter waits for its predecessor.
    Exclusive,
    /// The write side of a read-write lock: `__WRIT__` nodes, queued with the `__READ__`
    /// nodes; a writer waits for its predecessor of either kind.
    Write,
    /// The read side: `__READ__` nodes; a reader waits for the nearest write node ahead of
    /// it, and holds when there is none.
    Read,
    /// The read side as Curator watches: a reader waits for the *first* write node ahead.
    /// Safe, but every reader queued behind two writers wakes when the first one goes
    /// (a herd); kept to show the herd checker catching it.
    ReadWatchingFirstWriter,
}

impl Queue {
    /// The name an acquisition's node gets (after the protection prefix, before the
    /// sequence number).
    pub fn name(self) -> &'static str {
        match self {
            Queue::Exclusive => LOCK_NAME,
            Queue::Write => WRITE_NAME,
            Queue::Read | Queue::ReadWatchingFirstWriter => READ_NAME,
        }
    }

    /// Where the node `node` stands among the lock path's children `names`.
    pub fn place<'a>(self, names: &'a [String], node: &str) -> Place<'a> {
        if self == Queue::Exclusive {
            return place(names, LOCK_NAME, node);
        }
        let queue = queue_of(names, |name| {
            name.contains(READ_NAME) || name.contains(WRITE_NAME)
        });
        let writes = |name: &&&String| name.contains(WRITE_NAME);
        place_by(&queue, node, |ahead| match self {
            Queue::Read => ahead.iter().rev().find(writes).copied(),
            Queue::ReadWatchingFirstWriter => ahead.iter().find(writes).copied(),
            Queue::Exclusive | Queue::Write => ahead.last().copied(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Children named as the server lists them: protection prefix, kind, sequence number;
    /// deliberately not in sequence order.
    fn children(kinds: &str) -> Vec<String> {
        let mut names: Vec<String> = kinds
            .chars()
            .enumerate()
            .map(|(seq, kind)| {
                let kind = if kind == 'W' { WRITE_NAME } else { READ_NAME };
                format!("_c_{:08x}-0000-00000000-{kind}{seq:010}", 99 - seq)
            })
            .collect();
        names.reverse();
        names
    }

    fn name(names: &[String], seq: usize) -> &str {
        names
            .iter()
            .find(|name| name.ends_with(&format!("{seq:010}")))
            .unwrap()
    }

    #[test]
    fn a_writer_waits_for_its_predecessor_of_either_kind() {
        let names = children("RWRW");
        let place = |seq| Queue::Write.place(&names, name(&names, seq));
        assert_eq!(place(1), Place::Behind(name(&names, 0)));
        assert_eq!(place(3), Place::Behind(name(&names, 2)));
        let names = children("W");
        assert_eq!(Queue::Write.place(&names, &names[0]), Place::First);
    }

    #[test]
    fn a_reader_holds_behind_readers_and_waits_for_the_nearest_writer_ahead() {
        let names = children("RRWWRR");
        let place = |seq| Queue::Read.place(&names, name(&names, seq));
        assert_eq!(place(0), Place::First);
        assert_eq!(place(1), Place::First, "readers share");
        assert_eq!(place(4), Place::Behind(name(&names, 3)));
        assert_eq!(place(5), Place::Behind(name(&names, 3)));
    }

    #[test]
    fn curator_s_reader_waits_for_the_first_writer_ahead() {
        let names = children("WWRR");
        let place = |seq| Queue::ReadWatchingFirstWriter.place(&names, name(&names, seq));
        assert_eq!(place(2), Place::Behind(name(&names, 0)));
        assert_eq!(place(3), Place::Behind(name(&names, 0)));
    }

    #[test]
    fn other_children_and_missing_nodes() {
        let mut names = children("WR");
        names.push("_c_00000000-0000-00000000-lock-0000000000".into());
        assert_eq!(
            Queue::Read.place(&names, name(&names, 1)),
            Place::Behind(name(&names, 0))
        );
        assert_eq!(
            Queue::Write.place(&names, "_c_x-__WRIT__0000000009"),
            Place::Missing
        );
        let exclusive = Queue::Exclusive.place(&names, "_c_00000000-0000-00000000-lock-0000000000");
        assert_eq!(exclusive, Place::First, "a mutex sees only lock- nodes");
    }
}
