//! Tunables of the shm store, each with the reason for its value.

use std::time::Duration;

/// Shards per segment (a power of two). Sixteen keeps two processes on two cores from
/// meeting on a lock more than 1/16 of the time, while each shard's arena stays large
/// enough for big values: a single entry must fit one arena (shm_size / 16, 4 MiB at the
/// default 64M).
pub const SHARD_COUNT: usize = 16;
/// log2(SHARD_COUNT): the shard is chosen by the top bits of the key hash.
pub const SHARD_BITS: u32 = SHARD_COUNT.trailing_zeros();

/// Futex words in the wake-up table. Keys share a word when their hashes collide; 1024
/// words (8 KiB) make a spurious wake-up of an unrelated waiter rare and cheap.
pub const WAIT_SLOTS: usize = 1024;

/// A waiter never sleeps longer than this before re-checking its condition, so a wake-up
/// that raced ahead of the wait, or a change nobody signals (expiry), costs one slice.
pub const WAIT_SLICE: Duration = Duration::from_millis(100);

/// Allocation granule of the arena: every block size and offset is a multiple of it.
pub const GRANULE: u32 = 16;

/// The smallest block worth keeping as a free remainder when a block is split: an entry
/// header with a few bytes of key and value.
pub const MIN_BLOCK: u32 = 64;

/// Offsets below this are never blocks, so offset 0 can mean "none".
pub const ARENA_START: u32 = GRANULE;

/// Slots of a shard's index when it is created; it doubles when 3/4 full.
pub const INITIAL_INDEX_SLOTS: u32 = 64;

/// Live entries considered per eviction choice: the oldest of them goes. Eight gives an
/// approximation of LRU close to Redis' default sample (5) at a few cache lines per pick.
pub const EVICTION_SAMPLE: usize = 8;

/// Longest key accepted, in bytes (the PHP layer reports it as a ValueError).
pub const MAX_KEY_LEN: usize = 64 * 1024;

/// Smallest and largest segment: every shard needs room for its header, an index and
/// some entries; arena offsets are 32-bit, so 16 shards of < 4 GiB each.
pub const MIN_SEGMENT_SIZE: u64 = 1 << 20;
pub const MAX_SEGMENT_SIZE: u64 = 32 << 30;

/// Tries of a lock-free read whose shard changed under it before it takes the lock: a
/// write takes ~100 ns, so a reader that lost three races in a row is facing a stream of
/// writes, and waiting its turn on the lock beats retrying.
pub const OPTIMISTIC_ATTEMPTS: u32 = 3;

/// The buffer a lock-free `read` copies a value into before showing it is kept for the
/// next read up to this capacity, and given back after a larger value: a worker that read
/// one 10 MB value once should not keep 10 MB for the rest of its life.
pub const VISIT_COPY_KEEP: usize = 64 * 1024;

/// Lock-free reads are counted per process and shard, and the counts added to the
/// shard's `hits` and `misses` once this many have gathered (or when the process takes
/// the shard's lock anyway, or asks for `stats()`): a shared counter written on every
/// read would be one cache line every reader of a hot key bounces between cores.
pub const TALLY_FLUSH: u32 = 64;

/// Entries a process remembers reading per shard between two flushes; the flush stamps
/// them as just used (the LRU's clock). A sample, not every read: an entry read often is
/// among the last few read often.
pub const TALLY_TOUCHES: usize = 4;
