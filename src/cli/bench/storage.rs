//! Where `bench --real`'s server keeps its data directory, and so its transaction log
//! (`--storage`): on disk, where every create and delete waits for an `fsync`, or on tmpfs,
//! where the clients' own costs show. Each is checked to be what it says before any server
//! starts.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Where the benchmark's server keeps its transaction log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Storage {
    /// The system's temporary directory (`TMPDIR`), which must not be a tmpfs.
    Disk,
    /// `/dev/shm`, which must be a tmpfs.
    Tmpfs,
}

/// The directory on tmpfs that Linux systems mount.
const SHARED_MEMORY: &str = "/dev/shm";

impl Storage {
    /// `disk` or `tmpfs`, as `--storage` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Storage::Disk => "disk",
            Storage::Tmpfs => "tmpfs",
        }
    }

    /// The directory the server's data directory is made in, once checked to be on the
    /// storage this names; otherwise one line saying what to change.
    pub fn directory(self) -> Result<PathBuf, String> {
        let (directory, want_tmpfs) = match self {
            Storage::Disk => (std::env::temp_dir(), false),
            Storage::Tmpfs => (PathBuf::from(SHARED_MEMORY), true),
        };
        let on_tmpfs = is_tmpfs(&directory)
            .map_err(|e| format!("--storage {}: {}: {e}", self.name(), directory.display()))?;
        match (on_tmpfs, want_tmpfs) {
            (true, false) => Err(format!(
                "--storage disk: the temporary directory {} is a tmpfs: set TMPDIR to a \
                 directory on disk",
                directory.display()
            )),
            (false, true) => Err(format!(
                "--storage tmpfs: {} is not a tmpfs",
                directory.display()
            )),
            _ => Ok(directory),
        }
    }
}

/// Whether `directory` lies on a tmpfs (`statfs`'s filesystem type).
fn is_tmpfs(directory: &Path) -> std::io::Result<bool> {
    let path = CString::new(directory.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: `statfs` is plain old data that the call fills in; zeroed is a valid value.
    let mut facts: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a NUL-terminated string and `facts` is valid for the call.
    if unsafe { libc::statfs(path.as_ptr(), &mut facts) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(facts.f_type == libc::TMPFS_MAGIC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_directory_is_an_error_naming_it() {
        let error = is_tmpfs(Path::new("/nonexistent/splitbrain")).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn procfs_is_not_a_tmpfs_and_shared_memory_is() {
        assert!(!is_tmpfs(Path::new("/proc")).unwrap());
        if Path::new(SHARED_MEMORY).exists() {
            assert!(is_tmpfs(Path::new(SHARED_MEMORY)).unwrap());
        }
    }
}
