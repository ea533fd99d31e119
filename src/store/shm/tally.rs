//! What lock-free reads owe the shared counters, kept per process and shard until the
//! process next holds the shard's lock.
//!
//! A read that takes no lock must not write shared memory either, or every reader of a
//! hot key would bounce that line between cores. So a process counts its lock-free hits
//! and misses here, and remembers the index slots of the last few hits; the counts are
//! added to the shard's `hits`/`misses` and the remembered entries stamped as just used
//! (the LRU's clock) when it holds the shard's lock: for any operation of its own, for
//! `stats()` (so a process's own reads always show in its `stats()`), or by a try-lock
//! once `TALLY_FLUSH` reads have gathered (skipped while somebody else holds it).
//!
//! So `stats()` seen from another process lags by at most `TALLY_FLUSH` reads per shard
//! and reading process, and the LRU sees a sample of the reads — the entries read often
//! are in it. Threads of one process share a tally through relaxed loads and stores, not
//! read-modify-writes (one PHP process is one thread): racing threads may lose a count,
//! never corrupt anything. A forked child inherits its parent's tallies: counts that a
//! fork happened in the middle of are dropped (`FORKS`) rather than counted twice.

use std::sync::Once;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use super::constants::{TALLY_FLUSH, TALLY_TOUCHES};

/// Forks of this process's ancestors and itself, counted in every child.
static FORKS: AtomicU32 = AtomicU32::new(0);

extern "C" fn forked() {
    FORKS.fetch_add(1, Relaxed);
}

/// Forks of this process's line so far (a forked child's count is one more than its
/// parent's at the fork): what tells a store that it now runs in a child.
#[inline(always)]
pub fn forks() -> u32 {
    FORKS.load(Relaxed)
}

/// Counts forks from now on (idempotent).
pub fn watch_forks() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: registers a child handler that only does an atomic add, which is safe
        // in a freshly forked child.
        unsafe { libc::pthread_atfork(None, None, Some(forked)) };
    });
}

/// One shard's tally in this process.
pub struct Tally {
    hits: AtomicU32,
    misses: AtomicU32,
    touched: [AtomicU64; TALLY_TOUCHES],
    /// `FORKS` when the counts started.
    epoch: AtomicU32,
}

/// What a flush adds to the shard.
pub struct Owed {
    pub hits: u64,
    pub misses: u64,
    /// Index slot values (`tag << 32 | offset`) of entries read; 0 = none.
    pub touched: [u64; TALLY_TOUCHES],
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            hits: AtomicU32::new(0),
            misses: AtomicU32::new(0),
            touched: Default::default(),
            epoch: AtomicU32::new(FORKS.load(Relaxed)),
        }
    }
}

impl Tally {
    /// Counts a hit on the entry the index slot `slot` points at; true when a flush is due.
    #[inline]
    pub fn hit(&self, slot: u64) -> bool {
        let n = self.hits.load(Relaxed).wrapping_add(1);
        self.hits.store(n, Relaxed);
        self.touched[n as usize % TALLY_TOUCHES].store(slot, Relaxed);
        n.wrapping_add(self.misses.load(Relaxed)) >= TALLY_FLUSH
    }

    /// Counts a miss; true when a flush is due.
    #[inline]
    pub fn miss(&self) -> bool {
        let n = self.misses.load(Relaxed).wrapping_add(1);
        self.misses.store(n, Relaxed);
        n.wrapping_add(self.hits.load(Relaxed)) >= TALLY_FLUSH
    }

    /// Whether anything is owed.
    #[inline]
    pub fn owes(&self) -> bool {
        self.hits.load(Relaxed) | self.misses.load(Relaxed) != 0
    }

    /// Takes what is owed and starts again from zero; nothing when a fork happened since
    /// the counts started (the parent counts them).
    pub fn take(&self) -> Option<Owed> {
        let owed = Owed {
            hits: self.hits.swap(0, Relaxed) as u64,
            misses: self.misses.swap(0, Relaxed) as u64,
            touched: std::array::from_fn(|i| self.touched[i].swap(0, Relaxed)),
        };
        let forks = FORKS.load(Relaxed);
        (self.epoch.swap(forks, Relaxed) == forks).then_some(owed)
    }
}
