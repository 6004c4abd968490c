//! Which recipe library's contenders `splitbrain real` runs (`--library`, `--curator`,
//! `--curator-in-place`), and where: Curator's, Kazoo's, zookeeper-async's, zookeeper-client's or
//! a user's program that speaks the contender protocol, beside the scenario's clients or in their place. Everything that
//! refuses a choice is checked before any server starts.

use std::path::PathBuf;

use ::scenarios::fault::ScheduledFault;
use ::scenarios::scenario::Scenario;
use real::CuratorPlacement;
use real::contender::Library;
use real::contender::packaged::{Packaged, Packaging};
use real::contender::user::{self, UserProgram};
use real::curator::Curator;
use real::kazoo::Kazoo;
use real::zookeeper_async::{ZookeeperAsync, ZookeeperAsyncLibrary};
use real::zookeeper_client::{ZookeeperClient, ZookeeperClientLibrary};

use super::Args;
use crate::cli::Failure;

/// A recipe library, as `--library` names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Choice {
    /// Apache Curator 5 (Java, Debian's jars).
    Curator,
    /// Kazoo (Python, `$SPLITBRAIN_PYTHON`).
    Kazoo,
    /// zookeeper-async (Rust, crates.io), this binary as `splitbrain zookeeper-async-contender`.
    ZookeeperAsync,
    /// zookeeper-client (Rust, crates.io), this binary as `splitbrain zookeeper-client-contender`.
    ZookeeperClient,
    /// A program of the user's.
    Program(PathBuf),
}

impl Choice {
    /// `curator`, `kazoo`, `zookeeper-async`, `zookeeper-client`, or the path of a program.
    pub(super) fn parse(name: &str) -> Result<Choice, String> {
        Ok(match name {
            "curator" => Choice::Curator,
            "kazoo" => Choice::Kazoo,
            "zookeeper-async" => Choice::ZookeeperAsync,
            "zookeeper-client" => Choice::ZookeeperClient,
            "" => {
                return Err("expected `curator`, `kazoo`, `zookeeper-async`, \
                            `zookeeper-client` or a program's path"
                    .into());
            }
            path => Choice::Program(path.into()),
        })
    }

    /// What messages and the trace's settings call its contenders.
    fn name(&self) -> String {
        match self {
            Choice::Curator => "Curator".into(),
            Choice::Kazoo => "Kazoo".into(),
            Choice::ZookeeperAsync => "zookeeper-async".into(),
            Choice::ZookeeperClient => "zookeeper-client".into(),
            Choice::Program(path) => user::name_of(path),
        }
    }
}

/// The contenders a run starts: whose, and where.
#[derive(Debug)]
pub(super) struct Selection {
    choice: Choice,
    /// Beside the clients, or in their place.
    pub(super) placement: CuratorPlacement,
    /// How many.
    count: u16,
}

impl Selection {
    /// The contenders the arguments ask for, if any.
    pub(super) fn of(args: &Args, scenario: &Scenario) -> Option<Selection> {
        let (choice, in_place, beside) = match &args.library {
            Some(choice) => (choice.clone(), args.in_place, args.contenders),
            None if args.curator_in_place => (Choice::Curator, true, None),
            None => (Choice::Curator, false, Some(args.curator?)),
        };
        let (placement, count) = match beside {
            Some(count) if !in_place => (CuratorPlacement::Beside, count),
            _ => (CuratorPlacement::InPlace, scenario.clients),
        };
        Some(Selection {
            choice,
            placement,
            count,
        })
    }

    /// Why these contenders cannot run `scenario` under `schedule`, the faults of `seed`, if
    /// they cannot: one line, known before any server starts.
    pub(super) fn refusal(
        &self,
        scenario: &Scenario,
        schedule: &[ScheduledFault],
        seed: u64,
    ) -> Option<String> {
        let name = self.choice.name();
        let beside = self.placement == CuratorPlacement::Beside;
        let refused = match &self.choice {
            Choice::Curator => real::curator_refusal(scenario),
            Choice::Kazoo => Kazoo::refusal_at(scenario, beside),
            Choice::ZookeeperAsync => ZookeeperAsync::refusal_at(scenario, beside),
            Choice::ZookeeperClient => ZookeeperClient::refusal_at(scenario, beside),
            Choice::Program(_) => user::refusal(&name, scenario),
        };
        refused.or_else(|| {
            (!beside)
                .then(|| real::in_place_refusal(&name, schedule, seed))
                .flatten()
        })
    }

    /// The library, ready to run: Curator's contenders compiled, Kazoo's written out,
    /// zookeeper-async's and zookeeper-client's found (this binary), a user's program started once (a program that is missing or cannot start fails here).
    pub(super) fn prepare(&self) -> Result<Box<dyn Library>, Failure> {
        Ok(match &self.choice {
            Choice::Curator => Box::new(Curator::compile(self.count)?),
            Choice::Kazoo => Box::new(Kazoo::prepare(self.count)?),
            Choice::ZookeeperAsync => in_this_binary::<ZookeeperAsyncLibrary>(self.count)?,
            Choice::ZookeeperClient => in_this_binary::<ZookeeperClientLibrary>(self.count)?,
            Choice::Program(path) => Box::new(
                UserProgram::prepare(path, self.count)
                    .map_err(|e| Failure(format!("--library {e}")))?,
            ),
        })
    }
}

/// `count` contenders of the Rust crate `L`, served by this binary's hidden subcommand
/// `<name>-contender` (`splitbrain zookeeper-client-contender`).
fn in_this_binary<L: Packaging + 'static>(count: u16) -> Result<Box<dyn Library>, Failure> {
    let program = super::this_binary(&format!("{}'s contenders", L::NAME))?;
    let args = vec![format!("{}-contender", L::NAME).into()];
    Ok(Box::new(Packaged::<L>::started_by(program, args, count)?))
}
