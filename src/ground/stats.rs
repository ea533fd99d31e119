//! A store's counters, as every backend reports them, and what its users do that an
//! operator counts.

/// Counters of a store, summed over its shards.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub memory_size: u64,
    pub memory_used: u64,
    pub entries: u64,
    pub hits: u64,
    pub misses: u64,
    /// Entries evicted for room, of every class: the sum of the three below.
    pub evictions: u64,
    /// Evictions by `Retention`. Stores that do not tell classes apart (Redis) count
    /// every eviction in `evictions` only.
    pub evictions_anonymous: u64,
    pub evictions_cache: u64,
    pub evictions_session: u64,
    pub expirations: u64,
    pub repairs: u64,
    /// Shards found too damaged to repair and emptied (their entries dropped).
    pub resets: u64,
    pub shards: u64,
    /// Shards whose lock somebody held when the stats were read (shm): one that stays
    /// locked across looks is a stopped or stuck process's.
    pub shards_locked: u64,
    /// Of those, the shards whose holder was changing entries (shm): their lock-free
    /// readers wait on it too. One that stays so across looks is a writer stopped or
    /// stuck mid-change, which holds up the shard's readers as well as its writers.
    pub shards_writing: u64,
    /// Seconds since the store began counting: its segment was made (shm, the cluster's
    /// host copy) or its server started (Redis). 0 when unknown (a segment an older build
    /// made). The time base of every counter here.
    pub age_seconds: u64,
    /// The largest value, in bytes, a write can store (shm: one shard's arena less its
    /// index and an entry's header, a longer key taking from it; Redis:
    /// `proto-max-bulk-len`). 0 when unknown.
    pub max_item_size: u64,
    /// `Event` counts, for every process of the store (see `layout::Events`; Redis: a
    /// hash beside the keys, and its own count of OOM refusals).
    pub lock_waits: u64,
    pub lock_timeouts: u64,
    pub stampedes_avoided: u64,
    pub full_refusals: u64,
}

/// Something a store's users did that its operator counts (`Store::note`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// An acquisition found its lock held and waited (once per acquisition).
    LockWait,
    /// A wait for a lock ran out without it.
    LockTimeout,
    /// A waiter found the value another process computed, and computed nothing.
    StampedeAvoided,
}

/// One shard's fill, as `Store::shard_fill` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardFill {
    /// Bytes in use (entries and the index).
    pub used: u64,
    /// Bytes of the shard's arena.
    pub size: u64,
    pub entries: u64,
}

impl Stats {
    /// The counters by the names `Kv::stats()`, the CLI and the metrics show, with
    /// `memory_free` derived.
    pub fn named(&self) -> [(&'static str, u64); 22] {
        [
            ("memory_size", self.memory_size),
            ("memory_used", self.memory_used),
            (
                "memory_free",
                self.memory_size.saturating_sub(self.memory_used),
            ),
            ("entries", self.entries),
            ("hits", self.hits),
            ("misses", self.misses),
            ("evictions", self.evictions),
            ("evictions_anonymous", self.evictions_anonymous),
            ("evictions_cache", self.evictions_cache),
            ("evictions_session", self.evictions_session),
            ("expirations", self.expirations),
            ("repairs", self.repairs),
            ("resets", self.resets),
            ("shards", self.shards),
            ("shards_locked", self.shards_locked),
            ("shards_writing", self.shards_writing),
            ("age_seconds", self.age_seconds),
            ("max_item_size", self.max_item_size),
            ("lock_waits", self.lock_waits),
            ("lock_timeouts", self.lock_timeouts),
            ("stampedes_avoided", self.stampedes_avoided),
            ("full_refusals", self.full_refusals),
        ]
    }
}
