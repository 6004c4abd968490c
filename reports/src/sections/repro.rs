//! The commands that reproduce the run exactly, each with a copy button.
//!
//! They are built from `meta`: simulator traces replay from the trace file (and from
//! scenario + seed while the fault schedule is the scenario's own, i.e. not shrunk); real
//! traces run the scenario and seed again on a real ZooKeeper (the server options from
//! `settings`) or on the simulator; model traces name the model-checker path. What the trace's `settings` may carry for this
//! is documented on [`crate::ReportOptions`].

use std::fmt::{self, Write};

use trace::{Meta, Source};

use crate::ReportOptions;
use crate::escape::Esc;

/// One command and what it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Command {
    /// The shell command line.
    pub line: String,
    /// What running it does.
    pub what: &'static str,
}

/// The reproduction commands for a trace, best first.
pub(crate) fn commands(meta: &Meta, options: &ReportOptions) -> Vec<Command> {
    let trace = options.trace_file.as_deref().unwrap_or("trace.json");
    let from = Command {
        line: format!("splitbrain replay --from {}", quote(trace)),
        what: "reruns the recorded scenario, seed and fault schedule exactly",
    };
    if meta.recipe.built_in().is_none() {
        // A user's recipe: only the test that registers it can run it again.
        let line = options.rerun.clone().unwrap_or_else(|| match meta.source {
            Source::Model => "cargo test".to_owned(),
            _ => format!("SPLITBRAIN_SEED={} cargo test", meta.seed),
        });
        return vec![Command {
            line,
            what: "reruns the test of your recipe that found this (splitbrain::testing)",
        }];
    }
    match meta.source {
        Source::Model => {
            let mut line = format!(
                "splitbrain check {} --clients {}",
                quote(meta.recipe.name()),
                meta.clients
            );
            let setting = |key: &str| meta.settings.get(key);
            let unfenced = setting("unfenced").and_then(|v| v.as_bool()) == Some(true)
                || setting("fenced").and_then(|v| v.as_bool()) == Some(false);
            if unfenced {
                line.push_str(" --unfenced");
            }
            let path = setting("path").and_then(|v| v.as_str());
            if let Some(path) = path {
                write!(line, " --path {}", quote(path)).ok();
            }
            vec![Command {
                line,
                what: if path.is_some() {
                    "replays this counterexample path in the model checker"
                } else {
                    "reruns the model check that found this counterexample"
                },
            }]
        }
        Source::Sim if meta.shrunk_from.is_none() => vec![
            from,
            Command {
                line: format!(
                    "splitbrain replay {} --seed {}",
                    quote(&meta.scenario),
                    meta.seed
                ),
                what: "reruns the scenario from its seed (same trace, byte for byte)",
            },
        ],
        Source::Sim => vec![from],
        Source::Real => vec![
            Command {
                line: format!(
                    "splitbrain real {} --seed {}{}",
                    quote(&meta.scenario),
                    meta.seed,
                    real_server(meta)
                ),
                what: "runs the scenario again on a real ZooKeeper (not the same trace: real \
                       timing differs from run to run)",
            },
            Command {
                line: format!(
                    "splitbrain replay {} --seed {}",
                    quote(&meta.scenario),
                    meta.seed
                ),
                what: "runs the same scenario and seed on the simulator",
            },
        ],
    }
}

/// The options of `splitbrain real` that a real trace's `settings` record: its `target`
/// (`connect`, with the `connect_string`; `standalone`; `ensemble-N`), and its library's
/// contenders when there were any ([`real_contenders`]).
fn real_server(meta: &Meta) -> String {
    real_target(meta) + &real_contenders(meta)
}

/// `--library L --in-place` or `--library L --contenders N` for the contenders a real trace's
/// `settings` record as `<library>_contenders` (a count) and `<library>_in_place`; `L` is
/// `curator`, `kazoo`, or the file name of a user's program (run it from its directory).
fn real_contenders(meta: &Meta) -> String {
    let Some(settings) = meta.settings.as_object() else {
        return String::new();
    };
    let counted = settings.iter().find_map(|(key, value)| {
        let library = key.strip_suffix("_contenders")?;
        let count = value.as_u64().filter(|&n| n > 0)?;
        Some((library, count))
    });
    let Some((library, count)) = counted else {
        return String::new();
    };
    let in_place = settings.get(&format!("{library}_in_place")) == Some(&true.into());
    let placement = if in_place {
        " --in-place".to_owned()
    } else {
        format!(" --contenders {count}")
    };
    format!(" --library {}{placement}", quote(library))
}

/// The server options of `splitbrain real` a real trace's `settings` record.
fn real_target(meta: &Meta) -> String {
    let setting = |key: &str| meta.settings.get(key).and_then(|v| v.as_str());
    let target = setting("target").unwrap_or("standalone");
    if target == "connect" {
        let connect = setting("connect_string").unwrap_or("HOST:PORT");
        format!(" --connect {}", quote(connect))
    } else if let Some(servers) = target.strip_prefix("ensemble-") {
        format!(" --start-local --ensemble {}", quote(servers))
    } else {
        " --start-local".to_owned()
    }
}

/// `text` as one shell word: as is when it is plainly safe, else single-quoted.
fn quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Writes the section.
pub(crate) fn write(out: &mut String, meta: &Meta, options: &ReportOptions) -> fmt::Result {
    out.push_str("<section id=\"repro\"><h2>Reproduce</h2>");
    for (i, command) in commands(meta, options).iter().enumerate() {
        write!(
            out,
            "<div class=\"cmd\"><code id=\"cmd-{i}\">{}</code>\
             <button type=\"button\" class=\"copy\" data-copy=\"cmd-{i}\">Copy</button>\
             <span class=\"why\">{}</span></div>",
            Esc(&command.line),
            command.what
        )?;
    }
    out.push_str("</section>");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_words_are_single_quoted() {
        assert_eq!(quote("target/r/gc-pause.json"), "target/r/gc-pause.json");
        assert_eq!(quote("my trace.json"), "'my trace.json'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("$(rm -rf ~)"), "'$(rm -rf ~)'");
    }

    #[test]
    fn real_traces_run_again_on_the_server_they_ran_on_or_the_simulator() {
        let meta = |settings: serde_json::Value| Meta {
            scenario: "server-restart".into(),
            seed: 3,
            source: Source::Real,
            build: String::new(),
            recipe: recipe_table::recipes::RecipeKind::Mutex.into(),
            clients: 3,
            settings,
            fault_schedule: Vec::new(),
            scenario_spec: None,
            model_spec: None,
            shrunk_from: None,
        };
        let lines = |settings| {
            let commands = commands(&meta(settings), &ReportOptions::default());
            commands.into_iter().map(|c| c.line).collect::<Vec<_>>()
        };
        let ensemble = serde_json::json!({"target": "ensemble-3"});
        assert_eq!(
            lines(ensemble),
            [
                "splitbrain real server-restart --seed 3 --start-local --ensemble 3",
                "splitbrain replay server-restart --seed 3",
            ]
        );
        let mixed = serde_json::json!({"target": "standalone", "curator_contenders": 3});
        assert_eq!(
            lines(mixed)[0],
            "splitbrain real server-restart --seed 3 --start-local --library curator --contenders 3"
        );
        let in_place = serde_json::json!({"target": "standalone", "kazoo_contenders": 2,
            "kazoo_in_place": true});
        assert_eq!(
            lines(in_place)[0],
            "splitbrain real server-restart --seed 3 --start-local --library kazoo --in-place"
        );
        let connect = serde_json::json!({"target": "connect", "connect_string": "127.0.0.1:2181"});
        assert_eq!(
            lines(connect)[0],
            "splitbrain real server-restart --seed 3 --connect 127.0.0.1:2181"
        );
    }
}
