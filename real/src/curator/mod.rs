//! Apache Curator contending with splitbrain's recipes on one lock path of a real ZooKeeper.
//!
//! [`Curator::compile`] compiles `real/java/CuratorContender.java` (embedded in this crate)
//! with plain `javac` against Debian's Curator 5 jars into a temporary directory. A run with
//! contenders (`crate::run_with_curator`) starts each as its own JVM process, after the Rust
//! clients' clock has started: the contender connects, says `ready`, waits for `go`, then
//! runs the scenario's acquisitions with Curator's own `InterProcessMutex` (beside a
//! `semaphore-mutex` scenario `InterProcessSemaphoreMutex`; beside a `leader-latch` scenario
//! a fresh `LeaderLatch` per cycle: start, await, close) on the scenario's lock path, beside
//! the Rust clients, or in their place (`crate::CuratorPlacement::InPlace`: each contender is one
//! of the scenario's clients, cut off through its own proxy by the scenario's network
//! faults). It prints each call and outcome stamped with
//! `System.nanoTime()` — `CLOCK_MONOTONIC` on Linux, the clock [`crate::clock::RealClock`]
//! reads — which a reader thread turns into trace events on the contender's client slot
//! (after the Rust clients' slots, or the clients' own in place), placed on the run's
//! clock. The contenders read and write the run's fenced resource, the same one the Rust
//! clients use, through a local socket served by the harness, which records their
//! accesses. So a mixed run is one trace, checked and reported like any other; [`fifo`] adds
//! the check that grants follow the queue across languages.
//!
//! A contender's trace has no session or watch events: Curator keeps those inside
//! (count its wake-ups from the server, [`crate::wakeups`]).

mod contender;
pub mod fifo;
mod lines;
mod resource_service;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use coordination::framework::FrameworkConfig;
use coordination::ids::ClientSlot;
use coordination::retry::RetryPolicy;
use coordination::zk::Path as ZkPath;
use futures::future::join_all;
use recipe_table::recipes::RecipeKind;
use runtime::resource::SharedResource;
use scenarios::scenario::Workload;

use crate::clock::{RealClock, Recorder};
use crate::local::{self, HarnessError, io_error, temp_dir};
use contender::{Contender, Sink};
use resource_service::ResourceService;

/// The jar of Debian's `libcurator-recipes-java`; its manifest's class path names the
/// framework and client jars, ZooKeeper's, Guava and slf4j's API.
pub const CURATOR_RECIPES_JAR: &str = "/usr/share/java/curator-recipes.jar";
/// slf4j's no-op backend (Debian's `libslf4j-java`), so that Curator logs nothing.
const SLF4J_NOP_JAR: &str = "/usr/share/java/slf4j-nop.jar";
/// What to tell a user whose machine lacks Curator.
pub const NOT_INSTALLED: &str = "Apache Curator is not installed: run scripts/test or apt-get \
     install libcurator-recipes-java libcurator-framework-java libcurator-client-java";

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

    /// Starts the contenders of `run` and the resource service they use, and waits until
    /// each has its session.
    pub(crate) async fn start(&self, run: ContenderRun<'_>) -> Result<Contenders, String> {
        let service = ResourceService::start(run.resource.clone()).map_err(|e| e.to_string())?;
        let mut contenders = Contenders {
            running: Vec::new(),
            service,
        };
        for i in 0..self.count {
            let slot = ClientSlot(run.first_slot + i);
            let connect_string = &run.connect_strings[usize::from(i)];
            let command = self.command(&run, slot, connect_string, contenders.service.port());
            let stderr = self.dir.join(format!("contender-{}.stderr", slot.0));
            let sink = Sink {
                recorder: run.recorder.clone(),
                clock: run.clock,
            };
            let contender = Contender::spawn(slot, command, stderr, sink);
            contenders
                .running
                .push(contender.map_err(|e| e.to_string())?);
        }
        let ready = join_all(contenders.running.iter_mut().map(Contender::ready)).await;
        ready.into_iter().collect::<Result<(), String>>()?;
        for contender in &mut contenders.running {
            contender.go()?;
        }
        Ok(contenders)
    }

    /// `java` with the contenders' JVM settings and class path, running `class`.
    fn java(&self, class: &str) -> Command {
        let mut command = Command::new(local::java().unwrap_or_else(|| "java".into()));
        command
            .args([
                "-Xmx128m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
            ])
            .arg(self.class_path())
            .arg(class);
        command
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
        let mut command = self.java(BENCH_CLASS);
        command
            .arg(recipe.argument())
            .arg(connect_string)
            .arg(session_timeout_ms.to_string())
            .arg(lock_path.as_str())
            .arg(cycles.to_string());
        command
    }

    /// The command line of the contender of `slot`, which connects to `connect_string`.
    fn command(
        &self,
        run: &ContenderRun<'_>,
        slot: ClientSlot,
        connect_string: &str,
        port: u16,
    ) -> Command {
        let mut command = self.java(MAIN_CLASS);
        let workload = run.workload;
        command
            .arg(run.recipe.argument())
            .arg(connect_string)
            .arg(run.session_timeout_ms.to_string())
            .arg(run.lock_path.as_str())
            .arg(workload.acquisitions.to_string())
            .args(
                [
                    workload.hold_ms.min,
                    workload.hold_ms.max,
                    workload.think_ms.min,
                    workload.think_ms.max,
                    run.seed,
                    u64::from(port),
                    u64::from(slot.0),
                    u64::from(slot.0) * workload.stagger_ms,
                ]
                .map(|n| n.to_string()),
            )
            .arg(retry_spec(run.framework.retry))
            .arg(run.framework.connection_timeout_ms.to_string());
        command
    }
}

impl Drop for Curator {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `policy` as the contender reads it: `exponential-backoff:<base>:<max>`,
/// `n-times:<sleep>:<n>` or `forever:<sleep>`.
fn retry_spec(policy: RetryPolicy) -> String {
    let (limit, sleep_ms) = policy.limit_and_sleep_ms();
    match limit {
        Some(limit) => format!("{}:{sleep_ms}:{limit}", policy.name()),
        None => format!("{}:{sleep_ms}", policy.name()),
    }
}

/// Which of Curator's recipes the contenders run: the counterpart of the scenario's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CuratorRecipe {
    /// `InterProcessMutex`, beside our `mutex`.
    Mutex,
    /// `InterProcessSemaphoreMutex` (the `InterProcessSemaphoreV2` of one lease it wraps),
    /// beside our `semaphore-mutex`.
    SemaphoreMutex,
    /// `LeaderLatch`, beside our `leader-latch`.
    LeaderLatch,
}

impl CuratorRecipe {
    /// The counterpart of `scenario`'s recipe, if Curator has one here.
    pub(crate) fn of(scenario: &scenarios::scenario::Scenario) -> Option<CuratorRecipe> {
        match scenario.recipe.built_in()? {
            RecipeKind::Mutex => Some(CuratorRecipe::Mutex),
            RecipeKind::SemaphoreMutex => Some(CuratorRecipe::SemaphoreMutex),
            RecipeKind::LeaderLatch => Some(CuratorRecipe::LeaderLatch),
            _ => None,
        }
    }

    /// The contender program's name for it.
    fn argument(self) -> &'static str {
        match self {
            CuratorRecipe::Mutex => "mutex",
            CuratorRecipe::SemaphoreMutex => "semaphore-mutex",
            CuratorRecipe::LeaderLatch => "latch",
        }
    }
}

/// What the contenders of one run need to know.
pub(crate) struct ContenderRun<'a> {
    /// Curator's recipe they run.
    pub recipe: CuratorRecipe,
    /// Where each contender connects, in slot order: the server, or the contender's own
    /// proxy in a run whose faults cut the contenders off.
    pub connect_strings: Vec<String>,
    /// The session timeout they ask for.
    pub session_timeout_ms: u64,
    /// The lock path.
    pub lock_path: &'a ZkPath,
    /// The scenario's workload (acquisitions, hold and think times; client `i` asks first
    /// `i × stagger_ms` after the start).
    pub workload: &'a Workload,
    /// The scenario's framework settings: the contenders' retry policy and connection timeout.
    pub framework: &'a FrameworkConfig,
    /// The run's seed (each contender draws its hold and think times from it and its slot).
    pub seed: u64,
    /// The slot of the first contender (the one after the last Rust client, or 0 when the
    /// contenders are the scenario's clients).
    pub first_slot: u16,
    /// The run's recorder.
    pub recorder: Recorder,
    /// The run's clock.
    pub clock: RealClock,
    /// The run's protected resource.
    pub resource: Arc<dyn SharedResource>,
}

/// The contenders of a run, SIGKILLed when dropped before they end.
pub(crate) struct Contenders {
    running: Vec<Contender>,
    /// Serves the resource until the contenders are gone.
    service: ResourceService,
}

impl Contenders {
    /// Waits until every contender has ended; the first failure, if any.
    pub(crate) async fn ended(&mut self) -> Result<(), String> {
        let endings = join_all(self.running.iter_mut().map(Contender::ended)).await;
        endings.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contenders_read_every_retry_policy_the_scenario_can_name() {
        assert_eq!(
            retry_spec(RetryPolicy::DEFAULT),
            "exponential-backoff:1000:3"
        );
        let n_times = RetryPolicy::NTimes {
            n: 1,
            sleep_ms: 500,
        };
        assert_eq!(retry_spec(n_times), "n-times:500:1");
        let forever = RetryPolicy::Forever { sleep_ms: 250 };
        assert_eq!(retry_spec(forever), "forever:250");
    }
}
