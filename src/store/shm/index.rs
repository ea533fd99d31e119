//! A shard's hash index: open addressing with linear probing over `u64` slots
//! (`tag << 32 | entry offset`, 0 = empty), backward-shift deletion (no tombstones), and
//! doubling when 3/4 full. The tag is the low 32 bits of the key's hash, which also gives
//! the home slot, so a probe touches an entry only when its tag matches.
//!
//! The index is derived state: repair rebuilds it from the LIVE entries of the arena.
//!
//! Locking: every function here requires the shard's mutex to be held by the caller.

use super::arena::Arena;
use super::layout::{E_HASH, E_KEY_LEN, ENTRY_HEADER, INDEX, INDEX_SLOTS_AT, ShardHeader};

/// Where a key is, or where it would go.
#[derive(Debug, Clone, Copy)]
pub enum Probe {
    Found { pos: u32, off: u32 },
    Vacant { pos: u32 },
}

#[inline]
fn slot_at(h: &ShardHeader, pos: u32) -> u32 {
    h.index_off + INDEX_SLOTS_AT + pos * 8
}

#[inline]
pub fn slot(h: &ShardHeader, a: Arena, pos: u32) -> u64 {
    a.u64(slot_at(h, pos))
}

#[inline]
fn set_slot(h: &ShardHeader, a: Arena, pos: u32, v: u64) {
    a.set_u64(slot_at(h, pos), v)
}

/// The bytes an index of `slots` slots occupies (block header included).
pub fn index_bytes(slots: u32) -> u64 {
    INDEX_SLOTS_AT as u64 + slots as u64 * 8
}

/// Whether the entry at `off` holds `key` (whose hash is `hash`).
#[inline]
pub fn entry_is(a: Arena, off: u32, hash: u64, key: &[u8]) -> bool {
    a.u64(off + E_HASH) == hash
        && a.u32(off + E_KEY_LEN) as usize == key.len()
        && a.bytes(off + ENTRY_HEADER, key.len() as u32) == key
}

/// The slot mask of a shard's index. Slot counts are powers of two; anything else is a
/// scribbled header, and panics (a corrupt shard) before any probe can loop.
fn mask(h: &ShardHeader) -> u32 {
    assert!(
        h.index_slots.is_power_of_two(),
        "index of {} slots: corrupt shard",
        h.index_slots
    );
    h.index_slots - 1
}

/// Counts the steps of a probe: one past every slot means the index has no empty slot,
/// which the load factor never allows: corruption.
fn step(steps: &mut u32, h: &ShardHeader) {
    *steps += 1;
    assert!(
        *steps <= h.index_slots,
        "index without an empty slot: corrupt shard"
    );
}

pub fn probe(h: &ShardHeader, a: Arena, hash: u64, key: &[u8]) -> Probe {
    let mask = mask(h);
    let tag = hash as u32;
    let mut pos = tag & mask;
    let mut steps = 0;
    loop {
        step(&mut steps, h);
        let s = slot(h, a, pos);
        if s == 0 {
            return Probe::Vacant { pos };
        }
        if (s >> 32) as u32 == tag && entry_is(a, s as u32, hash, key) {
            return Probe::Found { pos, off: s as u32 };
        }
        pos = (pos + 1) & mask;
    }
}

/// The slot holding exactly `s` (a slot value: tag and entry offset), if any: whether the
/// entry a lock-free reader saw is still indexed there.
pub fn position_of(h: &ShardHeader, a: Arena, s: u64) -> Option<u32> {
    let mask = mask(h);
    let mut pos = (s >> 32) as u32 & mask;
    let mut steps = 0;
    loop {
        step(&mut steps, h);
        match slot(h, a, pos) {
            0 => return None,
            found if found == s => return Some(pos),
            _ => pos = (pos + 1) & mask,
        }
    }
}

/// Points slot `pos` at the entry `off` of a key hashing to `hash`.
pub fn put(h: &ShardHeader, a: Arena, pos: u32, hash: u64, off: u32) {
    set_slot(h, a, pos, ((hash as u32 as u64) << 32) | off as u64);
}

/// Empties slot `pos`, shifting the following run back so that no probe chain breaks.
pub fn remove_at(h: &ShardHeader, a: Arena, pos: u32) {
    let mask = mask(h);
    let mut hole = pos;
    let mut j = pos;
    let mut steps = 0;
    loop {
        step(&mut steps, h);
        j = (j + 1) & mask;
        let s = slot(h, a, j);
        if s == 0 {
            break;
        }
        let home = (s >> 32) as u32 & mask;
        // The entry at j may fill the hole if the hole lies on its probe path.
        if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
            set_slot(h, a, hole, s);
            hole = j;
        }
    }
    set_slot(h, a, hole, 0);
}

/// Formats the block at `off` (of at least `index_bytes(slots)` bytes) as an empty index.
pub fn format(a: Arena, off: u32, slots: u32) {
    a.fill_zero(off + INDEX_SLOTS_AT, slots * 8);
    a.set_state(off, INDEX);
}

/// Inserts a slot value into an index that does not contain its key yet.
fn insert_raw(h: &ShardHeader, a: Arena, s: u64) {
    let mask = mask(h);
    let mut pos = (s >> 32) as u32 & mask;
    let mut steps = 0;
    while slot(h, a, pos) != 0 {
        step(&mut steps, h);
        pos = (pos + 1) & mask;
    }
    set_slot(h, a, pos, s);
}

/// Moves every slot of the current index into the formatted, empty index at `new_off`
/// and makes it current. Returns the old index's block offset, for the caller to free.
pub fn migrate(h: &mut ShardHeader, a: Arena, new_off: u32, new_slots: u32) -> u32 {
    let (old_off, old_slots) = (h.index_off, h.index_slots);
    h.index_off = new_off;
    h.index_slots = new_slots;
    for pos in 0..old_slots {
        let s = a.u64(old_off + INDEX_SLOTS_AT + pos * 8);
        if s != 0 {
            insert_raw(h, a, s);
        }
    }
    old_off
}

/// Whether the index must grow before one more key goes in (load factor 3/4).
pub fn is_full(h: &ShardHeader) -> bool {
    (h.live as u64 + 1) * 4 > h.index_slots as u64 * 3
}
