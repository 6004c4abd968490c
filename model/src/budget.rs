//! What a check explores: the number of clients, the fault budgets and the workload setting.
//! They are part of the run spec a model trace records, so they live in
//! [`recipe_table::model_spec`].

pub use recipe_table::model_spec::{Budgets, ModelSpec};
