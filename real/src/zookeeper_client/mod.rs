//! `zookeeper-client` (Rust, crates.io) contending on a real ZooKeeper: [`contender::serve`],
//! a contender of the contender protocol ([`crate::contender`]) running the crate's own lock,
//! `Client::lock` ([`SERVES`]), in place of a scenario's clients or beside them. The program
//! is this crate's code, so it needs no build of its own: `splitbrain
//! zookeeper-client-contender` (the command line starts its own binary so), or the
//! `splitbrain-zookeeper-client-contender` binary.
//!
//! Beside other clients: the contender locks with Curator's prefix
//! (`LockPrefix::new_curator(lock_path, "lock-")`), so its nodes are named
//! `_c_<uuid>-lock-NNNNNNNNNN` as Curator's `InterProcessMutex`'s and splitbrain's `mutex`'s
//! are (`coordination/src/recipes/mutex.rs`), and the crate orders a lock path's children as
//! they do: those whose name contains `lock-`, by their last ten digits, the sequence
//! (`Client::wait_lock`). Each of the three waits for the others' nodes in their order, so
//! they share one lock path and one queue.

pub mod contender;

use recipe_table::recipes::RecipeKind;

use crate::contender::Counterpart;
use crate::contender::packaged::{Packaged, Packaging};

/// The recipe the crate's contenders run: splitbrain's `mutex`, whose counterpart is the
/// crate's `Client::lock` with Curator's prefix.
pub const SERVES: &[Counterpart] = &[(RecipeKind::Mutex, "Client::lock")];

/// The crate, as its contenders declare it.
#[derive(Debug)]
pub enum ZookeeperClientLibrary {}

impl Packaging for ZookeeperClientLibrary {
    const NAME: &'static str = "zookeeper-client";
    const SERVES: &'static [Counterpart] = SERVES;
    const BESIDE: Option<&'static str> = None;
}

/// The crate's contenders, started by the `splitbrain` binary with
/// `zookeeper-client-contender`, or by the `splitbrain-zookeeper-client-contender` binary
/// ([`Packaged::started_by`]).
pub type ZookeeperClient = Packaged<ZookeeperClientLibrary>;
