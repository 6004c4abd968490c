//! `splitbrain merge`: puts the shards of a hunt back together. Each `hunt --shard I/N --out
//! DIR` leaves `DIR/summary.json` and the traces and reports it kept; `merge DIR…` checks
//! that the directories are the N different shards of one hunt, adds their tallies up, keeps
//! the traces one process over all the seeds would have kept (a seed among the first
//! violating seeds of its property is among the first of its own shard too, so every one of
//! them is in some shard), copies them and renders their reports again under `--out`, and
//! writes the summary, `index.html` and the verdicts exactly as one process would have.
//! Timing differs: `seconds` is the slowest shard's, `seeds_per_second` the sum of theirs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use recipe_table::property::Property;
use scenarios::scenario::parse_json;
use splitbrain::files::write_atomic;
use splitbrain::run;
use trace::Trace;

use super::summary::{FAILURES_LISTED, Kept, PropertyTally, Setup, Summary, Tally};
use super::{KEPT_PER_PROPERTY, finish};
use crate::cli::{Failure, Outcome, report_html};

mod parts;

use parts::{Part, check_shards};

/// Arguments of `merge`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The output directories of the shards of one hunt (`hunt --shard I/N --out DIR`), each
    /// holding its summary.json.
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Where to write the merged summary.json, index.html and the kept traces and reports.
    #[arg(long, value_name = "DIR", default_value = "splitbrain-out")]
    out: PathBuf,
    /// Print the merged summary as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs the command.
pub fn run(args: Args) -> Outcome {
    for dir in &args.dirs {
        if same_dir(dir, &args.out) {
            return Err(Failure(format!(
                "--out: expected a directory other than the shards', found {}",
                dir.display()
            )));
        }
    }
    let mut parts = args
        .dirs
        .iter()
        .map(|dir| Part::read(dir))
        .collect::<Result<Vec<_>, _>>()?;
    check_shards(&mut parts)?;
    let (summary, copies) = combine(&parts, &args.out)?;
    for copy in copies.values() {
        copy.run()?;
    }
    finish(&args.out, args.json, summary)
}

/// True when `a` and `b` name the same existing directory (or the same path).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// A kept trace to bring under the merged output directory, its report rendered again.
struct Copy {
    from: PathBuf,
    trace: PathBuf,
    report: PathBuf,
    shrunk_for: Option<Property>,
}

impl Copy {
    fn run(&self) -> Result<(), Failure> {
        let file = self.from.display().to_string();
        let text = std::fs::read_to_string(&self.from)
            .map_err(|e| Failure(format!("{file}: expected a kept trace, found {e}")))?;
        let trace: Trace = parse_json(&file, &text)?;
        let scenario = trace.meta.scenario_spec.clone().ok_or_else(|| {
            Failure(format!(
                "{file}: /meta/scenario_spec: expected the scenario as run, found none"
            ))
        })?;
        let outcome = run::checked(trace, &scenario);
        let written = |path: &Path, bytes: &[u8]| {
            write_atomic(path, bytes).map_err(|e| Failure(format!("{}: {e}", path.display())))
        };
        written(&self.trace, text.as_bytes())?;
        let html = report_html(&outcome, &self.trace, self.shrunk_for);
        written(&self.report, html.as_bytes())
    }
}

/// The merged summary of `parts` (sorted, checked shards) under `out`, and the traces to
/// copy there, by destination.
fn combine(parts: &[Part], out: &Path) -> Result<(Summary, BTreeMap<PathBuf, Copy>), Failure> {
    let all_reports = parts[0].summary.all_reports;
    let mut copies = BTreeMap::new();
    let mut scenarios = Vec::new();
    for (i, first) in parts[0].summary.scenarios.iter().enumerate() {
        let tallies: Vec<(&Part, &Tally)> = parts
            .iter()
            .map(|part| (part, &part.summary.scenarios[i]))
            .collect();
        let mut failures: Vec<_> = tallies
            .iter()
            .flat_map(|(_, t)| t.failures.iter().cloned())
            .collect();
        failures.sort_by_key(|failure| failure.seed);
        failures.truncate(FAILURES_LISTED);
        let candidates: Vec<Vec<Candidate>> = (0..first.properties.len())
            .map(|j| candidates(&tallies, i, j))
            .collect();
        let kept_seeds = kept_seeds(&candidates, all_reports);
        let mut properties = Vec::new();
        for (j, property) in first.properties.iter().enumerate() {
            let mut merged = PropertyTally {
                seeds_violating: tallies
                    .iter()
                    .map(|(_, t)| t.properties[j].seeds_violating)
                    .sum(),
                first_violating_seed: tallies
                    .iter()
                    .filter_map(|(_, t)| t.properties[j].first_violating_seed)
                    .min(),
                traces: Vec::new(),
                reports: Vec::new(),
                kept: Vec::new(),
                ..property.clone()
            };
            for candidate in &candidates[j] {
                if kept_seeds.contains(&candidate.kept.seed) {
                    let copy = candidate.copy(out, property.name)?;
                    merged.traces.push(copy.trace.display().to_string());
                    merged.reports.push(copy.report.display().to_string());
                    merged.kept.push(candidate.kept);
                    copies.insert(copy.trace.clone(), copy);
                }
            }
            properties.push(merged);
        }
        scenarios.push(Tally {
            seeds_run: tallies.iter().map(|(_, t)| t.seeds_run).sum(),
            runs_failed: tallies.iter().map(|(_, t)| t.runs_failed).sum(),
            failures,
            properties,
            ..first.clone()
        });
    }
    let seconds = parts.iter().map(|p| p.summary.seconds).fold(0.0, f64::max);
    let rate = parts.iter().map(|p| p.summary.seeds_per_second).sum();
    let setup = Setup {
        shard: None,
        unfenced: parts[0].summary.unfenced,
        all_reports,
        out: out.display().to_string(),
    };
    Ok((Summary::settled(scenarios, setup, seconds, rate), copies))
}

/// A trace one shard kept for a property.
struct Candidate<'a> {
    part: &'a Part,
    kept: Kept,
    trace: &'a str,
    /// Where it is in the shard's summary, for errors.
    pointer: String,
}

/// Every trace kept for property `j` of scenario `i` by any shard, in seed order (a seed's
/// own run before its shrunk one, as one process writes them).
fn candidates<'a>(tallies: &[(&'a Part, &'a Tally)], i: usize, j: usize) -> Vec<Candidate<'a>> {
    let mut all: Vec<Candidate> = tallies
        .iter()
        .flat_map(|&(part, tally)| {
            let property = &tally.properties[j];
            (property.kept.iter().zip(&property.traces))
                .enumerate()
                .map(move |(k, (kept, trace))| Candidate {
                    part,
                    kept: *kept,
                    trace,
                    pointer: format!("/scenarios/{i}/properties/{j}/traces/{k}"),
                })
        })
        .collect();
    all.sort_by_key(|candidate| candidate.kept);
    all
}

/// The seeds one process would have kept: the first [`KEPT_PER_PROPERTY`] violating seeds of
/// each property (each shard lists at least its own first ones), or all with `all_reports`.
fn kept_seeds(candidates: &[Vec<Candidate>], all_reports: bool) -> BTreeSet<u64> {
    let mut kept = BTreeSet::new();
    for property in candidates {
        let seeds: BTreeSet<u64> = property.iter().map(|c| c.kept.seed).collect();
        let take = if all_reports {
            usize::MAX
        } else {
            KEPT_PER_PROPERTY
        };
        kept.extend(seeds.into_iter().take(take));
    }
    kept
}

impl Candidate<'_> {
    /// Where this trace comes from and goes to under `out`.
    fn copy(&self, out: &Path, property: Property) -> Result<Copy, Failure> {
        let shard_out = &self.part.summary.out;
        let relative = Path::new(self.trace).strip_prefix(shard_out).map_err(|_| {
            Failure(format!(
                "{}: {}: expected a path inside the shard's output directory {shard_out}, \
                 found {}",
                self.part.file, self.pointer, self.trace
            ))
        })?;
        let name = relative.to_string_lossy();
        let stem = name.strip_suffix(".trace.json").ok_or_else(|| {
            Failure(format!(
                "{}: {}: expected a file name ending in .trace.json, found {}",
                self.part.file, self.pointer, self.trace
            ))
        })?;
        Ok(Copy {
            from: self.part.dir.join(relative),
            trace: out.join(relative),
            report: out.join(format!("{stem}.report.html")),
            shrunk_for: self.kept.shrunk.then_some(property),
        })
    }
}
