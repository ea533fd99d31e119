//! The lock-free read path: a get that writes nothing shared.
//!
//! A shard's `read_seq` is a seqlock's counter. The lock holder makes it odd before it
//! changes anything a reader looks at and even again (a new value) before it unlocks
//! (`shard::Guard`). A reader here:
//!
//! 1. loads `read_seq` (Acquire); odd means a writer is at work (or died at work): take
//!    the lock instead, which waits for the writer, or repairs after it;
//! 2. probes the index and reads the entry with the `Arena::racy_*` loads — every offset
//!    bounds-checked, every loop bounded by the index's slot count, no panic;
//! 3. checks `read_seq` again (an Acquire fence, then a load) once the entry's header is
//!    read, so that a length is trusted only when it comes from one consistent state
//!    (no huge copy of a torn length), then copies the value, and checks once more.
//!
//! Equal readings around the reads mean no lock holder changed the shard in between (it
//! would have moved the counter), so what was read is one consistent state: the answer is
//! returned. Anything else is thrown away: a changed counter is retried a few times, and an
//! odd counter, a shard marked for repair, or any read that does not make sense (an
//! offset out of bounds, an index with no empty slot) goes to the locked path, which
//! recovers and repairs what needs it — a reader never spins on a counter a dead writer
//! left odd.
//!
//! Values of every size are read here, compressed ones too (their bytes are copied as
//! stored and unpacked by the caller once the copy is known to be whole): a read that
//! held the shard lock while it copied could be stopped there (SIGSTOP, a debugger) and
//! hold every writer of the shard, and `stats()`, for as long as it stays stopped.
//!
//! Memory orders follow Boehm's "Can seqlocks get along with programming language memory
//! models?" (2012): the writer stores the odd counter, then a Release fence, then the data
//! (plain stores, under its mutex), then the even counter with Release; the reader loads
//! the counter with Acquire, the data with relaxed loads, then an Acquire fence and the
//! counter again. Why reading data a writer changes is sound at all is `Arena`'s racy
//! reads' doc.
//!
//! Expired entries are a miss here; removing them is left to the lock holders.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

use super::arena::Arena;
use super::clock::LazyNow;
use super::constants::{ARENA_START, GRANULE, OPTIMISTIC_ATTEMPTS};
use super::layout::*;
use crate::store::{Fetched, Room};

/// What a lock-free read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The entry is in `Found`, a string-like value's bytes in the caller's buffer.
    Hit,
    Miss,
    /// This read needs the lock.
    Locked,
}

/// A hit's entry. Plain words filled in place (not an enum carried back up the calls,
/// whose moves through the stack cost store-forwarding stalls on every get).
#[derive(Debug, Default, Clone, Copy)]
pub struct Found {
    /// `EntryHeader::kind`.
    pub kind: u8,
    /// An int's or float's bits.
    pub word: u64,
    pub version: u64,
    /// The index slot that led to the entry (for the LRU's sampled touch, `tally.rs`).
    pub slot: u64,
    /// `Some(n)`: the bytes in the caller's buffer are lz4-packed, `n` bytes unpacked.
    pub unpacked_len: Option<u32>,
}

/// One try's end: an answer, or "the counter moved, try again".
enum Try {
    Done(Outcome),
    Changed,
}

/// Reads `r.key` from the shard at `h` without taking its lock. A hit is described in
/// `found`, a string-like value's bytes in `out` (as stored: packed when
/// `found.unpacked_len` says so).
///
/// # Safety
/// - `h` points to the shard's header in a live mapping, and `a` is that shard's arena.
#[inline]
pub unsafe fn read<R: Room + ?Sized>(
    h: *mut ShardHeader,
    a: Arena,
    r: &Request,
    now: &mut LazyNow,
    found: &mut Found,
    out: &mut R,
) -> Outcome {
    // SAFETY: forwarded; the header's fields are read atomically below.
    let view = unsafe { Header::new(h) };
    for _ in 0..OPTIMISTIC_ATTEMPTS {
        if let Try::Done(outcome) = attempt(&view, a, r, now, found, out) {
            return outcome;
        }
    }
    Outcome::Locked
}

/// What is looked for.
pub struct Request<'k> {
    /// `shard::hash_key(key)`.
    pub hash: u64,
    pub key: &'k [u8],
}

/// The header words a reader needs, read atomically.
struct Header<'a> {
    read_seq: &'a AtomicU64,
    needs_repair: &'a AtomicU32,
    index_off: &'a AtomicU32,
    index_slots: &'a AtomicU32,
}

impl Header<'_> {
    /// # Safety
    /// `h` points to a live shard header.
    unsafe fn new(h: *mut ShardHeader) -> Self {
        // SAFETY: the fields are aligned u32s inside the live header (contract); the lock
        // holder writes them with plain stores, which these loads tolerate (Arena's racy
        // reads' doc), and `read_seq` is an atomic anyway.
        unsafe {
            Header {
                read_seq: &(*h).read_seq,
                needs_repair: AtomicU32::from_ptr(&raw mut (*h).needs_repair),
                index_off: AtomicU32::from_ptr(&raw mut (*h).index_off),
                index_slots: AtomicU32::from_ptr(&raw mut (*h).index_slots),
            }
        }
    }

    /// Whether the counter still reads `seen`: nothing was changed since it was read.
    #[inline]
    fn unchanged(&self, seen: u64) -> bool {
        if crate::fault::on("broken-atomicity") {
            return true; // the demonstration: readers trust whatever they read
        }
        fence(Ordering::Acquire);
        self.read_seq.load(Ordering::Relaxed) == seen
    }
}

#[inline]
fn attempt<R: Room + ?Sized>(
    h: &Header,
    a: Arena,
    r: &Request,
    now: &mut LazyNow,
    found: &mut Found,
    out: &mut R,
) -> Try {
    let seen = h.read_seq.load(Ordering::Acquire);
    let active = seen & 1 != 0 && !crate::fault::on("broken-atomicity");
    if active || h.needs_repair.load(Ordering::Relaxed) != 0 {
        return Try::Done(Outcome::Locked);
    }
    // Something read made no sense: a writer moved it meanwhile, or the shard is damaged
    // (the lock holder then finds out and repairs).
    let surprise = || {
        if h.unchanged(seen) {
            Try::Done(Outcome::Locked)
        } else {
            Try::Changed
        }
    };
    let index_off = h.index_off.load(Ordering::Relaxed);
    let slots = h.index_slots.load(Ordering::Relaxed);
    let first = index_off as u64 + INDEX_SLOTS_AT as u64;
    if !slots.is_power_of_two() || first + slots as u64 * 8 > a.len() as u64 {
        return surprise();
    }
    let first = first as u32;
    let mask = slots - 1;
    let (hash, key) = (r.hash, r.key);
    let tag = hash as u32;
    let mut pos = tag & mask;
    for _ in 0..slots {
        let Some(s) = a.racy_u64(first + pos * 8) else {
            return surprise();
        };
        if s == 0 {
            return if h.unchanged(seen) {
                Try::Done(Outcome::Miss)
            } else {
                Try::Changed
            };
        }
        if (s >> 32) as u32 == tag {
            let off = s as u32;
            if off < ARENA_START || off % GRANULE != 0 {
                return surprise();
            }
            let same = a.racy_u64(off + E_HASH) == Some(hash)
                && a.racy_u32(off + E_KEY_LEN) == Some(key.len() as u32)
                && a.racy_eq(off + ENTRY_HEADER, key) == Some(true);
            if same {
                found.slot = s;
                return entry(h, a, seen, off, r, now, found, out);
            }
        }
        pos = (pos + 1) & mask;
    }
    surprise()
}

/// Reads the entry at `off`, which holds the key.
#[allow(clippy::too_many_arguments)]
#[inline]
fn entry<R: Room + ?Sized>(
    h: &Header,
    a: Arena,
    seen: u64,
    off: u32,
    r: &Request,
    now: &mut LazyNow,
    found: &mut Found,
    out: &mut R,
) -> Try {
    let fields = (|| {
        Some((
            a.racy_u64(off + E_EXPIRES)?,
            a.racy_u64(off + E_SEQ)?,
            a.racy_u32(off + E_STORED_LEN)?,
            a.racy_u8(off + E_KIND)?,
            a.racy_u8(off + E_FLAGS)?,
            a.racy_u32(off + E_RAW_LEN)?,
        ))
    })();
    // The header is trusted only once the counter says it is from one state.
    if !h.unchanged(seen) {
        return Try::Changed;
    }
    let Some((expires, version, stored, kind, flags, raw_len)) = fields else {
        return Try::Done(Outcome::Locked);
    };
    if now.expired(expires) {
        return Try::Done(Outcome::Miss);
    }
    let packed = flags & FLAG_COMPRESSED != 0;
    let at = (ENTRY_HEADER + r.key.len() as u32).next_multiple_of(8) + off;
    let read = match kind {
        // A room that cannot take packed bytes leaves their unpacking to a buffer's read.
        KIND_STR | KIND_SERIALIZED if packed && !out.takes_packed() => None,
        KIND_STR => a.racy_copy(at, stored, Fetched::Str, out),
        KIND_SERIALIZED => a.racy_copy(at, stored, Fetched::Serialized, out),
        _ if packed => None,
        KIND_INT | KIND_FLOAT if stored == 8 => a.racy_u64(at).map(|n| found.word = n),
        KIND_FALSE | KIND_TRUE | KIND_NULL => Some(()),
        _ => None,
    };
    if !h.unchanged(seen) {
        return Try::Changed;
    }
    if read.is_none() {
        return Try::Done(Outcome::Locked);
    }
    found.kind = kind;
    found.version = version;
    found.unpacked_len = packed.then_some(raw_len);
    Try::Done(Outcome::Hit)
}
