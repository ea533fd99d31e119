//! The shared-memory layout, declared: every structure the segment holds, its size and
//! alignment asserted, and per field who writes it and under which lock.
//!
//! ```text
//! 0        SegmentHeader            written once by the creator, under the creation flock
//! 2048     Events                   `created_unix` by the creator; the rest atomics, no lock
//! 4096     WaitSlot[WAIT_SLOTS]     atomics, no lock
//! shards   SHARD_COUNT × (ShardHeader, arena)   each guarded by its ShardHeader::mutex
//! ```
//!
//! Inside an arena everything is a *block*: a `BlockHeader` and a body, sizes multiples of
//! `GRANULE`. The blocks tile the arena from `ARENA_START` to its end, so the arena can be
//! walked block by block; that walk is what repair rebuilds everything else from. Offsets
//! are arena-relative `u32`s, never pointers, because processes map the segment at
//! different addresses.

use std::sync::atomic::{AtomicU32, AtomicU64};

use super::constants::{SHARD_COUNT, WAIT_SLOTS};

/// "EPHPMSHM", little-endian.
pub const MAGIC: u64 = u64::from_le_bytes(*b"EPHPMSHM");
/// Bumped on any change to this file; a segment with another version is set aside once
/// no process maps it (segment.rs).
/// 4: entries carry their retention class (`FLAG_ANONYMOUS`, `FLAG_SESSION`), shard
/// headers count evictions by class and evictable entries by class.
pub const LAYOUT_VERSION: u32 = 4;

pub const WAIT_TABLE_OFFSET: usize = 4096;
pub const SHARDS_OFFSET: usize =
    (WAIT_TABLE_OFFSET + WAIT_SLOTS * size_of::<WaitSlot>()).next_multiple_of(4096);

/// The segment header. All fields but `magic` are written by the creator before it
/// publishes `magic` (Release); nothing writes them afterwards.
#[repr(C)]
pub struct SegmentHeader {
    /// `MAGIC` once the segment is fully initialised.
    pub magic: AtomicU64,
    pub layout_version: u32,
    pub shard_count: u32,
    /// The segment's size in bytes: `ephpm.shm_size` of the process that created it.
    pub total_size: u64,
    /// Random at creation; tells two incarnations of the same name apart.
    pub generation: u64,
    /// Bytes from one shard's header to the next.
    pub shard_stride: u64,
    /// Bytes of each shard's arena.
    pub arena_len: u64,
}
const _: () = assert!(size_of::<SegmentHeader>() == 48);
const _: () = assert!(size_of::<SegmentHeader>() <= WAIT_TABLE_OFFSET);

/// Where `Events` lies in the header page. Added within layout 4 without a version bump,
/// on purpose: these bytes were zero and never read or written before, so a build that
/// does not know them ignores them, and a segment such a build made reads here as "made
/// at an unknown time, nothing counted yet" (zeros) — which is what it is. Bumping the
/// version would instead set aside every live store of the host at the upgrade.
pub const EVENTS_OFFSET: usize = 2048;

/// What the store's users did that an operator counts, for every process of the store
/// (`ephpm stats`, the status page, the metrics). Counted with relaxed atomic adds, no
/// lock: a counter is a tally, never a decision.
#[repr(C)]
pub struct Events {
    /// CLOCK_REALTIME seconds when the segment was made: written by the creator before it
    /// publishes `magic`, never after. 0: made by a build that did not record it.
    pub created_unix: u64,
    /// Acquisitions of a lock (a MemoLock, a session's, `Ephpm\Lock`) that found it held
    /// and waited for it, once per acquisition however many wake-ups it took.
    pub lock_waits: AtomicU64,
    /// Of those, the ones whose wait ran out without the lock.
    pub lock_timeouts: AtomicU64,
    /// Computations not done: a caller that waited for another's computation of a cold
    /// key and then found its value (MemoLock's cache wrapper, `once()`).
    pub stampedes_avoided: AtomicU64,
    /// Writes refused because the store had no room even after evicting everything it may
    /// evict (`StoreError::Full`: the value was too large, or the rest are locks).
    pub full_refusals: AtomicU64,
}
const _: () = assert!(size_of::<Events>() == 40);
const _: () = assert!(size_of::<SegmentHeader>() <= EVENTS_OFFSET);
const _: () = assert!(EVENTS_OFFSET + size_of::<Events>() <= WAIT_TABLE_OFFSET);
const _: () = assert!(EVENTS_OFFSET % align_of::<Events>() == 0);

/// One word of the wake-up table (no lock: atomics only).
#[repr(C)]
pub struct WaitSlot {
    /// Bumped (then FUTEX_WAKE) by a writer that saw `waiters > 0`.
    pub seq: AtomicU32,
    /// Processes currently between "read seq" and "woke up" on this word. A waiter killed
    /// inside leaves it raised until the next writer's wake finds nobody (wait.rs).
    pub waiters: AtomicU32,
}
const _: () = assert!(size_of::<WaitSlot>() == 8);

/// Number of allocation size classes (see `alloc::class_of`): 64 exact classes up to
/// 1 KiB, then four per power of two up to 4 GiB.
pub const SIZE_CLASSES: usize = 64 + 22 * 4;
const BITMAP_WORDS: usize = SIZE_CLASSES.div_ceil(64);

/// A shard's header. Every field except `mutex`, `read_seq` and `arena_len` is read and
/// written only while holding `mutex` — except that lock-free readers (`optimistic.rs`)
/// also read `needs_repair`, `index_off` and `index_slots`, validated by `read_seq`. All
/// of it except `mutex`, `arena_len`, `seq`, `read_seq` and the counters is *derived*
/// state that `Shard::repair` rebuilds from a walk of the arena.
///
/// Cache lines: the first holds the mutex and what every write changes; the second only
/// what lock-free readers read (a lock taken by a reader, or a write, does not make every
/// other reader miss on it unless the write changes the shard); the rest the counters.
#[repr(C, align(64))]
pub struct ShardHeader {
    /// The lock guarding this shard: its first word is the futex word `mutex.rs` takes,
    /// in the layout of a process-shared robust `pthread_mutex_t` (what older builds lock).
    pub mutex: libc::pthread_mutex_t,
    /// Times this shard was repaired after a holder died or panicked in it.
    pub repairs: u32,
    /// Times a repair could not make sense of the arena and emptied the shard instead.
    pub resets: u32,
    /// Times the mutex itself was found broken (a garbage lock word) and made afresh.
    pub lock_recoveries: u32,
    /// Entries in the index.
    pub live: u32,
    /// Next write sequence number: strictly increasing, stored in each entry as its
    /// version. Kept across clears and repairs.
    pub seq: u64,
    /// The readers' sequence (a seqlock's counter): odd while a lock holder changes
    /// anything a lock-free reader reads, even otherwise; every change moves it on. Made
    /// odd and even again by the holder of `mutex` only (`shard::Guard`); a holder killed
    /// in between leaves it odd, and the repair the next locker runs makes it even.
    pub read_seq: AtomicU64,
    /// Set by a process that panicked inside the shard, or that found its lock broken:
    /// the next locker repairs first, and lock-free readers take the lock instead.
    pub needs_repair: u32,
    /// Bytes of the arena; written at creation only.
    pub arena_len: u32,
    /// Arena offset of the index block, and its slot count (a power of two).
    pub index_off: u32,
    pub index_slots: u32,
    pub _reader_line_end: [u32; 10],
    /// Logical clock of accesses, stamped into entries for approximate LRU.
    pub tick: u64,
    /// Bytes in blocks that are not free (entries and the index).
    pub used: u64,
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    pub expirations: u64,
    /// xorshift state for eviction sampling.
    pub rng: u64,
    /// Evictions by the evicted entry's class (`CLASS_*`); `evictions` is their sum.
    /// Kept across repairs, like the other counters.
    pub evictions_by_class: [u64; CLASSES],
    /// Entries in the index by class (`CLASS_*`), locks (pinned entries) not counted:
    /// what eviction may take from each class. Derived, like `live`.
    pub evictable: [u32; CLASSES],
    pub _evictable_pad: u32,
    /// Bit c set when free list c may be non-empty.
    pub nonempty: [u64; BITMAP_WORDS],
    /// Heads of the free lists, one per size class (arena offsets, 0 = empty).
    pub free_heads: [u32; SIZE_CLASSES],
}
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(ShardHeader, read_seq) == 64);
    assert!(offset_of!(ShardHeader, tick) == 128);
};
const _: () = assert!(align_of::<ShardHeader>() == 64);
const _: () = assert!(size_of::<ShardHeader>() <= 1024);
const _: () = assert!(SHARD_COUNT.is_power_of_two());

/// Block states, in `BlockHeader::state`.
pub const FREE: u32 = 0x4652_4545; // "FREE"
pub const INDEX: u32 = 0x494e_4458; // "INDX"
/// An entry being written: not yet part of the store; repair frees it.
pub const PENDING: u32 = 0x5045_4e44; // "PEND"
/// A complete entry. Repair keeps it (the newest `seq` wins between two of one key).
pub const LIVE: u32 = 0x4c49_5645; // "LIVE"

/// Header of every arena block.
#[repr(C)]
pub struct BlockHeader {
    /// Bytes of the whole block, header included; a multiple of GRANULE. Changed only by
    /// one aligned store, so a walk never sees a torn size.
    pub size: u32,
    /// One of FREE, INDEX, PENDING, LIVE; stored with Release after the body is written.
    pub state: AtomicU32,
}
const _: () = assert!(size_of::<BlockHeader>() == 8);

/// Offset of a free block's next-free link, and of an index block's first slot.
pub const FREE_NEXT: u32 = 8;
pub const INDEX_SLOTS_AT: u32 = 16;

/// The fixed part of an entry, after its `BlockHeader`; the key and then the stored value
/// follow. Written while the block is PENDING; afterwards only `atime`, `expires_at` and
/// an integer value change in place, each by one aligned store.
#[repr(C)]
pub struct EntryHeader {
    pub hash: u64,
    pub seq: u64,
    /// CLOCK_MONOTONIC nanoseconds after which the entry is absent; 0 = never.
    pub expires_at: u64,
    pub atime: u64,
    pub key_len: u32,
    /// Bytes stored (compressed length when compressed).
    pub stored_len: u32,
    /// Bytes of the value once decompressed.
    pub raw_len: u32,
    pub kind: u8,
    pub flags: u8,
    pub _pad: u16,
}
pub const ENTRY_HEADER: u32 = (size_of::<BlockHeader>() + size_of::<EntryHeader>()) as u32;
const _: () = assert!(ENTRY_HEADER == 56);

/// `EntryHeader::flags`.
pub const FLAG_COMPRESSED: u8 = 1;
/// A lock (set_nx with a TTL): never evicted before it expires.
pub const FLAG_PINNED: u8 = 2;
/// Retention class anonymous (a reservation, an empty session): evicted first.
pub const FLAG_ANONYMOUS: u8 = 4;
/// Retention class session (a written session): evicted last. Neither this nor
/// `FLAG_ANONYMOUS`: an ordinary cache entry.
pub const FLAG_SESSION: u8 = 8;

/// Retention classes, in the order eviction takes them (see `class_of`).
pub const CLASS_ANONYMOUS: usize = 0;
pub const CLASS_CACHE: usize = 1;
pub const CLASS_SESSION: usize = 2;
pub const CLASSES: usize = 3;

/// The retention class an entry's flags say (a flag byte with both bits, which no
/// write makes, counts as a session: keeping too much beats losing a login).
pub const fn class_of(flags: u8) -> usize {
    if flags & FLAG_SESSION != 0 {
        CLASS_SESSION
    } else if flags & FLAG_ANONYMOUS != 0 {
        CLASS_ANONYMOUS
    } else {
        CLASS_CACHE
    }
}

/// The class an indexed entry counts in `ShardHeader::evictable`: none for a lock, which
/// is never evicted before it expires.
pub const fn evictable_class(flags: u8) -> Option<usize> {
    if flags & FLAG_PINNED != 0 {
        None
    } else {
        Some(class_of(flags))
    }
}

/// `EntryHeader::kind`.
pub const KIND_STR: u8 = 0;
pub const KIND_SERIALIZED: u8 = 1;
pub const KIND_INT: u8 = 2;
pub const KIND_FLOAT: u8 = 3;
pub const KIND_FALSE: u8 = 4;
pub const KIND_TRUE: u8 = 5;
pub const KIND_NULL: u8 = 6;

// Field offsets used by the accessors in arena.rs, checked against the struct.
pub const E_HASH: u32 = 8;
pub const E_SEQ: u32 = 16;
pub const E_EXPIRES: u32 = 24;
pub const E_ATIME: u32 = 32;
pub const E_KEY_LEN: u32 = 40;
pub const E_STORED_LEN: u32 = 44;
pub const E_RAW_LEN: u32 = 48;
pub const E_KIND: u32 = 52;
pub const E_FLAGS: u32 = 53;
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(EntryHeader, hash) as u32 + 8 == E_HASH);
    assert!(offset_of!(EntryHeader, seq) as u32 + 8 == E_SEQ);
    assert!(offset_of!(EntryHeader, expires_at) as u32 + 8 == E_EXPIRES);
    assert!(offset_of!(EntryHeader, atime) as u32 + 8 == E_ATIME);
    assert!(offset_of!(EntryHeader, key_len) as u32 + 8 == E_KEY_LEN);
    assert!(offset_of!(EntryHeader, stored_len) as u32 + 8 == E_STORED_LEN);
    assert!(offset_of!(EntryHeader, raw_len) as u32 + 8 == E_RAW_LEN);
    assert!(offset_of!(EntryHeader, kind) as u32 + 8 == E_KIND);
    assert!(offset_of!(EntryHeader, flags) as u32 + 8 == E_FLAGS);
};
