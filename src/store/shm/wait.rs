//! The wake-up table: futex words in the segment, picked by key hash, that let a process
//! sleep until another process changes a key — woken in microseconds, without polling.
//!
//! Protocol (no lost wake-ups): a waiter raises `waiters`, reads `seq`, checks its
//! condition under the shard lock, then sleeps on `seq` for at most one slice. A writer
//! changes the key under the shard lock, releases it, and only if it then sees
//! `waiters > 0` bumps `seq` and wakes. Either the writer sees the raised count, or the
//! waiter's check (which takes the shard lock after the writer released it) sees the
//! change. Writers with nobody waiting pay one load.
//!
//! A waiter killed while waiting leaves `waiters` raised. A writer whose wake finds
//! nobody asleep therefore lowers it by one (never below 0): every waiter re-raises it
//! before each sleep and re-reads `seq` after, so a count lowered under a live waiter
//! cannot lose its wake-up — the bump already happened, and its sleep returns at once.

use std::sync::atomic::Ordering::SeqCst;
use std::time::{Duration, Instant};

use super::constants::{WAIT_SLICE, WAIT_SLOTS};
use super::futex;
use super::layout::WaitSlot;

/// This process's view of the segment's wait table.
#[derive(Clone, Copy)]
pub struct WaitTable {
    slots: *const WaitSlot,
}

impl WaitTable {
    /// # Safety
    /// - `slots` must point to `WAIT_SLOTS` initialised `WaitSlot`s in a mapping that
    ///   outlives every use of this table.
    pub unsafe fn new(slots: *const WaitSlot) -> Self {
        WaitTable { slots }
    }

    fn slot(&self, hash: u64) -> &WaitSlot {
        let i = (hash >> 24) as usize & (WAIT_SLOTS - 1);
        // SAFETY: i < WAIT_SLOTS, and the table is live for our lifetime (WaitTable::new);
        // WaitSlot is made of atomics, so shared references across processes are sound.
        unsafe { &*self.slots.add(i) }
    }

    /// Wakes whoever waits on the word of `hash`. Call it after releasing the shard lock.
    pub fn notify(&self, hash: u64) {
        let s = self.slot(hash);
        if s.waiters.load(SeqCst) != 0 {
            s.seq.fetch_add(1, SeqCst);
            if futex::wake_all(&s.seq) == 0 {
                lower(&s.waiters);
            } else {
                // Let a woken waiter run now: the scheduler tends to queue it on this
                // CPU, behind whatever this process does next (measured: a lock handover
                // took 0.2–2 ms while the releasing process went on, 0.09 ms with this).
                std::thread::yield_now();
            }
        }
    }

    /// Wakes every word that has waiters (after a clear).
    pub fn notify_all(&self) {
        for i in 0..WAIT_SLOTS {
            self.notify((i as u64) << 24);
        }
    }

    /// Blocks until `changed()` returns true or `timeout` passes; returns which.
    /// `changed` is called once at the start and after every wake-up or slice.
    pub fn wait_until<E>(
        &self,
        hash: u64,
        timeout: Duration,
        mut changed: impl FnMut() -> Result<bool, E>,
    ) -> Result<bool, E> {
        let deadline = Instant::now() + timeout;
        let s = self.slot(hash);
        loop {
            s.waiters.fetch_add(1, SeqCst);
            let seen = s.seq.load(SeqCst);
            let outcome = changed();
            let now = Instant::now();
            if !matches!(outcome, Ok(false)) || now >= deadline {
                lower(&s.waiters);
                return outcome;
            }
            futex::wait(&s.seq, seen, (deadline - now).min(WAIT_SLICE));
            lower(&s.waiters);
        }
    }
}

/// Lowers a waiter count by one, never below zero (see the module doc).
fn lower(waiters: &std::sync::atomic::AtomicU32) {
    let _ = waiters.fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1));
}
