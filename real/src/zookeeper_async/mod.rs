//! `zookeeper-async` (Rust, crates.io) contending on a real ZooKeeper: [`contender::serve`],
//! a contender of the contender protocol ([`crate::contender`]) running the crate's own
//! recipes ([`SERVES`]) in place of a scenario's clients. The program is this crate's code,
//! so it needs no build of its own: `splitbrain zookeeper-async-contender` (the command line
//! starts its own binary so), or the `splitbrain-zookeeper-async-contender` binary.

pub mod contender;
mod session;

use recipe_table::recipes::RecipeKind;
use scenarios::scenario::Scenario;

use crate::contender::Counterpart;
use crate::contender::packaged::{Packaged, Packaging};

/// The recipes the crate's contenders run: for each recipe of splitbrain's table, the crate's
/// counterpart (module `zookeeper_async::recipes`).
pub const SERVES: &[Counterpart] = &[
    (RecipeKind::Mutex, "shared_lock::lock"),
    (RecipeKind::LeaderLatch, "LeaderLatch"),
];
/// Why the crate's contenders do not run beside other clients.
pub const BESIDE: &str = "--contenders: zookeeper-async's shared_lock orders a lock path's \
     children by their name's text after its last `_` (recipes/shared_lock.rs:116-134), which \
     for other libraries' nodes (Curator's `_c_<id>-lock-NNNNNNNNNN`) is not their sequence \
     number, so it would not wait for the clients' nodes in their order: run them in place of \
     the clients";

/// The crate, as its contenders declare it.
#[derive(Debug)]
pub enum ZookeeperAsyncLibrary {}

impl Packaging for ZookeeperAsyncLibrary {
    const NAME: &'static str = "zookeeper-async";
    const SERVES: &'static [Counterpart] = SERVES;
    const BESIDE: Option<&'static str> = Some(BESIDE);

    fn cannot(scenario: &Scenario) -> Option<&'static str> {
        let mutex = scenario.recipe.built_in() == Some(RecipeKind::Mutex);
        if scenario.recipe_settings.awaits {
            Some(
                "recipe_settings: zookeeper-async's LeaderLatch has no await, so awaits must be \
                 false",
            )
        } else if mutex && scenario.workload.acquire_timeout_ms.is_some() {
            Some(
                "workload: zookeeper-async's shared_lock::lock takes no timeout, so \
                 acquire_timeout_ms must be absent",
            )
        } else {
            None
        }
    }
}

/// The crate's contenders, started by the `splitbrain` binary with
/// `zookeeper-async-contender`, or by the `splitbrain-zookeeper-async-contender` binary
/// ([`Packaged::started_by`]).
pub type ZookeeperAsync = Packaged<ZookeeperAsyncLibrary>;
