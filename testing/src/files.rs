//! Writing output files atomically: a temporary file beside the target, then a rename, so a
//! reader never sees half a file.

use std::io;
use std::path::{Path, PathBuf};

use recipe_table::property::Violation;
use trace::Trace;

pub use reports::write_atomic;

/// Writes `value` as pretty JSON with a final newline, atomically.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> io::Result<()> {
    let mut text = serde_json::to_vec_pretty(value).map_err(io::Error::other)?;
    text.push(b'\n');
    write_atomic(path, &text)
}

/// Where the evidence of a run goes: `<dir>/<stem>.trace.json` and `<dir>/<stem>.report.html`.
pub fn evidence_paths(dir: &Path, stem: &str) -> (PathBuf, PathBuf) {
    (
        dir.join(format!("{stem}.trace.json")),
        dir.join(format!("{stem}.report.html")),
    )
}

/// Writes `trace` to `trace_file` and its HTML report, explained by `violations` (with
/// `rerun` as the command that reruns it, if splitbrain's own cannot), to `report_file`, each
/// atomically; the error is one line naming the file.
pub fn write_trace_and_report(
    trace: &Trace,
    violations: &[Violation],
    (trace_file, report_file): (&Path, &Path),
    rerun: Option<String>,
) -> Result<(), String> {
    write_json(trace_file, trace)
        .map_err(|e| format!("{}: cannot write the trace: {e}", trace_file.display()))?;
    let options = reports::ReportOptions {
        trace_file: Some(trace_file.display().to_string()),
        rerun,
        focus: None,
    };
    let html = reports::render(trace, violations, &options);
    write_atomic(report_file, html.as_bytes())
        .map_err(|e| format!("{}: cannot write the report: {e}", report_file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_replaces_the_file_whole_and_leaves_no_temp_file() {
        let dir = std::env::temp_dir().join(format!("splitbrain-files-{}", std::process::id()));
        let path = dir.join("sub").join("out.json");
        write_atomic(&path, b"first").unwrap();
        write_json(&path, &[1, 2]).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[\n  1,\n  2\n]\n");
        let names: Vec<_> = std::fs::read_dir(dir.join("sub")).unwrap().collect();
        assert_eq!(names.len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
