//! A client process of a real run, for `real`'s own tests (`splitbrain real-client` is the
//! same program in the `splitbrain` binary).

fn main() -> std::process::ExitCode {
    real::client::serve()
}
