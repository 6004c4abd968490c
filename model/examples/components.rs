//! Prints, for `check RECIPE` with N clients (default `mutex` with 3), how many unique states
//! each state component splits:
//! `cargo run --release -p splitbrain-model --example components -- semaphore 3`.

use model::components::component_counts;
use model::{LockModel, ModelSpec};
use recipe_table::recipes::{RecipeDef, RecipeKind, Testable, Visitor};

/// Prints the table for one recipe of the recipe table.
struct Table {
    clients: u16,
}

impl Visitor for Table {
    type Output = ();

    fn visit<R: Testable>(self, def: &'static RecipeDef<R>) {
        let model = LockModel::new(def, ModelSpec::new(self.clients));
        println!(
            "{:<48} {:>10} {:>16}",
            "component", "values", "states without"
        );
        for row in component_counts(&model, 2_000_000) {
            println!(
                "{:<48} {:>10} {:>16}",
                row.component, row.values, row.states_without
            );
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let recipe = args.next().unwrap_or_else(|| "mutex".to_owned());
    let recipe: RecipeKind = recipe.parse().unwrap_or_else(|error| {
        eprintln!("components: RECIPE: {error}");
        std::process::exit(2)
    });
    let clients = args
        .next()
        .map_or(Ok(3), |arg| arg.parse::<u16>())
        .unwrap_or_else(|_| {
            eprintln!("components: the argument CLIENTS must be a number of clients");
            std::process::exit(2)
        });
    recipe.visit(Table { clients });
}
