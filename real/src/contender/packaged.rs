//! The libraries whose contender programs come with this crate (Kazoo's script, the Rust
//! crates `zookeeper-async` and `zookeeper-client` served by this crate's own code): what each
//! declares about itself ([`Packaging`]: its name, the recipes it runs, what else it refuses),
//! and its contenders as a [`Library`] ([`Packaged`]), all refused the same way.

use std::ffi::OsString;
use std::marker::PhantomData;
use std::path::PathBuf;

use scenarios::scenario::Scenario;

use super::{Counterpart, Library, Program, recipe_refusal};
use crate::local::{HarnessError, temp_dir};

/// What a library whose contender program comes with this crate declares about itself.
pub trait Packaging {
    /// What messages and the trace's settings call its contenders.
    const NAME: &'static str;
    /// The recipes its contenders run, with the library's own name for each.
    const SERVES: &'static [Counterpart];
    /// Why its contenders do not run beside other clients, if they do not (one line naming
    /// the flag).
    const BESIDE: Option<&'static str>;

    /// What its contenders cannot run of a scenario whose recipe they serve, beyond what the
    /// protocol cannot ask of any contender: one line naming the scenario's field.
    fn cannot(_scenario: &Scenario) -> Option<&'static str> {
        None
    }
}

/// `count` contenders of the library `L`, ready to run (any number of runs). The temporary
/// directory of their stderr files (and of their program, if it was written out) is removed
/// on drop.
#[derive(Debug)]
pub struct Packaged<L> {
    program: Program,
    count: u16,
    library: PhantomData<fn() -> L>,
}

impl<L: Packaging> Packaged<L> {
    /// `count` contenders that `program` starts, whose `logs` directory is theirs alone.
    pub(crate) fn new(program: Program, count: u16) -> Packaged<L> {
        Packaged {
            program,
            count,
            library: PhantomData,
        }
    }

    /// `count` contenders that `program` starts with `args` (the `splitbrain` binary with a
    /// hidden subcommand, or a binary of this crate's), their stderr files kept in a fresh
    /// temporary directory.
    pub fn started_by(
        program: PathBuf,
        args: Vec<OsString>,
        count: u16,
    ) -> Result<Packaged<L>, HarnessError> {
        let program = Program {
            name: L::NAME.into(),
            program,
            args,
            logs: temp_dir(&format!("splitbrain-{}", L::NAME))?,
        };
        Ok(Packaged::new(program, count))
    }

    /// Why the library's contenders cannot run `scenario`, if they cannot: one line naming
    /// the scenario's field.
    pub fn refusal(scenario: &Scenario) -> Option<String> {
        recipe_refusal(L::NAME, L::SERVES, scenario)
            .or_else(|| L::cannot(scenario).map(String::from))
            .or_else(|| crate::run::protocol_refusal(L::NAME, scenario))
    }

    /// [`Packaged::refusal`], and, `beside` the clients, why they do not run there.
    pub fn refusal_at(scenario: &Scenario, beside: bool) -> Option<String> {
        Self::refusal(scenario).or_else(|| L::BESIDE.filter(|_| beside).map(String::from))
    }
}

impl<L: Packaging> Library for Packaged<L> {
    fn name(&self) -> &str {
        L::NAME
    }

    fn program(&self) -> Program {
        self.program.clone()
    }

    fn count(&self) -> u16 {
        self.count
    }

    fn refusal(&self, scenario: &Scenario) -> Option<String> {
        Self::refusal(scenario)
    }

    fn beside_refusal(&self) -> Option<String> {
        L::BESIDE.map(String::from)
    }
}

impl<L> Drop for Packaged<L> {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.program.logs);
    }
}
