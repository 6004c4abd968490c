//! The recipe and framework modules must stay pure: no I/O, clock, async runtime or
//! randomness may be reachable from them. Checked on the sources and the manifest.

use std::fs;
use std::path::Path;

/// Modules that run inside the model checker.
const PURE: &[&str] = &[
    "src/client.rs",
    "src/fencing.rs",
    "src/framework.rs",
    "src/ids.rs",
    "src/recipe.rs",
    "src/recipes",
    "src/zk",
];

const FORBIDDEN: &[&str] = &[
    "Instant",
    "SystemTime",
    "std::fs",
    "std::net",
    "std::io",
    "std::thread",
    "std::process",
    "std::env",
    "tokio",
    "madsim",
    "rand::",
    "futures",
    "async ",
    ".await",
    "static mut",
    "thread_local",
];

fn sources(path: &Path, out: &mut Vec<std::path::PathBuf>) {
    if path.is_dir() {
        for entry in fs::read_dir(path).unwrap() {
            sources(&entry.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_owned());
    }
}

#[test]
fn pure_modules_use_no_clock_io_runtime_or_randomness() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for module in PURE {
        sources(&root.join(module), &mut files);
    }
    assert!(files.len() >= 10, "found {files:?}");
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        // Unit tests may use whatever they like.
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap()
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for word in FORBIDDEN {
            assert!(!code.contains(word), "{} mentions {word:?}", file.display());
        }
    }
}

#[test]
fn the_lock_crate_depends_on_no_runtime() {
    let manifest =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let dependencies = manifest
        .split("[dependencies]")
        .nth(1)
        .unwrap()
        .split("\n[")
        .next()
        .unwrap();
    let names: Vec<&str> = dependencies
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name.trim()))
        .map(|name| name.trim_end_matches(".workspace"))
        .filter(|name| !name.is_empty())
        .collect();
    // futures is runtime-agnostic (channels, a biased select) and used only by the driver and
    // the in-memory Coordination, which the test above keeps out of the pure modules; the
    // derive runs at compile time only.
    assert_eq!(
        names,
        ["splitbrain-coordination-derive", "serde", "futures"]
    );
}
