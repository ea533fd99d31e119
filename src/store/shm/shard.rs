//! One shard: its lock guard, and every operation on its entries.
//!
//! Each public method of `Guard` runs entirely under the shard's mutex, which the guard
//! holds; none calls out of the engine (no PHP, no allocation that can longjmp), so a lock
//! is always released. Waiters are woken after the mutex is released, when the guard drops.
//!
//! Lock-free readers (`optimistic.rs`) read the index and entries meanwhile: before its
//! first change to either, an operation calls `Guard::begin_write`, which makes the
//! shard's `read_seq` odd; the guard makes it even again as it unlocks (not after a panic:
//! then the next locker's repair does). What readers never look at (an entry's `atime`,
//! the counters, `tick`, `rng`, blocks that are free or being filled) changes without it,
//! so a locked read disturbs nobody, and a large value is copied in with readers still
//! reading.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

use xxhash_rust::xxh3::xxh3_64;

use super::ShmError;
use super::alloc;
use super::arena::Arena;
use super::clock::LazyNow;
use super::constants::{ARENA_START, EVICTION_SAMPLE, GRANULE};
use super::index::{self, Probe};
use super::layout::*;
use super::mutex::{self, Acquired, Segment};
use super::ofd;
use super::optimistic::{self, Found, Outcome, Request};
use super::repair;
use super::tally::Owed;
use super::wait::WaitTable;
use crate::store::Room;

/// A write that cannot fit in its shard even after evicting everything evictable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full {
    pub need: u64,
    pub capacity: u64,
}

/// A value ready to be stored: its kind, flags and bytes (compressed if `flags` says so).
#[derive(Debug, Clone, Copy)]
pub struct Encoded<'a> {
    pub kind: u8,
    pub flags: u8,
    pub bytes: &'a [u8],
    pub raw_len: u32,
}

impl<'a> Encoded<'a> {
    /// An integer value, from its native-endian bytes.
    pub fn int(bytes: &'a [u8; 8]) -> Self {
        Encoded {
            kind: KIND_INT,
            flags: 0,
            bytes,
            raw_len: 8,
        }
    }
}

/// An entry as `read` shows it, borrowed from the arena under the shard lock.
#[derive(Debug, Clone, Copy)]
pub struct Stored<'a> {
    pub kind: u8,
    pub compressed: bool,
    pub raw_len: u32,
    pub bytes: &'a [u8],
    pub version: u64,
}

#[derive(Debug)]
pub enum IncrError {
    NotAnInteger,
    Overflow,
    Full(Full),
}

/// A shard's counters, read without its lock (`Shard::stats`).
#[derive(Debug, Default, Clone, Copy)]
pub struct ShardStats {
    pub used: u64,
    pub entries: u64,
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    pub expirations: u64,
    pub repairs: u64,
    pub resets: u64,
    /// Evictions by the evicted entry's retention class (`CLASS_*`).
    pub evictions_by_class: [u64; CLASSES],
    /// Whether somebody holds the shard's lock right now.
    pub locked: bool,
    /// Whether the holder is changing what lock-free readers look at (`read_seq` is
    /// odd): until it unlocks, the shard's readers take the lock too.
    pub writing: bool,
    /// Bytes of the arena, and the largest value an entry with a one-byte key can hold
    /// in it next to the index as it is now (eviction may free all the rest).
    pub arena_len: u64,
    pub max_value: u64,
}

/// This process's handle on one shard of the mapped segment.
pub struct Shard {
    header: *mut ShardHeader,
    arena: Arena,
    /// Which shard this is, and of which segment: what recovering its lock needs.
    index: usize,
    seg: Segment,
}

// SAFETY: the pointers target the shared mapping, which the owning ShmStore keeps alive;
// all access to what they point at goes through the process-shared mutex (Guard), or
// through the racy reads of the lock-free path, which tolerate concurrent writers.
unsafe impl Send for Shard {}
// SAFETY: as above: `&Shard` only hands out access under the mutex, or racy reads.
unsafe impl Sync for Shard {}

const PENDING_WAKES: usize = 8;

/// The held shard lock, and the operations that need it.
pub struct Guard<'a> {
    h: &'a mut ShardHeader,
    a: Arena,
    mutex: *mut libc::pthread_mutex_t,
    wait: WaitTable,
    wakes: [u64; PENDING_WAKES],
    n_wakes: usize,
    wake_everyone: bool,
    /// `begin_write` was called: lock-free readers are held off until the unlock.
    writing: bool,
}

fn value_start(key_len: u32) -> u32 {
    (ENTRY_HEADER + key_len).next_multiple_of(8)
}

impl Shard {
    /// # Safety
    /// - `header` must point to a `ShardHeader` initialised by [`Shard::format`] (or being
    ///   formatted by the caller under the creation flock), followed by its arena of
    ///   `arena_len` bytes, in a mapping that outlives this handle.
    /// - `seg` describes that mapping's file, whose descriptor stays open as long.
    pub unsafe fn new(
        header: *mut ShardHeader,
        arena_len: u32,
        index: usize,
        seg: Segment,
    ) -> Self {
        let base = header
            .cast::<u8>()
            .wrapping_add(size_of::<ShardHeader>().next_multiple_of(64));
        // SAFETY: the arena follows the header inside the mapping (contract above; the
        // segment lays shards out that way) and is 64-aligned.
        let arena = unsafe { Arena::new(base, arena_len) };
        Shard {
            header,
            arena,
            index,
            seg,
        }
    }

    /// Bytes a shard needs before its arena.
    pub const fn header_bytes() -> usize {
        size_of::<ShardHeader>().next_multiple_of(64)
    }

    /// Formats a zero-filled shard: mutex, one free block, an empty index.
    ///
    /// # Safety
    /// - The caller holds the segment's creation flock and nobody else maps the segment
    ///   yet, so this process is the only accessor.
    pub unsafe fn format(&self, seed: u64) -> Result<(), ShmError> {
        // SAFETY: exclusive access per the contract; the pointer is valid (Shard::new).
        let h = unsafe { &mut *self.header };
        // SAFETY: the mutex field is inside the mapping and unused (contract).
        unsafe { mutex::init(&raw mut h.mutex)? };
        h.arena_len = self.arena.len();
        h.rng = seed | 1;
        alloc::reset(h, self.arena);
        repair::rebuild(h, self.arena);
        Ok(())
    }

    /// Takes the shard lock, repairing the shard first if its last holder died or panicked,
    /// and recovering the lock itself when its lock word is garbage (see `mutex.rs`).
    ///
    /// Locking: waits for this shard's mutex, at most `mutex::MAX_HOLD` for a live
    /// holder. Wakes nobody.
    pub fn lock(&self, wait: WaitTable) -> Result<Guard<'_>, ShmError> {
        Ok(self.guard(self.acquire()?, wait))
    }

    /// Takes the shard's mutex (what `lock` does before it makes the guard); the caller
    /// makes the guard at once with [`Shard::unrepaired_guard`] and repairs the shard if
    /// it must.
    /// Split from `lock` for the hot path, which builds the guard where it keeps it: a
    /// Guard returned inside a Result was copied from frame to frame (perf, issue #29).
    ///
    /// Locking: as `lock`.
    #[inline(always)]
    pub fn acquire(&self) -> Result<Acquired, ShmError> {
        let m = self.mutex();
        // SAFETY: `m` is a mutex of the mapping (Shard::format); no Guard of any shard is
        // alive in this thread (guards never nest: every operation takes one shard lock
        // and drops it before it takes another).
        match unsafe { mutex::try_lock(m) } {
            Some(acquired) => Ok(acquired),
            None => self.lock_contended(m),
        }
    }

    /// Takes the shard lock only if nobody holds it (repairing the shard first if its last
    /// holder died); `None` when it is busy or looks broken.
    ///
    /// Locking: never waits. Wakes nobody.
    pub fn try_lock(&self, wait: WaitTable) -> Option<Guard<'_>> {
        // SAFETY: as in `lock`.
        let acquired = unsafe { mutex::try_lock(self.mutex()) }?;
        Some(self.guard(acquired, wait))
    }

    /// Reads `key` without the lock (see `optimistic.rs`): a hit's entry in `found`, a
    /// string-like value in `out` (as stored). `Outcome::Locked` when this read needs the
    /// lock.
    ///
    /// Locking: none; writes nothing shared.
    #[inline]
    pub fn read_optimistic<R: Room + ?Sized>(
        &self,
        hash: u64,
        key: &[u8],
        now: &mut LazyNow,
        found: &mut Found,
        out: &mut R,
    ) -> Outcome {
        let r = Request { hash, key };
        // SAFETY: the header and its arena live in the mapping for our lifetime
        // (Shard::new).
        unsafe { optimistic::read(self.header, self.arena, &r, now, found, out) }
    }

    /// The shard's counters, each read whole without the lock (so a stopped lock holder
    /// never holds up `stats()`, the status page or the metrics): the set may be a moment
    /// apart from one state, which counters tolerate.
    ///
    /// Locking: none; writes nothing.
    pub fn stats(&self) -> ShardStats {
        let h = self.header;
        // SAFETY: the fields are aligned words of the live header (Shard::new); the lock
        // holder writes them with plain stores, which atomic loads tolerate (Arena's racy
        // reads' doc), and each load sees a whole value.
        unsafe {
            let u64_at = |p: *mut u64| AtomicU64::from_ptr(p).load(Ordering::Relaxed);
            let u32_at = |p: *mut u32| u64::from(AtomicU32::from_ptr(p).load(Ordering::Relaxed));
            ShardStats {
                used: u64_at(&raw mut (*h).used),
                entries: u32_at(&raw mut (*h).live),
                hits: u64_at(&raw mut (*h).hits),
                misses: u64_at(&raw mut (*h).misses),
                evictions: u64_at(&raw mut (*h).evictions),
                evictions_by_class: std::array::from_fn(|c| {
                    u64_at(&raw mut (*h).evictions_by_class[c])
                }),
                expirations: u64_at(&raw mut (*h).expirations),
                repairs: u32_at(&raw mut (*h).repairs),
                resets: u32_at(&raw mut (*h).resets),
                locked: mutex::is_locked(&raw mut (*h).mutex),
                writing: (*h).read_seq.load(Ordering::Relaxed) & 1 != 0,
                arena_len: u64::from(self.arena.len()),
                max_value: {
                    let slots = u32_at(&raw mut (*h).index_slots);
                    let index = (u64::from(INDEX_SLOTS_AT) + slots * 8)
                        .next_multiple_of(u64::from(GRANULE));
                    u64::from(self.arena.len())
                        .saturating_sub(u64::from(ARENA_START) + index + u64::from(value_start(1)))
                },
            }
        }
    }

    fn mutex(&self) -> *mut libc::pthread_mutex_t {
        // SAFETY: the header lives in the mapping for our lifetime (Shard::new); taking a
        // raw pointer to the mutex field creates no reference.
        unsafe { &raw mut (*self.header).mutex }
    }

    /// The guard of a mutex this thread just acquired (`try_lock`, `lock`); repairs the
    /// shard first if needed.
    fn guard(&self, acquired: Acquired, wait: WaitTable) -> Guard<'_> {
        let mut g = self.unrepaired_guard(acquired, wait);
        g.repair_if_needed();
        g
    }

    /// The guard of a mutex this thread just acquired (`acquire`), before the repair the
    /// shard may need: the caller calls [`Guard::repair_if_needed`] on it at once, where
    /// it keeps it. (A guard repaired here and then returned cannot be built in place:
    /// the repair takes its address, and the return copies it out, as perf showed.)
    #[inline(always)]
    pub fn unrepaired_guard(&self, acquired: Acquired, wait: WaitTable) -> Guard<'_> {
        let m = self.mutex();
        // SAFETY: we hold the mutex, which makes this process the only accessor of the
        // header until the guard unlocks it.
        let h = unsafe { &mut *self.header };
        if acquired == Acquired::OwnerDied {
            // Marked first, so that dying during the repair makes the next locker repair.
            h.needs_repair = 1;
        }
        if crate::fault::on("no-lock-recovery") && h.needs_repair != 0 {
            repair::rebuild(h, self.arena); // before the guard: what the wedge test catches
        }
        // From here on the guard unlocks whatever happens, a panic in the repair included.
        Guard {
            h,
            a: self.arena,
            mutex: m,
            wait,
            wakes: [0; PENDING_WAKES],
            n_wakes: 0,
            wake_everyone: false,
            writing: false,
        }
    }
}

impl Shard {
    /// Takes a shard mutex that was busy or looked broken: waits for it (bounded), and
    /// recovers it (see `mutex.rs`) as often as it is found broken.
    #[cold]
    #[inline(never)]
    fn lock_contended(&self, m: *mut libc::pthread_mutex_t) -> Result<Acquired, ShmError> {
        loop {
            // SAFETY: as in `lock`.
            let stuck = match unsafe { mutex::lock_contended(m, self.seg, self.index) } {
                Ok(acquired) => return Ok(acquired),
                Err(Err(e)) => return Err(e),
                Err(Ok(stuck)) => stuck,
            };
            let _only_us = ofd::recovery_lock(self.seg.fd, self.index)?;
            let header = self.header;
            // SAFETY: `m` is in the live mapping and we hold the recovery lock. The closure
            // runs only while nobody holds the mutex (it is being made afresh), so its
            // write to the header races with nobody.
            unsafe {
                mutex::recover(m, stuck, || {
                    (*header).needs_repair = 1;
                    (*header).lock_recoveries = (*header).lock_recoveries.wrapping_add(1);
                })?
            };
        }
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // A panic mid-operation may have left derived state half-updated; readers
            // stay on the lock (read_seq stays odd) until the repair.
            self.h.needs_repair = 1;
        } else if self.writing {
            // Release: every change of this operation is visible before the counter says
            // the shard is stable again. From odd to the next even value.
            let seq = self.h.read_seq.load(Ordering::Relaxed);
            self.h.read_seq.store((seq | 1) + 1, Ordering::Release);
        }
        // SAFETY: this guard holds the mutex (Shard::lock) and unlocks it exactly once.
        unsafe { mutex::unlock(self.mutex) };
        if self.wake_everyone {
            self.wait.notify_all();
        } else {
            for &hash in &self.wakes[..self.n_wakes] {
                self.wait.notify(hash);
            }
        }
    }
}

impl Guard<'_> {
    /// Repairs the shard if its last holder died or panicked (see `repair`).
    #[inline(always)]
    pub fn repair_if_needed(&mut self) {
        if self.h.needs_repair != 0 {
            self.repair();
        }
    }

    /// Rebuilds the shard from its arena; a shard too damaged for that (the rebuild hit a
    /// bound) is reset: its entries are dropped and the reset counted.
    #[cold]
    #[inline(never)]
    fn repair(&mut self) {
        self.begin_write();
        self.h.repairs = self.h.repairs.wrapping_add(1);
        self.wake_everyone = true;
        if crate::fault::on("no-repair") {
            return;
        }
        let (h, a) = (&mut *self.h, self.a);
        let rebuilt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            repair::rebuild(h, a);
        }));
        if rebuilt.is_err() {
            repair::reset(self.h, self.a);
            self.h.resets = self.h.resets.wrapping_add(1);
            super::notice::shard_reset();
        }
    }

    /// Holds lock-free readers off: called before the first change to anything they read
    /// (the index, an entry, a block). Until the guard unlocks, `read_seq` is odd; a
    /// counter a dead holder left odd stays odd (and moves on at the unlock).
    #[inline]
    fn begin_write(&mut self) {
        if self.writing {
            return;
        }
        self.writing = true;
        let seq = self.h.read_seq.load(Ordering::Relaxed);
        if seq & 1 == 0 {
            self.h.read_seq.store(seq + 1, Ordering::Relaxed);
        }
        // The odd counter is ordered before every change that follows (Boehm's writer).
        fence(Ordering::Release);
    }

    /// Adds what this process's lock-free reads owe the shard (see `tally.rs`): the counts,
    /// and the LRU stamp of the entries they read, if those are still indexed.
    pub fn absorb(&mut self, owed: Owed) {
        self.h.hits += owed.hits;
        self.h.misses += owed.misses;
        // An entry stamped recently is left alone: its stamp is near enough for choosing
        // among sampled victims, and writing it would make every lock-free reader of it
        // miss on its cache line again (a hot key is in every process's tally).
        let recent = (self.h.live as u64 / 8).max(1);
        for s in owed.touched {
            if s != 0 && index::position_of(self.h, self.a, s).is_some() {
                let at = s as u32 + E_ATIME;
                if self.h.tick.wrapping_sub(self.a.u64(at)) > recent {
                    self.h.tick += 1;
                    self.a.set_u64(at, self.h.tick);
                }
            }
        }
    }

    fn changed(&mut self, hash: u64) {
        if self.n_wakes < PENDING_WAKES {
            self.wakes[self.n_wakes] = hash;
            self.n_wakes += 1;
        } else {
            self.wake_everyone = true;
        }
    }

    fn next_seq(&mut self) -> u64 {
        let s = self.h.seq;
        self.h.seq += 1;
        s
    }

    /// Finds a live entry, or the slot the key would take; an expired entry is reclaimed
    /// on the way and reported absent.
    fn find(&mut self, hash: u64, key: &[u8], now: &mut LazyNow) -> Probe {
        match index::probe(self.h, self.a, hash, key) {
            Probe::Found { pos, off } if now.expired(self.a.u64(off + E_EXPIRES)) => {
                self.remove(pos, off);
                self.h.expirations += 1;
                index::probe(self.h, self.a, hash, key)
            }
            found => found,
        }
    }

    /// Finds a live entry: `(slot, offset)`.
    fn locate(&mut self, hash: u64, key: &[u8], now: &mut LazyNow) -> Option<(u32, u32)> {
        match self.find(hash, key, now) {
            Probe::Found { pos, off } => Some((pos, off)),
            Probe::Vacant { .. } => None,
        }
    }

    fn remove(&mut self, pos: u32, off: u32) {
        self.begin_write();
        let hash = self.a.u64(off + E_HASH);
        index::remove_at(self.h, self.a, pos);
        self.h.live -= 1;
        self.count_evictable(off, false);
        alloc::free(self.h, self.a, off);
        self.changed(hash);
    }

    /// Shows the entry of `key` to `f`, still under the lock, and counts a hit or miss.
    pub fn read<R>(
        &mut self,
        hash: u64,
        key: &[u8],
        now: &mut LazyNow,
        f: impl FnOnce(Stored<'_>) -> R,
    ) -> Option<R> {
        let Some((_, off)) = self.locate(hash, key, now) else {
            self.h.misses += 1;
            return None;
        };
        let a = self.a;
        self.h.tick += 1;
        a.set_u64(off + E_ATIME, self.h.tick);
        self.h.hits += 1;
        let key_len = a.u32(off + E_KEY_LEN);
        Some(f(Stored {
            kind: a.u8(off + E_KIND),
            compressed: a.u8(off + E_FLAGS) & FLAG_COMPRESSED != 0,
            raw_len: a.u32(off + E_RAW_LEN),
            bytes: a.bytes(off + value_start(key_len), a.u32(off + E_STORED_LEN)),
            version: a.u64(off + E_SEQ),
        }))
    }

    pub fn exists(&mut self, hash: u64, key: &[u8], now: &mut LazyNow) -> bool {
        self.locate(hash, key, now).is_some()
    }

    /// The key's version: the write sequence of its entry, 0 when absent.
    pub fn version(&mut self, hash: u64, key: &[u8], now: &mut LazyNow) -> u64 {
        self.locate(hash, key, now)
            .map_or(0, |(_, off)| self.a.u64(off + E_SEQ))
    }

    /// Stores `v` under `key`, replacing any entry. On `Full` the old value stays.
    pub fn set(
        &mut self,
        hash: u64,
        key: &[u8],
        v: Encoded,
        expires_at: u64,
        now: &mut LazyNow,
    ) -> Result<(), Full> {
        let at = self.find(hash, key, now);
        self.write(hash, key, v, expires_at, at, now).map(|_| ())
    }

    /// Stores `v` only if `key` is absent (an expired entry is absent). Returns the new
    /// entry's version when it was stored: the shard's write sequence, which never goes
    /// back (not across deletes, clears or repairs), so it serves as a fencing number.
    pub fn set_nx(
        &mut self,
        hash: u64,
        key: &[u8],
        v: Encoded,
        expires_at: u64,
        now: &mut LazyNow,
    ) -> Result<Option<u64>, Full> {
        match self.find(hash, key, now) {
            Probe::Found { .. } => Ok(None),
            at => self.write(hash, key, v, expires_at, at, now).map(Some),
        }
    }

    fn write(
        &mut self,
        hash: u64,
        key: &[u8],
        v: Encoded,
        expires_at: u64,
        at: Probe,
        now: &mut LazyNow,
    ) -> Result<u64, Full> {
        // No `begin_write` yet: the entry is written into a block that was free, which no
        // lock-free reader reaches (it follows the index, unchanged until the entry is
        // linked in below). So a writer stopped while it copies a large value holds off
        // other writers of the shard, never its readers. Whatever changes the index on the
        // way (evicting, reclaiming, growing it) begins the write itself.
        let old = match at {
            Probe::Found { off, .. } => Some(off),
            Probe::Vacant { .. } => None,
        };
        // The probe stays valid unless making room removed entries or grew the index.
        let before = (self.h.index_off, self.h.live);
        let vstart = value_start(key.len() as u32);
        let full = Full {
            need: vstart as u64 + v.bytes.len() as u64,
            capacity: self.a.len() as u64,
        };
        let size = alloc::block_size_for(full.need).ok_or(full)?;
        if old.is_none() {
            self.ensure_index_room(now)?;
        }
        let off = self.alloc_or_evict(size, old.unwrap_or(0), now)?;
        let a = self.a;
        a.set_state(off, PENDING);
        let seq = self.next_seq();
        self.h.tick += 1;
        a.set_u64(off + E_HASH, hash);
        a.set_u64(off + E_SEQ, seq);
        a.set_u64(off + E_EXPIRES, expires_at);
        a.set_u64(off + E_ATIME, self.h.tick);
        a.set_u32(off + E_KEY_LEN, key.len() as u32);
        a.set_u32(off + E_STORED_LEN, v.bytes.len() as u32);
        a.set_u32(off + E_RAW_LEN, v.raw_len);
        a.set_u8(off + E_KIND, v.kind);
        a.set_u8(off + E_FLAGS, v.flags);
        a.write(off + ENTRY_HEADER, key);
        a.write(off + vstart, v.bytes);
        // The entry exists from here on; until the old one is freed, repair prefers the
        // newer seq.
        a.set_state(off, LIVE);
        self.begin_write();
        let at = if (self.h.index_off, self.h.live) == before {
            at
        } else {
            index::probe(self.h, a, hash, key)
        };
        match at {
            Probe::Found { pos, off: previous } => {
                index::put(self.h, a, pos, hash, off);
                self.count_evictable(previous, false);
                alloc::free(self.h, a, previous);
            }
            Probe::Vacant { pos } => {
                index::put(self.h, a, pos, hash, off);
                self.h.live += 1;
            }
        }
        self.count_evictable(off, true);
        self.changed(hash);
        Ok(seq)
    }

    pub fn del(&mut self, hash: u64, key: &[u8], now: &mut LazyNow) -> bool {
        match self.locate(hash, key, now) {
            Some((pos, off)) => {
                self.remove(pos, off);
                true
            }
            None => false,
        }
    }

    /// Deletes `key` only if its value equals `expected` (a string, compared after
    /// decompression; an integer compares as its decimal form).
    pub fn del_if_eq(&mut self, hash: u64, key: &[u8], expected: &[u8], now: &mut LazyNow) -> bool {
        let Some((pos, off)) = self.locate(hash, key, now) else {
            return false;
        };
        if self.value_equals(off, expected) {
            self.remove(pos, off);
            true
        } else {
            false
        }
    }

    /// Sets the expiry of `key` (0 = never) only if its value equals `expected`.
    pub fn expire_if_eq(
        &mut self,
        hash: u64,
        key: &[u8],
        expected: &[u8],
        expires_at: u64,
        now: &mut LazyNow,
    ) -> bool {
        match self.locate(hash, key, now) {
            Some((_, off)) if self.value_equals(off, expected) => {
                self.begin_write();
                self.a.set_u64(off + E_EXPIRES, expires_at);
                true
            }
            _ => false,
        }
    }

    fn value_equals(&self, off: u32, expected: &[u8]) -> bool {
        let a = self.a;
        let stored = a.bytes(
            off + value_start(a.u32(off + E_KEY_LEN)),
            a.u32(off + E_STORED_LEN),
        );
        match a.u8(off + E_KIND) {
            KIND_STR if a.u8(off + E_FLAGS) & FLAG_COMPRESSED != 0 => {
                a.u32(off + E_RAW_LEN) as usize == expected.len()
                    && crate::codec::decompress(stored, expected.len())
                        .is_some_and(|raw| raw == expected)
            }
            KIND_STR => stored == expected,
            KIND_INT => {
                let v = i64::from_ne_bytes(stored.try_into().unwrap_or_default());
                v.to_string().as_bytes() == expected
            }
            _ => false,
        }
    }

    /// Adds `by` to the integer at `key`, creating it (with `expires_if_new`) at `by`.
    /// A string holding a decimal integer counts as one.
    pub fn incr_by(
        &mut self,
        hash: u64,
        key: &[u8],
        by: i64,
        expires_if_new: u64,
        now: &mut LazyNow,
    ) -> Result<i64, IncrError> {
        let a = self.a;
        let (pos, off) = match self.find(hash, key, now) {
            Probe::Found { pos, off } => (pos, off),
            at => {
                let bytes = by.to_ne_bytes();
                self.write(hash, key, Encoded::int(&bytes), expires_if_new, at, now)
                    .map_err(IncrError::Full)?;
                return Ok(by);
            }
        };
        let at = off + value_start(a.u32(off + E_KEY_LEN));
        let stored = a.u32(off + E_STORED_LEN);
        match a.u8(off + E_KIND) {
            KIND_INT => {
                let n = (a.u64(at) as i64)
                    .checked_add(by)
                    .ok_or(IncrError::Overflow)?;
                self.begin_write();
                a.set_u64(at, n as u64);
                let seq = self.next_seq();
                a.set_u64(off + E_SEQ, seq);
                self.changed(hash);
                Ok(n)
            }
            KIND_STR if a.u8(off + E_FLAGS) & FLAG_COMPRESSED == 0 => {
                let current = std::str::from_utf8(a.bytes(at, stored))
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok())
                    .ok_or(IncrError::NotAnInteger)?;
                let n = current.checked_add(by).ok_or(IncrError::Overflow)?;
                let bytes = n.to_ne_bytes();
                let v = Encoded::int(&bytes);
                let expires = a.u64(off + E_EXPIRES);
                self.write(hash, key, v, expires, Probe::Found { pos, off }, now)
                    .map_err(IncrError::Full)?;
                Ok(n)
            }
            _ => Err(IncrError::NotAnInteger),
        }
    }

    /// Sets a live key's expiry (0 = never). Returns whether the key exists.
    pub fn expire(&mut self, hash: u64, key: &[u8], expires_at: u64, now: &mut LazyNow) -> bool {
        match self.locate(hash, key, now) {
            Some((_, off)) => {
                self.begin_write();
                self.a.set_u64(off + E_EXPIRES, expires_at);
                self.changed(hash);
                true
            }
            None => false,
        }
    }

    /// The key's absolute expiry: `None` when absent, `Some(0)` when it never expires.
    pub fn expires_at(&mut self, hash: u64, key: &[u8], now: &mut LazyNow) -> Option<u64> {
        self.locate(hash, key, now)
            .map(|(_, off)| self.a.u64(off + E_EXPIRES))
    }

    /// Removes every key starting with `prefix` (every key when it is empty). Returns how
    /// many were removed.
    pub fn clear(&mut self, prefix: &[u8]) -> u64 {
        if prefix.is_empty() {
            self.begin_write();
            let n = self.h.live as u64;
            alloc::reset(self.h, self.a);
            repair::rebuild(self.h, self.a);
            self.wake_everyone = true;
            return n;
        }
        let mut removed = 0;
        let mut pos = 0;
        while pos < self.h.index_slots {
            let s = index::slot(self.h, self.a, pos);
            let off = s as u32;
            if s != 0
                && self
                    .a
                    .bytes(off + ENTRY_HEADER, self.a.u32(off + E_KEY_LEN))
                    .starts_with(prefix)
            {
                // The run after `pos` shifts back into it: look at `pos` again.
                self.remove(pos, off);
                removed += 1;
            } else {
                pos += 1;
            }
        }
        removed
    }

    /// Appends the key of every entry (expired ones too: reading them tells).
    pub fn keys(&self, out: &mut Vec<Vec<u8>>) {
        for pos in 0..self.h.index_slots {
            let s = index::slot(self.h, self.a, pos);
            if s != 0 {
                let off = s as u32;
                out.push(
                    self.a
                        .bytes(off + ENTRY_HEADER, self.a.u32(off + E_KEY_LEN))
                        .to_vec(),
                );
            }
        }
    }

    /// Appends the live entries whose key starts with `prefix`: key, TTL, stored size, and
    /// for a pinned entry (a lock) its version, which is its fencing number.
    pub fn scan(&self, prefix: &[u8], now: &mut LazyNow, out: &mut Vec<crate::store::ScanEntry>) {
        use crate::store::{KeyTtl, ScanEntry};
        for pos in 0..self.h.index_slots {
            let s = index::slot(self.h, self.a, pos);
            if s == 0 {
                continue;
            }
            let off = s as u32;
            let key = self
                .a
                .bytes(off + ENTRY_HEADER, self.a.u32(off + E_KEY_LEN));
            let expires = self.a.u64(off + E_EXPIRES);
            if !key.starts_with(prefix) || now.expired(expires) {
                continue;
            }
            out.push(ScanEntry {
                key: key.to_vec(),
                ttl: match expires {
                    0 => KeyTtl::Persistent,
                    at => KeyTtl::Remaining(std::time::Duration::from_nanos(
                        at.saturating_sub(now.get()),
                    )),
                },
                size: u64::from(self.a.u32(off + E_STORED_LEN)),
                fence: (self.a.u8(off + E_FLAGS) & FLAG_PINNED != 0)
                    .then(|| self.a.u64(off + E_SEQ)),
            });
        }
    }

    /// Checks the shard's invariants (see `repair::verify`), and that lock-free readers
    /// are not held off by a write that nobody is doing (`read_seq` even).
    pub fn verify(&self) -> Result<u32, String> {
        let seq = self.h.read_seq.load(Ordering::Relaxed);
        if !self.writing && seq & 1 != 0 {
            return Err(format!("read sequence {seq} left odd outside a write"));
        }
        repair::verify(self.h, self.a)
    }

    fn ensure_index_room(&mut self, now: &mut LazyNow) -> Result<(), Full> {
        if !index::is_full(self.h) {
            return Ok(());
        }
        let slots = self.h.index_slots * 2;
        let need = index::index_bytes(slots);
        let full = Full {
            need,
            capacity: self.a.len() as u64,
        };
        let size = alloc::block_size_for(need).ok_or(full)?;
        let off = self.alloc_or_evict(size, 0, now)?;
        self.begin_write();
        index::format(self.a, off, slots);
        let old = index::migrate(self.h, self.a, off, slots);
        alloc::free(self.h, self.a, old);
        Ok(())
    }

    /// Allocates `size` bytes, making room if needed: merge free blocks, drop expired
    /// entries, then evict approximately least-recently-used ones — never a lock before
    /// it expires, never the entry at `protect` (the value being replaced).
    fn alloc_or_evict(&mut self, size: u32, protect: u32, now: &mut LazyNow) -> Result<u32, Full> {
        if let Some(off) = alloc::alloc(self.h, self.a, size) {
            return Ok(off);
        }
        let full = Full {
            need: size as u64,
            capacity: self.a.len() as u64,
        };
        let index =
            alloc::block_size_for(index::index_bytes(self.h.index_slots)).unwrap_or(u32::MAX);
        if size as u64 + index as u64 + ARENA_START as u64 > self.a.len() as u64 {
            return Err(full);
        }
        if alloc::coalesce(self.h, self.a) >= size {
            return alloc::alloc(self.h, self.a, size).ok_or(full);
        }
        if self.reclaim_expired(now) > 0 && alloc::coalesce(self.h, self.a) >= size {
            return alloc::alloc(self.h, self.a, size).ok_or(full);
        }
        let batch = (size as u64).max(self.a.len() as u64 / 64);
        loop {
            let mut freed = 0u64;
            while freed < batch {
                match self.evict_one(protect, now) {
                    Some(bytes) => freed += bytes,
                    None => break,
                }
            }
            if alloc::coalesce(self.h, self.a) >= size {
                return alloc::alloc(self.h, self.a, size).ok_or(full);
            }
            if freed == 0 {
                return Err(full);
            }
        }
    }

    /// Removes every expired entry; returns the bytes freed.
    fn reclaim_expired(&mut self, now: &mut LazyNow) -> u64 {
        let mut freed = 0;
        let mut pos = 0;
        while pos < self.h.index_slots {
            let off = index::slot(self.h, self.a, pos) as u32;
            if off != 0 && now.expired(self.a.u64(off + E_EXPIRES)) {
                freed += self.a.block_size(off) as u64;
                self.remove(pos, off);
                self.h.expirations += 1;
            } else {
                pos += 1;
            }
        }
        freed
    }

    fn next_random(&mut self) -> u64 {
        let mut x = self.h.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.h.rng = x;
        x
    }

    /// Evicts one entry of a sample: an expired one first, then one of the lowest
    /// retention class (anonymous, cache, session), the least recently used of those.
    /// Returns the bytes freed, or `None` when nothing in the shard may be evicted.
    ///
    /// The sample is `EVICTION_SAMPLE` entries of the lowest class the shard has any of
    /// (`evictable`), so a session is never taken while an anonymous or cache entry
    /// could go instead, however few of those are left among the sessions: the walk goes
    /// on past entries of higher classes, at worst over the whole index.
    fn evict_one(&mut self, protect: u32, now: &mut LazyNow) -> Option<u64> {
        let slots = self.h.index_slots;
        let start = (self.next_random() % slots as u64) as u32;
        let enough = self.lowest_evictable_class() + 1;
        let mut victim: Option<((usize, u64), u32, u32)> = None;
        let mut seen = 0;
        for i in 0..slots {
            let pos = (start + i) & (slots - 1);
            let off = index::slot(self.h, self.a, pos) as u32;
            if off == 0 || off == protect {
                continue;
            }
            let Some(rank) = self.eviction_rank(off, now) else {
                continue;
            };
            if victim.is_none_or(|(best, ..)| rank < best) {
                victim = Some((rank, pos, off));
            }
            if rank.0 <= enough {
                seen += 1;
                if seen == EVICTION_SAMPLE {
                    break;
                }
            }
        }
        let (_, pos, off) = victim?;
        let class = class_of(self.a.u8(off + E_FLAGS));
        let bytes = self.a.block_size(off) as u64;
        self.remove(pos, off);
        self.h.evictions += 1;
        self.h.evictions_by_class[class] += 1;
        Some(bytes)
    }

    /// Where the entry at `off` stands in line for eviction, lowest first: `(0, 0)` when
    /// expired, else `(1 + its class, its last access)`; `None` for a lock that has not
    /// expired, which is never evicted.
    fn eviction_rank(&self, off: u32, now: &mut LazyNow) -> Option<(usize, u64)> {
        let flags = self.a.u8(off + E_FLAGS);
        if now.expired(self.a.u64(off + E_EXPIRES)) {
            return Some((0, 0));
        }
        let class = evictable_class(flags)?;
        if crate::fault::on("lru-only-eviction") {
            return Some((1, self.a.u64(off + E_ATIME)));
        }
        Some((1 + class, self.a.u64(off + E_ATIME)))
    }

    /// The lowest class with an entry eviction may take (the last, session, when the
    /// shard holds nothing but locks: then only expired ones may go).
    fn lowest_evictable_class(&self) -> usize {
        self.h
            .evictable
            .iter()
            .position(|&n| n > 0)
            .unwrap_or(CLASS_SESSION)
    }

    /// Counts the entry at `off` into (`add`) or out of `evictable` as it enters or
    /// leaves the index. Saturating: a count made wrong by a damaged shard only makes a
    /// walk longer until the next repair recounts.
    fn count_evictable(&mut self, off: u32, add: bool) {
        if let Some(class) = evictable_class(self.a.u8(off + E_FLAGS)) {
            let n = &mut self.h.evictable[class];
            *n = if add {
                n.saturating_add(1)
            } else {
                n.saturating_sub(1)
            };
        }
    }
}

/// The hash every shard and index decision is made from (stable across builds).
#[inline]
pub fn hash_key(key: &[u8]) -> u64 {
    xxh3_64(key)
}
