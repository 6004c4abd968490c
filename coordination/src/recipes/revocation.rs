//! Revocation of a [`Mutex`](super::Mutex) hold: Curator's `InterProcessMutex.makeRevocable`
//! and `Revoker.attemptRevoke`, as a component the mutex composes.
//!
//! **What Curator does.** `makeRevocable(listener)` marks the lock instance revocable. The next
//! acquisition then reads its own lock node with a data watch before it first lists the lock
//! (discarding the data). When that watch fires with `NodeDataChanged`, Curator reads the node
//! again, leaving a new watch, and calls the listener if the data is `__REVOKE__`.
//! `Revoker.attemptRevoke(client, path)` sets `__REVOKE__` on the node at `path` (usually
//! one of `getParticipantNodes()`), ignoring `NoNode`. The final release removes the
//! instance's watches and clears the mark, so that the next acquisition is not revocable
//! unless made so again. Revocation is cooperative: the holder is asked and decides; nothing
//! is ever deleted on its behalf.
//!
//! **What we do.** The same, per owner (Curator's mark is per lock instance, shared by its
//! threads; our owners are its threads), with three differences:
//! - `MakeRevocable` arms the watch at once when the owner already has a node (waiting or
//!   holding); Curator arms it only in the next acquisition's lock loop, so a lock made
//!   revocable while held cannot be revoked until it is acquired again.
//! - Every read of the owner's node checks the data, the first one too; Curator discards the
//!   first read's data, so a request set between the create and that read goes unheard.
//! - `AttemptRevoke` lists the lock's children and marks the first node by sequence (the
//!   holder's), and answers `RevokeAttempted { delivered }`: false when no mark is known to
//!   be set (`NoNode`: the lock path or the node was gone, or the lock had no node; or the
//!   session was lost first). Curator's takes the node's path, which a simulated client
//!   cannot know: node names carry the creating client's protection id; and it throws on
//!   errors other than `NoNode`, where we answer `delivered: false` rather than `Failed`,
//!   which a workload would take for the answer to its acquire.
//!
//! Before a revocable owner deletes its own node (its final release, or giving up a wait),
//! it removes the revocation watch, as Curator's release removes its watchers first: so that
//! the delete does not wake the owner itself, which by then may be waiting again (a delete
//! held back by a partition). Curator's timeout path does not remove them; we do it there too.
//!
//! `RevocationRequested` goes to the owner whose node carries the request, whatever its
//! stage, as Curator's listener is called: the first node may belong to an owner that has not
//! yet seen its own listing, so a cooperative owner asked before its `Acquired` releases
//! right after it.

use std::collections::BTreeMap;

use super::Notice;
use super::kit::queue;
use crate::ids::{OpId, Owner};
use crate::recipe::Ctx;
use crate::relabel::Relabel;
use crate::zk::{EventKind, OpOk, OpResult, Path, Request, WatchedEvent, WatcherKind};

/// The data that asks a lock node's owner to release (Curator's `REVOKE_MESSAGE`).
pub const REVOKE_MESSAGE: &[u8] = b"__REVOKE__";

/// The revocation state of one mutex: who is revocable, and the revocation attempts under
/// way. Empty, and inert, as long as no owner calls `MakeRevocable` or `AttemptRevoke`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct Revocation {
    /// Owners that made their lock revocable (until their next final release), with the
    /// read of their own node (a get_data leaving the revocation watch) in flight, if any.
    revocable: BTreeMap<Owner, Option<OpId>>,
    /// Revocation attempts under way, by the op they wait for (the listing, then the
    /// set_data), with the owner who asked.
    attempts: BTreeMap<OpId, Owner>,
}

impl Revocation {
    /// `MakeRevocable` for `owner`, whose node (if it has one yet) is `node`.
    pub fn make_revocable(&mut self, owner: Owner, node: Option<&Path>, cx: &mut Ctx<'_, Notice>) {
        if self.revocable.contains_key(&owner) {
            return;
        }
        let read = node.map(|node| read(node, cx));
        self.revocable.insert(owner, read);
    }

    /// `owner`'s acquisition has created `node`: arm its revocation watch if it is revocable.
    pub fn node_created(&mut self, owner: Owner, node: &Path, cx: &mut Ctx<'_, Notice>) {
        if let Some(pending) = self.revocable.get_mut(&owner) {
            *pending = Some(read(node, cx));
        }
    }

    /// `owner` released its last hold: it is not revocable any more (Curator clears the mark).
    pub fn released(&mut self, owner: Owner) {
        self.revocable.remove(&owner);
    }

    /// `owner` is about to delete its own `node`: if it is revocable, remove the revocation
    /// watch first (the removal may find none: the watch may have fired and not been re-armed).
    pub fn unwatch(&self, owner: Owner, node: &Path, cx: &mut Ctx<'_, Notice>) {
        if self.revocable.contains_key(&owner) {
            cx.submit_detached(Request::RemoveWatches {
                path: node.clone(),
                kind: WatcherKind::Data,
            });
        }
    }

    /// `AttemptRevoke` by `owner` on the lock at `path`: list the lock first.
    pub fn attempt(&mut self, owner: Owner, path: &Path, cx: &mut Ctx<'_, Notice>) {
        let op = cx.submit(Request::GetChildren {
            path: path.clone(),
            watch: false,
        });
        self.attempts.insert(op, owner);
    }

    /// True when `op` is one of ours (its reply goes to [`Revocation::on_reply`]).
    pub fn waits_for(&self, op: OpId) -> bool {
        self.attempts.contains_key(&op) || self.revocable.values().any(|read| *read == Some(op))
    }

    /// The reply to one of our ops, for the lock at `path` whose nodes are named `kind`.
    /// `node_of` gives an owner's current lock node.
    pub fn on_reply(
        &mut self,
        op: OpId,
        result: OpResult,
        (path, kind): (&Path, &str),
        node_of: impl Fn(Owner) -> Option<Path>,
        cx: &mut Ctx<'_, Notice>,
    ) {
        if let Some(owner) = self.attempts.remove(&op) {
            return self.on_attempt_reply(owner, result, (path, kind), cx);
        }
        let Some((&owner, pending)) = self
            .revocable
            .iter_mut()
            .find(|(_, read)| **read == Some(op))
        else {
            return;
        };
        *pending = None;
        if let Ok(OpOk::Data { data, .. }) = result
            && data == REVOKE_MESSAGE
            && node_of(owner).is_some()
        {
            cx.notify(Notice::RevocationRequested { owner });
        }
    }

    fn on_attempt_reply(
        &mut self,
        owner: Owner,
        result: OpResult,
        (path, kind): (&Path, &str),
        cx: &mut Ctx<'_, Notice>,
    ) {
        let delivered = match result {
            Ok(OpOk::Children { names, .. }) => {
                let Some(first) = queue(&names, kind).first().map(|name| name.as_str()) else {
                    return cx.notify(Notice::RevokeAttempted {
                        owner,
                        delivered: false,
                    });
                };
                let op = cx.submit(Request::SetData {
                    path: path.child(first).expect("a listed child name is valid"),
                    data: REVOKE_MESSAGE.to_vec(),
                    version: None,
                });
                self.attempts.insert(op, owner);
                return;
            }
            Ok(_) => true,
            Err(_) => false,
        };
        cx.notify(Notice::RevokeAttempted { owner, delivered });
    }

    /// A watch fired: a data change on a revocable owner's own node means "read it again"
    /// (which re-arms the one-shot watch). `node_of` gives an owner's current lock node.
    pub fn on_watch(
        &mut self,
        event: &WatchedEvent,
        node_of: impl Fn(Owner) -> Option<Path>,
        cx: &mut Ctx<'_, Notice>,
    ) {
        if event.kind != EventKind::NodeDataChanged {
            return;
        }
        for (&owner, pending) in &mut self.revocable {
            if node_of(owner).as_ref() == Some(&event.path) {
                *pending = Some(read(&event.path, cx));
            }
        }
    }
}

/// Reads `node`, leaving the revocation watch on it.
fn read(node: &Path, cx: &mut Ctx<'_, Notice>) -> OpId {
    cx.submit(Request::GetData {
        path: node.clone(),
        watch: true,
    })
}

#[cfg(test)]
mod tests;
