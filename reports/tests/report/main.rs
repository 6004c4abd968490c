//! Report tests: structure (every section is there, without golden files), escaping of
//! hostile trace strings, size of long runs, a real deadlock's waits, and the rendered page in
//! headless Chromium.

mod chromium;
mod escaping;
mod fixtures;
#[path = "../support/headless.rs"]
mod headless;
mod hostile;
mod size;
mod structure;
mod waits;
