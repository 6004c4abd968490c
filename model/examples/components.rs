//! Prints, for `check mutex` with N clients (default 3), how many unique states each state
//! component splits: `cargo run --release -p splitbrain-model --example components -- 3`.

use model::components::component_counts;
use model::{Config, LockModel};
use scenarios::recipes::MUTEX;

fn main() {
    let clients = std::env::args()
        .nth(1)
        .map_or(Ok(3), |arg| arg.parse::<u16>())
        .unwrap_or_else(|_| {
            eprintln!("components: the argument CLIENTS must be a number of clients");
            std::process::exit(2)
        });
    let model = LockModel::new(&MUTEX, Config::new(clients));
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
