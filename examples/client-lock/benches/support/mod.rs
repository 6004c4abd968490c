//! What the benches share: their settings from the environment, and where their results go.

use std::path::{Path, PathBuf};

/// The number in environment variable `name`, or `default` when it is not set.
///
/// # Panics
/// When it is set to something else than a number (a mistake worth stopping for).
pub fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().map_or(default, |value| {
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name}: expected a number, found `{value}`"))
    })
}

/// Writes `text` to `target/bench/<file>` (atomically) and says where.
pub fn write_result(file: &str, text: &str) -> PathBuf {
    let out = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/bench")
        .join(file);
    std::fs::create_dir_all(out.parent().expect("a directory")).expect("the bench directory");
    splitbrain::reports::write_atomic(&out, text).expect("the results file");
    println!("written to {}", out.display());
    out
}
