//! Rebuilding a shard from its arena, and checking one.
//!
//! The blocks of an arena and the states in their headers are the truth; the index, the
//! free lists and the counters are derived from them. A holder killed at any instruction
//! leaves the truth consistent (every structural change is one aligned store, and an
//! entry becomes LIVE only once it is complete), so `rebuild` makes the whole shard
//! consistent again: PENDING entries (a write that did not finish) are dropped, two LIVE
//! entries of one key (a replace that did not finish) resolve to the newer `seq`, and the
//! index and free lists are built anew.
//!
//! Locking: both functions require the shard's mutex to be held by the caller.

use xxhash_rust::xxh3::xxh3_64;

use super::alloc;
use super::arena::Arena;
use super::constants::{ARENA_START, GRANULE, INITIAL_INDEX_SLOTS};
use super::index::{self, Probe};
use super::layout::*;

/// What a rebuild found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Rebuilt {
    pub live: u32,
    /// Entries dropped: unfinished writes, superseded duplicates, malformed entries.
    pub dropped: u32,
}

/// Whether the block at `off` has a plausible header for an arena of `len` bytes.
fn sane_block(a: Arena, off: u32) -> bool {
    let size = a.block_size(off);
    size >= GRANULE
        && size % GRANULE == 0
        && off as u64 + size as u64 <= a.len() as u64
        && matches!(a.state(off), FREE | INDEX | PENDING | LIVE)
}

/// Whether the LIVE block at `off` holds a well-formed entry. Every field is checked
/// against the block's own size before it is used, so no garbage can send a read out of
/// the arena.
fn sane_entry(a: Arena, off: u32) -> bool {
    let size = a.block_size(off) as u64;
    if size < ENTRY_HEADER as u64 {
        return false;
    }
    let key_len = a.u32(off + E_KEY_LEN) as u64;
    let stored = a.u32(off + E_STORED_LEN) as u64;
    let start = (ENTRY_HEADER as u64 + key_len).next_multiple_of(8);
    if key_len == 0 || start + stored > size || a.u8(off + E_KIND) > KIND_NULL {
        return false;
    }
    let key = a.bytes(off + ENTRY_HEADER, key_len as u32);
    xxh3_64(key) == a.u64(off + E_HASH)
}

/// Empties the shard: one free block and a fresh index. What a shard too damaged to
/// rebuild gets; the write sequence is kept, so versions and fencing numbers of the
/// store never go back.
pub fn reset(h: &mut ShardHeader, a: Arena) {
    alloc::reset(h, a);
    rebuild(h, a);
}

/// Makes the shard consistent from the states of its blocks (see the module doc).
pub fn rebuild(h: &mut ShardHeader, a: Arena) -> Rebuilt {
    let mut out = Rebuilt::default();
    // 1. Walk; anything that is not a complete entry becomes free. A block header that
    //    cannot be right ends the walk: the rest of the arena becomes one free block.
    let mut off = ARENA_START;
    let mut live = 0u32;
    let mut used = 0u64;
    let mut max_seq = 0u64;
    while off < a.len() {
        if !sane_block(a, off) {
            a.set_block_size(off, a.len() - off);
            a.set_state(off, FREE);
            break;
        }
        match a.state(off) {
            LIVE if sane_entry(a, off) => {
                live += 1;
                used += a.block_size(off) as u64;
                max_seq = max_seq.max(a.u64(off + E_SEQ));
            }
            LIVE | PENDING => {
                out.dropped += 1;
                a.set_state(off, FREE);
            }
            INDEX => a.set_state(off, FREE),
            _ => {}
        }
        off += a.block_size(off);
    }
    h.used = used;
    alloc::coalesce(h, a);

    // 2. A new index sized for what survived. Space for it exists unless the arena is
    //    nothing but entries; then the oldest entries make room.
    let mut slots = INITIAL_INDEX_SLOTS;
    while (live as u64 + 1) * 4 > slots as u64 * 3 {
        slots *= 2;
    }
    let need = alloc::block_size_for(index::index_bytes(slots)).unwrap_or(u32::MAX);
    let index_off = loop {
        if let Some(off) = alloc::alloc(h, a, need) {
            break off;
        }
        match first_live(a) {
            Some(victim) => {
                alloc::free(h, a, victim);
                out.dropped += 1;
                alloc::coalesce(h, a);
            }
            None => {
                // Cannot happen (an empty arena holds an index), but never loop forever.
                alloc::reset(h, a);
                break alloc::alloc(h, a, need).unwrap_or(ARENA_START);
            }
        }
    };
    index::format(a, index_off, slots);
    h.index_off = index_off;
    h.index_slots = slots;
    h.live = 0;

    // 3. Index every LIVE entry; of two with one key, the newer seq wins.
    let mut off = ARENA_START;
    while off < a.len() {
        let next = a.next_block(off);
        if a.state(off) == LIVE {
            let hash = a.u64(off + E_HASH);
            let key = a.bytes(off + ENTRY_HEADER, a.u32(off + E_KEY_LEN)).to_vec();
            match index::probe(h, a, hash, &key) {
                Probe::Vacant { pos } => {
                    index::put(h, a, pos, hash, off);
                    h.live += 1;
                }
                Probe::Found { pos, off: other } => {
                    let (keep, lose) = if a.u64(off + E_SEQ) > a.u64(other + E_SEQ) {
                        (off, other)
                    } else {
                        (other, off)
                    };
                    index::put(h, a, pos, hash, keep);
                    alloc::free(h, a, lose);
                    out.dropped += 1;
                }
            }
        }
        off = next;
    }
    h.evictable = count_evictable(h, a);
    h.seq = h.seq.max(max_seq + 1);
    h.needs_repair = 0;
    out.live = h.live;
    out
}

/// The indexed entries by retention class, locks not counted: what
/// `ShardHeader::evictable` holds when it is right.
fn count_evictable(h: &ShardHeader, a: Arena) -> [u32; CLASSES] {
    let mut n = [0; CLASSES];
    for pos in 0..h.index_slots {
        let off = index::slot(h, a, pos) as u32;
        if off != 0
            && let Some(class) = evictable_class(a.u8(off + E_FLAGS))
        {
            n[class] += 1;
        }
    }
    n
}

fn first_live(a: Arena) -> Option<u32> {
    let mut off = ARENA_START;
    while off < a.len() {
        if a.state(off) == LIVE {
            return Some(off);
        }
        off = a.next_block(off);
    }
    None
}

/// Checks every invariant of a shard; returns the first violation found.
///
/// - the blocks tile the arena and every header is sane;
/// - every LIVE block is a well-formed entry, indexed exactly once, at a slot whose tag
///   matches its hash, reachable by a probe for its key;
/// - no PENDING block remains outside a write, and exactly one INDEX block exists;
/// - the counters (`live`, `used`, `evictable`) match the walk; free lists hold only
///   FREE blocks.
pub fn verify(h: &ShardHeader, a: Arena) -> Result<u32, String> {
    let mut off = ARENA_START;
    let (mut live, mut used, mut indexes) = (0u32, 0u64, 0);
    while off < a.len() {
        if !sane_block(a, off) {
            return Err(format!("bad block header at {off}"));
        }
        let size = a.block_size(off);
        match a.state(off) {
            LIVE => {
                if !sane_entry(a, off) {
                    return Err(format!("malformed entry at {off}"));
                }
                let hash = a.u64(off + E_HASH);
                let key = a.bytes(off + ENTRY_HEADER, a.u32(off + E_KEY_LEN));
                match index::probe(h, a, hash, key) {
                    Probe::Found { off: found, .. } if found == off => {}
                    other => return Err(format!("entry at {off} not indexed: {other:?}")),
                }
                live += 1;
                used += size as u64;
            }
            PENDING => return Err(format!("unfinished entry at {off}")),
            INDEX => {
                indexes += 1;
                used += size as u64;
                if off != h.index_off {
                    return Err(format!("stray index block at {off}"));
                }
            }
            _ => {}
        }
        off += size;
    }
    if off != a.len() {
        return Err(format!("blocks end at {off}, arena at {}", a.len()));
    }
    if indexes != 1 {
        return Err(format!("{indexes} index blocks"));
    }
    if live != h.live || used != h.used {
        return Err(format!(
            "counters say live={} used={}, walk says live={live} used={used}",
            h.live, h.used
        ));
    }
    if h.evictable != count_evictable(h, a) {
        return Err(format!(
            "evictable entries by class: counters say {:?}, the index {:?}",
            h.evictable,
            count_evictable(h, a)
        ));
    }
    let filled = (0..h.index_slots)
        .filter(|&p| index::slot(h, a, p) != 0)
        .count() as u32;
    if filled != live {
        return Err(format!("{filled} index slots for {live} entries"));
    }
    for (c, &head) in h.free_heads.iter().enumerate() {
        let mut at = head;
        let mut steps = 0u32;
        while at != 0 {
            if a.state(at) != FREE || alloc::class_of_block(a.block_size(at)) != c {
                return Err(format!("free list {c} holds block {at} wrongly"));
            }
            steps += 1;
            if steps > a.len() / GRANULE {
                return Err(format!("free list {c} loops"));
            }
            at = a.u32(at + FREE_NEXT);
        }
    }
    Ok(live)
}
