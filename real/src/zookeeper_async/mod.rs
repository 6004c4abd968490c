//! `zookeeper-async` (Rust, crates.io) contending on a real ZooKeeper: [`contender::serve`],
//! a contender of the contender protocol ([`crate::contender`]) running the crate's own
//! recipes ([`SERVES`]) in place of a scenario's clients. The program is this crate's code,
//! so it needs no build of its own: `splitbrain zookeeper-async-contender` (the command line
//! starts its own binary so), or the `splitbrain-zookeeper-async-contender` binary.

pub mod contender;
mod session;

use std::ffi::OsString;
use std::path::PathBuf;

use recipe_table::recipes::RecipeKind;
use scenarios::scenario::Scenario;

use crate::contender::{Counterpart, Library, Program, recipe_refusal};
use crate::local::{HarnessError, temp_dir};

/// What messages and the trace's settings call the crate's contenders.
const NAME: &str = "zookeeper-async";
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

/// `count` contenders of the crate, ready to run (any number of runs). The temporary
/// directory of their stderr files is removed on drop.
#[derive(Debug)]
pub struct ZookeeperAsync {
    program: Program,
    count: u16,
}

impl ZookeeperAsync {
    /// The contenders `program` runs with `args`: the `splitbrain` binary with
    /// `zookeeper-async-contender`, or the `splitbrain-zookeeper-async-contender` binary.
    pub fn prepare(
        program: PathBuf,
        args: Vec<OsString>,
        count: u16,
    ) -> Result<ZookeeperAsync, HarnessError> {
        let logs = temp_dir("splitbrain-zookeeper-async")?;
        let name = NAME.into();
        let program = Program {
            name,
            program,
            args,
            logs,
        };
        Ok(ZookeeperAsync { program, count })
    }
}

impl Library for ZookeeperAsync {
    fn name(&self) -> &str {
        NAME
    }

    fn program(&self) -> Program {
        self.program.clone()
    }

    fn count(&self) -> u16 {
        self.count
    }

    fn refusal(&self, scenario: &Scenario) -> Option<String> {
        refusal(scenario)
    }

    fn beside_refusal(&self) -> Option<String> {
        Some(BESIDE.into())
    }
}

/// Why the crate's contenders cannot run `scenario`, if they cannot: one line naming the
/// scenario's field.
pub fn refusal(scenario: &Scenario) -> Option<String> {
    let mutex = scenario.recipe.built_in() == Some(RecipeKind::Mutex);
    let cannot = if scenario.recipe_settings.awaits {
        Some("recipe_settings: zookeeper-async's LeaderLatch has no await, so awaits must be false")
    } else if mutex && scenario.workload.acquire_timeout_ms.is_some() {
        Some(
            "workload: zookeeper-async's shared_lock::lock takes no timeout, so \
             acquire_timeout_ms must be absent",
        )
    } else {
        None
    };
    recipe_refusal(NAME, SERVES, scenario)
        .or_else(|| cannot.map(String::from))
        .or_else(|| crate::run::protocol_refusal(NAME, scenario))
}

impl Drop for ZookeeperAsync {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.program.logs);
    }
}
