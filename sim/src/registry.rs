//! Users' own recipes: [`register`] makes a [`RecipeDef`] runnable by name, so that a
//! scenario naming it (`"recipe": {"name": …, "family": …}`) runs, replays and shrinks on the
//! simulator exactly as a recipe of splitbrain's table does.
//!
//! The registry is looked up by name only; it holds no run state, so which recipes are
//! registered never changes what a seed does.

use std::any::TypeId;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use coordination::framework::Framework;
use recipe_table::recipes::{RecipeDef, RecipeKind, Testable};
use runtime::drive::ClientWork;

use crate::client::SimConnector;
use crate::recorder::{SimClock, SimExecutor};

/// A simulated client's share of a run.
type SimWork = ClientWork<SimClock, SimExecutor>;

/// A future borrowing the client it runs.
type ClientMain<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// A client's main for one recipe, type-erased.
type RunFn = Box<dyn for<'a> Fn(&'a SimWork, Framework, &'a SimConnector) -> ClientMain<'a> + Send>;

/// A registered recipe: its name, its type (to tell a second registration of the same recipe
/// from a clash) and its main.
struct Entry {
    name: &'static str,
    ty: TypeId,
    run: RunFn,
}

static REGISTERED: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// Why a recipe cannot be registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterError(String);

impl fmt::Display for RegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RegisterError {}

/// Makes the recipe `def` defines runnable by the simulator under `def.name`. Registering the
/// same recipe type under the same name again is a no-op; a name of splitbrain's table, or one
/// already registered for another type, is refused.
pub fn register<R: Testable>(def: &'static RecipeDef<R>) -> Result<(), RegisterError> {
    if def.name.parse::<RecipeKind>().is_ok() {
        return Err(RegisterError(format!(
            "recipe name `{}`: expected a name that is not a recipe of splitbrain's table",
            def.name
        )));
    }
    let ty = TypeId::of::<R>();
    let mut registered = registry();
    if let Some(entry) = registered.iter().find(|entry| entry.name == def.name) {
        return if entry.ty == ty {
            Ok(())
        } else {
            Err(RegisterError(format!(
                "recipe name `{}`: expected a name not registered yet, found it taken by another recipe type",
                def.name
            )))
        };
    }
    registered.push(Entry {
        name: def.name,
        ty,
        run: Box::new(move |work, framework, connector| {
            Box::pin(work.run_recipe(def, framework, connector))
        }),
    });
    Ok(())
}

/// Whether a recipe of that name has been registered.
pub fn is_registered(name: &str) -> bool {
    registry().iter().any(|entry| entry.name == name)
}

/// Runs `work`'s recipe, a registered one, over `connector`.
///
/// # Panics
/// When the recipe is not registered (`Sim::validate` refuses such a run before it starts).
pub(crate) fn run<'a>(
    work: &'a SimWork,
    framework: Framework,
    connector: &'a SimConnector,
) -> ClientMain<'a> {
    let registered = registry();
    let name = work.recipe.name();
    match registered.iter().find(|entry| entry.name == name) {
        Some(entry) => (entry.run)(work, framework, connector),
        None => panic!("recipe `{name}` is not registered"),
    }
}

fn registry() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    // A panic while registering leaves the list as it was (a push is the only change).
    REGISTERED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use coordination::recipes::{Mutex, NaiveHerdMutex};
    use recipe_table::family::Family;
    use recipe_table::recipes::{MUTEX, NAIVE_HERD_MUTEX, exclusive_lock};

    use super::*;

    static MINE: RecipeDef<Mutex> = RecipeDef {
        name: "registry-test-lock",
        about: "a user's copy of the mutex",
        family: Family::Lock,
        revocable: false,
        build: MUTEX.build,
        directories: MUTEX.directories,
        expectation: exclusive_lock,
    };

    static CLASH: RecipeDef<NaiveHerdMutex> = RecipeDef {
        name: "registry-test-lock",
        ..NAIVE_HERD_MUTEX
    };

    static TABLE_NAME: RecipeDef<Mutex> = RecipeDef {
        name: "mutex",
        ..MUTEX
    };

    #[test]
    fn a_name_is_registered_once_per_type_and_never_over_the_table() {
        assert!(!is_registered(MINE.name));
        assert_eq!(register(&MINE), Ok(()));
        assert_eq!(register(&MINE), Ok(()), "again: a no-op");
        assert!(is_registered(MINE.name));
        let clash = register(&CLASH).unwrap_err().to_string();
        assert!(clash.contains("taken by another recipe type"), "{clash}");
        let table = register(&TABLE_NAME).unwrap_err().to_string();
        assert!(
            table.contains("not a recipe of splitbrain's table"),
            "{table}"
        );
    }
}
