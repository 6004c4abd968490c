//! A client process of a real run of the programs (`tests/real.rs`): the same functions the
//! simulator runs, on a real ZooKeeper.

use client_lock::Prefix;

fn main() -> std::process::ExitCode {
    splitbrain::real::program_client::serve(&Prefix::ALL.map(Prefix::program))
}
