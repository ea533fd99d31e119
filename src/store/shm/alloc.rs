//! The arena allocator of one shard: segregated free lists by size class, split on
//! allocation, coalesced in a walk when an allocation fails.
//!
//! Free lists are derived state: a crash may leave them inconsistent, and repair simply
//! rebuilds them with `coalesce` (the walk of the arena is the truth). Every structural
//! change to a block is a single aligned store of its size, ordered so that a walk always
//! sees a tiling of the arena.
//!
//! Locking: every function here requires the shard's mutex to be held by the caller.

use super::arena::Arena;
use super::constants::{ARENA_START, GRANULE, MIN_BLOCK};
use super::layout::{FREE, FREE_NEXT, SIZE_CLASSES, ShardHeader};

/// The size class a block of `size` bytes belongs to (the largest class whose size is
/// `<= size`). A block smaller than a granule exists only in a damaged shard.
pub fn class_of_block(size: u32) -> usize {
    assert!(size >= GRANULE, "block of {size} bytes: corrupt shard");
    if size <= 1024 {
        (size / GRANULE) as usize - 1
    } else {
        let p = 31 - size.leading_zeros(); // floor(log2), >= 10
        let sub = (size >> (p - 2)) & 3;
        64 + (p as usize - 10) * 4 + sub as usize
    }
}

/// The smallest size of class `c`.
pub fn class_size(c: usize) -> u64 {
    if c < 64 {
        (c as u64 + 1) * GRANULE as u64
    } else {
        let p = (c - 64) / 4 + 10;
        let sub = ((c - 64) % 4) as u64;
        (4 + sub) << (p - 2)
    }
}

/// The class to allocate `size` bytes from: every block on its list is at least `size`.
fn class_for_request(size: u32) -> usize {
    let c = class_of_block(size);
    if class_size(c) < size as u64 {
        c + 1
    } else {
        c
    }
}

/// Rounds a request up to the granule.
pub fn block_size_for(bytes: u64) -> Option<u32> {
    let rounded = bytes.max(MIN_BLOCK as u64).next_multiple_of(GRANULE as u64);
    u32::try_from(rounded).ok()
}

fn push(h: &mut ShardHeader, a: Arena, off: u32) {
    let c = class_of_block(a.block_size(off));
    a.set_u32(off + FREE_NEXT, h.free_heads[c]);
    h.free_heads[c] = off;
    h.nonempty[c / 64] |= 1 << (c % 64);
}

fn pop(h: &mut ShardHeader, a: Arena, c: usize) -> Option<u32> {
    let off = h.free_heads[c];
    if off == 0 {
        h.nonempty[c / 64] &= !(1 << (c % 64));
        return None;
    }
    h.free_heads[c] = a.u32(off + FREE_NEXT);
    if h.free_heads[c] == 0 {
        h.nonempty[c / 64] &= !(1 << (c % 64));
    }
    Some(off)
}

/// The first class `>= c` whose list may be non-empty.
fn next_nonempty(h: &ShardHeader, c: usize) -> Option<usize> {
    let mut word = c / 64;
    let mut bits = h.nonempty[word] & (!0u64 << (c % 64));
    loop {
        if bits != 0 {
            let found = word * 64 + bits.trailing_zeros() as usize;
            return (found < SIZE_CLASSES).then_some(found);
        }
        word += 1;
        if word == h.nonempty.len() {
            return None;
        }
        bits = h.nonempty[word];
    }
}

/// Unlinks and returns the first block of list `c` that holds at least `size` bytes.
/// Used for the one class whose blocks may be smaller than the request.
fn take_fit(h: &mut ShardHeader, a: Arena, c: usize, size: u32) -> Option<u32> {
    let mut prev = 0;
    let mut at = h.free_heads[c];
    // A list longer than the arena has blocks loops: corruption, not an endless walk.
    let mut steps = 0u32;
    while at != 0 {
        steps += 1;
        assert!(
            steps <= a.len() / GRANULE,
            "free list {c} loops: corrupt shard"
        );
        let next = a.u32(at + FREE_NEXT);
        if a.block_size(at) >= size {
            if prev == 0 {
                h.free_heads[c] = next;
                if next == 0 {
                    h.nonempty[c / 64] &= !(1 << (c % 64));
                }
            } else {
                a.set_u32(prev + FREE_NEXT, next);
            }
            return Some(at);
        }
        prev = at;
        at = next;
    }
    None
}

/// Finds a free block of at least `size` bytes and takes it off its list: the head of a
/// larger class when there is one (O(1)), else a first fit in the request's own class.
fn find(h: &mut ShardHeader, a: Arena, size: u32) -> Option<u32> {
    let mut c = class_for_request(size);
    while let Some(found) = next_nonempty(h, c) {
        match pop(h, a, found) {
            Some(off) => return Some(off),
            None => c = found + 1,
        }
    }
    take_fit(h, a, class_of_block(size), size)
}

/// Allocates a block of exactly `size` bytes (a granule multiple, `>= MIN_BLOCK`) or a
/// little more when the remainder would be too small to keep. The block is returned in
/// state FREE, off every list; the caller gives it its state.
pub fn alloc(h: &mut ShardHeader, a: Arena, size: u32) -> Option<u32> {
    let off = find(h, a, size)?;
    let have = a.block_size(off);
    debug_assert!(have >= size, "free list holds a block of {have} < {size}");
    if have - size >= MIN_BLOCK {
        // Remainder first, then shrink: a walk sees either the whole block or both.
        let rest = off + size;
        a.set_block_size(rest, have - size);
        a.set_state(rest, FREE);
        a.set_block_size(off, size);
        push(h, a, rest);
        h.used += size as u64;
    } else {
        h.used += have as u64;
    }
    Some(off)
}

/// Returns a block to its free list. It is not merged with its neighbours until the next
/// `coalesce`.
pub fn free(h: &mut ShardHeader, a: Arena, off: u32) {
    a.set_state(off, FREE);
    h.used -= a.block_size(off) as u64;
    push(h, a, off);
}

/// Walks the arena, merges runs of free blocks and rebuilds every free list. Returns the
/// size of the largest free block.
pub fn coalesce(h: &mut ShardHeader, a: Arena) -> u32 {
    h.free_heads = [0; SIZE_CLASSES];
    h.nonempty = [0; SIZE_CLASSES.div_ceil(64)];
    let mut largest = 0;
    let mut off = ARENA_START;
    while off < a.len() {
        let mut next = a.next_block(off);
        if a.state(off) == FREE {
            while next < a.len() && a.state(next) == FREE {
                next = a.next_block(next);
            }
            let size = next - off;
            a.set_block_size(off, size);
            push(h, a, off);
            largest = largest.max(size);
        }
        off = next;
    }
    largest
}

/// Makes the whole arena one free block.
pub fn reset(h: &mut ShardHeader, a: Arena) {
    a.set_block_size(ARENA_START, a.len() - ARENA_START);
    a.set_state(ARENA_START, FREE);
    h.used = 0;
    coalesce(h, a);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_monotonic_and_cover_requests() {
        let mut last = 0;
        for size in (GRANULE..1 << 22).step_by(GRANULE as usize) {
            let c = class_of_block(size);
            assert!(c >= last);
            last = c;
            assert!(class_size(c) <= size as u64);
            assert!(class_size(c + 1) >= size as u64);
            let r = class_for_request(size);
            assert!(class_size(r) >= size as u64);
        }
        assert!(class_of_block(u32::MAX - 15) < SIZE_CLASSES);
    }
}
