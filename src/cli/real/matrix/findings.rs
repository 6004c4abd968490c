//! The findings of a matrix: per library and recipe, each scenario's properties with the runs
//! that violated them out of the runs made and the first violating seed, as JSON
//! (`findings.json`) and as a Markdown page (`findings.md`, the book's findings table, written
//! whole so that it is regenerated, never edited).

use std::fmt::Write as _;

use recipe_table::property::{Expectation, Property};
use scenarios::scenario::SeedRange;
use serde::Serialize;

use crate::cli::bench::results::Machine;
use crate::cli::hunt::summary::Failed;
use crate::cli::real::sweep::RealSweep;

/// Everything a matrix found, and where and how.
#[derive(Debug, Serialize)]
pub struct Findings {
    /// The command that made them (and regenerates them).
    pub command: String,
    /// What the matrix is for (its file's description).
    pub description: String,
    /// The commit of the working directory, as `git describe --always --dirty` says it.
    pub commit: String,
    /// The machine.
    pub machine: Machine,
    /// The servers: `standalone`, `ensemble-3`, or `--connect`'s addresses.
    pub target: String,
    /// Wall-clock seconds the matrix took.
    pub seconds: u64,
    /// Each library's name and description.
    pub libraries: Vec<(String, String)>,
    /// One per row, in the file's order.
    pub rows: Vec<Finding>,
}

/// One row's findings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// The library's name (the matrix file's).
    pub library: String,
    /// The scenario's recipe.
    pub recipe: String,
    /// The scenario.
    pub scenario: String,
    /// The row's own flags of `splitbrain real`.
    pub flags: Vec<String>,
    /// The seeds swept.
    pub seeds: SeedRange,
    /// Runs made (failed ones included).
    pub runs: u64,
    /// Runs that failed for the harness's reasons, all counted.
    pub runs_failed: u64,
    /// The first of them, each with its seed and why.
    pub failures: Vec<Failed>,
    /// Seeds whose schedules the real executor refused, all counted.
    pub seeds_refused: u64,
    /// The first of them, each with why.
    pub refusals: Vec<Failed>,
    /// Each checked property.
    pub properties: Vec<PropertyFinding>,
    /// The row's summary page, with the kept runs' reports.
    pub summary: Option<String>,
    /// Why the row could not be judged (Ctrl-C, every run failed, a file not written).
    pub error: Option<String>,
}

/// One property of one row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PropertyFinding {
    /// The property.
    pub name: Property,
    /// What the scenario expects of it (of splitbrain's recipe under Curator's defaults).
    pub expectation: Expectation,
    /// Runs that violated it.
    pub violating_runs: u64,
    /// The first of them.
    pub first_violating_seed: Option<u64>,
}

impl Finding {
    /// The findings of a row's sweep, or of a row that broke (`swept` an error).
    pub fn of(
        library: &str,
        recipe: String,
        scenario: String,
        flags: Vec<String>,
        seeds: SeedRange,
        swept: Result<&RealSweep, String>,
    ) -> Finding {
        let mut finding = Finding {
            library: library.to_owned(),
            recipe,
            scenario,
            flags,
            seeds,
            runs: 0,
            runs_failed: 0,
            failures: Vec::new(),
            seeds_refused: 0,
            refusals: Vec::new(),
            properties: Vec::new(),
            summary: None,
            error: None,
        };
        let swept = match swept {
            Ok(swept) => swept,
            Err(error) => {
                finding.error = Some(error);
                return finding;
            }
        };
        let tally = swept.tally();
        finding.runs = tally.seeds_run;
        finding.runs_failed = tally.runs_failed;
        finding.failures = tally.failures.clone();
        finding.seeds_refused = swept.seeds_refused;
        finding.refusals = swept.refusals.clone();
        finding.properties = (tally.properties.iter())
            .map(|p| PropertyFinding {
                name: p.name,
                expectation: p.expectation,
                violating_runs: p.seeds_violating,
                first_violating_seed: p.first_violating_seed,
            })
            .collect();
        finding.summary = swept.summary.summary_report.clone();
        finding.error = swept.broken();
        finding
    }
}

impl Findings {
    /// What the rows ran against, in words: the matrix's servers, and a local ensemble for
    /// the rows whose own flags ask for one (`--ensemble N`).
    fn servers(&self) -> String {
        let servers = format!("a {} ZooKeeper", self.target);
        let ensemble_rows = (self.rows.iter())
            .filter(|row| row.flags.iter().any(|flag| flag == "--ensemble"))
            .count();
        match ensemble_rows {
            0 => servers,
            n => format!(
                "{servers}, or, for the {n} of {} rows whose flags say `--ensemble N`, a local \
                 ensemble of N",
                self.rows.len()
            ),
        }
    }

    /// The page: a title, how to regenerate it, where it was measured, then one table per
    /// library and recipe (in the order they first appear in the rows), each followed by its
    /// rows' failed runs and refused seeds.
    pub fn markdown(&self) -> String {
        let m = &self.machine;
        let runs: u64 = self.rows.iter().map(|r| r.runs).sum();
        let mut page = String::from("# Findings on a real ZooKeeper\n\n");
        let _ = write!(
            page,
            "<!-- Written by `splitbrain real-matrix`: regenerate it, do not edit it. -->\n\n\
             **Regenerate with** `{}`, then copy its `findings.md` over this page (its \
             `findings.json` has the same figures, and each row's directory its summary and the \
             first violating runs' traces and reports).\n\n\
             {}\n\n\
             Measured at {} on {} ({} cores, {:.0} GiB) against {}: {runs} runs in \
             {} s. Each table is one library's recipe: per scenario and property, the runs that \
             violated the property out of the runs judged (a run that failed, listed below its \
             table, is not), and the first violating seed, whose \
             fault schedule `splitbrain real SCENARIO --seed S` with the library's flags (and \
             the row's, beside its scenario) runs again. The expectation is the scenario's, set for splitbrain's recipe under \
             Curator's defaults. Real runs are timed by a real clock: a count is what these runs \
             showed, not a rate.\n\n",
            self.command,
            self.description,
            self.commit,
            m.cpu,
            m.cores,
            m.memory_gib,
            self.servers(),
            self.seconds
        );
        page.push_str("| library | what it runs |\n| --- | --- |\n");
        for (name, description) in &self.libraries {
            let _ = writeln!(page, "| {name} | {description} |");
        }
        for (library, recipe) in self.groups() {
            let _ = write!(
                page,
                "\n## {library}: {recipe}\n\n\
                 | scenario | property | expected | violating runs | first violating seed |\n\
                 | --- | --- | --- | --- | --- |\n"
            );
            let rows: Vec<&Finding> = (self.rows.iter())
                .filter(|r| r.library == library && r.recipe == recipe)
                .collect();
            for row in &rows {
                for p in &row.properties {
                    let first = p.first_violating_seed.map_or("-".into(), |s| s.to_string());
                    let _ = writeln!(
                        page,
                        "| {} | {} | {} | {} | {first} |",
                        row.label(),
                        p.name,
                        p.expectation.name(),
                        row.violating(p),
                    );
                }
            }
            let notes: Vec<String> = rows.iter().flat_map(|row| row.notes()).collect();
            if !notes.is_empty() {
                page.push('\n');
                notes
                    .iter()
                    .for_each(|note| page.push_str(&format!("- {note}\n")));
            }
        }
        page
    }

    /// Each library and recipe, in the order they first appear.
    fn groups(&self) -> Vec<(&str, &str)> {
        let mut groups = Vec::new();
        for row in &self.rows {
            let group = (row.library.as_str(), row.recipe.as_str());
            if !groups.contains(&group) {
                groups.push(group);
            }
        }
        groups
    }
}

impl Finding {
    /// The scenario, and the row's own flags when it has any.
    fn label(&self) -> String {
        match self.flags.as_slice() {
            [] => self.scenario.clone(),
            flags => format!("{} (`{}`)", self.scenario, flags.join(" ")),
        }
    }

    /// The runs judged: those made, less those that failed (a failed run's trace is partial,
    /// so no property is judged on it).
    fn judged(&self) -> u64 {
        self.runs - self.runs_failed
    }

    /// A property's cell: its violating runs out of the runs judged, or that none was (the
    /// notes below the table say why).
    fn violating(&self, property: &PropertyFinding) -> String {
        match self.judged() {
            0 => "not judged".to_owned(),
            judged => format!("{} of {judged}", property.violating_runs),
        }
    }

    /// The row in one line: its runs, and the properties they violated.
    pub fn line(&self) -> String {
        if let Some(error) = &self.error {
            return format!("not judged: {error}");
        }
        let violated: Vec<String> = (self.properties.iter())
            .filter(|p| p.violating_runs > 0)
            .map(|p| format!("{} in {}", p.name, p.violating_runs))
            .collect();
        format!(
            "{} run(s), {} failed, {} seed(s) refused; violated: {}",
            self.runs,
            self.runs_failed,
            self.seeds_refused,
            if violated.is_empty() {
                "nothing".to_owned()
            } else {
                violated.join(", ")
            }
        )
    }

    /// What the table leaves out of this row: why it broke, its failed runs, its refused seeds.
    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(error) = &self.error {
            notes.push(format!("{}: not judged: {error}", self.label()));
        }
        let listed = |what: &str, count: u64, first: &[Failed]| {
            first.first().map(|first| {
                format!(
                    "{}: {count} {what} (the first, seed {}: {})",
                    self.label(),
                    first.seed,
                    first.error.replace('|', "\\|")
                )
            })
        };
        notes.extend(listed("run(s) failed", self.runs_failed, &self.failures));
        notes.extend(listed(
            "seed(s) refused",
            self.seeds_refused,
            &self.refusals,
        ));
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::hunt::summary::{Setup, Sweep};
    use recipe_table::property::Violation;
    use scenarios::catalog::Catalog;

    fn violation(property: Property) -> Violation {
        Violation {
            property,
            at: 1,
            until: None,
            clients: Vec::new(),
            events: Vec::new(),
            message: "a test's".into(),
        }
    }

    /// The sweep of 4 seeds of `gc-pause-fenced` in which seeds 1 and 3 violate belief
    /// exclusion and seed 2 fails, seeds 4 and 5 being refused.
    fn swept() -> RealSweep {
        let scenario = Catalog::builtin()
            .unwrap()
            .get("gc-pause-fenced")
            .unwrap()
            .clone();
        let setup = Setup {
            shard: None,
            unfenced: false,
            all_reports: false,
            out: "out".into(),
        };
        let mut sweep = Sweep::new(&[(scenario, "0..6".parse().unwrap())], setup);
        let tally = &mut sweep.scenarios[0];
        let belief = [violation(Property::MutualExclusionBelief)];
        assert!(tally.record(0, &[], false, 1).is_none());
        assert_eq!(
            tally.record(1, &belief, false, 1),
            Some(vec![Property::MutualExclusionBelief]),
            "the first violating run is kept"
        );
        tally.fail(2, &"a client process died");
        assert_eq!(
            tally.record(3, &belief, false, 1),
            None,
            "the second is not, with --keep 1"
        );
        RealSweep {
            summary: sweep.summary(1.0),
            seeds_refused: 2,
            refusals: vec![Failed {
                seed: 4,
                error: "faults: drop has no real counterpart".into(),
            }],
            interrupted: false,
        }
    }

    fn findings(rows: Vec<Finding>) -> Findings {
        Findings {
            command: "splitbrain real-matrix m.json --start-local".into(),
            description: "A test's matrix.".into(),
            commit: "abc1234".into(),
            machine: Machine {
                cpu: "a CPU".into(),
                cores: 2,
                memory_gib: 4.0,
            },
            target: "standalone".into(),
            seconds: 60,
            libraries: vec![("curator".into(), "Curator's own".into())],
            rows,
        }
    }

    #[test]
    fn a_sweep_becomes_a_row_of_counts_and_first_seeds() {
        let swept = swept();
        let row = Finding::of(
            "curator",
            "mutex".into(),
            "gc-pause-fenced".into(),
            Vec::new(),
            "0..6".parse().unwrap(),
            Ok(&swept),
        );
        assert_eq!((row.runs, row.runs_failed, row.seeds_refused), (4, 1, 2));
        let belief = (row.properties.iter())
            .find(|p| p.name == Property::MutualExclusionBelief)
            .unwrap();
        assert_eq!(
            (belief.violating_runs, belief.first_violating_seed),
            (2, Some(1))
        );
        let progress = (row.properties.iter())
            .find(|p| p.name == Property::Progress)
            .unwrap();
        assert_eq!(
            (progress.violating_runs, progress.first_violating_seed),
            (0, None)
        );
        assert_eq!(row.error, None);
    }

    #[test]
    fn a_row_whose_every_run_failed_is_not_judged_rather_than_clean() {
        let mut row = Finding::of(
            "zookeeper-async",
            "mutex".into(),
            "gc-pause-fenced".into(),
            Vec::new(),
            "0..6".parse().unwrap(),
            Ok(&swept()),
        );
        row.runs_failed = row.runs;
        let page = findings(vec![row]).markdown();
        assert!(
            page.contains("| gc-pause-fenced | progress | holds | not judged | - |\n"),
            "{page}"
        );
        assert!(!page.contains(" of 4 |"), "{page}");
    }

    #[test]
    fn the_page_has_one_table_per_library_and_recipe_with_each_rows_notes() {
        let swept = swept();
        let row = |library: &str, scenario: &str, flags: &[&str]| {
            let seeds = "0..6".parse().unwrap();
            let flags = flags.iter().map(|f| f.to_string()).collect();
            Finding::of(
                library,
                "mutex".into(),
                scenario.into(),
                flags,
                seeds,
                Ok(&swept),
            )
        };
        let broken = Finding::of(
            "curator",
            "leader-latch".into(),
            "leader-latch-gc-pause".into(),
            Vec::new(),
            "0..2".parse().unwrap(),
            Err("every run of the sweep failed".into()),
        );
        let page = findings(vec![
            row("curator", "gc-pause-fenced", &[]),
            broken,
            row("curator", "x", &["--ensemble", "3"]),
        ])
        .markdown();
        assert!(
            page.starts_with("# Findings on a real ZooKeeper\n"),
            "{page}"
        );
        assert!(
            page.contains("**Regenerate with** `splitbrain real-matrix m.json --start-local`"),
            "{page}"
        );
        assert!(
            page.contains(
                "against a standalone ZooKeeper, or, for the 1 of 3 rows whose flags say \
                 `--ensemble N`, a local ensemble of N:"
            ),
            "{page}"
        );
        let mutex = page
            .find("\n## curator: mutex\n")
            .expect("the mutex's table");
        let latch = page
            .find("\n## curator: leader-latch\n")
            .expect("the latch's");
        assert!(mutex < latch, "in the order of the rows");
        let table = &page[mutex..latch];
        assert!(
            table.contains(
                "| gc-pause-fenced | mutual_exclusion_belief | violated | 2 of 3 | 1 |\n"
            ),
            "{table}"
        );
        assert!(
            table.contains("| x (`--ensemble 3`) | progress | holds | 0 of 3 | - |\n"),
            "{table}"
        );
        assert!(
            table.contains(
                "- gc-pause-fenced: 1 run(s) failed (the first, seed 2: a client process died)\n"
            ),
            "{table}"
        );
        assert!(
            table.contains(
                "- x (`--ensemble 3`): 2 seed(s) refused (the first, seed 4: faults: drop has no real \
                 counterpart)\n"
            ),
            "{table}"
        );
        assert!(
            page[latch..]
                .contains("- leader-latch-gc-pause: not judged: every run of the sweep failed\n"),
            "{page}"
        );
    }
}
