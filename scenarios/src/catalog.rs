//! The scenario catalog: the files under `scenarios/catalog/`, embedded in the binary (all of
//! them, in file-name order: a new scenario costs only its file) so an installed `splitbrain`
//! works anywhere, or the `*.json` files of a directory given with `--catalog DIR`.

use std::path::Path;

use crate::scenario::{Scenario, ScenarioError};

// `EMBEDDED`: every `catalog/*.json` file, in file-name order (see build.rs).
include!(concat!(env!("OUT_DIR"), "/catalog.rs"));

/// A set of scenarios with distinct names, in a fixed order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Catalog {
    scenarios: Vec<Scenario>,
}

impl Catalog {
    /// The catalog built into the binary.
    pub fn builtin() -> Result<Catalog, ScenarioError> {
        Catalog::from_files(
            EMBEDDED
                .iter()
                .map(|(file, text)| (file.to_string(), text.to_string())),
        )
    }

    /// Every `*.json` file of `dir`, in file-name order.
    pub fn load_dir(dir: &Path) -> Result<Catalog, ScenarioError> {
        let io_error = |file: &Path, what: &str, error: std::io::Error| ScenarioError {
            file: file.display().to_string(),
            pointer: String::new(),
            message: format!("expected {what}, found an error: {error}"),
        };
        let entries = std::fs::read_dir(dir)
            .map_err(|e| io_error(dir, "a readable directory of scenario files", e))?;
        let mut paths = Vec::new();
        for entry in entries {
            let path = entry
                .map_err(|e| io_error(dir, "a readable directory of scenario files", e))?
                .path();
            if path.extension().is_some_and(|ext| ext == "json") {
                paths.push(path);
            }
        }
        paths.sort();
        let mut files = Vec::new();
        for path in paths {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| io_error(&path, "a readable UTF-8 file", e))?;
            files.push((path.display().to_string(), text));
        }
        if files.is_empty() {
            return Err(ScenarioError {
                file: dir.display().to_string(),
                pointer: String::new(),
                message: "expected at least one *.json scenario file, found none".into(),
            });
        }
        Catalog::from_files(files)
    }

    /// Parses `(file name, text)` pairs; names must be distinct.
    fn from_files(
        files: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Catalog, ScenarioError> {
        let mut scenarios: Vec<Scenario> = Vec::new();
        let mut origins: Vec<String> = Vec::new();
        for (file, text) in files {
            let scenario = Scenario::from_json(&file, &text)?;
            if let Some(at) = scenarios.iter().position(|s| s.name == scenario.name) {
                return Err(ScenarioError {
                    pointer: "/name".into(),
                    message: format!(
                        "expected a name not already used by {}, found {:?}",
                        origins[at], scenario.name
                    ),
                    file,
                });
            }
            origins.push(file);
            scenarios.push(scenario);
        }
        Ok(Catalog { scenarios })
    }

    /// The scenarios, in catalog order.
    pub fn scenarios(&self) -> &[Scenario] {
        &self.scenarios
    }

    /// The scenario called `name`.
    pub fn get(&self, name: &str) -> Option<&Scenario> {
        self.scenarios.iter().find(|s| s.name == name)
    }

    /// The names, in catalog order.
    pub fn names(&self) -> Vec<&str> {
        self.scenarios.iter().map(|s| s.name.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recipe_table::property::{Expectation, Property};

    #[test]
    fn the_builtin_catalog_parses_and_names_match_files() {
        let catalog = Catalog::builtin().unwrap();
        assert_eq!(catalog.scenarios().len(), EMBEDDED.len());
        for ((file, _), scenario) in EMBEDDED.iter().zip(catalog.scenarios()) {
            assert_eq!(*file, format!("{}.json", scenario.name));
        }
    }

    #[test]
    fn the_catalog_states_the_issues_expectations() {
        let catalog = Catalog::builtin().unwrap();
        let expect = |name: &str, property| catalog.get(name).unwrap().expectation(property);
        use Expectation::{Holds, Violated};
        use Property::*;
        assert_eq!(
            expect("gc-pause-split-brain", MutualExclusionBelief),
            Violated
        );
        assert_eq!(
            expect("gc-pause-split-brain", MutualExclusionFenced),
            Violated
        );
        assert!(!catalog.get("gc-pause-split-brain").unwrap().workload.fenced);
        assert_eq!(expect("gc-pause-fenced", MutualExclusionBelief), Violated);
        assert_eq!(expect("gc-pause-fenced", MutualExclusionFenced), Holds);
        assert_eq!(expect("herd-naive", HerdFree), Violated);
        let gc_pause = "semaphore-mutex-gc-pause";
        assert_eq!(expect(gc_pause, MutualExclusionBelief), Violated);
        assert_eq!(expect(gc_pause, MutualExclusionFenced), Holds);
        assert_eq!(expect("herd-free-mutex", HerdFree), Holds);
        for property in [MutualExclusionFenced, Progress, NoOrphans] {
            assert_eq!(expect("random-faults-mutex", property), Holds);
        }
        assert!(
            !catalog
                .get("random-faults-mutex")
                .unwrap()
                .random_faults
                .is_empty()
        );
    }

    #[test]
    fn a_directory_overrides_and_duplicate_names_are_rejected() {
        let dir = std::env::temp_dir().join(format!("splitbrain-catalog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (_, text) = EMBEDDED
            .iter()
            .find(|(file, _)| *file == "herd-naive.json")
            .unwrap();
        std::fs::write(dir.join("a.json"), text).unwrap();
        std::fs::write(dir.join("notes.txt"), "not a scenario").unwrap();
        let catalog = Catalog::load_dir(&dir).unwrap();
        assert_eq!(catalog.names(), ["herd-naive"]);
        std::fs::write(dir.join("b.json"), text).unwrap();
        let error = Catalog::load_dir(&dir).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(error.ends_with(&format!(
            "b.json: /name: expected a name not already used by {}, found \"herd-naive\"",
            dir.join("a.json").display()
        )));
    }

    #[test]
    fn a_missing_directory_is_one_line() {
        let error = Catalog::load_dir(Path::new("/nonexistent/catalog")).unwrap_err();
        assert!(error.to_string().starts_with(
            "/nonexistent/catalog: /: expected a readable directory of scenario files, found an error:"
        ));
    }
}
