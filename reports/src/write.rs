//! Writing a report so that no reader ever sees half of one.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes the temporary files of concurrent writes within one process.
static SERIAL: AtomicU64 = AtomicU64::new(0);

/// Writes `contents` to `path` atomically: into a temporary file in the same directory
/// (created if missing), flushed to disk, then renamed over `path`. On error the temporary
/// file is removed and the error names the file.
pub fn write_atomic(path: &Path, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let named =
        |error: io::Error| io::Error::new(error.kind(), format!("{}: {error}", path.display()));
    let name = path.file_name().ok_or_else(|| {
        named(io::Error::new(
            io::ErrorKind::InvalidInput,
            "expected a file path, found a directory or nothing",
        ))
    })?;
    let dir = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(named)?;
    let temp = dir.join(format!(
        ".{}.{}-{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    ));
    let written = File::create(&temp)
        .and_then(|mut file| {
            file.write_all(contents.as_ref())?;
            file.sync_all()
        })
        .and_then(|()| fs::rename(&temp, path));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written.map_err(named)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("splitbrain-reports-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = scratch("replace");
        let path = dir.join("nested").join("report.html");
        write_atomic(&path, "first").unwrap();
        write_atomic(&path, "second").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "second");
        let left: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["report.html"]);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_failed_write_names_the_file() {
        let dir = scratch("fail");
        fs::create_dir_all(dir.join("taken.html")).unwrap();
        let error = write_atomic(&dir.join("taken.html"), "x").unwrap_err();
        assert!(error.to_string().contains("taken.html"), "{error}");
        let left = fs::read_dir(&dir).unwrap().count();
        assert_eq!(left, 1, "the temporary file is removed");
        fs::remove_dir_all(dir).unwrap();
    }
}
