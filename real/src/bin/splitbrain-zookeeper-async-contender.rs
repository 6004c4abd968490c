//! zookeeper-async's contender, for `real`'s own tests (`splitbrain zookeeper-async-contender`
//! is the same program in the `splitbrain` binary).

fn main() -> std::process::ExitCode {
    real::zookeeper_async::contender::serve()
}
