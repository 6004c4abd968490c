//! [`RecipeCode`]: the code a simulated client runs, for any recipe — a row of splitbrain's
//! table or a recipe of your own — or a program on a client library, as a value. A
//! [`crate::Sim`] carries it, so the simulator dispatches every client the same way and keeps
//! no registry: which recipes a process knows never changes what a seed does.

use std::any::{Any, TypeId};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use coordination::framework::Framework;
use recipe_table::recipe_ref::RecipeRef;
use recipe_table::recipes::{RecipeDef, RecipeKind, Testable, Visitor};
use runtime::drive::ClientWork;

use crate::client::SimConnector;
use crate::recorder::{SimClock, SimExecutor};

/// A simulated client's share of a run: its slot, the workload's settings, the recorder and
/// the run's fenced resource.
pub type SimWork = ClientWork<SimClock, SimExecutor>;

/// A client's main: a future borrowing the client's share of the run.
pub type ClientMain<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// A client's main for one recipe, its type erased.
type RunFn =
    dyn for<'a> Fn(&'a SimWork, Framework, &'a SimConnector) -> ClientMain<'a> + Send + Sync;

/// What a run's thread holds for the whole run (see [`RecipeCode::program`]).
pub type RunScope = Box<dyn Any>;

/// The code of one recipe, as its [`RecipeDef`] defines it: build with [`RecipeCode::of`]
/// (any recipe) or [`RecipeCode::built_in`] (a row of the table); or the code of a program
/// ([`RecipeCode::program`]). Two codes are equal when they are the same recipe type (or
/// program) under the same name.
#[derive(Clone)]
pub struct RecipeCode {
    recipe: RecipeRef,
    ty: TypeId,
    run: Arc<RunFn>,
    /// A program's run-thread set-up ([`RecipeCode::program`]); `None` for a recipe.
    scope: Option<fn() -> RunScope>,
}

impl RecipeCode {
    /// The code of the recipe `def` defines.
    pub fn of<R: Testable>(def: &'static RecipeDef<R>) -> RecipeCode {
        RecipeCode {
            recipe: RecipeRef::of(def),
            ty: TypeId::of::<R>(),
            run: Arc::new(move |work, framework, connector| {
                Box::pin(work.run_recipe(def, framework, connector))
            }),
            scope: None,
        }
    }

    /// The code of a program that stands in for a recipe named `recipe`: `main` is each
    /// client's main, given its share of the run and the connector its connections are made
    /// from (the framework layer is the recipe's, so a program has none). `scope` is called on
    /// each run's thread before the run starts, and what it returns is held until the run's
    /// runtime is dropped (a client library's thread-local set-up).
    pub fn program<M>(recipe: RecipeRef, main: M, scope: fn() -> RunScope) -> RecipeCode
    where
        M: for<'a> Fn(&'a SimWork, &'a SimConnector) -> ClientMain<'a> + Send + Sync + 'static,
    {
        RecipeCode {
            recipe,
            ty: TypeId::of::<M>(),
            run: Arc::new(move |work, _framework, connector| main(work, connector)),
            scope: Some(scope),
        }
    }

    /// What a run's thread holds for the whole run: a program's scope, nothing for a recipe.
    pub(crate) fn enter_run_thread(&self) -> Option<RunScope> {
        self.scope.map(|scope| scope())
    }

    /// The code of a row of splitbrain's table.
    pub fn built_in(kind: RecipeKind) -> RecipeCode {
        kind.visit(Of)
    }

    /// The code of `recipe` when it is a row of the table; `None` for a recipe of your own,
    /// whose code only its crate has.
    pub fn of_table(recipe: &RecipeRef) -> Option<RecipeCode> {
        recipe.built_in().map(RecipeCode::built_in)
    }

    /// Whether this is a program's code ([`RecipeCode::program`]).
    pub(crate) fn is_program(&self) -> bool {
        self.scope.is_some()
    }

    /// The recipe, by name, family and revocability.
    pub fn recipe(&self) -> &RecipeRef {
        &self.recipe
    }

    /// Runs `work` with this recipe over `connector`.
    pub(crate) fn run<'a>(
        &self,
        work: &'a SimWork,
        framework: Framework,
        connector: &'a SimConnector,
    ) -> ClientMain<'a> {
        (self.run)(work, framework, connector)
    }
}

impl<R: Testable> From<&'static RecipeDef<R>> for RecipeCode {
    fn from(def: &'static RecipeDef<R>) -> RecipeCode {
        RecipeCode::of(def)
    }
}

impl From<RecipeKind> for RecipeCode {
    fn from(kind: RecipeKind) -> RecipeCode {
        RecipeCode::built_in(kind)
    }
}

/// [`RecipeCode::of`] for a row of the table.
struct Of;

impl Visitor for Of {
    type Output = RecipeCode;

    fn visit<R: Testable>(self, def: &'static RecipeDef<R>) -> RecipeCode {
        RecipeCode::of(def)
    }
}

impl PartialEq for RecipeCode {
    fn eq(&self, other: &RecipeCode) -> bool {
        self.recipe == other.recipe && self.ty == other.ty
    }
}

impl Eq for RecipeCode {}

impl fmt::Debug for RecipeCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RecipeCode")
            .field(&self.recipe.name())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use coordination::recipes::{Mutex, NaiveHerdMutex};
    use recipe_table::family::Family;
    use recipe_table::recipes::{MUTEX, NAIVE_HERD_MUTEX, exclusive_lock};

    use super::*;

    static MINE: RecipeDef<Mutex> = RecipeDef {
        name: "recipe-code-test-lock",
        about: "a user's copy of the mutex",
        family: Family::Lock,
        revocable: false,
        build: MUTEX.build,
        directories: MUTEX.directories,
        expectation: exclusive_lock,
    };

    static SAME_NAME: RecipeDef<NaiveHerdMutex> = RecipeDef {
        name: "recipe-code-test-lock",
        ..NAIVE_HERD_MUTEX
    };

    #[test]
    fn a_code_is_its_recipe_type_under_its_name() {
        assert_eq!(
            RecipeCode::built_in(RecipeKind::Mutex),
            RecipeCode::of(&MUTEX)
        );
        assert_eq!(
            RecipeCode::of(&MINE).recipe().name(),
            "recipe-code-test-lock"
        );
        assert_ne!(
            RecipeCode::of(&MINE),
            RecipeCode::of(&MUTEX),
            "another name"
        );
        assert_ne!(
            RecipeCode::of(&MINE),
            RecipeCode::of(&SAME_NAME),
            "another type"
        );
        assert_eq!(
            RecipeCode::of_table(&RecipeRef::of(&MUTEX)),
            Some(RecipeCode::of(&MUTEX))
        );
        assert_eq!(RecipeCode::of_table(&RecipeRef::of(&MINE)), None);
    }

    #[test]
    fn a_run_needs_the_code_of_the_recipe_it_names() {
        let mut scenario = scenarios::catalog::Catalog::builtin()
            .expect("the catalog")
            .get("gc-pause-split-brain")
            .expect("in the catalog")
            .clone();
        scenario.recipe = RecipeRef::of(&MINE);
        let run = || crate::Sim::from_scenario(&scenario, 0, Vec::new());
        let missing = run().run().unwrap_err().to_string();
        assert!(missing.contains("the code of one of your own"), "{missing}");
        let other = run().recipe_code(RecipeCode::of(&MUTEX)).run().unwrap_err();
        assert_eq!(other.field, "recipe");
        assert!(
            other.expected.contains("found the code of `mutex`"),
            "{other}"
        );
        let trace = run()
            .recipe_code(RecipeCode::of(&MINE))
            .run()
            .expect("runs");
        assert_eq!(trace.meta.recipe, RecipeRef::of(&MINE));
    }
}
