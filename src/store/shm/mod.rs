//! `shm://`: the host-wide store. One segment per (Unix user, store name), in the user's
//! private directory under /dev/shm, mapped by every PHP process of that user; fixed
//! shards, each with a robust process-shared lock, its own growing index and its own
//! arena. See ARCHITECTURE.md §4 to §6, and SAFETY.md for crashes and repair.
//!
//! - `userdir.rs`  the user's private directory, found by owner
//! - `segment.rs`  the file: create under flock, adopt, set aside only when unused, map
//! - `layout.rs`   every shared structure, declared with its offsets and owners
//! - `shard.rs`    the operations, each under one shard lock
//! - `optimistic.rs`, `tally.rs`  gets without the lock, and what they owe the counters
//! - `alloc.rs`, `index.rs`, `arena.rs`  a shard's allocator, hash index, memory access
//! - `repair.rs`   rebuilding a shard after its holder died, and the consistency check
//! - `mutex.rs`, `futex.rs`, `wait.rs`, `ofd.rs`  the OS primitives and the wake-up table
//! - `registry.rs`  which processes may hold shard locks: the evidence of a holder's death
//! - `notice.rs`   the one warning a process gives when a shard had to be emptied
//! - `clock.rs`, `constants.rs`

mod alloc;
mod arena;
mod clock;
pub mod constants;
mod futex;
mod index;
pub mod inventory;
mod layout;
mod mutex;
pub mod notice;
mod ofd;
mod optimistic;
mod registry;
mod repair;
mod rwlock;
mod segment;
mod shard;
mod tally;
mod thread_self;
mod userdir;
mod wait;

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use clock::Clock;
use clock::LazyNow;
use constants::{SHARD_BITS, SHARD_COUNT, VISIT_COPY_KEEP};
use layout::*;
use optimistic::{Found, Outcome};
use segment::Mapping;
use shard::{Encoded, Guard, IncrError, Shard, hash_key};
use tally::Tally;
pub use userdir::euid;
use wait::WaitTable;

use super::{
    Event, Fetched, Hit, KeyTtl, Result, Retention, Room, ScanEntry, SetNx, ShardFill, Stats,
    Store, StoreError, Value, get_buffered,
};
use crate::codec;

#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    #[error("{0} failed: {1}")]
    Os(&'static str, #[source] io::Error),
    #[error("{path}: {what} failed: {source}", path = path.display())]
    File {
        path: PathBuf,
        what: &'static str,
        source: io::Error,
    },
    #[error(
        "{path} belongs to uid {owner}, not to this process's uid {uid}: refusing to use it",
        path = path.display()
    )]
    ForeignOwner { path: PathBuf, owner: u32, uid: u32 },
    #[error(
        "{path}: cannot reserve {size} bytes (is /dev/shm full?): {source}",
        path = path.display()
    )]
    NoSpace {
        path: PathBuf,
        size: u64,
        source: io::Error,
    },
    #[error("ephpm.shm_size must be between 1M and 32G; got {0} bytes")]
    BadSize(u64),
    #[error(
        "{path} is taken by uid {owner}, not a directory of this process's uid: another user \
         is squatting this user's name for its stores; have it removed (by root), or set \
         ephpm.shm_dir to a directory only root creates entries in (docs/how-the-store-works.md)",
        path = path.display()
    )]
    DirTaken { path: PathBuf, owner: u32 },
    #[error(
        "{path} (mode {mode:o}) lets other users rename or remove entries (writable by them, \
         no sticky bit): set ephpm.shm_dir to a directory that does not",
        path = path.display()
    )]
    UnsafeParent { path: PathBuf, mode: u32 },
    #[error(
        "{path} is in use by other processes but this build cannot read it ({why}); stop the \
         processes that use it (another ephpm version?) and it is replaced at the next open",
        path = path.display()
    )]
    Unreadable { path: PathBuf, why: String },
    #[error(
        "{path} is in use: a process maps it (this one too, if it opened the store); stop \
         every process that uses this store (php-fpm pools, workers) before removing it",
        path = path.display()
    )]
    InUse { path: PathBuf },
    #[error(
        "{path} is being made or checked by a process that has held its creation lock for \
         10 s (is it stopped?)",
        path = path.display()
    )]
    CreationHeld { path: PathBuf },
    #[error(
        "shard {shard}'s lock has been held by process {owner} for {held_ms} ms (is it stopped?)"
    )]
    LockHeld {
        shard: usize,
        owner: i32,
        held_ms: u64,
    },
}

/// A segment's failure reaches callers as `StoreError::Segment`, with this as its source.
impl From<ShmError> for StoreError {
    fn from(e: ShmError) -> Self {
        StoreError::Segment(Box::new(e))
    }
}

/// How to open a shm store.
#[derive(Debug, Clone)]
pub struct ShmOptions {
    /// Where the user's private directory of segments is made (`ephpm.shm_dir`, /dev/shm;
    /// tests use another tmpfs directory). See `userdir.rs`.
    pub dir: PathBuf,
    /// The store name (`ephpm.store_name`, or NAME of `shm://NAME`), already validated.
    pub name: String,
    /// Segment size in bytes (`ephpm.shm_size`).
    pub size: u64,
    /// Values of at least this many bytes are lz4-compressed when it pays; 0 = never.
    pub compress_threshold: usize,
    pub clock: Clock,
    /// Use an existing segment at the size it was made with instead of replacing it
    /// (the cluster segment: the node and the PHP processes must never replace the one
    /// the other uses because their settings differ).
    pub adopt_size: bool,
}

impl ShmOptions {
    pub fn new(name: &str, size: u64) -> Self {
        ShmOptions {
            dir: PathBuf::from("/dev/shm"),
            name: name.into(),
            size,
            compress_threshold: 0,
            clock: Clock::Monotonic,
            adopt_size: false,
        }
    }

    /// `<dir>/ephpm-<euid>/<name>`, the user's private directory made if needed: the
    /// effective uid scopes a store to one Unix user (see `userdir.rs`).
    pub fn path(&self) -> std::result::Result<PathBuf, ShmError> {
        let dir = userdir::find(&self.dir, true)?
            .ok_or_else(|| ShmError::Os("mkdir", io::Error::from(io::ErrorKind::NotFound)))?;
        Ok(dir.join(&self.name))
    }

    /// The segment's path if it exists, without making anything (what `php --ri` shows).
    pub fn existing_path(&self) -> std::result::Result<Option<PathBuf>, ShmError> {
        Ok(userdir::find(&self.dir, false)?
            .map(|d| d.join(&self.name))
            .filter(|p| p.exists()))
    }
}

/// A mapped shm store.
pub struct ShmStore {
    shards: Vec<Shard>,
    /// What this process's lock-free reads owe each shard's counters (`tally.rs`).
    tallies: [Tally; SHARD_COUNT],
    wait: WaitTable,
    clock: Clock,
    compress_threshold: usize,
    path: PathBuf,
    size: u64,
    /// This process's registration on the segment (`registry.rs`), and the fork count
    /// (`tally::forks`) it was made at: a forked child registers itself before its
    /// first lock.
    registration: Mutex<registry::Registration>,
    registered_at: AtomicU32,
    // Last: the shards and the wait table point into it.
    _mapping: Mapping,
}

// SAFETY: WaitTable holds a pointer into `_mapping`, which lives as long as the store;
// the table is made of atomics. Shard is Send + Sync by its own impls.
unsafe impl Send for ShmStore {}
// SAFETY: as above.
unsafe impl Sync for ShmStore {}

impl ShmStore {
    /// Maps the store, creating or replacing the segment as needed. The strings are
    /// warnings for the user (why an existing segment was replaced).
    pub fn open(opts: &ShmOptions) -> std::result::Result<(Self, Vec<String>), ShmError> {
        let path = opts.path()?;
        let opened = segment::open(&path, opts.size, opts.adopt_size, |m, g| {
            for i in 0..SHARD_COUNT {
                // SAFETY: the shard lies inside the fresh mapping (geometry), we hold the
                // creation flock and nobody else has the segment yet.
                unsafe {
                    shard_at(m, g.shard_stride, g.arena_len, i)
                        .format(segment::generation_seed() ^ i as u64)?
                };
            }
            Ok(())
        })?;
        let g = opened.geometry;
        let m = opened.mapping;
        // SAFETY: the table lies at WAIT_TABLE_OFFSET inside the mapping, initialised
        // (zero is a valid WaitSlot), and `m` is kept in the store.
        let wait = unsafe { WaitTable::new(m.ptr().add(WAIT_TABLE_OFFSET).cast()) };
        let shards = (0..SHARD_COUNT)
            // SAFETY: the segment was formatted by its creator and validated by segment::open.
            .map(|i| unsafe { shard_at(&m, g.shard_stride, g.arena_len, i) })
            .collect();
        tally::watch_forks();
        let registered_at = AtomicU32::new(tally::forks());
        let registration = Mutex::new(registry::register(m.segment().fd)?);
        let store = ShmStore {
            shards,
            tallies: Default::default(),
            wait,
            clock: opts.clock.clone(),
            compress_threshold: opts.compress_threshold,
            path,
            size: g.total,
            registration,
            registered_at,
            _mapping: m,
        };
        Ok((store, opened.warnings))
    }

    /// Stores `value` as a lock entry, replacing any entry: kept until it expires, never
    /// evicted (what `set_nx` with a TTL makes). The cluster node keeps its locks so,
    /// having decided under its own lock that the key was free.
    pub fn set_pinned(&self, key: &[u8], value: Value<'_>, ttl: Duration) -> Result<()> {
        self.encoded(value, |mut v| {
            v.flags |= FLAG_PINNED;
            self.locked(key, |g, hash| {
                let mut now = LazyNow::new(&self.clock);
                let expires = now.deadline(Some(ttl));
                g.set(hash, key, v, expires, &mut now)
                    .map_err(|f| self.full(f))
            })
        })
    }

    /// `set_nx`, with `flags` saying what the entry is: `FLAG_PINNED` (a lock: never
    /// evicted before it expires), a retention class (`FLAG_ANONYMOUS`), or nothing.
    fn add(&self, key: &[u8], value: Value<'_>, ttl: Option<Duration>, flags: u8) -> Result<SetNx> {
        self.encoded(value, |mut v| {
            v.flags |= flags;
            self.locked(key, |g, hash| {
                let mut now = LazyNow::new(&self.clock);
                let expires = now.deadline(ttl);
                match g
                    .set_nx(hash, key, v, expires, &mut now)
                    .map_err(|f| self.full(f))?
                {
                    Some(_) => Ok(SetNx::Inserted),
                    None => Ok(SetNx::Exists),
                }
            })
        })
    }

    /// Every key in the store, one shard lock at a time (what the cluster node walks
    /// when keys change owner).
    pub fn keys(&self) -> Result<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        for i in 0..SHARD_COUNT {
            self.lock_shard(i)?.keys(&mut out);
        }
        Ok(out)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Walks every shard and checks its invariants; returns the entry count.
    ///
    /// Locking: takes each shard lock in turn.
    pub fn verify(&self) -> std::result::Result<u64, String> {
        let mut n = 0;
        for i in 0..SHARD_COUNT {
            let g = self.lock_shard(i).map_err(|e| format!("shard {i}: {e}"))?;
            n += g.verify().map_err(|e| format!("shard {i}: {e}"))? as u64;
        }
        Ok(n)
    }

    /// Runs `f` under `key`'s shard lock with the key's hash, this process registered
    /// first (see `registered`) and what its lock-free reads owe the shard paid. The
    /// guard is made here, where `f` borrows it, and never moved: every operation on a
    /// key goes through this.
    #[inline(always)]
    fn locked<R>(&self, key: &[u8], f: impl FnOnce(&mut Guard<'_>, u64) -> Result<R>) -> Result<R> {
        let hash = hash_key(key);
        let i = shard_of(hash);
        self.registered()?;
        let shard = &self.shards[i];
        let mut g = shard.unrepaired_guard(shard.acquire()?, self.wait);
        g.repair_if_needed();
        self.settle(i, &mut g);
        f(&mut g, hash)
    }

    /// Takes shard `i`'s lock, this process registered first (see `registered`).
    #[inline]
    fn lock_shard(&self, i: usize) -> Result<Guard<'_>> {
        self.registered()?;
        Ok(self.shards[i].lock(self.wait)?)
    }

    /// Makes sure this process is registered on the segment before it takes a lock: a
    /// holder that is not registered would be taken for dead by a waiter that may not
    /// read its /proc (`mutex::is_holder`). One load and compare, except once in a
    /// forked child, which registers its own pid (the registration it inherited is its
    /// parent's, and is closed here so that the parent's exit still shows).
    #[inline(always)]
    fn registered(&self) -> Result<()> {
        if self.registered_at.load(Ordering::Relaxed) == tally::forks() {
            return Ok(());
        }
        self.register_after_fork()
    }

    #[cold]
    #[inline(never)]
    fn register_after_fork(&self) -> Result<()> {
        let mut held = self.registration.lock().unwrap_or_else(|p| p.into_inner());
        let forks = tally::forks();
        if self.registered_at.load(Ordering::Relaxed) != forks {
            *held = registry::register(self._mapping.segment().fd)?;
            self.registered_at.store(forks, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Pays what this process's lock-free reads owe shard `i`, whose lock `g` is.
    #[inline]
    fn settle(&self, i: usize, g: &mut Guard<'_>) {
        if self.tallies[i].owes() {
            if let Some(owed) = self.tallies[i].take() {
                g.absorb(owed);
            }
        }
    }

    /// A get without the lock (`optimistic.rs`), a string-like value into the room `out`
    /// gives (packed only if it `takes_packed`: then the hit's second half is the
    /// unpacked length), counted in the shard's tally; `None` when it needs the lock.
    ///
    /// Locking: none; once every `TALLY_FLUSH` reads a try-lock of the shard, to pay its
    /// tally (`tally.rs`).
    #[inline]
    fn read_optimistic<R: Room + ?Sized>(
        &self,
        key: &[u8],
        out: &mut R,
    ) -> Option<Option<(Hit, Option<u32>)>> {
        let hash = hash_key(key);
        let i = shard_of(hash);
        let mut now = LazyNow::new(&self.clock);
        let mut f = Found::default();
        let hit = match self.shards[i].read_optimistic(hash, key, &mut now, &mut f, out) {
            Outcome::Hit => true,
            Outcome::Miss => false,
            Outcome::Locked => return None,
        };
        let due = if hit {
            self.tallies[i].hit(f.slot)
        } else {
            self.tallies[i].miss()
        };
        if due {
            self.settle_if_free(i);
        }
        if !hit {
            return Some(None);
        }
        let value = match f.kind {
            KIND_STR => Fetched::Str,
            KIND_SERIALIZED => Fetched::Serialized,
            KIND_INT => Fetched::Int(f.word as i64),
            KIND_FLOAT => Fetched::Float(f64::from_bits(f.word)),
            KIND_FALSE => Fetched::Bool(false),
            KIND_TRUE => Fetched::Bool(true),
            _ => Fetched::Null,
        };
        let hit = Hit {
            value,
            version: f.version,
        };
        Some(Some((hit, f.unpacked_len)))
    }

    /// `read_optimistic` into a buffer: a string-like value unpacked, anything else
    /// leaves it empty.
    #[inline]
    fn read_optimistic_buffered(&self, key: &[u8], out: &mut Vec<u8>) -> Option<Option<Hit>> {
        let Some((hit, unpacked_len)) = self.read_optimistic(key, out)? else {
            return Some(None);
        };
        if let Some(raw_len) = unpacked_len {
            // A whole copy (the read checked it) of a value we packed: corrupt only if the
            // segment was scribbled on, which the locked path then reports as damage.
            *out = codec::decompress(out, raw_len as usize)?;
        }
        if !matches!(hit.value, Fetched::Str | Fetched::Serialized) {
            out.clear();
        }
        Some(Some(hit))
    }

    /// `read` under the shard lock: what the lock-free path leaves to it.
    #[cold]
    #[inline(never)]
    fn read_locked(&self, key: &[u8], visit: &mut dyn FnMut(Value<'_>)) -> Result<Option<u64>> {
        self.locked(key, |g, hash| {
            let mut now = LazyNow::new(&self.clock);
            Ok(g.read(hash, key, &mut now, |e| {
                let unpacked;
                let bytes = if e.compressed {
                    unpacked = codec::decompress(e.bytes, e.raw_len as usize).unwrap_or_default();
                    &unpacked[..]
                } else {
                    e.bytes
                };
                let number = || i64::from_ne_bytes(bytes.try_into().unwrap_or_default());
                visit(match e.kind {
                    KIND_STR => Value::Str(bytes),
                    KIND_SERIALIZED => Value::Serialized(bytes),
                    KIND_INT => Value::Int(number()),
                    KIND_FLOAT => Value::Float(f64::from_bits(number() as u64)),
                    KIND_FALSE => Value::Bool(false),
                    KIND_TRUE => Value::Bool(true),
                    _ => Value::Null,
                });
                e.version
            }))
        })
    }

    /// `get` under the shard lock: what the lock-free path leaves to it.
    #[cold]
    #[inline(never)]
    fn get_locked(&self, key: &[u8], out: &mut Vec<u8>) -> Result<Option<Hit>> {
        let mut value = Fetched::Null;
        let version = self.read_locked(key, &mut |p| value = p.copy_into(out))?;
        Ok(version.map(|version| Hit { value, version }))
    }

    /// The segment's event counters (`layout::Events`).
    fn events(&self) -> &Events {
        // SAFETY: segment::open validated the segment's geometry, so the mapping is at
        // least MIN_SEGMENT_SIZE bytes and page-aligned: `Events` lies in its header page
        // at EVENTS_OFFSET, aligned (asserted in layout.rs). `created_unix` is immutable
        // after publication and the counters are atomics; the mapping lives as long as
        // `self`.
        unsafe { &*self._mapping.ptr().add(EVENTS_OFFSET).cast::<Events>() }
    }

    /// A write that had no room, counted (`full_refusals`) and as the store's error.
    fn full(&self, f: shard::Full) -> StoreError {
        self.events().full_refusals.fetch_add(1, Ordering::Relaxed);
        StoreError::Full {
            need: f.need,
            capacity: f.capacity,
        }
    }

    /// Pays shard `i`'s tally if its lock is free right now (else at a later read).
    #[cold]
    #[inline(never)]
    fn settle_if_free(&self, i: usize) {
        if self.registered().is_err() {
            return;
        }
        if let Some(mut g) = self.shards[i].try_lock(self.wait) {
            self.settle(i, &mut g);
        }
    }

    /// Encodes a value (compressing it if worth it) and hands it to `f`.
    fn encoded<R>(&self, v: Value<'_>, f: impl FnOnce(Encoded<'_>) -> Result<R>) -> Result<R> {
        let number;
        let packed;
        fn plain(kind: u8, bytes: &[u8]) -> Encoded<'_> {
            Encoded {
                kind,
                flags: 0,
                bytes,
                raw_len: bytes.len() as u32,
            }
        }
        let enc = match v {
            Value::Str(b) | Value::Serialized(b) => {
                let kind = if matches!(v, Value::Str(_)) {
                    KIND_STR
                } else {
                    KIND_SERIALIZED
                };
                if b.len() > u32::MAX as usize {
                    return Err(self.full(shard::Full {
                        need: b.len() as u64,
                        capacity: self.size / SHARD_COUNT as u64,
                    }));
                }
                match codec::compress(b, self.compress_threshold) {
                    Some(p) => {
                        packed = p;
                        Encoded {
                            kind,
                            flags: FLAG_COMPRESSED,
                            bytes: &packed,
                            raw_len: b.len() as u32,
                        }
                    }
                    None => plain(kind, b),
                }
            }
            Value::Int(i) => {
                number = i.to_ne_bytes();
                plain(KIND_INT, &number)
            }
            Value::Float(x) => {
                number = x.to_ne_bytes();
                plain(KIND_FLOAT, &number)
            }
            Value::Bool(b) => plain(if b { KIND_TRUE } else { KIND_FALSE }, &[]),
            Value::Null => plain(KIND_NULL, &[]),
        };
        f(enc)
    }
}

thread_local! {
    /// Where `read` copies a value it reads without the lock before showing it; given back
    /// to the allocator after a value of more than `VISIT_COPY_KEEP` bytes.
    static VISIT_COPY: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The shard a key's hash belongs to: its top bits.
#[inline]
fn shard_of(hash: u64) -> usize {
    (hash >> (64 - SHARD_BITS)) as usize
}

/// # Safety
/// - `m` must be a mapping of a segment with this geometry whose shard `i` is formatted,
///   or being formatted by the caller under the creation flock.
unsafe fn shard_at(m: &Mapping, stride: u64, arena_len: u32, i: usize) -> Shard {
    // SAFETY: SHARDS_OFFSET + i * stride + stride <= total size by Geometry::for_size.
    let header = unsafe { m.ptr().add(SHARDS_OFFSET + i * stride as usize) }.cast::<ShardHeader>();
    // SAFETY: forwarded to the caller; the mapping keeps its file open (Mapping).
    unsafe { Shard::new(header, arena_len, i, m.segment()) }
}

impl Store for ShmStore {
    /// Locking: none: the value is read as `get` reads it and shown to `visit` from a copy
    /// (a read that held the lock while `visit` ran could be stopped there, and hold the
    /// shard's writers). The key's shard lock only when the lock-free read cannot be
    /// done (see `get`); then held while `visit` runs. Wakes nobody, except the waiters
    /// of an expired entry a locked read reclaims.
    fn read(&self, key: &[u8], visit: &mut dyn FnMut(Value<'_>)) -> Result<Option<u64>> {
        let shown = VISIT_COPY.with(|copy| {
            let mut buf = copy.take();
            let shown = self.read_optimistic_buffered(key, &mut buf).map(|hit| {
                hit.map(|h| {
                    visit(h.value.with(&buf));
                    h.version
                })
            });
            if buf.capacity() > VISIT_COPY_KEEP {
                buf = Vec::new();
            }
            copy.replace(buf);
            shown
        });
        match shown {
            Some(version) => Ok(version),
            None => self.read_locked(key, visit),
        }
    }

    /// Locking: none in the common case, for values of any size: the value is read
    /// without the lock and checked against the shard's read sequence (`optimistic.rs`);
    /// a shard being written (or left mid-write by a dead holder), or one written to on
    /// every try, take the key's shard lock. Writes nothing
    /// shared except, once every `TALLY_FLUSH` reads, the counters (`tally.rs`).
    fn get(&self, key: &[u8], out: &mut Vec<u8>) -> Result<Option<Hit>> {
        match self.read_optimistic_buffered(key, out) {
            Some(hit) => Ok(hit),
            None => self.get_locked(key, out),
        }
    }

    /// `get` copying a string straight out of the segment into the room (one copy): a
    /// shard being written, or a packed value, go through a buffer (`get`) instead.
    ///
    /// Locking: as `get`; never while `room` runs.
    fn get_into(&self, key: &[u8], room: &mut dyn Room) -> Result<Option<Hit>> {
        match self.read_optimistic(key, room) {
            // A room that is not a buffer is never given packed bytes.
            Some(found) => Ok(found.map(|(hit, _)| hit)),
            None => get_buffered(self, key, room),
        }
    }

    /// Locking: the key's shard lock.
    fn exists(&self, key: &[u8]) -> Result<bool> {
        self.locked(key, |g, hash| {
            Ok(g.exists(hash, key, &mut LazyNow::new(&self.clock)))
        })
    }

    /// Locking: the key's shard lock; wakes the key's waiters after releasing it.
    fn set(&self, key: &[u8], value: Value<'_>, ttl: Option<Duration>) -> Result<()> {
        self.set_with_retention(key, value, ttl, Retention::Cache)
    }

    /// The class goes into the entry's flags, where eviction reads it (`shard.rs`).
    ///
    /// Locking: the key's shard lock; wakes the key's waiters after releasing it.
    fn set_with_retention(
        &self,
        key: &[u8],
        value: Value<'_>,
        ttl: Option<Duration>,
        retention: Retention,
    ) -> Result<()> {
        self.encoded(value, |mut v| {
            v.flags |= match retention {
                Retention::Anonymous => FLAG_ANONYMOUS,
                Retention::Cache => 0,
                Retention::Session => FLAG_SESSION,
            };
            self.locked(key, |g, hash| {
                let mut now = LazyNow::new(&self.clock);
                let expires = now.deadline(ttl);
                g.set(hash, key, v, expires, &mut now)
                    .map_err(|f| self.full(f))
            })
        })
    }

    /// Locking: the key's shard lock; wakes the key's waiters when it inserts.
    fn set_nx(&self, key: &[u8], value: Value<'_>, ttl: Option<Duration>) -> Result<SetNx> {
        if crate::fault::on("broken-atomicity") {
            if self.exists(key)? {
                return Ok(SetNx::Exists);
            }
            std::thread::yield_now();
            return self.set(key, value, ttl).map(|()| SetNx::Inserted);
        }
        self.add(key, value, ttl, if ttl.is_some() { FLAG_PINNED } else { 0 })
    }

    /// Locking: the key's shard lock; wakes the key's waiters when it inserts.
    fn reserve(&self, key: &[u8], value: Value<'_>, ttl: Option<Duration>) -> Result<SetNx> {
        self.add(key, value, ttl, FLAG_ANONYMOUS)
    }

    /// Locking: the key's shard lock; wakes the key's waiters when it deletes.
    fn del(&self, key: &[u8]) -> Result<bool> {
        self.locked(key, |g, hash| {
            Ok(g.del(hash, key, &mut LazyNow::new(&self.clock)))
        })
    }

    /// Locking: the key's shard lock (the compare and the delete happen under it); wakes
    /// the key's waiters when it deletes.
    fn del_if_eq(&self, key: &[u8], expected: &[u8]) -> Result<bool> {
        if crate::fault::on("broken-atomicity") {
            let mut out = Vec::new();
            let same = matches!(self.get(key, &mut out)?, Some(h) if h.value == Fetched::Str && out == expected);
            std::thread::yield_now();
            return if same { self.del(key) } else { Ok(false) };
        }
        self.locked(key, |g, hash| {
            Ok(g.del_if_eq(hash, key, expected, &mut LazyNow::new(&self.clock)))
        })
    }

    /// Locking: the key's shard lock (read, add and write under it); wakes the key's waiters.
    fn incr_by(&self, key: &[u8], by: i64, ttl: Option<Duration>) -> Result<i64> {
        if crate::fault::on("broken-atomicity") {
            let mut out = Vec::new();
            let n = match self.get(key, &mut out)? {
                Some(Hit {
                    value: Fetched::Int(n),
                    ..
                }) => n + by,
                _ => by,
            };
            std::thread::yield_now();
            return self.set(key, Value::Int(n), ttl).map(|()| n);
        }
        self.locked(key, |g, hash| {
            let mut now = LazyNow::new(&self.clock);
            let expires = now.deadline(ttl);
            g.incr_by(hash, key, by, expires, &mut now)
                .map_err(|e| match e {
                    IncrError::NotAnInteger => StoreError::NotAnInteger,
                    IncrError::Overflow => StoreError::Overflow,
                    IncrError::Full(f) => self.full(f),
                })
        })
    }

    /// Locking: the key's shard lock.
    fn expire(&self, key: &[u8], ttl: Option<Duration>) -> Result<bool> {
        self.locked(key, |g, hash| {
            let mut now = LazyNow::new(&self.clock);
            let expires = now.deadline(ttl);
            Ok(g.expire(hash, key, expires, &mut now))
        })
    }

    /// Locking: the key's shard lock.
    fn ttl(&self, key: &[u8]) -> Result<KeyTtl> {
        self.locked(key, |g, hash| {
            let mut now = LazyNow::new(&self.clock);
            Ok(match g.expires_at(hash, key, &mut now) {
                None => KeyTtl::Missing,
                Some(0) => KeyTtl::Persistent,
                Some(at) => KeyTtl::Remaining(Duration::from_nanos(at.saturating_sub(now.get()))),
            })
        })
    }

    /// Locking: every shard lock in turn, one at a time; wakes the waiters of what it removed.
    fn clear(&self, prefix: &[u8]) -> Result<u64> {
        let mut n = 0;
        for i in 0..SHARD_COUNT {
            n += self.lock_shard(i)?.clear(prefix);
        }
        Ok(n)
    }

    /// Locking: one shard lock a call (the cursor is the next shard's number + 1); a call
    /// goes on to the next shards while it has found fewer than a batch.
    fn scan(&self, prefix: &[u8], cursor: u64, out: &mut Vec<ScanEntry>) -> Result<u64> {
        const BATCH: usize = 256;
        let start = out.len();
        let mut next = usize::try_from(cursor).unwrap_or(usize::MAX);
        while next < self.shards.len() {
            let g = self.lock_shard(next)?;
            g.scan(prefix, &mut LazyNow::new(&self.clock), out);
            next += 1;
            if out.len() - start >= BATCH {
                break;
            }
        }
        Ok(if next < self.shards.len() {
            next as u64
        } else {
            0
        })
    }

    /// Locking: none (`Shard::stats`): a stopped lock holder never holds up the status
    /// page or the metrics. This process's unpaid lock-free reads are paid first into the
    /// shards whose lock is free right now.
    fn stats(&self) -> Result<Stats> {
        let mut t = Stats {
            memory_size: self.size,
            shards: SHARD_COUNT as u64,
            ..Stats::default()
        };
        for (i, s) in self.shards.iter().enumerate() {
            if self.tallies[i].owes() {
                self.settle_if_free(i);
            }
            let st = s.stats();
            t.memory_used += st.used;
            t.entries += st.entries;
            t.hits += st.hits;
            t.misses += st.misses;
            t.evictions += st.evictions;
            t.evictions_anonymous += st.evictions_by_class[CLASS_ANONYMOUS];
            t.evictions_cache += st.evictions_by_class[CLASS_CACHE];
            t.evictions_session += st.evictions_by_class[CLASS_SESSION];
            t.expirations += st.expirations;
            t.repairs += st.repairs;
            t.resets += st.resets;
            t.shards_locked += u64::from(st.locked);
            t.shards_writing += u64::from(st.writing);
            t.max_item_size = if i == 0 {
                st.max_value
            } else {
                t.max_item_size.min(st.max_value)
            };
        }
        let ev = self.events();
        if ev.created_unix != 0 {
            let now = crate::ground::wall::since_epoch().as_secs();
            // At least 1: a store made this very second has a time base too.
            t.age_seconds = now.saturating_sub(ev.created_unix).max(1);
        }
        t.lock_waits = ev.lock_waits.load(Ordering::Relaxed);
        t.lock_timeouts = ev.lock_timeouts.load(Ordering::Relaxed);
        t.stampedes_avoided = ev.stampedes_avoided.load(Ordering::Relaxed);
        t.full_refusals = ev.full_refusals.load(Ordering::Relaxed);
        Ok(t)
    }

    /// Locking: none (`Shard::stats`).
    fn shard_fill(&self) -> Result<Vec<ShardFill>> {
        Ok(self
            .shards
            .iter()
            .map(|s| {
                let st = s.stats();
                ShardFill {
                    used: st.used,
                    size: st.arena_len,
                    entries: st.entries,
                }
            })
            .collect())
    }

    /// Locking: none: one relaxed atomic add in the segment's header page.
    fn note(&self, event: Event) {
        let ev = self.events();
        let counter = match event {
            Event::LockWait => &ev.lock_waits,
            Event::LockTimeout => &ev.lock_timeouts,
            Event::StampedeAvoided => &ev.stampedes_avoided,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Locking: the key's shard lock, briefly, on every check; sleeps on the key's futex
    /// word between checks, at most `WAIT_SLICE` at a time.
    fn wait_for_change(&self, key: &[u8], last_version: u64, timeout: Duration) -> Result<bool> {
        let hash = hash_key(key);
        self.wait.wait_until(hash, timeout, || {
            self.locked(key, |g, hash| {
                Ok(g.version(hash, key, &mut LazyNow::new(&self.clock)) != last_version)
            })
        })
    }

    /// Locking: the lock's shard lock; the fence is the new entry's version (the shard's
    /// write sequence), so taking it and numbering it are one step.
    fn lock_acquire(&self, name: &[u8], token: &[u8], ttl: Duration) -> Result<Option<u64>> {
        if crate::fault::on("broken-atomicity") {
            if self.exists(name)? {
                return Ok(None);
            }
            std::thread::yield_now();
            self.set(name, Value::Str(token), Some(ttl))?;
            return Ok(self.get(name, &mut Vec::new())?.map(|h| h.version));
        }
        self.locked(name, |g, hash| {
            let mut now = LazyNow::new(&self.clock);
            let expires = now.deadline(Some(ttl));
            let v = Encoded {
                kind: KIND_STR,
                flags: FLAG_PINNED,
                bytes: token,
                raw_len: token.len() as u32,
            };
            g.set_nx(hash, name, v, expires, &mut now)
                .map_err(|f| self.full(f))
        })
    }

    /// Locking: the lock's shard lock (the compare and the new expiry happen under it).
    fn lock_extend(&self, name: &[u8], token: &[u8], ttl: Duration) -> Result<bool> {
        self.locked(name, |g, hash| {
            let mut now = LazyNow::new(&self.clock);
            let expires = now.deadline(Some(ttl));
            Ok(g.expire_if_eq(hash, name, token, expires, &mut now))
        })
    }

    /// Locking: the lock's shard lock; wakes the lock's waiters after releasing it.
    fn lock_release(&self, name: &[u8], token: &[u8]) -> Result<bool> {
        if crate::fault::on("broken-atomicity") {
            return self.del_if_eq(name, token);
        }
        self.locked(name, |g, hash| {
            Ok(g.del_if_eq(hash, name, token, &mut LazyNow::new(&self.clock)))
        })
    }

    /// Locking: the lock's shard lock, once (`rwlock.rs`).
    fn rw_lock(
        &self,
        name: &[u8],
        op: &crate::ground::rwstate::Op,
    ) -> Result<crate::ground::rwstate::Outcome> {
        self.rw_apply(name, op)
    }

    fn segment(&self) -> Option<&Path> {
        Some(&self.path)
    }

    fn describe(&self) -> String {
        format!(
            "shm ({}, {} bytes, {SHARD_COUNT} shards)",
            self.path.display(),
            self.size
        )
    }
}

/// Stores opened by this process, by segment path: every `Kv` on one store shares one
/// mapping. A forked child inherits them, which is right: the mapping is shared memory.
static OPEN: Mutex<Option<HashMap<PathBuf, Arc<ShmStore>>>> = Mutex::new(None);

/// Removes the store's segment if no process maps it (the operator's resize or reset:
/// the next open makes it anew at its own `ephpm.shm_size`). Returns whether there was
/// one; `ShmError::InUse` when some process still maps it.
pub fn remove_unused(opts: &ShmOptions) -> std::result::Result<bool, ShmError> {
    match opts.existing_path()? {
        Some(path) => segment::remove_unused(&path),
        None => Ok(false),
    }
}

/// Opens a store once per process (see `OPEN`); warnings only come with the first open.
pub fn open_shared(
    opts: &ShmOptions,
) -> std::result::Result<(Arc<ShmStore>, Vec<String>), ShmError> {
    let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
    let map = open.get_or_insert_with(HashMap::new);
    let path = opts.path()?;
    if let Some(s) = map.get(&path) {
        return Ok((s.clone(), Vec::new()));
    }
    let (store, warnings) = ShmStore::open(opts)?;
    let store = Arc::new(store);
    map.insert(path, store.clone());
    Ok((store, warnings))
}
