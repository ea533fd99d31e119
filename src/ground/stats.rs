//! A store's counters, as every backend reports them.

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
}

impl Stats {
    /// The counters by the names `Kv::stats()`, the CLI and the metrics show, with
    /// `memory_free` derived.
    pub fn named(&self) -> [(&'static str, u64); 15] {
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
        ]
    }
}
