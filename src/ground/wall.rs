//! The wall clock, for what is shown to people, compared across hosts or given by clients
//! as absolute times (EXPIREAT, a StaleCache value's times). A store's own expiry runs on
//! the monotonic clock instead (`store/shm/clock.rs`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The time since the Unix epoch; zero on a clock set before it.
pub fn since_epoch() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    since_epoch().as_millis() as u64
}
