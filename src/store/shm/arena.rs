//! Bounds-checked access to one shard's arena: the only place that turns arena offsets
//! into memory accesses. No policy here: what lives at an offset is `layout.rs`'s business.

use std::sync::atomic::{AtomicU32, Ordering};

use super::constants::GRANULE;
use super::layout::BlockHeader;

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
    ///   the segment's creation flock), which makes this process the only accessor.
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
