//! Embeds the scenario catalog: every `catalog/*.json` file, in file-name order (the order
//! `--catalog DIR` reads a directory in), so that a new scenario costs only its file.

use std::fmt::Write;
use std::path::PathBuf;

fn main() {
    let dir =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo")).join("catalog");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios/catalog is readable")
        .map(|entry| entry.expect("a catalog entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let mut code = String::from(
        "/// The embedded catalog files, by file name.\nconst EMBEDDED: &[(&str, &str)] = &[\n",
    );
    for path in &files {
        let name = path.file_name().expect("a file name").to_string_lossy();
        writeln!(
            code,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .expect("writing to a String");
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("catalog.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}
