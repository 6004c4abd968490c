//! Apache Curator contending with splitbrain's recipes on one lock path of a real ZooKeeper.
//!
//! [`Curator::compile`] compiles `real/java/CuratorContender.java` (embedded in this crate)
//! with plain `javac` against Debian's Curator 5 jars into a temporary directory; its
//! [`Curator::program`] is a contender of the contender protocol ([`crate::contender`]):
//! beside a scenario it runs Curator's own counterpart of the scenario's recipe
//! ([`SERVES`]: `InterProcessMutex` for `mutex`, `InterProcessSemaphoreMutex` (the
//! `InterProcessSemaphoreV2` of one lease it wraps) for `semaphore-mutex`,
//! `InterProcessSemaphoreV2` of the scenario's `max_leases` for `semaphore`,
//! `InterProcessReadWriteLock` for `read-write-lock`, a fresh `LeaderLatch` per cycle (start,
//! close) for `leader-latch`, one `LeaderSelector` (start, then requeue) for
//! `leader-selector`), on the scenario's lock path, beside the Rust clients or in their place
//! (`crate::CuratorPlacement::InPlace`: each contender is one of the scenario's clients, cut
//! off through its own proxy by the scenario's network faults). [`fifo`] adds the check that
//! grants follow the queue across languages.
//!
//! A contender's trace has no session or watch events: Curator keeps those inside (count its
//! wake-ups from the server, [`crate::wakeups`]); a holder reports the connection states
//! Curator's listener hears while it holds.

pub mod fifo;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use coordination::zk::Path as ZkPath;
use recipe_table::recipes::RecipeKind;
use scenarios::scenario::Scenario;

use crate::contender::{Counterpart, Library, Program};
use crate::local::{self, HarnessError, io_error, temp_dir};

/// The jar of Debian's `libcurator-recipes-java`; its manifest's class path names the
/// framework and client jars, ZooKeeper's, Guava and slf4j's API.
pub const CURATOR_RECIPES_JAR: &str = "/usr/share/java/curator-recipes.jar";
/// slf4j's no-op backend (Debian's `libslf4j-java`), so that Curator logs nothing.
const SLF4J_NOP_JAR: &str = "/usr/share/java/slf4j-nop.jar";
/// What to tell a user whose machine lacks Curator.
pub const NOT_INSTALLED: &str = "Apache Curator is not installed: run scripts/test or apt-get \
     install libcurator-recipes-java libcurator-framework-java libcurator-client-java";

/// The recipes Curator's contenders run: for each recipe of splitbrain's table, Curator's
/// counterpart.
pub const SERVES: &[Counterpart] = &[
    (RecipeKind::Mutex, "InterProcessMutex"),
    (RecipeKind::SemaphoreMutex, "InterProcessSemaphoreMutex"),
    (RecipeKind::Semaphore, "InterProcessSemaphoreV2"),
    (RecipeKind::ReadWriteLock, "InterProcessReadWriteLock"),
    (RecipeKind::LeaderLatch, "LeaderLatch"),
    (RecipeKind::LeaderSelector, "LeaderSelector"),
];

/// The programs compiled, each a main class and its source: the contender of a mixed run,
/// and the contender of `splitbrain bench --real` ([`crate::bench`]).
const SOURCES: [(&str, &str); 2] = [
    (MAIN_CLASS, include_str!("../../java/CuratorContender.java")),
    (BENCH_CLASS, include_str!("../../java/CuratorBench.java")),
];
/// The mixed run's contender.
const MAIN_CLASS: &str = "CuratorContender";
/// The benchmark's contender.
const BENCH_CLASS: &str = "CuratorBench";

/// True when Curator's jars, ZooKeeper's and a JDK (`java`, `javac`) are installed.
pub fn installed() -> bool {
    Path::new(CURATOR_RECIPES_JAR).is_file() && local::installed() && javac().is_some()
}

/// `java`, found on the `PATH`.
fn java_program() -> PathBuf {
    local::java().unwrap_or_else(|| "java".into())
}

fn javac() -> Option<PathBuf> {
    local::java()
        .map(|java| java.with_file_name("javac"))
        .filter(|javac| javac.is_file())
}

/// `count` Curator contenders, compiled and ready to run (any number of runs). The
/// temporary directory of their classes is removed on drop.
#[derive(Debug)]
pub struct Curator {
    count: u16,
    dir: PathBuf,
}

impl Curator {
    /// Compiles the contender programs with `javac` into a fresh temporary directory.
    pub fn compile(count: u16) -> Result<Curator, HarnessError> {
        if !installed() {
            return Err(HarnessError(NOT_INSTALLED.into()));
        }
        let dir = temp_dir("splitbrain-curator")?;
        let curator = Curator { count, dir };
        let mut sources = Vec::new();
        for (class, text) in SOURCES {
            let source = curator.dir.join(format!("{class}.java"));
            std::fs::write(&source, text)
                .map_err(|e| io_error(format!("writing {}", source.display()), e))?;
            sources.push(source);
        }
        let javac = javac().ok_or_else(|| HarnessError(NOT_INSTALLED.into()))?;
        let output = Command::new(javac)
            .arg("-d")
            .arg(&curator.dir)
            .args(["-cp", CURATOR_RECIPES_JAR])
            .args(&sources)
            .output()
            .map_err(|e| io_error("running javac".into(), e))?;
        if !output.status.success() {
            return Err(HarnessError(format!(
                "javac in {} failed ({}): {}",
                curator.dir.display(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        Ok(curator)
    }

    /// How many contenders a run starts.
    pub fn count(&self) -> u16 {
        self.count
    }

    /// The class path the contenders run with.
    pub fn class_path(&self) -> String {
        let mut path = format!("{}:{CURATOR_RECIPES_JAR}", self.dir.display());
        if Path::new(SLF4J_NOP_JAR).is_file() {
            path.push(':');
            path.push_str(SLF4J_NOP_JAR);
        }
        path
    }

    /// The contenders' JVM settings and class path, then `class`.
    fn java_args(&self, class: &str) -> Vec<OsString> {
        let settings = [
            "-Xmx128m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-cp",
        ];
        let mut args: Vec<OsString> = settings.map(OsString::from).into();
        args.push(self.class_path().into());
        args.push(class.into());
        args
    }

    /// The command line of a benchmark contender (`real/java/CuratorBench.java`): `cycles`
    /// of `recipe` on `lock_path` with no hold or think time, over its own session of
    /// `session_timeout_ms` with the server at `connect_string`.
    pub(crate) fn bench_command(
        &self,
        recipe: CuratorRecipe,
        connect_string: &str,
        session_timeout_ms: u64,
        lock_path: &ZkPath,
        cycles: u32,
    ) -> Command {
        let mut command = Command::new(java_program());
        command
            .args(self.java_args(BENCH_CLASS))
            .arg(recipe.argument())
            .arg(connect_string)
            .arg(session_timeout_ms.to_string())
            .arg(lock_path.as_str())
            .arg(cycles.to_string());
        command
    }
}

impl Library for Curator {
    fn name(&self) -> &str {
        "Curator"
    }

    /// `java` running `CuratorContender`.
    fn program(&self) -> Program {
        Program {
            name: "curator".into(),
            program: java_program(),
            args: self.java_args(MAIN_CLASS),
            logs: self.dir.clone(),
        }
    }

    fn count(&self) -> u16 {
        self.count
    }

    fn refusal(&self, scenario: &Scenario) -> Option<String> {
        crate::curator_refusal(scenario)
    }
}

impl Drop for Curator {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Which of Curator's recipes a benchmark contender runs (`real/java/CuratorBench.java`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CuratorRecipe {
    /// `InterProcessMutex`, beside our `mutex`.
    Mutex,
    /// `LeaderLatch`, beside our `leader-latch`.
    LeaderLatch,
}

impl CuratorRecipe {
    /// The benchmark program's name for it.
    fn argument(self) -> &'static str {
        match self {
            CuratorRecipe::Mutex => "mutex",
            CuratorRecipe::LeaderLatch => "latch",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contender::recipe_refusal;
    use scenarios::catalog::Catalog;

    #[test]
    fn the_refusal_names_every_recipe_the_contenders_run() {
        let catalog = Catalog::builtin().unwrap();
        let multi = catalog.get("multi-lock-fault-free").unwrap();
        assert_eq!(
            recipe_refusal("Curator", SERVES, multi).as_deref(),
            Some(
                "recipe: Curator contenders run InterProcessMutex, InterProcessSemaphoreMutex, \
                 InterProcessSemaphoreV2, InterProcessReadWriteLock, LeaderLatch or \
                 LeaderSelector, so the recipe must be `mutex`, `semaphore-mutex`, `semaphore`, \
                 `read-write-lock`, `leader-latch` or `leader-selector`, found `multi-lock`"
            )
        );
        for &(kind, _) in SERVES {
            let mut scenario = multi.clone();
            scenario.recipe = kind.into();
            assert_eq!(recipe_refusal("Curator", SERVES, &scenario), None);
        }
    }
}
