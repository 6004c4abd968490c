//! The `splitbrain` command line. Each command is one module in `cli/`; adding a command takes
//! that module, one `Command` variant and one match arm.

mod cli;

use std::process::ExitCode;

/// mimalloc: the model checker clones, relabels and drops whole states at every step, and
/// spent about a quarter of its time in the system allocator (`perf`, `check mutex --clients 4`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

/// Deterministic simulation of ZooKeeper lock recipes: sweep seeds for split brains, replay
/// any run exactly, shrink counterexamples.
#[derive(Parser)]
#[command(name = "splitbrain", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the scenario catalog with one-line descriptions.
    Scenarios(cli::scenarios::Args),
    /// List the recipe table: every recipe `check` and scenario files can name.
    Recipes(cli::recipes::Args),
    /// Rerun one seed of a scenario (or the run a trace records) and check it.
    Replay(cli::replay::Args),
    /// Sweep seeds over the catalog and check every scenario's expectations.
    Hunt(cli::hunt::Args),
    /// Combine the output directories of a sharded hunt into one summary.
    Merge(cli::hunt::merge::Args),
    /// Model-check a recipe exhaustively (stateright) under fault budgets.
    Check(cli::check::Args),
    /// Render any trace as a self-contained HTML report.
    Report(cli::report::Args),
    /// Run a scenario on a real ZooKeeper (one you run, or one started from Debian's package).
    Real(cli::real::Args),
    /// Sweep a library × scenario matrix on a real ZooKeeper; write findings.md and .json.
    RealMatrix(cli::real::matrix::Args),
    /// Measure how often a session survives a partition, beside ZooKeeper 3.8's rules.
    Survival(cli::survival::Args),
    /// Measure the simulator against a real ZooKeeper; write fidelity.json and fidelity.md.
    Fidelity(cli::fidelity::Args),
    /// Measure the simulator and the model checker; write bench.json and bench.md.
    Bench(cli::bench::Args),
    /// One client process of a `real` run (started by `real`, which sends its spec on stdin).
    #[command(hide = true)]
    RealClient,
    /// One contender process of `bench --real` (its spec comes on stdin).
    #[command(hide = true)]
    BenchClient,
    /// One client process of a real run of splitbrain's own programs (`fidelity`'s idle
    /// `zookeeper-client` session; its spec comes on stdin).
    #[command(hide = true)]
    RealProgramClient,
    /// One zookeeper-async contender process of a real run (`real --library zookeeper-async`;
    /// the contender protocol on stdin and stdout).
    #[command(hide = true)]
    ZookeeperAsyncContender,
    /// One zookeeper-client contender process of a real run (`real --library
    /// zookeeper-client`; the contender protocol on stdin and stdout).
    #[command(hide = true)]
    ZookeeperClientContender,
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Scenarios(args) => cli::scenarios::run(args),
        Command::Recipes(args) => cli::recipes::run(args),
        Command::Replay(args) => cli::replay::run(args),
        Command::Hunt(args) => cli::hunt::run(args),
        Command::Merge(args) => cli::hunt::merge::run(args),
        Command::Check(args) => cli::check::run(args),
        Command::Report(args) => cli::report::run(args),
        Command::Real(args) => cli::real::run(args),
        Command::RealMatrix(args) => cli::real::matrix::run(args),
        Command::Survival(args) => cli::survival::run(args),
        Command::Fidelity(args) => cli::fidelity::run(args),
        Command::Bench(args) => cli::bench::run(args),
        Command::RealClient => return real::client::serve(),
        Command::BenchClient => return real::bench::contender::serve(),
        Command::ZookeeperAsyncContender => return real::zookeeper_async::contender::serve(),
        Command::ZookeeperClientContender => return real::zookeeper_client::contender::serve(),
        Command::RealProgramClient => {
            return real::program_client::serve(&[splitbrain::programs::idle_session()]);
        }
    };
    cli::finish(result)
}
