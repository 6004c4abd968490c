//! The results of `splitbrain bench`: the machine and commit they were measured on, every
//! figure, and the Markdown table the book's "Measured results" page shows.

use std::fmt::Write as _;
use std::process::Command;

use serde::Serialize;

use super::figures::{EnsembleCost, FirstSplitBrain, Memory, ModelRow, Sizes, Throughput};

/// Where the figures were measured.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// CPU model (`/proc/cpuinfo`), or "unknown".
    pub cpu: String,
    /// Cores available to this process.
    pub cores: usize,
    /// Total memory, GiB (`/proc/meminfo`; 0 when unreadable).
    pub memory_gib: f64,
}

/// Everything one `splitbrain bench` measured.
#[derive(Clone, Debug, Serialize)]
pub struct Results {
    /// The machine.
    pub machine: Machine,
    /// `git describe --always --dirty` of the working directory, or "unknown".
    pub commit: String,
    /// `quick` or `full`.
    pub mode: &'static str,
    /// How much each figure ran.
    pub sizes: Sizes,
    /// Mean simulated seconds per seed of the bench scenario.
    pub simulated_s_per_seed: f64,
    /// Hunt throughput on one core.
    pub one_core: Throughput,
    /// Hunt throughput on every core.
    pub all_cores: Throughput,
    /// What a 3-server ensemble costs a hunt.
    pub ensemble: EnsembleCost,
    /// Peak memory of a hunt, and of one ten times as long.
    pub memory: [Memory; 2],
    /// Time to the first GC-pause split brain.
    pub first_split_brain: FirstSplitBrain,
    /// `check mutex` at each client count, with and without symmetry.
    pub model: Vec<ModelRow>,
}

impl Machine {
    /// This machine.
    pub fn this() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = (cpuinfo.lines())
            .find_map(|line| line.strip_prefix("model name"))
            .and_then(|rest| rest.split_once(':'))
            .map_or("unknown".to_string(), |(_, name)| name.trim().to_string());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let kib: f64 = (meminfo.lines())
            .find_map(|line| line.strip_prefix("MemTotal:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0.0);
        Machine {
            cpu,
            cores: splitbrain::sweep::default_workers(),
            memory_gib: kib / (1024.0 * 1024.0),
        }
    }
}

/// The commit of the working directory, as `git describe --always --dirty` says it.
pub fn commit() -> String {
    Command::new("git")
        .args(["describe", "--always", "--dirty"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|described| !described.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

impl Results {
    /// Simulated seconds per wall second of the bench scenario on one core.
    pub fn speedup(&self) -> f64 {
        self.simulated_s_per_seed * self.one_core.seeds_per_s
    }

    /// The results as Markdown: a title line, the simulator's figures and the model's.
    pub fn markdown(&self) -> String {
        let m = &self.machine;
        let mut text = format!(
            "`splitbrain bench{}` at {} on {} ({} cores, {:.0} GiB); medians of {} runs.\n\n",
            if self.mode == "quick" { " --quick" } else { "" },
            self.commit,
            m.cpu,
            m.cores,
            m.memory_gib,
            self.sizes.runs,
        );
        text.push_str("| figure | result |\n| --- | --- |\n");
        let rows = [
            (
                format!(
                    "hunt, bench scenario, 1 core ({} seeds)",
                    self.one_core.seeds
                ),
                format!(
                    "{:.0} seeds/s; {:.0} simulated s per wall s",
                    self.one_core.seeds_per_s,
                    self.speedup()
                ),
            ),
            (
                format!(
                    "hunt, bench scenario, {} cores ({} seeds)",
                    self.all_cores.jobs, self.all_cores.seeds
                ),
                format!(
                    "{:.0} seeds/s ({:.2}× one core)",
                    self.all_cores.seeds_per_s,
                    self.all_cores.seeds_per_s / self.one_core.seeds_per_s.max(f64::MIN_POSITIVE)
                ),
            ),
            (
                format!(
                    "hunt, bench scenario without server restarts, 1 core ({} seeds): 1 server, \
                     3-server ensemble",
                    self.ensemble.standalone.seeds
                ),
                format!(
                    "{:.0} and {:.0} seeds/s (the ensemble at {:.2}×; target ≥ 0.5×)",
                    self.ensemble.standalone.seeds_per_s,
                    self.ensemble.ensemble.seeds_per_s,
                    self.ensemble.ensemble.seeds_per_s
                        / self.ensemble.standalone.seeds_per_s.max(f64::MIN_POSITIVE)
                ),
            ),
            (
                format!(
                    "hunt peak memory, --jobs {}, {} and {} seeds",
                    self.memory[0].jobs, self.memory[0].seeds, self.memory[1].seeds
                ),
                format!(
                    "{:.1} MB and {:.1} MB",
                    self.memory[0].peak_rss_mb, self.memory[1].peak_rss_mb
                ),
            ),
            (
                format!(
                    "first GC-pause split brain (`{}`, 1 core, from seed 0)",
                    self.first_split_brain.scenario
                ),
                match self.first_split_brain.seed {
                    Some(seed) => {
                        format!("seed {seed}, after {:.2} s", self.first_split_brain.seconds)
                    }
                    None => format!(
                        "none in {} seeds ({:.1} s)",
                        self.sizes.split_brain_seeds, self.first_split_brain.seconds
                    ),
                },
            ),
        ];
        for (figure, result) in rows {
            let _ = writeln!(text, "| {figure} | {result} |");
        }
        let _ = write!(
            text,
            "\n`check mutex` (default budgets, or one follower cut in place of the expiry), \
             capped at {} s:\n\n\
             | clients | symmetry | faults | unique states | states/s | seconds | peak memory | complete |\n\
             | --- | --- | --- | --- | --- | --- | --- | --- |\n",
            self.sizes.model_cap_s
        );
        for row in &self.model {
            let _ = writeln!(
                text,
                "| {} | {} | {} | {} | {:.0} | {:.1} | {:.0} MB | {} |",
                row.check.clients,
                if row.check.symmetry { "yes" } else { "no" },
                row.check.faults.label(),
                row.unique_states,
                row.states_per_s,
                row.seconds,
                row.peak_rss_mb,
                if row.complete { "yes" } else { "no (cap)" },
            );
        }
        text
    }
}
