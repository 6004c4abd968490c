//! What a check explores: the number of clients, the fault budgets and the workload setting.
//! They are part of the run spec a model trace records, so they live in
//! [`scenarios::spec`]; `Config` is the model's name for a [`ModelSpec`].

pub use scenarios::spec::{Budgets, ModelSpec, ModelSpec as Config};
