//! splitbrain's `async-select` 0.3: `select!` polls its branches in the order written.
//!
//! The registry's unbiased `select!` starts polling at a branch chosen from the address of
//! its futures on the stack, which moves with address-space layout randomisation: when
//! several branches of `zookeeper-client`'s session loop are ready at once (a reply, a tick,
//! a request), the one taken would differ from process to process for one seed. Polling in
//! order is one of the schedules a real run can take, and the same one every time.
#![no_std]

/// `select!` of async-select 0.3, always biased: the first ready branch in written order
/// wins.
#[macro_export]
macro_rules! select {
    (biased; $($token:tt)*) => {
        $crate::select_biased! { $($token)* }
    };
    ($($token:tt)*) => {
        $crate::select_biased! { $($token)* }
    };
}

#[doc(hidden)]
pub use async_select_proc_macros::select_biased;
