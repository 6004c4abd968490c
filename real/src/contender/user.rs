//! A user's own contender: any program that speaks the contender protocol, run as it is
//! (book: `reference/contender-protocol.md`). It is told the scenario's recipe in its
//! `hello`, so it may serve any recipe the protocol drives.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use scenarios::scenario::Scenario;

use super::{Library, Program};
use crate::local::{HarnessError, kill_group, spawn_bound_to_this_process, temp_dir};

/// `count` contenders of a user's program, ready to run (any number of runs). The
/// temporary directory of their stderr files is removed on drop.
#[derive(Debug)]
pub struct UserProgram {
    path: PathBuf,
    /// Its file name, which messages and the trace's settings call it by.
    name: String,
    count: u16,
    dir: PathBuf,
}

impl UserProgram {
    /// The program at `path`, once it has started: it is started once, with nothing on its
    /// stdin, and killed at once, so that a program that is missing or cannot start (not
    /// executable, a `#!` interpreter that is not there) is one error before any run.
    pub fn prepare(path: &Path, count: u16) -> Result<UserProgram, HarnessError> {
        // Absolute, so that a bare file name is not looked for on the PATH.
        let path = std::path::absolute(path)
            .map_err(|e| HarnessError(format!("{}: {e}", path.display())))?;
        let mut command = Command::new(&path);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = spawn_bound_to_this_process(command).map_err(|e| {
            HarnessError(format!(
                "{}: expected a contender program that starts, found: {e}",
                path.display()
            ))
        })?;
        kill_group(child);
        Ok(UserProgram {
            name: name_of(&path),
            path,
            count,
            dir: temp_dir("splitbrain-contender")?,
        })
    }
}

impl Library for UserProgram {
    fn name(&self) -> &str {
        &self.name
    }

    /// The program itself, without arguments.
    fn program(&self) -> Program {
        Program {
            name: self.name.clone(),
            program: self.path.clone(),
            args: Vec::new(),
            logs: self.dir.clone(),
        }
    }

    fn count(&self) -> u16 {
        self.count
    }

    fn refusal(&self, scenario: &Scenario) -> Option<String> {
        refusal(&self.name, scenario)
    }
}

/// What messages and the trace's settings call the program at `path`: its file name.
pub fn name_of(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// Why the contenders of a user's program called `name` cannot run `scenario`, if they cannot:
/// what the protocol cannot ask of them (reentrant holds, revocation).
pub fn refusal(name: &str, scenario: &Scenario) -> Option<String> {
    crate::run::protocol_refusal(name, scenario)
}

impl Drop for UserProgram {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
