//! [`RecipeRef`]: the recipe a scenario or a trace names, without its type — its name and what
//! the checkers need to know about it (its family, whether it is revocable).
//!
//! A recipe of splitbrain's table is written as its name (`"recipe": "mutex"`), as it always
//! was. A user's own recipe is written with its family, so that any trace of it can be judged
//! and reported by splitbrain's command line, which does not know the recipe's code:
//!
//! ```json
//! "recipe": { "name": "home-grown-lock", "family": "lock" }
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::family::Family;
use crate::property::Property;
use crate::recipes::{RecipeDef, RecipeKind};

/// A recipe by name, with its family and whether it serves revocation.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecipeRef {
    name: String,
    family: Family,
    revocable: bool,
}

impl RecipeRef {
    /// The recipe `def` defines (a row of the table or a user's own).
    pub fn of<R>(def: &RecipeDef<R>) -> RecipeRef {
        RecipeRef {
            name: def.name.to_owned(),
            family: def.family,
            revocable: def.revocable,
        }
    }

    /// A recipe of your own (or a program standing in for one) named `name`, of `family`;
    /// `Err` says why when `name` is a recipe of splitbrain's table.
    pub fn own(name: &str, family: Family, revocable: bool) -> Result<RecipeRef, String> {
        if name.parse::<RecipeKind>().is_ok() {
            return Err(format!(
                "expected a name that is not a recipe of splitbrain's table, found `{name}`"
            ));
        }
        Ok(RecipeRef {
            name: name.to_owned(),
            family,
            revocable,
        })
    }

    /// The kebab-case name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How workloads use it, which says which properties are checked.
    pub fn family(&self) -> Family {
        self.family
    }

    /// Whether it serves `MakeRevocable` / `AttemptRevoke`.
    pub fn revocable(&self) -> bool {
        self.revocable
    }

    /// The properties a trace of this recipe can be checked for.
    pub fn properties(&self) -> &'static [Property] {
        self.family.properties()
    }

    /// The row of splitbrain's table of that name, if it is one (`None` for a user's recipe).
    pub fn built_in(&self) -> Option<RecipeKind> {
        self.name.parse().ok()
    }
}

impl From<RecipeKind> for RecipeRef {
    fn from(kind: RecipeKind) -> RecipeRef {
        RecipeRef {
            name: kind.name().to_owned(),
            family: kind.family(),
            revocable: kind.revocable(),
        }
    }
}

impl PartialEq<RecipeKind> for RecipeRef {
    fn eq(&self, kind: &RecipeKind) -> bool {
        self.name == kind.name()
    }
}

impl fmt::Display for RecipeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// A user's recipe as written: its name, family and revocability.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Own {
    name: String,
    family: Family,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    revocable: bool,
}

impl Serialize for RecipeRef {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.built_in() {
            Some(kind) => kind.serialize(serializer),
            None => Own {
                name: self.name.clone(),
                family: self.family,
                revocable: self.revocable,
            }
            .serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for RecipeRef {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<RecipeRef, D::Error> {
        deserializer.deserialize_any(Written)
    }
}

/// Reads either form a file may hold: a name of the table, or a user's recipe.
struct Written;

impl<'de> serde::de::Visitor<'de> for Written {
    type Value = RecipeRef;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a recipe's name, or a recipe of your own as {\"name\", \"family\"}")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<RecipeRef, E> {
        name.parse::<RecipeKind>().map(RecipeRef::from).map_err(|_| {
            let names: Vec<String> = RecipeKind::NAMES.iter().map(|n| format!("`{n}`")).collect();
            E::custom(format!(
                "expected one of {} (or a recipe of your own as {{\"name\", \"family\"}}), found `{name}`",
                names.join(", ")
            ))
        })
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<RecipeRef, A::Error> {
        use serde::de::Error;
        let own = Own::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        RecipeRef::own(&own.name, own.family, own.revocable).map_err(|why| {
            A::Error::custom(format!("{why} (write a built-in recipe as its name alone)"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_built_in_recipe_is_its_name_and_a_users_recipe_carries_its_family() {
        let mutex = RecipeRef::from(RecipeKind::Mutex);
        assert_eq!(serde_json::to_string(&mutex).unwrap(), "\"mutex\"");
        assert_eq!(
            serde_json::from_str::<RecipeRef>("\"mutex\"").unwrap(),
            mutex
        );
        let own: RecipeRef =
            serde_json::from_str(r#"{"name": "home-grown-lock", "family": "lock"}"#).unwrap();
        assert_eq!(own.name(), "home-grown-lock");
        assert_eq!(own.family(), Family::Lock);
        assert_eq!(own.built_in(), None);
        assert_eq!(own.properties(), Family::Lock.properties());
        let json = serde_json::to_string(&own).unwrap();
        assert_eq!(json, r#"{"name":"home-grown-lock","family":"lock"}"#);
        assert_eq!(serde_json::from_str::<RecipeRef>(&json).unwrap(), own);
    }

    #[test]
    fn unknown_names_and_disguised_built_ins_are_refused() {
        let error = serde_json::from_str::<RecipeRef>("\"spin-lock\"")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`mutex`, `naive-herd-mutex`") && error.contains("found `spin-lock`"),
            "{error}"
        );
        let error = serde_json::from_str::<RecipeRef>(r#"{"name": "mutex", "family": "lock"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("not a recipe of splitbrain's table"),
            "{error}"
        );
    }
}
