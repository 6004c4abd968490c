//! What a recipe's author needs, in one import: `use coordination::prelude::*;`.
//!
//! The recipe contract ([`Recipe`], [`Ctx`], [`Input`], [`Effect`], [`SessionEvent`]) and,
//! for locks, [`Lock`]; the shared vocabulary ([`Call`], [`Notice`], [`Mode`],
//! [`FailReason`]); the ids and the fencing [`Token`]; ZooKeeper's requests, replies and
//! errors; the framework's policies a recipe consults; [`Relabel`] (the trait and its derive)
//! with [`ClientMap`]; and the parts the built-ins are made of: the whole of
//! [`kit`](crate::recipes::kit), the mutexes' [`Queue`] and [`Revocation`].

pub use crate::fencing::Token;
pub use crate::framework::{ErrorPolicy, OnLost};
pub use crate::ids::{ClientSlot, OpId, Owner, ProtectionId, TimerId};
pub use crate::recipe::{Ctx, Effect, Input, Recipe, SessionEvent};
pub use crate::recipes::kit::*;
pub use crate::recipes::queue::Queue;
pub use crate::recipes::revocation::Revocation;
pub use crate::recipes::{Call, Cx, Event, FailReason, LOCK_NAME, Lock, Mode, Notice};
pub use crate::relabel::{ClientMap, Relabel};
pub use crate::retry::RetryPolicy;
pub use crate::zk::{
    CreateMode, EventKind, OpOk, OpResult, Path, Request, SessionId, Stat, WatchedEvent,
    WatcherKind, ZkError,
};
