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
pub mod dsn;
pub mod redis;
pub mod shm;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::config::Config;

/// A value: what `set` stores, and what `read` shows (borrowed from the store for the
/// duration of the callback). Strings are bytes; `Serialized` is the PHP layer's
/// serializer output (arrays, objects), opaque to the engine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Str(&'a [u8]),
    Serialized(&'a [u8]),
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
}

/// The kind of a value read by `get`; for `Str` and `Serialized` the bytes are in the
/// buffer passed to `get`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fetched {
    Str,
    Serialized,
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
}

impl Value<'_> {
    /// Copies the value out: its kind, and for strings its bytes into `out` (cleared).
    pub fn copy_into(self, out: &mut Vec<u8>) -> Fetched {
        out.clear();
        match self {
            Value::Str(b) => {
                out.extend_from_slice(b);
                Fetched::Str
            }
            Value::Serialized(b) => {
                out.extend_from_slice(b);
                Fetched::Serialized
            }
            Value::Int(n) => Fetched::Int(n),
            Value::Float(x) => Fetched::Float(x),
            Value::Bool(b) => Fetched::Bool(b),
            Value::Null => Fetched::Null,
        }
    }
}

impl Fetched {
    /// The value again, its bytes (for `Str` and `Serialized`) being `bytes`.
    pub fn with(self, bytes: &[u8]) -> Value<'_> {
        match self {
            Fetched::Str => Value::Str(bytes),
            Fetched::Serialized => Value::Serialized(bytes),
            Fetched::Int(n) => Value::Int(n),
            Fetched::Float(x) => Value::Float(x),
            Fetched::Bool(b) => Value::Bool(b),
            Fetched::Null => Value::Null,
        }
    }
}

/// An entry as `Store::scan` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanEntry {
    /// The key as the store holds it (a Keyspace's prefix included, a DSN's not).
    pub key: Vec<u8>,
    /// `Persistent` or `Remaining`.
    pub ttl: KeyTtl,
    /// The value's size in bytes, as stored.
    pub size: u64,
    /// For a held lock (an entry added with a TTL, which is never evicted before it
    /// expires), its fencing number.
    pub fence: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub value: Fetched,
    pub version: u64,
}

/// What an entry is to a store that must evict to make room: the order it gives entries
/// up in, first to last. A lock is never evicted before it expires, whatever its class.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Retention {
    /// A name claimed that holds nothing yet: a new session's id (`reserve`), a session
    /// with no data (an anonymous visitor's). Losing one loses nothing but the name.
    Anonymous,
    /// An ordinary entry: `set`, `set_nx`, everything a cache holds.
    #[default]
    Cache,
    /// A written session: a logged-in user, whom losing it logs out.
    Session,
}

/// The outcome of `set_nx`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetNx {
    Inserted,
    Exists,
}

/// A key's remaining lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyTtl {
    Missing,
    Persistent,
    Remaining(Duration),
}

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
    pub fn named(&self) -> [(&'static str, u64); 21] {
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
            ("age_seconds", self.age_seconds),
            ("max_item_size", self.max_item_size),
            ("lock_waits", self.lock_waits),
            ("lock_timeouts", self.lock_timeouts),
            ("stampedes_avoided", self.stampedes_avoided),
            ("full_refusals", self.full_refusals),
        ]
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the key must not be empty")]
    EmptyKey,
    #[error("the key is {0} bytes long; the limit is 65536 bytes")]
    KeyTooLong(usize),
    #[error(
        "the store has no room for this value ({need} bytes needed, one shard holds {capacity}) \
         even after evicting everything that may be evicted"
    )]
    Full { need: u64, capacity: u64 },
    #[error("the value stored at this key is not an integer")]
    NotAnInteger,
    #[error("the increment would overflow a 64-bit integer")]
    Overflow,
    #[error("the store at {address} cannot be reached: {cause}")]
    Unavailable { address: String, cause: String },
    #[error("the store at {address} refused the command: {reply}")]
    Remote { address: String, reply: String },
    #[error(transparent)]
    Shm(#[from] shm::ShmError),
    #[error(transparent)]
    Dsn(#[from] dsn::DsnError),
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    #[error(transparent)]
    NotAnRwLock(#[from] crate::rwlock::state::Foreign),
}

pub type Result<T> = std::result::Result<T, StoreError>;

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
        crate::lock::wait_for_release(self, name, timeout)
    }
    /// Runs one read/write-lock operation on the lock `name` atomically where the data
    /// lives (`crate::rwlock::state::apply` on the key's value), waking the key's waiters
    /// when it changes the lock. A refusal carries the key's version as
    /// `wait_for_change` compares it.
    fn rw_lock(&self, name: &[u8], op: &crate::rwlock::Op) -> Result<crate::rwlock::Outcome>;
    /// One line saying what this store is (for `php --ri ephpm`).
    fn describe(&self) -> String;
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

/// Opens the store a DSN names (see `dsn.rs`), once per process per store. The strings
/// are warnings for the user (a segment that had to be replaced, and why).
pub fn open(dsn: &str, config: &Config) -> Result<(Arc<dyn Store>, Vec<String>)> {
    match dsn::parse(dsn)? {
        dsn::Dsn::Redis(target) => {
            // One per DSN per process, so that every Kv, lock and session of the process
            // shares its connection and its subscriber.
            static OPEN: Mutex<Option<HashMap<String, Arc<redis::RedisStore>>>> = Mutex::new(None);
            let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
            let open = open.get_or_insert_with(HashMap::new);
            let store = match open.get(dsn) {
                Some(s) => s.clone(),
                None => {
                    let s = Arc::new(redis::RedisStore::new(target)?);
                    open.insert(dsn.to_string(), s.clone());
                    s
                }
            };
            Ok((store, Vec::new()))
        }
        dsn::Dsn::Shm { name } => {
            let (store, warnings) = shm::open_shared(&shm_options(name, config)?)?;
            Ok((store, warnings))
        }
        dsn::Dsn::Cluster {
            name,
            timeout,
            prefix,
        } => {
            let opts = shm_options(name, config)?;
            if config.cluster.enabled {
                let node =
                    crate::cluster::NodeConfig::from_settings(&config.cluster, opts.clone())?;
                crate::cluster::lease::keep_in_background(node)?;
            }
            let (store, warnings) = cluster::ClusterStore::open(&opts, timeout, &prefix)?;
            Ok((Arc::new(store), warnings))
        }
    }
}

/// Opens the store a DSN names only if it already exists: a host store (`shm://`,
/// `cluster://`) whose segment nobody made yet is `None`, and nothing is created, nor a
/// cluster node started. What `php --ri` and phpinfo() show, which must never make a
/// segment as a side effect.
pub fn open_existing(dsn: &str, config: &Config) -> Result<Option<Arc<dyn Store>>> {
    let segment = match dsn::parse(dsn)? {
        dsn::Dsn::Redis(_) => return open(dsn, config).map(|(s, _)| Some(s)),
        dsn::Dsn::Shm { name } => shm_options(name, config)?,
        dsn::Dsn::Cluster { name, .. } => {
            crate::cluster::segment_options(&shm_options(name, config)?)
        }
    };
    if segment.existing_path()?.is_none() {
        return Ok(None);
    }
    let mut quiet = config.clone();
    quiet.cluster.enabled = false;
    open(dsn, &quiet).map(|(s, _)| Some(s))
}

/// How the `ephpm-resp` of a host store is doing (asked on its default socket, beside
/// the segment); `None` for a store that is not one host's segment.
pub fn resp_status(store: &dyn Store) -> Option<crate::resp_probe::RespStatus> {
    let segment = store.segment()?;
    Some(crate::resp_probe::probe(
        &crate::resp_probe::default_socket(segment),
    ))
}

/// Removes the host store `name` (default `ephpm.store_name`) if no process maps it: the
/// operator's resize or reset (`shm::remove_unused`). Returns whether there was one.
pub fn remove_host_store(name: Option<String>, config: &Config) -> Result<bool> {
    Ok(shm::remove_unused(&shm_options(name, config)?)?)
}

/// The shm options of the host store `name` (default `ephpm.store_name`).
fn shm_options(name: Option<String>, config: &Config) -> Result<shm::ShmOptions> {
    let name = name.unwrap_or_else(|| config.store_name.clone());
    dsn::valid_name(&name)?;
    Ok(shm::ShmOptions {
        compress_threshold: config.compress_threshold.min(usize::MAX as u64) as usize,
        dir: config.shm_dir.clone().into(),
        ..shm::ShmOptions::new(&name, config.shm_size)
    })
}
