//! `splitbrain scenarios`: the catalog, one line per scenario.

use std::process::ExitCode;

use serde_json::json;

use super::{CatalogArgs, Outcome};

/// Arguments of `scenarios`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    catalog: CatalogArgs,
    /// Print JSON: `[{"name", "description", "recipe", "clients", "seeds"}]`.
    #[arg(long)]
    json: bool,
}

/// Lists the catalog.
pub fn run(args: Args) -> Outcome {
    let catalog = args.catalog.load()?;
    if args.json {
        let list: Vec<_> = catalog
            .scenarios()
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "description": s.description,
                    "recipe": s.recipe.name(),
                    "clients": s.clients,
                    "seeds": s.seeds.to_string(),
                })
            })
            .collect();
        say!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(ExitCode::SUCCESS);
    }
    let width = catalog.names().iter().map(|n| n.len()).max().unwrap_or(0);
    for scenario in catalog.scenarios() {
        say!("{:width$}  {}", scenario.name, scenario.description);
    }
    Ok(ExitCode::SUCCESS)
}
