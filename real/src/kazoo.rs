//! Kazoo (Python) contending on a real ZooKeeper: `real/python/kazoo_contender.py` (embedded
//! in this crate, written to a temporary directory), a contender of the contender protocol
//! ([`crate::contender`]) running Kazoo's own recipes ([`SERVES`]) in place of a scenario's
//! clients, with a Python that has Kazoo installed: `$SPLITBRAIN_PYTHON` (`scripts/test`
//! installs Kazoo from PyPI into a virtual environment and points it there), else `python3`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use recipe_table::recipes::RecipeKind;

use crate::contender::packaged::{Packaged, Packaging};
use crate::contender::{Counterpart, Program};
use crate::local::{HarnessError, io_error, temp_dir};

/// The contender program.
const SOURCE: &str = include_str!("../python/kazoo_contender.py");
/// The recipes Kazoo's contenders run: for each recipe of splitbrain's table, Kazoo's
/// counterpart (module `kazoo.recipe`).
pub const SERVES: &[Counterpart] = &[
    (RecipeKind::Mutex, "Lock"),
    (RecipeKind::Semaphore, "Semaphore"),
    (RecipeKind::ReadWriteLock, "ReadLock/WriteLock"),
    (RecipeKind::LeaderSelector, "Election"),
];
/// Why Kazoo's contenders do not run beside other clients.
pub const BESIDE: &str = "--contenders: Kazoo's recipes count only their own nodes as \
     contenders (kazoo.recipe.lock: _contenders_re), so they would not wait for the clients' \
     nodes on the same path: run them in place of the clients";
/// What to tell a user whose Python lacks Kazoo.
pub const NOT_INSTALLED: &str = "Kazoo is not installed: run scripts/test, or point \
     SPLITBRAIN_PYTHON at a Python with Kazoo (python3 -m venv v && v/bin/pip install kazoo)";

/// The Python the contenders run with.
pub fn python() -> PathBuf {
    std::env::var_os("SPLITBRAIN_PYTHON").map_or_else(|| "python3".into(), PathBuf::from)
}

/// True when that Python imports Kazoo.
pub fn installed() -> bool {
    Command::new(python())
        .args(["-c", "import kazoo"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Kazoo, as its contenders declare it.
#[derive(Debug)]
pub enum KazooLibrary {}

impl Packaging for KazooLibrary {
    const NAME: &'static str = "Kazoo";
    const SERVES: &'static [Counterpart] = SERVES;
    const BESIDE: Option<&'static str> = Some(BESIDE);
}

/// Kazoo's contenders: the Python running `kazoo_contender.py`.
pub type Kazoo = Packaged<KazooLibrary>;

impl Kazoo {
    /// `count` contenders, their program written into a fresh temporary directory (with their
    /// stderr files).
    pub fn prepare(count: u16) -> Result<Kazoo, HarnessError> {
        if !installed() {
            return Err(HarnessError(NOT_INSTALLED.into()));
        }
        let dir = temp_dir("splitbrain-kazoo")?;
        let script = dir.join("kazoo_contender.py");
        let program = Program {
            name: "kazoo".into(),
            program: python(),
            args: vec![OsString::from(&script)],
            logs: dir,
        };
        // Made first, so that the directory is removed if the write fails.
        let kazoo = Packaged::new(program, count);
        std::fs::write(&script, SOURCE)
            .map_err(|e| io_error(format!("writing {}", script.display()), e))?;
        Ok(kazoo)
    }
}
