//! `splitbrain recipes`: the recipe table, one line per recipe (its name, what it is, and the
//! properties its runs are checked for).

use std::process::ExitCode;

use recipe_table::recipes::RecipeKind;
use serde_json::json;

use super::Outcome;

/// Arguments of `recipes`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print JSON: `[{"name", "about", "properties", "revocable"}]`.
    #[arg(long)]
    json: bool,
}

/// Lists the recipe table.
pub fn run(args: Args) -> Outcome {
    if args.json {
        let list: Vec<_> = RecipeKind::ALL
            .iter()
            .map(|kind| {
                let properties: Vec<&str> = kind.properties().iter().map(|p| p.name()).collect();
                json!({
                    "name": kind.name(),
                    "about": kind.about(),
                    "properties": properties,
                    "revocable": kind.revocable(),
                })
            })
            .collect();
        say!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(ExitCode::SUCCESS);
    }
    let width = RecipeKind::NAMES.iter().map(|n| n.len()).max().unwrap_or(0);
    for kind in RecipeKind::ALL {
        say!("{:width$}  {}", kind.name(), kind.about());
    }
    Ok(ExitCode::SUCCESS)
}
