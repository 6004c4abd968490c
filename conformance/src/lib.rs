//! splitbrain's checks of itself. These are not properties of a recipe (no recipe can break
//! them) but of splitbrain's own framework layer against what Curator does: its connection
//! states against the raw session ([`check_framework_states`]), protected mode
//! ([`check_protected_creates`]) and an election's listener contract
//! ([`check_leader_notices`]). A simulated run that breaks one fails, as a bug of splitbrain's.

mod framework_states;
mod leader_notices;
mod protected_creates;

pub use framework_states::check_framework_states;
pub use leader_notices::check_leader_notices;
pub use protected_creates::check_protected_creates;
