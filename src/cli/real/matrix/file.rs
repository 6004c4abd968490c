//! A matrix file: the libraries, each named by the `splitbrain real` flags that run it, and the
//! rows to sweep, each a library, a scenario, its seeds and flags of its own. Every row is checked (its library,
//! its flags, its scenario, that some of its seeds can run) before any server starts, and a
//! mistake is one line naming the file and the field.
//!
//! ```json
//! {
//!   "description": "What the matrix is for",
//!   "libraries": {
//!     "splitbrain": { "description": "splitbrain's recipes", "real_flags": [] },
//!     "curator": { "description": "Curator 5's own recipe", "real_flags": ["--curator-in-place"] }
//!   },
//!   "rows": [
//!     { "library": "curator", "scenario": "gc-pause-fenced", "seeds": "0..3" },
//!     { "library": "curator", "scenario": "gc-pause-fenced", "seeds": "0..3",
//!       "real_flags": ["--ensemble", "3", "--kill-leader-at", "300"] }
//!   ]
//! }
//! ```
//!
//! A library is what `real`'s flags choose, so a library the executor learns to run takes one
//! entry here and no code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ::scenarios::scenario::{Scenario, SeedRange, parse_json};
use serde::Deserialize;

use crate::cli::Failure;
use crate::cli::real::sweep::{self, Plan};
use crate::cli::real::{Args, load as load_scenario, parse_args};

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MatrixFile {
    /// What the matrix is for.
    #[serde(default)]
    description: String,
    /// The libraries, by the name rows give them.
    libraries: BTreeMap<String, Library>,
    /// What to sweep, in order.
    rows: Vec<Row>,
}

/// A library: what it is, and the `splitbrain real` flags that run it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Library {
    /// What it is, for people.
    description: String,
    /// The flags of `splitbrain real` that run this library's code as the scenario's clients.
    real_flags: Vec<String>,
}

/// One row: a library, a scenario (a catalog name or a scenario file), the seeds to sweep,
/// and flags of `splitbrain real` for this row alone.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    library: String,
    scenario: String,
    seeds: SeedRange,
    /// After the library's: `--ensemble 3 --kill-leader-at 300` runs the row on a 3-server
    /// ensemble whose leader is killed 300 ms in.
    #[serde(default)]
    real_flags: Vec<String>,
}

/// What every row's sweep shares, from the `real-matrix` command line.
pub struct Common {
    /// `real`'s server flags (`--start-local`, `--ensemble N`, `--connect …`) and `--catalog`.
    pub flags: Vec<String>,
    /// Where each row's sweep writes, in `<library>/<scenario>/`.
    pub out: PathBuf,
    /// Whether to hide the progress bars (`--json`).
    pub json: bool,
}

/// A matrix file read and checked.
pub struct Matrix {
    /// What the matrix is for.
    pub description: String,
    /// Each library's name and description.
    pub libraries: Vec<(String, String)>,
    /// The rows, in the file's order.
    pub rows: Vec<Planned>,
}

/// A row ready to sweep.
pub struct Planned {
    /// The library's name.
    pub library: String,
    /// The scenario, loaded.
    pub scenario: Scenario,
    /// The seeds it sweeps.
    pub seeds: SeedRange,
    /// The row's own flags of `splitbrain real`.
    pub flags: Vec<String>,
    /// `real`'s arguments for the row's sweep.
    pub args: Args,
    /// Its seeds: those to run and those refused.
    pub plan: Plan,
}

/// Reads the matrix file at `path` and checks every row, before any run; one line naming the
/// file and the field at the first mistake.
pub fn load(path: &Path, common: &Common) -> Result<Matrix, Failure> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure(format!(
            "{file}: expected a readable matrix file, found an error: {e}"
        ))
    })?;
    let matrix: MatrixFile = parse_json(&file, &text)?;
    let rows = plan(&file, &matrix, common)?;
    let libraries = (matrix.libraries.into_iter())
        .map(|(name, library)| (name, library.description))
        .collect();
    Ok(Matrix {
        description: matrix.description,
        libraries,
        rows,
    })
}

/// One line naming `file`, the field at `pointer`, and what went wrong there.
fn mistake(file: &str, pointer: &str, message: impl std::fmt::Display) -> Failure {
    Failure(format!("{file}: {pointer}: {message}"))
}

/// The rows of `matrix`, checked and planned.
fn plan(file: &str, matrix: &MatrixFile, common: &Common) -> Result<Vec<Planned>, Failure> {
    for name in matrix.libraries.keys() {
        let fine = !name.is_empty()
            && (name.chars()).all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !fine {
            return Err(mistake(
                file,
                "/libraries",
                format!(
                    "expected library names of lowercase letters, digits and dashes (each names \
                     a directory), found {name:?}"
                ),
            ));
        }
    }
    if matrix.rows.is_empty() {
        return Err(mistake(
            file,
            "/rows",
            "expected at least one row, found none",
        ));
    }
    let mut seen = BTreeMap::new();
    let mut planned = Vec::new();
    for (index, row) in matrix.rows.iter().enumerate() {
        let at = |field: &str| format!("/rows/{index}{field}");
        let library = matrix.libraries.get(&row.library).ok_or_else(|| {
            let names: Vec<&str> = matrix.libraries.keys().map(String::as_str).collect();
            mistake(
                file,
                &at("/library"),
                format!(
                    "expected a library of the file's `libraries` ({}), found {:?}",
                    names.join(", "),
                    row.library
                ),
            )
        })?;
        let key = (row.library.as_str(), row.scenario.as_str(), &row.real_flags);
        if let Some(earlier) = seen.insert(key, index) {
            return Err(mistake(
                file,
                &at(""),
                format!(
                    "expected each library, scenario and row flags in one row, found {} and {} \
                     again (as in /rows/{earlier})",
                    row.library, row.scenario
                ),
            ));
        }
        let out = common.out.join(&row.library).join(row_dir(row));
        let args = row_args(row, library, common, &out, &[]).map_err(|e| {
            let flags = format!("/libraries/{}/real_flags", row.library);
            mistake(
                file,
                &flags,
                format!(
                    "expected flags `splitbrain real` takes for /rows/{index}, found {:?}: {e}",
                    library.real_flags
                ),
            )
        })?;
        let args = match row.real_flags.as_slice() {
            [] => args,
            flags => row_args(row, library, common, &out, flags).map_err(|e| {
                mistake(
                    file,
                    &at("/real_flags"),
                    format!("expected flags `splitbrain real` takes, found {flags:?}: {e}"),
                )
            })?,
        };
        let scenario =
            load_scenario(&args).map_err(|Failure(e)| mistake(file, &at("/scenario"), e))?;
        let plan = sweep::plan(&args, &scenario, row.seeds)
            .map_err(|Failure(e)| mistake(file, &at(""), e))?;
        planned.push(Planned {
            library: row.library.clone(),
            scenario,
            seeds: row.seeds,
            flags: row.real_flags.clone(),
            args,
            plan,
        });
    }
    Ok(planned)
}

/// The directory of a row: its scenario's name (or a scenario file's stem), then its own
/// flags' words, dashes trimmed (`gc-pause-fenced-ensemble-3-kill-leader-at-300`).
fn row_dir(row: &Row) -> String {
    let stem = Path::new(&row.scenario).file_stem();
    let scenario = stem.map_or(row.scenario.clone(), |s| s.to_string_lossy().into_owned());
    let words = (row.real_flags.iter()).map(|word| word.trim_start_matches('-').replace('/', "_"));
    std::iter::once(scenario)
        .chain(words)
        .collect::<Vec<_>>()
        .join("-")
}

/// `real`'s arguments for `row`: its scenario, the sweep of its seeds into `out`, the
/// command's shared flags, its library's flags, then `extra`; clap's first line when they do
/// not parse.
fn row_args(
    row: &Row,
    library: &Library,
    common: &Common,
    out: &Path,
    extra: &[String],
) -> Result<Args, String> {
    let mut words = vec![
        row.scenario.clone(),
        "--seeds".into(),
        row.seeds.to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    if common.json {
        words.push("--json".into());
    }
    words.extend(common.flags.iter().cloned());
    words.extend(library.real_flags.iter().cloned());
    words.extend(extra.iter().cloned());
    parse_args(&words).map_err(|e| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or_default();
        first.trim_start_matches("error: ").to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn common() -> Common {
        Common {
            flags: vec!["--start-local".into()],
            out: PathBuf::from("out"),
            json: true,
        }
    }

    /// The error `text`, as a matrix file `m.json`, is rejected with.
    fn rejected(text: &str) -> String {
        let matrix: Result<MatrixFile, _> = parse_json("m.json", text);
        let Failure(error) = match matrix {
            Ok(matrix) => plan("m.json", &matrix, &common()).err().expect("rejected"),
            Err(e) => Failure(e.to_string()),
        };
        error
    }

    const LIBRARIES: &str = r#""libraries": {
        "splitbrain": {"description": "ours", "real_flags": []},
        "curator": {"description": "Curator's", "real_flags": ["--curator-in-place"]}
    }"#;

    fn with_rows(rows: &str) -> String {
        format!(r#"{{ {LIBRARIES}, "rows": {rows} }}"#)
    }

    #[test]
    fn a_matrix_plans_each_row_with_its_librarys_flags() {
        let text = with_rows(
            r#"[{"library": "splitbrain", "scenario": "gc-pause-fenced", "seeds": "0..3"},
                {"library": "curator", "scenario": "gc-pause-fenced", "seeds": "5..7"}]"#,
        );
        let matrix: MatrixFile = parse_json("m.json", &text).unwrap();
        let rows = plan("m.json", &matrix, &common()).unwrap_or_else(|Failure(e)| panic!("{e}"));
        let libraries: Vec<&str> = rows.iter().map(|r| r.library.as_str()).collect();
        assert_eq!(libraries, ["splitbrain", "curator"]);
        assert!(!rows[0].args.curator_in_place && rows[1].args.curator_in_place);
        assert_eq!(rows[1].args.seeds, Some("5..7".parse().unwrap()));
        assert_eq!(rows[1].args.out, Path::new("out/curator/gc-pause-fenced"));
        assert!(rows[1].args.server.start_local && rows[1].args.json);
    }

    #[test]
    fn the_shipped_matrix_plans_every_row() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/real-matrix.json");
        let matrix = load(&path, &common()).unwrap_or_else(|Failure(e)| panic!("{e}"));
        let on_ensembles = (matrix.rows.iter())
            .filter(|row| row.args.server.ensemble == Some(3))
            .count();
        assert_eq!((matrix.rows.len(), on_ensembles), (127, 59));
    }

    #[test]
    fn a_rows_own_flags_follow_its_librarys_and_name_its_directory() {
        let text = with_rows(
            r#"[{"library": "curator", "scenario": "gc-pause-fenced", "seeds": "0..3"},
                {"library": "curator", "scenario": "gc-pause-fenced", "seeds": "0..3",
                 "real_flags": ["--ensemble", "3", "--kill-leader-at", "300"]}]"#,
        );
        let matrix: MatrixFile = parse_json("m.json", &text).unwrap();
        let rows = plan("m.json", &matrix, &common()).unwrap_or_else(|Failure(e)| panic!("{e}"));
        assert_eq!(rows[0].args.server.ensemble, None);
        assert_eq!(rows[1].args.server.ensemble, Some(3));
        assert!(rows[1].args.curator_in_place);
        assert_eq!(
            rows[1].flags,
            ["--ensemble", "3", "--kill-leader-at", "300"]
        );
        assert_eq!(
            rows[1].args.out,
            Path::new("out/curator/gc-pause-fenced-ensemble-3-kill-leader-at-300")
        );
        let bad = rejected(&with_rows(
            r#"[{"library": "curator", "scenario": "gc-pause-fenced", "seeds": "0..3",
                 "real_flags": ["--ensemble"]}]"#,
        ));
        assert!(
            bad.starts_with(
                "m.json: /rows/0/real_flags: expected flags `splitbrain real` takes, found \
                 [\"--ensemble\"]: "
            ),
            "{bad}"
        );
    }

    #[test]
    fn a_malformed_matrix_names_the_file_and_the_field() {
        assert_eq!(
            rejected(&with_rows(
                r#"[{"library": "kazoo", "scenario": "gc-pause-fenced", "seeds": "0..3"}]"#
            )),
            "m.json: /rows/0/library: expected a library of the file's `libraries` (curator, \
             splitbrain), found \"kazoo\""
        );
        let seeds = rejected(&with_rows(
            r#"[{"library": "curator", "scenario": "gc-pause-fenced", "seeds": "3..1"}]"#,
        ));
        assert!(seeds.starts_with("m.json: /rows/0/seeds: "), "{seeds}");
        let unknown = rejected(&with_rows(
            r#"[{"library": "curator", "scenario": "gc-pause-fenced", "seed": 3}]"#,
        ));
        assert!(unknown.starts_with("m.json: /rows/0"), "{unknown}");
        assert!(unknown.contains("seed"), "{unknown}");
        let scenario = rejected(&with_rows(
            r#"[{"library": "curator", "scenario": "no-such-scenario", "seeds": "0..3"}]"#,
        ));
        assert!(
            scenario.starts_with("m.json: /rows/0/scenario: expected a scenario of the catalog"),
            "{scenario}"
        );
        let twice = rejected(&with_rows(
            r#"[{"library": "curator", "scenario": "gc-pause-fenced", "seeds": "0..3"},
                {"library": "curator", "scenario": "gc-pause-fenced", "seeds": "3..6"}]"#,
        ));
        assert!(
            twice.starts_with(
                "m.json: /rows/1: expected each library, scenario and row flags in one row"
            ),
            "{twice}"
        );
        assert_eq!(
            rejected(&with_rows("[]")),
            "m.json: /rows: expected at least one row, found none"
        );
    }

    #[test]
    fn a_librarys_flags_and_a_row_no_seed_of_which_can_run_are_refused_before_any_run() {
        let flags = rejected(
            r#"{"libraries": {"odd": {"description": "?", "real_flags": ["--no-such-flag"]}},
                "rows": [{"library": "odd", "scenario": "gc-pause-fenced", "seeds": "0..3"}]}"#,
        );
        assert!(
            flags.starts_with(
                "m.json: /libraries/odd/real_flags: expected flags `splitbrain real` takes for \
                 /rows/0, found [\"--no-such-flag\"]: unexpected argument '--no-such-flag'"
            ),
            "{flags}"
        );
        let name = rejected(
            r#"{"libraries": {"Odd/../x": {"description": "?", "real_flags": []}},
                "rows": [{"library": "Odd/../x", "scenario": "gc-pause-fenced", "seeds": "0..3"}]}"#,
        );
        assert!(
            name.starts_with("m.json: /libraries: expected library names"),
            "{name}"
        );
        // Curator has no counterpart of the multi-lock: every seed is refused.
        let refused = rejected(&with_rows(
            r#"[{"library": "curator", "scenario": "multi-lock-gc-pause", "seeds": "0..2"}]"#,
        ));
        assert!(
            refused.starts_with("m.json: /rows/0: every seed of 0..2 is refused; seed 0: recipe:"),
            "{refused}"
        );
    }
}
