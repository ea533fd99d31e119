//! Bounds-checked access to one shard's arena: the only place that turns arena offsets
//! into memory accesses. No policy here: what lives at an offset is `layout.rs`'s business.
//!
//! Two kinds of access: the plain ones, for the holder of the shard's lock, panic on an
//! offset out of bounds (corruption, handled by the guard); the `racy_*` ones, for the
//! lock-free readers of `optimistic.rs`, read memory a writer may be changing at that
//! very moment, and answer `None` instead of panicking.

use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};

use super::constants::GRANULE;
use super::layout::BlockHeader;
use crate::store::{Fetched, Room};

/// A view of one shard's arena in this process's mapping.
///
/// Every access checks `off + n <= len` and panics on a violation (a bug, or a segment
/// scribbled on by something else); a panic inside a shard marks the shard for repair
/// (see `shard::Guard`).
#[derive(Clone, Copy)]
pub struct Arena {
    base: *mut u8,
    len: u32,
}

impl Arena {
    /// # Safety
    /// - `base..base + len` must be mapped, readable and writable for as long as the view
    ///   is used, and aligned to 16 bytes.
    /// - The view may only be used while holding the shard's mutex (or, at creation,
    ///   the segment's creation flock), which makes this process the only accessor —
    ///   except through the `racy_*` reads, which may be used at any time.
    pub unsafe fn new(base: *mut u8, len: u32) -> Self {
        debug_assert_eq!(base as usize % 16, 0);
        Arena { base, len }
    }

    pub fn len(&self) -> u32 {
        self.len
    }

    #[inline]
    fn at(&self, off: u32, n: u32) -> *mut u8 {
        assert!(
            off as u64 + n as u64 <= self.len as u64,
            "arena access {off}+{n} outside {} bytes: corrupt shard",
            self.len
        );
        // SAFETY: off + n <= len, so the result stays inside the mapping (Arena::new).
        unsafe { self.base.add(off as usize) }
    }

    #[inline]
    pub fn u32(&self, off: u32) -> u32 {
        let p = self.at(off, 4);
        // SAFETY: in bounds (at); exclusive access under the shard lock (Arena::new).
        // Unaligned reads are allowed by read_unaligned.
        unsafe { p.cast::<u32>().read_unaligned() }
    }

    #[inline]
    pub fn set_u32(&self, off: u32, v: u32) {
        let p = self.at(off, 4);
        // SAFETY: as in `u32`.
        unsafe { p.cast::<u32>().write_unaligned(v) }
    }

    #[inline]
    pub fn u64(&self, off: u32) -> u64 {
        let p = self.at(off, 8);
        // SAFETY: as in `u32`.
        unsafe { p.cast::<u64>().read_unaligned() }
    }

    /// Stores a u64 at an 8-aligned offset in one instruction: a process killed around it
    /// leaves either the old or the new value, never a mix.
    #[inline]
    pub fn set_u64(&self, off: u32, v: u64) {
        debug_assert_eq!(off % 8, 0);
        let p = self.at(off, 8);
        // SAFETY: as in `u32`; the offset is 8-aligned and the base 16-aligned, so this is
        // an aligned, untorn store.
        unsafe { p.cast::<u64>().write(v) }
    }

    #[inline]
    pub fn u8(&self, off: u32) -> u8 {
        let p = self.at(off, 1);
        // SAFETY: as in `u32`.
        unsafe { p.read() }
    }

    #[inline]
    pub fn set_u8(&self, off: u32, v: u8) {
        let p = self.at(off, 1);
        // SAFETY: as in `u32`.
        unsafe { p.write(v) }
    }

    #[inline]
    pub fn bytes(&self, off: u32, n: u32) -> &[u8] {
        let p = self.at(off, n);
        // SAFETY: in bounds (at); nobody writes the range while we hold the shard lock, and
        // the slice does not outlive `self`'s use under that lock.
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }

    #[inline]
    pub fn write(&self, off: u32, src: &[u8]) {
        let p = self.at(off, src.len() as u32);
        // SAFETY: in bounds (at); `src` is process-local memory, so the ranges cannot overlap.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), p, src.len()) }
    }

    fn state_word(&self, off: u32) -> &AtomicU32 {
        debug_assert_eq!(off % 8, 0);
        let p = self.at(off, size_of::<BlockHeader>() as u32);
        // SAFETY: in bounds and 4-aligned (blocks start on GRANULE boundaries); a
        // BlockHeader's `state` is an AtomicU32 at offset 4 (layout.rs).
        unsafe { &(*p.cast::<BlockHeader>()).state }
    }

    /// The state of the block at `off` (Acquire: pairs with `set_state`'s Release, so the
    /// body written before the state is visible, also to a repairer after a crash).
    #[inline]
    pub fn state(&self, off: u32) -> u32 {
        self.state_word(off).load(Ordering::Acquire)
    }

    #[inline]
    pub fn set_state(&self, off: u32, state: u32) {
        self.state_word(off).store(state, Ordering::Release)
    }

    #[inline]
    pub fn block_size(&self, off: u32) -> u32 {
        self.u32(off)
    }

    #[inline]
    pub fn set_block_size(&self, off: u32, size: u32) {
        self.set_u32(off, size)
    }
}

impl Arena {
    /// The offset of the block after the one at `off`. A size that could not be right
    /// (not a whole number of granules, or past the arena's end) is corruption: it panics,
    /// like every out-of-bounds access, so that no walk can loop or run off the arena.
    #[inline]
    pub fn next_block(&self, off: u32) -> u32 {
        let size = self.block_size(off);
        assert!(
            size >= GRANULE && size % GRANULE == 0 && off as u64 + size as u64 <= self.len as u64,
            "block at {off} has size {size} in an arena of {} bytes: corrupt shard",
            self.len
        );
        off + size
    }

    /// Zeroes `n` bytes at `off`.
    pub fn fill_zero(&self, off: u32, n: u32) {
        let p = self.at(off, n);
        // SAFETY: in bounds (at); exclusive under the shard lock (Arena::new).
        unsafe { std::ptr::write_bytes(p, 0, n as usize) }
    }
}

/// From this many bytes on, `racy_copy` copies with `rep movsb`, which the CPU runs in
/// whole cache lines; below it the instruction's start-up cost is more than the loop.
#[cfg(target_arch = "x86_64")]
const BULK_COPY: u32 = 1024;

/// Reads for lock-free readers: memory that the lock holder of another process may be
/// writing while we read it.
///
/// Why this is sound (the argument `optimistic.rs` builds on):
/// - Nothing leaves the mapping: every offset is checked against the arena's length, which
///   is this process's own copy (from the segment's geometry), not a word in shared memory.
/// - Every word is read with one atomic load of its natural alignment, never a plain
///   load the compiler could split, repeat or assume stable: a value that steers an
///   address or a loop is read once into a local and checked there. On the platforms ephpm
///   builds for, such a load is an ordinary `mov` that cannot fault inside the mapping.
/// - What was read may be stale or a mix of two states (the holder writes these words
///   with plain stores under its mutex): a reader uses none of it for anything but
///   further bounded reads until the shard's `read_seq` says nothing changed meanwhile,
///   and drops it otherwise — the seqlock discipline of crossbeam's `SeqLock` and Linux's
///   seqcount, which read the protected data with volatile or relaxed loads as here.
impl Arena {
    #[inline]
    fn racy_ptr(&self, off: u32, n: u32, align: u32) -> Option<*mut u8> {
        if off % align != 0 || off as u64 + n as u64 > self.len as u64 {
            return None;
        }
        // SAFETY: off + n <= len: inside the mapping (Arena::new).
        Some(unsafe { self.base.add(off as usize) })
    }

    /// The u64 at an 8-aligned `off`; `None` when unaligned or out of bounds.
    #[inline]
    pub fn racy_u64(&self, off: u32) -> Option<u64> {
        let p = self.racy_ptr(off, 8, 8)?;
        // SAFETY: in bounds and 8-aligned (the base is 16-aligned), so a valid AtomicU64
        // for as long as the mapping lives; see the impl's doc for the concurrent writer.
        Some(unsafe { AtomicU64::from_ptr(p.cast()) }.load(Ordering::Relaxed))
    }

    /// The u32 at a 4-aligned `off`; `None` when unaligned or out of bounds.
    #[inline]
    pub fn racy_u32(&self, off: u32) -> Option<u32> {
        let p = self.racy_ptr(off, 4, 4)?;
        // SAFETY: as in `racy_u64`, 4-aligned.
        Some(unsafe { AtomicU32::from_ptr(p.cast()) }.load(Ordering::Relaxed))
    }

    #[inline]
    pub fn racy_u8(&self, off: u32) -> Option<u8> {
        let p = self.racy_ptr(off, 1, 1)?;
        // SAFETY: as in `racy_u64`.
        Some(unsafe { AtomicU8::from_ptr(p) }.load(Ordering::Relaxed))
    }

    /// Whether the `want.len()` bytes at the 8-aligned `off` equal `want`; `None` when out
    /// of bounds.
    #[inline]
    pub fn racy_eq(&self, off: u32, want: &[u8]) -> Option<bool> {
        let p = self.racy_ptr(off, u32::try_from(want.len()).ok()?, 8)?;
        let mut words = want.chunks_exact(8);
        let mut at = p;
        for w in &mut words {
            // SAFETY: `at` stays within the `want.len()` bytes checked above, 8-aligned.
            let theirs = unsafe { AtomicU64::from_ptr(at.cast()) }.load(Ordering::Relaxed);
            if theirs != u64::from_ne_bytes(w.try_into().unwrap_or_default()) {
                return Some(false);
            }
            at = at.wrapping_add(8);
        }
        for &b in words.remainder() {
            // SAFETY: as above, the last bytes.
            if unsafe { AtomicU8::from_ptr(at) }.load(Ordering::Relaxed) != b {
                return Some(false);
            }
            at = at.wrapping_add(1);
        }
        Some(true)
    }

    /// Copies the `n` bytes at the 8-aligned `off`, a value of kind `kind`, into the room
    /// `out` gives for them, word by word; `None` when out of bounds. A room refused is
    /// left as it is (the caller knows).
    #[inline]
    pub fn racy_copy<R: Room + ?Sized>(
        &self,
        off: u32,
        n: u32,
        kind: Fetched,
        out: &mut R,
    ) -> Option<()> {
        let p = self.racy_ptr(off, n, 8)?;
        let Some(dst) = out.room(n as usize, kind) else {
            return Some(());
        };
        // A room of another length would be a broken `Room`: copy nothing rather than
        // write past it.
        if dst.len() != n as usize {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        if n >= BULK_COPY {
            // SAFETY: `p` and the next `n` bytes are inside the mapping (racy_ptr); `dst` is
            // `n` bytes of the caller's own memory, which does not overlap the mapping. `rep
            // movsb` reads each source byte once and is opaque to the compiler, as the
            // atomic loads below are: what it copies may be torn by a concurrent writer, and
            // is used only once the seqlock says it was not (the impl's doc).
            unsafe {
                std::arch::asm!("rep movsb",
                    inout("rcx") n as usize => _,
                    inout("rsi") p => _,
                    inout("rdi") dst.as_mut_ptr() => _,
                    options(nostack, preserves_flags));
                out.filled(n as usize);
            }
            return Some(());
        }
        let mut chunks = dst.chunks_exact_mut(8);
        let mut at = p;
        for c in &mut chunks {
            // SAFETY: `at` stays within the `n` bytes checked above, 8-aligned; `c` is 8
            // bytes of the caller's memory (alignment 1: an unaligned store).
            unsafe {
                let w = AtomicU64::from_ptr(at.cast()).load(Ordering::Relaxed);
                c.as_mut_ptr().cast::<u64>().write_unaligned(w);
            }
            at = at.wrapping_add(8);
        }
        for d in chunks.into_remainder() {
            // SAFETY: as above, the last bytes.
            d.write(unsafe { AtomicU8::from_ptr(at) }.load(Ordering::Relaxed));
            at = at.wrapping_add(1);
        }
        // SAFETY: the loops above initialised all `n` bytes of the room.
        unsafe { out.filled(n as usize) };
        Some(())
    }
}
