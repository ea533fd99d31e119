//! The `Store` trait every backend implements, and the types it speaks. No PHP here.
//!
//! Locks, MemoLock, StaleCache and sessions are written once against this trait. A
//! backend is chosen by a DSN (`dsn.rs`): `shm://` is the host-wide shared-memory store,
//! `redis://` a Redis or Valkey server (`redis/`), `cluster://` ephpm's gossip cluster
//! through the host's node (`cluster.rs`, `crate::cluster`).
//!
//! # What every backend guarantees
//! - **Atomic operations.** `set_nx`, `del_if_eq`, `incr_by` decide and act in one step
//!   where the data lives: of any number of concurrent `set_nx` on one absent key, exactly
//!   one gets `Inserted`; `incr_by` never loses an update; `del_if_eq` deletes only when
//!   the value matches at the moment of deletion.
//! - **Expiry.** An entry past its TTL is absent for every operation: it never matches
//!   `del_if_eq`, never blocks `set_nx`, is never returned or counted by `exists`.
//! - **Locks are not evicted.** An entry created by `set_nx` with a TTL is a lock: memory
//!   pressure never evicts it before it expires; a write that could only succeed by
//!   evicting one fails with `StoreError::Full`, and the previous value stays.
//! - **Typed values.** What `set` stores comes back with the same `Value` kind.
//! - **Retention** (a bounded store that evicts; Redis leaves it to its own policy): of
//!   the entries it may evict it takes anonymous ones (`reserve`,
//!   `Retention::Anonymous`) first, then cache entries, and written sessions
//!   (`Retention::Session`) only when nothing else is left.
//! - **Locks.** `lock_acquire` succeeds for exactly one of any number of concurrent
//!   callers while the lock is free (absent or expired), and hands out a fencing number
//!   strictly greater than every earlier one of that name in the same store, across
//!   releases and expiries; `lock_release` and `lock_extend` act only while the caller's
//!   token still holds the lock, so a holder whose lock expired can never release or
//!   extend the next holder's.
//! - **Versions.** Every write gives the key a new version, greater than any before it in
//!   the same store (Redis and the cluster: a different one, a fingerprint of what is
//!   stored; see `redis/mod.rs`, `cluster.rs`); an absent key has version 0.
//!   `wait_for_change` returns true once the version differs from the one the caller saw,
//!   or when the store was told of a write to the key (Redis: a release or
//!   compare-and-delete published on its channel): like a condition variable's wake-up,
//!   a true return says "look again", and callers re-check what they wait for.

pub mod bytes;
pub mod cluster;
pub mod redis;
pub mod shm;

use std::time::{Duration, Instant};

use crate::ground::rwstate;
pub use crate::ground::{
    BoxedError, Event, Fetched, Hit, KeyTtl, Result, Retention, Room, ScanEntry, SetNx, ShardFill,
    Stats, StoreError, Value, fill,
};

/// `store.get_into` through a buffer: the bytes are read into it, then copied into
/// `room` (after whatever lock the read took is released).
pub fn get_buffered(
    store: &(impl Store + ?Sized),
    key: &[u8],
    room: &mut dyn Room,
) -> Result<Option<Hit>> {
    let mut buf = Vec::new();
    let hit = store.get(key, &mut buf)?;
    if let Some(Hit {
        value: kind @ (Fetched::Str | Fetched::Serialized),
        ..
    }) = hit
    {
        fill(room, kind, &buf);
    }
    Ok(hit)
}

/// A key/value store shared by processes. See the module doc for what every
/// implementation guarantees. TTLs of `None` mean "never expires".
pub trait Store: Send + Sync {
    /// Shows the value of `key` to `visit` and returns its version, or `None` when absent.
    ///
    /// `visit` may run while the store holds the lock that guards the key, so that a
    /// large value is copied once, straight to where the caller wants it: it must be
    /// short, must not block and must not call the store.
    fn read(&self, key: &[u8], visit: &mut dyn FnMut(Value<'_>)) -> Result<Option<u64>>;

    /// Reads `key`; string-like values are written into `out`.
    fn get(&self, key: &[u8], out: &mut Vec<u8>) -> Result<Option<Hit>> {
        let mut value = Fetched::Null;
        let version = self.read(key, &mut |p| value = p.copy_into(out))?;
        Ok(version.map(|version| Hit { value, version }))
    }

    /// `get`, a string-like value copied into `room` (see `Room`). Here through a buffer;
    /// a store that can copy straight out of its memory does so.
    fn get_into(&self, key: &[u8], room: &mut dyn Room) -> Result<Option<Hit>> {
        get_buffered(self, key, room)
    }

    /// Reads several keys: `found(i, hit, bytes)` for each `keys[i]` that is present, in
    /// order, string-like values' bytes in `bytes`. One `get` each here; a remote store
    /// does it in one round trip.
    fn get_many(&self, keys: &[&[u8]], found: &mut dyn FnMut(usize, Hit, &[u8])) -> Result<()> {
        let mut buf = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            if let Some(hit) = self.get(key, &mut buf)? {
                found(i, hit, &buf);
            }
        }
        Ok(())
    }

    fn exists(&self, key: &[u8]) -> Result<bool>;
    fn set(&self, key: &[u8], value: Value<'_>, ttl: Option<Duration>) -> Result<()>;
    /// `set`, telling a store that must evict what the entry is (`Retention`): sessions
    /// are written as `Session`, so that a flood of anonymous visitors or cache writes
    /// never evicts a logged-in user's session while anything else could go. Stores that
    /// leave eviction to a server's policy (Redis) need not override it.
    fn set_with_retention(
        &self,
        key: &[u8],
        value: Value<'_>,
        ttl: Option<Duration>,
        retention: Retention,
    ) -> Result<()> {
        let _ = retention;
        self.set(key, value, ttl)
    }
    /// Stores several values, in order, not as one atomic step: on an error the ones
    /// before it are stored. One `set` each here; a remote store does it in one round trip.
    fn set_many(&self, entries: &[(&[u8], Value<'_>)], ttl: Option<Duration>) -> Result<()> {
        for (key, value) in entries {
            self.set(key, *value, ttl)?;
        }
        Ok(())
    }
    /// Stores only if the key is absent, atomically. With a TTL the entry is a lock.
    fn set_nx(&self, key: &[u8], value: Value<'_>, ttl: Option<Duration>) -> Result<SetNx>;
    /// `set_nx` for an entry that memory pressure evicts before any other
    /// (`Retention::Anonymous`): a reservation (a new session's id), never a lock, so
    /// that a flood of them cannot push locks, sessions, cache entries or `set()` out of
    /// a bounded store. Backends that never pin an entry (Redis: its own eviction policy
    /// decides) need not override it.
    fn reserve(&self, key: &[u8], value: Value<'_>, ttl: Option<Duration>) -> Result<SetNx> {
        self.set_nx(key, value, ttl)
    }
    fn del(&self, key: &[u8]) -> Result<bool>;
    /// Deletes only if the stored value equals `expected`, atomically.
    fn del_if_eq(&self, key: &[u8], expected: &[u8]) -> Result<bool>;
    /// Adds `by`, creating the key at `by` (with `ttl`) when absent; atomic.
    fn incr_by(&self, key: &[u8], by: i64, ttl: Option<Duration>) -> Result<i64>;
    /// Sets the key's TTL (`None`: never expires). Returns whether the key exists.
    fn expire(&self, key: &[u8], ttl: Option<Duration>) -> Result<bool>;
    fn ttl(&self, key: &[u8]) -> Result<KeyTtl>;
    /// The key's version and remaining lifetime, or `None` when absent: what a waiter
    /// needs before it sleeps, in one round trip on a remote store.
    fn version_and_ttl(&self, key: &[u8]) -> Result<Option<(u64, KeyTtl)>> {
        let Some(version) = self.read(key, &mut |_| {})? else {
            return Ok(None);
        };
        match self.ttl(key)? {
            KeyTtl::Missing => Ok(None),
            ttl => Ok(Some((version, ttl))),
        }
    }
    /// Removes every key that starts with `prefix` (all keys when empty); returns how many.
    fn clear(&self, prefix: &[u8]) -> Result<u64>;
    /// Walks the live keys that start with `prefix`, a bounded batch a call: `cursor` 0
    /// starts, the cursor returned goes on, 0 when the walk is done. A key present for
    /// the whole walk is shown at least once (on Redis maybe twice); keys written during
    /// it may or may not be. No lock is held longer than one shard's walk.
    fn scan(&self, prefix: &[u8], cursor: u64, out: &mut Vec<ScanEntry>) -> Result<u64>;
    fn stats(&self) -> Result<Stats>;
    /// Each shard's fill, for the status page: empty for a store whose memory is not
    /// split into shards of its own (Redis).
    ///
    /// Locking: none (as `stats`).
    fn shard_fill(&self) -> Result<Vec<ShardFill>> {
        Ok(Vec::new())
    }
    /// The `Stats` fields (by `Stats::named`'s names) this backend does not count, so
    /// that a 0 among them is shown as "not counted", never as a figure. The default
    /// counts everything.
    fn not_counted(&self) -> &'static [&'static str] {
        &[]
    }
    /// Counts `event` where every process of the store sees it (`Stats`). Best effort: a
    /// count that cannot be made is dropped, never the caller's error. The default counts
    /// nothing.
    fn note(&self, event: Event) {
        let _ = event;
    }
    /// Blocks until the key's version differs from `last_version`, or the store is told
    /// of a write to it (true: look again), or `timeout` passes (false).
    fn wait_for_change(&self, key: &[u8], last_version: u64, timeout: Duration) -> Result<bool>;
    /// Takes the lock `name` for `token` for `ttl` if it is free; returns the fencing
    /// number of this acquisition, or `None` when somebody holds it.
    fn lock_acquire(&self, name: &[u8], token: &[u8], ttl: Duration) -> Result<Option<u64>>;
    /// Gives the lock `ttl` from now if `token` still holds it; returns whether it did.
    fn lock_extend(&self, name: &[u8], token: &[u8], ttl: Duration) -> Result<bool>;
    /// Releases the lock if `token` still holds it, waking its waiters; returns whether
    /// it did.
    fn lock_release(&self, name: &[u8], token: &[u8]) -> Result<bool>;
    /// `lock_acquire`, and when it took the lock, `get` of `key` (what the lock guards,
    /// read now that it is held): in one round trip on a remote store. `None` when
    /// somebody holds the lock (`out` is then unspecified).
    fn lock_acquire_and_get(
        &self,
        name: &[u8],
        token: &[u8],
        ttl: Duration,
        key: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Option<(u64, Option<Hit>)>> {
        acquire_then_get(self, name, token, ttl, key, out)
    }
    /// `lock_extend` of `name` to `lock_ttl`, and only when `token` still holds it,
    /// `set_with_retention` of `key`; returns whether it did both. On a remote store one
    /// atomic step: the value is written only while the lock is ours.
    #[allow(clippy::too_many_arguments)]
    fn set_if_locked(
        &self,
        name: &[u8],
        token: &[u8],
        lock_ttl: Duration,
        key: &[u8],
        value: Value<'_>,
        ttl: Option<Duration>,
        retention: Retention,
    ) -> Result<bool> {
        extend_then_set(self, name, token, lock_ttl, key, value, ttl, retention)
    }
    /// Waits for a turn at the lock `name`: true when a release handed this waiter its
    /// turn or the lock may be free (race for it with `lock_acquire`), false when
    /// `timeout` passes. Sleeps in bounded slices and never past the holder's TTL.
    ///
    /// Redis and the cluster keep a line of waiters, and a release wakes the first one
    /// only (with many waiters, waking all of them for one winner is a thundering herd).
    /// The default wakes every waiter at each release, like `wait_for_change`: on `shm://`
    /// a wake-up costs microseconds and no round trip.
    fn lock_wait(&self, name: &[u8], timeout: Duration) -> Result<bool> {
        wait_for_release(self, name, timeout)
    }
    /// Runs one read/write-lock operation on the lock `name` atomically where the data
    /// lives (`crate::ground::rwstate::apply` on the key's value), waking the key's waiters
    /// when it changes the lock. A refusal carries the key's version as
    /// `wait_for_change` compares it.
    fn rw_lock(&self, name: &[u8], op: &rwstate::Op) -> Result<rwstate::Outcome>;
    /// One line saying what this store is (for `php --ri ephpm`).
    fn describe(&self) -> String;
    /// What the host's node knows of its fleet's members (`cluster://`); `None` for a
    /// store that is no fleet of nodes (shm, Redis: a Redis server reports its own).
    fn health(&self) -> Result<Option<crate::ground::fleet::Health>> {
        Ok(None)
    }
    /// The host store's segment (`shm://`), beside which its `ephpm-resp` listens by
    /// default; `None` for stores that are not one host's segment.
    fn segment(&self) -> Option<&std::path::Path> {
        None
    }
}

/// `Store::lock_acquire_and_get` as two calls: the default, and what a remote store
/// falls back to where it cannot do both in one round trip.
pub(crate) fn acquire_then_get<S: Store + ?Sized>(
    store: &S,
    name: &[u8],
    token: &[u8],
    ttl: Duration,
    key: &[u8],
    out: &mut Vec<u8>,
) -> Result<Option<(u64, Option<Hit>)>> {
    let Some(fence) = store.lock_acquire(name, token, ttl)? else {
        return Ok(None);
    };
    Ok(Some((fence, store.get(key, out)?)))
}

/// `Store::set_if_locked` as two calls (see `acquire_then_get`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn extend_then_set<S: Store + ?Sized>(
    store: &S,
    name: &[u8],
    token: &[u8],
    lock_ttl: Duration,
    key: &[u8],
    value: Value<'_>,
    ttl: Option<Duration>,
    retention: Retention,
) -> Result<bool> {
    if !store.lock_extend(name, token, lock_ttl)? {
        return Ok(false);
    }
    store.set_with_retention(key, value, ttl, retention)?;
    Ok(true)
}

/// `Store::lock_wait`'s default (and `Locks::wait_until_free` on any store): wakes at
/// every change of the lock, with every other waiter.
pub fn wait_for_release<S: Store + ?Sized>(
    store: &S,
    name: &[u8],
    timeout: Duration,
) -> Result<bool> {
    let deadline = Instant::now() + timeout;
    loop {
        let Some((version, ttl)) = store.version_and_ttl(name)? else {
            return Ok(true);
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        // Never sleep past the holder's TTL: a dead holder's lock frees itself then,
        // and nobody signals an expiry.
        let until_expiry = match ttl {
            KeyTtl::Missing => return Ok(true),
            KeyTtl::Persistent => left,
            KeyTtl::Remaining(d) => d + Duration::from_millis(1),
        };
        if store.wait_for_change(name, version, left.min(until_expiry))? {
            return Ok(true);
        }
    }
}
