//! The shards' summaries, read and checked: each one a finished shard of the same hunt (the
//! same shard count, options, scenarios by name and digest, seed ranges and expectations),
//! each shard once, none missing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use scenarios::scenario::parse_json;
use splitbrain::sweep::Shard;

use super::super::SUMMARY_FILE;
use super::super::summary::{Summary, Tally};
use crate::cli::Failure;

/// One shard's output directory and summary.
pub(super) struct Part {
    pub(super) dir: PathBuf,
    /// `DIR/summary.json`, for errors.
    pub(super) file: String,
    pub(super) summary: Summary,
}

impl Part {
    /// Reads `DIR/summary.json`.
    pub(super) fn read(dir: &Path) -> Result<Part, Failure> {
        let path = dir.join(SUMMARY_FILE);
        let file = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Failure(format!(
                "{file}: expected the summary of `splitbrain hunt --shard I/N --out {}`, found \
                 {e}",
                dir.display()
            ))
        })?;
        let summary: Summary = parse_json(&file, &text)?;
        for (i, scenario) in summary.scenarios.iter().enumerate() {
            for (j, p) in scenario.properties.iter().enumerate() {
                let (traces, reports, kept) = (p.traces.len(), p.reports.len(), p.kept.len());
                if traces != kept || reports != kept {
                    return Err(Failure(format!(
                        "{file}: /scenarios/{i}/properties/{j}/kept: expected one entry per \
                         trace and report ({traces} traces, {reports} reports), found {kept}"
                    )));
                }
            }
        }
        Ok(Part {
            dir: dir.to_owned(),
            file,
            summary,
        })
    }

    /// The shard it ran (`0/1` for an unsharded hunt).
    pub(super) fn shard(&self) -> Shard {
        self.summary.shard.unwrap_or(Shard::WHOLE)
    }
}

/// Checks that `parts` are the shards of one hunt, each once and none missing, and sorts
/// them by shard index.
pub(super) fn check_shards(parts: &mut [Part]) -> Result<(), Failure> {
    let first = &parts[0];
    let count = first.shard().count;
    for part in parts.iter() {
        same_hunt(first, part)?;
    }
    parts.sort_by_key(|part| part.shard().index);
    for pair in parts.windows(2) {
        if pair[0].shard() == pair[1].shard() {
            let shard = pair[1].shard();
            return Err(Failure(format!(
                "{}: /shard: expected each shard once, found shard {}/{} again (also {}): \
                 overlapping shards",
                pair[1].file, shard.index, shard.count, pair[0].file
            )));
        }
    }
    let have: BTreeSet<u64> = parts.iter().map(|part| part.shard().index).collect();
    let missing: Vec<String> = (0..count)
        .filter(|index| !have.contains(index))
        .map(|index| format!("{index}/{count}"))
        .collect();
    if !missing.is_empty() {
        let found: Vec<String> = have.iter().map(|i| format!("{i}/{count}")).collect();
        return Err(Failure(format!(
            "missing shards {}: expected the summaries of all {count} shards, found {}",
            missing.join(", "),
            found.join(", ")
        )));
    }
    Ok(())
}

/// Checks that `part` is a finished shard of the same hunt as `first`: the same shard count,
/// options, scenarios (by name and digest), seed ranges and expectations.
fn same_hunt(first: &Part, part: &Part) -> Result<(), Failure> {
    let differs = |pointer: String, theirs: String, ours: String| {
        Failure(format!(
            "{}: {pointer}: expected {ours} like {} (shards of one hunt), found {theirs}",
            part.file, first.file
        ))
    };
    let (a, b) = (&first.summary, &part.summary);
    if part.shard().count != first.shard().count {
        let count = |p: &Part| p.shard().count.to_string();
        return Err(differs("/shard/count".into(), count(part), count(first)));
    }
    if (a.unfenced, a.all_reports) != (b.unfenced, b.all_reports) {
        let options =
            |s: &Summary| format!("unfenced {}, all_reports {}", s.unfenced, s.all_reports);
        return Err(differs("/unfenced".into(), options(b), options(a)));
    }
    let names = |s: &Summary| {
        s.scenarios
            .iter()
            .map(|t| t.name.clone())
            .collect::<Vec<_>>()
    };
    if names(a) != names(b) {
        let list = |s: &Summary| format!("scenarios [{}]", names(s).join(", "));
        return Err(differs("/scenarios".into(), list(b), list(a)));
    }
    for (i, (x, y)) in a.scenarios.iter().zip(&b.scenarios).enumerate() {
        if x.scenario_digest != y.scenario_digest {
            let digest = |t: &Tally| format!("scenario digest {}", t.scenario_digest);
            let pointer = format!("/scenarios/{i}/scenario_digest");
            return Err(differs(pointer, digest(y), digest(x)));
        }
        if x.seeds != y.seeds {
            let seeds = |t: &Tally| format!("seeds {}", t.seeds);
            return Err(differs(format!("/scenarios/{i}/seeds"), seeds(y), seeds(x)));
        }
        let expected = |t: &Tally| {
            let pairs = t
                .properties
                .iter()
                .map(|p| format!("{} {:?}", p.name, p.expectation));
            pairs.collect::<Vec<_>>().join(", ")
        };
        if expected(x) != expected(y) {
            return Err(differs(
                format!("/scenarios/{i}/properties"),
                expected(y),
                expected(x),
            ));
        }
        let shard = part.shard();
        let wanted = shard.count_in(y.seeds.start, y.seeds.end);
        if y.seeds_run != wanted {
            return Err(Failure(format!(
                "{}: /scenarios/{i}/seeds_run: expected {wanted} (the seeds of {} in shard \
                 {}/{}), found {} (an unfinished shard?)",
                part.file, y.seeds, shard.index, shard.count, y.seeds_run
            )));
        }
    }
    Ok(())
}
