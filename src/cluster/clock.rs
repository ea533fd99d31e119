//! The node's hybrid clock: microseconds of wall time, never going back and always past
//! every stamp the node has seen from its peers. Stamps order the writes to a key (the
//! owner decides them one at a time) and are a lock's fencing number, so a new owner
//! that received a lock in a hand-off hands out larger numbers than the old one did.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Default)]
pub struct HybridClock {
    last: AtomicU64,
}

impl HybridClock {
    /// A stamp greater than every one before it.
    pub fn next(&self) -> u64 {
        let wall = now_micros();
        let mut last = self.last.load(Ordering::Relaxed);
        loop {
            let next = wall.max(last + 1);
            match self
                .last
                .compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return next,
                Err(seen) => last = seen,
            }
        }
    }

    /// Moves the clock past a stamp seen from a peer.
    pub fn observe(&self, stamp: u64) {
        self.last.fetch_max(stamp, Ordering::Relaxed);
    }
}

pub fn now_micros() -> u64 {
    crate::ground::wall::since_epoch().as_micros() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_only_grow_and_pass_what_was_seen() {
        let c = HybridClock::default();
        let a = c.next();
        assert!(c.next() > a);
        c.observe(a + 10_000_000_000);
        assert!(c.next() > a + 10_000_000_000);
    }
}
