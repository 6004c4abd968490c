//! An application that takes splitbrain's `Mutex` (Curator's InterProcessMutex) before it
//! writes to its storage, but whose storage client predates fencing: it sends every write with
//! the same epoch, so the storage cannot tell a holder whose session expired during a GC
//! pause from the holder that took the lock after it.
//!
//! It is written against splitbrain's public API only: the application wraps the mutex as a
//! recipe of its own ([`Ctx::run_inner`] runs the mutex inside it) and passes on what the
//! mutex says, with the token it forgot to keep.

use splitbrain::coordination::fencing::Token;
use splitbrain::coordination::recipe::{Ctx, Input, Recipe};
use splitbrain::coordination::recipes::{Call, Mutex, Notice};
use splitbrain::coordination::relabel::Relabel;
use splitbrain::recipe_table::family::Family;
use splitbrain::recipe_table::recipes::{RecipeDef, curator_lock_loop};

/// The application's row: as far as its users are concerned it is the mutex, Curator's lock
/// loop and all.
pub static UNFENCED_APP: RecipeDef<UnfencedApp> = RecipeDef {
    name: "unfenced-app",
    about: "Curator's mutex, used by an application that never presents its fencing token",
    family: Family::Lock,
    revocable: false,
    build: |path, _settings| UnfencedApp {
        mutex: Mutex::new(path),
    },
    directories: |_path| Vec::new(),
    expectation: curator_lock_loop,
};

/// The epoch the storage client sends with every write.
pub const FIXED_EPOCH: Token = Token(0);

/// The application's use of the lock: the mutex, with the token thrown away.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
#[relabel(crate = "splitbrain::coordination")]
pub struct UnfencedApp {
    mutex: Mutex,
}

impl Recipe for UnfencedApp {
    type Call = Call;
    type Notice = Notice;

    fn handle(&mut self, input: Input<Call>, cx: &mut Ctx<'_, Notice>) {
        for notice in cx.run_inner(&mut self.mutex, input) {
            cx.notify(match notice {
                // THE BUG: the storage client is handed a fixed epoch, not the lock's token.
                Notice::Acquired { owner, mode, .. } => Notice::Acquired {
                    owner,
                    token: FIXED_EPOCH,
                    mode,
                },
                other => other,
            });
        }
    }
}
