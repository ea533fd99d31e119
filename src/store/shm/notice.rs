//! What a damaged segment tells PHP: the warning a shard reset owes its users, and how
//! to tell a bounds check that caught damage from a bug.
//!
//! The warning a shard reset owes its users. A reset (a shard too damaged to rebuild,
//! emptied: `Guard::repair`) happens deep under a shard lock, where nothing can be said;
//! the process that did it raises a flag, and the PHP layer turns it into one E_WARNING
//! after the call that tripped over it (`take`). One per process until it is taken.

use std::sync::atomic::{AtomicBool, Ordering};

static PENDING: AtomicBool = AtomicBool::new(false);

/// Called by the process that emptied a shard.
pub fn shard_reset() {
    PENDING.store(true, Ordering::Relaxed);
}

/// The warning, once, if a shard was emptied since the last call.
pub fn take() -> Option<&'static str> {
    // A relaxed load first: the common case (nothing pending) costs no write.
    if !PENDING.load(Ordering::Relaxed) || !PENDING.swap(false, Ordering::Relaxed) {
        return None;
    }
    Some(
        "ephpm: a shard of the shared store was too damaged to repair (bytes written into \
         the segment by something else?) and was emptied: its entries are lost; \
         stats()['resets'] counts such resets",
    )
}

/// Every bounds check on shared memory says "corrupt shard" when it panics (arena.rs,
/// index.rs, alloc.rs): what the caller got is damage, not a bug.
const CORRUPTION: &str = "corrupt shard";

/// Whether a caught panic is a bounds check that found the segment damaged.
pub fn is_corruption(panic: &(dyn std::any::Any + Send)) -> bool {
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied());
    message.is_some_and(|m| m.contains(CORRUPTION))
}

/// Keeps such panics off stderr (the caller reports them as an exception); any other
/// panic still goes to the hook that was there before.
pub fn quiet_corruption_panics() {
    let before = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_corruption(info.payload()) {
            before(info);
        }
    }));
}
