//! zookeeper-client's contender, for `real`'s own tests (`splitbrain zookeeper-client-contender`
//! is the same program in the `splitbrain` binary).

fn main() -> std::process::ExitCode {
    real::zookeeper_client::contender::serve()
}
