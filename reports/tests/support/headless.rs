//! Headless Chromium (Debian's `chromium`) for the browser tests of the reports crate and of
//! the command line, which include this file.

use std::fs;
use std::path::Path;
use std::process::Command;

/// Runs Chromium headless on the file `page` with `args`, in a fresh profile at `profile`
/// (removed afterwards), and returns its standard output. As root Chromium needs
/// `--no-sandbox`; the networking flags keep it from reaching for hosts this machine cannot
/// reach.
pub fn run(page: &Path, profile: &Path, args: &[&str]) -> String {
    // Under heavy load Chromium has been seen to exit 0 having dumped no document; the dump
    // is asked for again then (up to three times), and the caller's checks judge the last.
    let dump = args.contains(&"--dump-dom");
    let mut output = String::new();
    for _ in 0..3 {
        output = run_once(page, profile, args);
        if !dump || output.contains("</html>") {
            break;
        }
    }
    output
}

/// One run of Chromium (see [`run`]).
fn run_once(page: &Path, profile: &Path, args: &[&str]) -> String {
    let _ = fs::remove_dir_all(profile);
    let output = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs (scripts/test installs it)");
    let _ = fs::remove_dir_all(profile);
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("the DOM is UTF-8")
}
