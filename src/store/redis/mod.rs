//! The `redis://` and `unix://` backend: the `Store` trait on a Redis or Valkey server,
//! for fleets that share one. No PHP here.
//!
//! - `keys.rs`     the DSN prefix, and the counter, channel and line named after a lock
//! - `link.rs`     a connection to one server or to a Redis Cluster
//! - `node.rs`     one cluster node's connection: counts what was sent, never resent
//! - `queue.rs`    waiters of a lock in line: a release wakes one of them, not all
//! - `rwlock.rs`   read/write locks: decided in Rust, swapped in by a script
//! - `scan.rs`     `Store::scan`: SCAN, then each key's TTL, size and fence in one pipeline
//! - `scripts.rs`  the atomic steps, and native compare-and-delete where the server has it
//! - `target.rs`   which server: the DSN's, or the master Redis Sentinel names
//! - `wakeups.rs`  the process's one subscriber, shared by every waiter
//!
//! # Connections
//! Commands go over plain blocking connections from the calling thread: a hop to the
//! background runtime and back would cost two thread wake-ups per command, more than the
//! command itself over a unix socket. A thread takes an idle connection (or opens one,
//! with the DSN's timeout), uses it and gives it back; PHP runs one thread per process,
//! so a process keeps one connection across requests. A connection that failed is
//! dropped, and the next command opens a new one: the process recovers by itself when
//! Redis is back. Connections and the subscriber belong to the pid that opened them; a
//! forked child opens its own. Behind Sentinel, a connection that failed or found its
//! server read-only also makes the next connection ask the sentinels for the master.
//!
//! With the fault point `broken-atomicity` (`src/fault.rs`, for `make
//! prove-tests-can-fail` only), set_nx,
//! incr_by, lock_acquire and the compare-and-delete are split into a read and a later
//! write, as on `shm://`.
//!
//! # What differs from `shm://`
//! - **Versions** are fingerprints of the stored bytes (xxh3, never 0): a write of
//!   different bytes changes the version, which is what `wait_for_change` needs, but
//!   versions are not ordered and a rewrite of identical bytes keeps it.
//! - **Wake-ups** come from `lock_release` and `del_if_eq`, which publish on the key's
//!   channel. Other writes publish nothing (it would slow every `SET`), so a waiter sees
//!   them within one slice (100 ms).
//! - **Eviction** is the server's `maxmemory-policy`: with a policy that evicts keys
//!   with a TTL, Redis may drop a lock early. Run fleets' lock servers with
//!   `noeviction` or an `allkeys-*` policy that prefers other keys.

mod keys;
mod link;
mod node;
mod queue;
mod rwlock;
mod scan;
mod scripts;
mod target;
mod wakeups;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::{ErrorKind, RedisError, ServerErrorKind, Value as Reply};

use super::bytes::{self, fingerprint};
use super::{
    Event, Hit, KeyTtl, Result, Retention, ScanEntry, SetNx, Stats, Store, StoreError, Value,
};
use crate::ground::dsn::RedisDsn;
use link::Link;
use scripts::{DeleteBy, ExtendBy, Flavour, Publish};
use target::Target;
pub use wakeups::WakeCounts;
use wakeups::Wakeups;

/// A counter outlives its lock's last acquisition by this much (see `scripts::ACQUIRE`).
const FENCE_KEEP: Duration = Duration::from_secs(3600);

/// The fields of the events hash (`keys::EVENTS`), in `Event`'s order.
const EVENT_FIELDS: [&str; 3] = ["lock_waits", "lock_timeouts", "stampedes_avoided"];
/// Keys a `clear` deletes per round trip.
const CLEAR_BATCH: usize = 500;

/// A connection and what its server can do.
struct Conn {
    con: Link,
    flavour: Flavour,
    publish: Publish,
    /// The target's generation it was opened on (see `target.rs`).
    generation: u64,
    /// `?read_from=replica`: the connection whose reads go to replicas, opened on first
    /// use.
    replicas: Option<Link>,
}

impl Conn {
    /// The connection for `get`/`get_many`: to replicas with `?read_from=replica`, else
    /// the master's.
    fn reads(&mut self, target: &Target) -> redis::RedisResult<&mut Link> {
        if self.replicas.is_none() {
            match target.open_replicas() {
                None => return Ok(&mut self.con),
                Some(link) => self.replicas = Some(link?),
            }
        }
        Ok(self.replicas.as_mut().unwrap_or(&mut self.con))
    }
}

/// A try that failed.
struct Failed {
    error: StoreError,
    /// The connection had been kept from earlier.
    reused: bool,
    /// A command may have reached the server (`node.rs` counts what a cluster
    /// connection sent).
    written: bool,
}

impl Failed {
    fn unavailable(&self) -> bool {
        matches!(self.error, StoreError::Unavailable { .. })
    }
}

/// Idle connections, and the process they belong to.
struct Pool {
    pid: u32,
    idle: Vec<Conn>,
}

/// A Redis server seen as a `Store`.
pub struct RedisStore {
    dsn: RedisDsn,
    target: Arc<Target>,
    pool: Mutex<Pool>,
    wakeups: Mutex<Option<(u32, Arc<Wakeups>)>>,
}

impl RedisStore {
    /// Prepares the store; nothing connects until the first command.
    pub fn new(dsn: RedisDsn) -> Result<RedisStore> {
        let bad = |why: String| {
            StoreError::Dsn(crate::ground::dsn::DsnError::BadParameter {
                dsn: dsn.address.clone(),
                why,
            })
        };
        let tls = dsn.tls.as_deref();
        let target = match (&dsn.sentinel, &dsn.cluster) {
            (Some(sentinel), _) => Target::sentinel(sentinel.clone(), dsn.timeout, tls),
            (None, Some(seeds)) => Target::cluster(seeds, dsn.timeout, tls, dsn.read_from_replica),
            _ => Target::fixed(&dsn.url, tls),
        }
        .map_err(bad)?;
        Ok(RedisStore {
            pool: Mutex::new(Pool {
                pid: crate::runtime::pid(),
                idle: Vec::new(),
            }),
            wakeups: Mutex::new(None),
            target: Arc::new(target),
            dsn,
        })
    }

    /// The server's compare-and-delete and compare-and-extend (asks the server if no
    /// connection is open).
    pub fn flavour(&self) -> Result<Flavour> {
        self.run_idempotent(|c| Ok(c.flavour))
    }

    /// Runs `f` on a connection. An error that leaves the connection in doubt (I/O, a
    /// timeout, a reply that did not parse) drops it; an error reply keeps it. On a
    /// cluster, a call whose connection failed before anything was sent (a node that
    /// refused it: a master gone since the slot map was read) runs once more at once,
    /// on a new connection with a fresh slot map; one that may have reached the server
    /// never runs twice.
    fn run<T>(&self, mut f: impl FnMut(&mut Conn) -> redis::RedisResult<T>) -> Result<T> {
        match self.attempt(&mut f) {
            Err(failed) if failed.unavailable() && !failed.written && self.is_cluster() => {
                self.attempt(&mut f).map_err(|failed| failed.error)
            }
            other => other.map_err(|failed| failed.error),
        }
    }

    /// `run` for a command that may safely run twice (a read, or a plain SET of the same
    /// value): when a connection kept from earlier turns out to be dead — the server
    /// restarted or dropped it while this process was idle — it runs once more on a
    /// fresh one, so that the first call after a restart does not fail. On a cluster any
    /// failed connection does (a fresh slot map names the master that took over).
    fn run_idempotent<T>(
        &self,
        mut f: impl FnMut(&mut Conn) -> redis::RedisResult<T>,
    ) -> Result<T> {
        match self.attempt(&mut f) {
            Err(failed) if failed.unavailable() && (failed.reused || self.is_cluster()) => {
                self.attempt(&mut f).map_err(|failed| failed.error)
            }
            other => other.map_err(|failed| failed.error),
        }
    }

    /// A plain SET: `run_idempotent` on a single server; on a cluster a write like any
    /// other (`run`): a SET that may have landed is not sent again, since another
    /// process may have written the key in between.
    fn run_set<T>(&self, f: impl FnMut(&mut Conn) -> redis::RedisResult<T>) -> Result<T> {
        if self.is_cluster() {
            self.run(f)
        } else {
            self.run_idempotent(f)
        }
    }

    fn is_cluster(&self) -> bool {
        matches!(*self.target, Target::Cluster(_))
    }

    /// One try.
    fn attempt<T>(
        &self,
        f: &mut impl FnMut(&mut Conn) -> redis::RedisResult<T>,
    ) -> std::result::Result<T, Failed> {
        let (mut conn, reused) = self.checkout().map_err(|error| Failed {
            error,
            reused: false,
            written: false,
        })?;
        let before = node::written();
        match f(&mut conn) {
            Ok(v) => {
                self.checkin(conn);
                Ok(v)
            }
            Err(e) => {
                let error = self.error(&e);
                // A single server's connection does not count what it sent: whatever ran
                // may have.
                let written = !matches!(conn.con, Link::Cluster(..)) || node::written() != before;
                if matches!(error, StoreError::Unavailable { .. }) {
                    // Dead, or a master no longer (READONLY): behind Sentinel, ask again.
                    self.target.failed(conn.generation);
                } else {
                    self.checkin(conn);
                }
                Err(Failed {
                    error,
                    reused,
                    written,
                })
            }
        }
    }

    /// An idle connection (true: kept from earlier) or a new one.
    fn checkout(&self) -> Result<(Conn, bool)> {
        let pooled = {
            let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
            if pool.pid != crate::runtime::pid() {
                // Inherited across fork(): the parent still talks over these sockets.
                // Forgetting them keeps our copies of the descriptors open and unused.
                for conn in pool.idle.drain(..) {
                    std::mem::forget(conn);
                }
                pool.pid = crate::runtime::pid();
            }
            // Connections to a master that was replaced since are dropped.
            let generation = self.target.generation();
            pool.idle.retain(|c| c.generation == generation);
            pool.idle.pop()
        };
        match pooled {
            Some(conn) => Ok((conn, true)),
            None => self
                .connect()
                .map(|c| (c, false))
                .map_err(|e| self.error(&e)),
        }
    }

    fn checkin(&self, conn: Conn) {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        if pool.pid == crate::runtime::pid() {
            pool.idle.push(conn);
        }
    }

    fn connect(&self) -> redis::RedisResult<Conn> {
        let generation = self.target.generation();
        let opened = (|| {
            let (mut con, generation) = self.target.open(self.dsn.timeout)?;
            let (flavour, publish) = match con {
                // The native release pairs DELEX with a PUBLISH in a pipeline, which a
                // cluster pipeline cannot carry (PUBLISH has no key to route by); the
                // Lua release does both in one round trip.
                Link::Cluster(..) => (Flavour::LUA, self.target.publish()?),
                Link::Server(_) => (Flavour::detect(&mut con)?, Publish::Classic),
            };
            Ok(Conn {
                con,
                flavour,
                publish,
                generation,
                replicas: None,
            })
        })();
        if opened.is_err() {
            self.target.failed(generation);
        }
        opened
    }

    fn error(&self, e: &RedisError) -> StoreError {
        let text = e.to_string();
        match e.kind() {
            ErrorKind::Server(
                ServerErrorKind::BusyLoading
                | ServerErrorKind::MasterDown
                | ServerErrorKind::TryAgain
                | ServerErrorKind::ClusterDown
                | ServerErrorKind::ReadOnly,
            ) => self.unavailable(text),
            ErrorKind::Server(_) | ErrorKind::Extension => {
                if text.contains("not an integer") {
                    StoreError::NotAnInteger
                } else if text.contains("overflow") {
                    StoreError::Overflow
                } else {
                    StoreError::Remote {
                        address: self.dsn.address.clone(),
                        reply: text,
                    }
                }
            }
            _ => self.unavailable(text),
        }
    }

    fn unavailable(&self, cause: String) -> StoreError {
        StoreError::Unavailable {
            address: self.dsn.address.clone(),
            cause,
        }
    }

    fn key(&self, key: &[u8]) -> Vec<u8> {
        keys::full(&self.dsn.prefix, key)
    }

    /// The process's subscriber, started on first use (and again in a forked child).
    fn wakeups(&self) -> Result<Arc<Wakeups>> {
        let mut slot = self.wakeups.lock().unwrap_or_else(|e| e.into_inner());
        let pid = crate::runtime::pid();
        match slot.take() {
            Some((owner, w)) if owner == pid => {
                *slot = Some((owner, w.clone()));
                return Ok(w);
            }
            // Inherited: the parent's runtime thread may have held its lock at the fork,
            // so it is never touched again.
            Some(inherited) => std::mem::forget(inherited),
            None => {}
        }
        // A cluster's scripts publish as its servers can (`scripts::Publish`): the
        // subscriber must listen the same way.
        let publish = self.target.publish().map_err(|e| self.error(&e))?;
        let w = Arc::new(
            Wakeups::start(self.target.clone(), self.dsn.timeout, publish).map_err(|e| {
                self.unavailable(format!("cannot start the background runtime: {e}"))
            })?,
        );
        *slot = Some((pid, w.clone()));
        Ok(w)
    }

    /// The stored bytes of the full key `full` (a GET, retried on a dead kept connection).
    fn stored(&self, full: &[u8]) -> Result<Option<Vec<u8>>> {
        self.run_idempotent(|c| redis::cmd("GET").arg(full).query(&mut c.con))
    }

    /// The key's version: a fingerprint of its stored bytes, 0 when absent.
    fn version(&self, full: &[u8]) -> Result<u64> {
        Ok(self.stored(full)?.map_or(0, |b| fingerprint(&b)))
    }

    /// Deletes `full` if it holds the string `expected` (or, when that spells an integer,
    /// the integer), publishing on its channel and handing a lock to the first waiter in
    /// its line (`queue.rs`). A lock token never spells an integer, so releases take the
    /// server's native command where it has one.
    fn compare_and_delete(&self, full: &[u8], expected: &[u8]) -> Result<bool> {
        let as_str = encoded(Value::Str(expected));
        let as_int = matches!(bytes::decode(expected), Value::Int(_)).then_some(expected);
        let channel = keys::derived(full, keys::WAKE);
        let line = keys::derived(full, keys::QUEUE);
        if crate::fault::on("broken-atomicity") {
            let stored = self.stored(full)?;
            if stored.as_deref() != Some(&as_str[..])
                && (as_int.is_none() || stored.as_deref() != as_int)
            {
                return Ok(false);
            }
            std::thread::yield_now();
            return self.run(|c| {
                redis::pipe()
                    .cmd("DEL")
                    .arg(full)
                    .cmd(c.publish.command())
                    .arg(&channel)
                    .arg("")
                    .add_command(queue::hand_over_if_free(full, &line))
                    .query::<(i64, i64, i64)>(&mut c.con)
                    .map(|(n, _, _)| n == 1)
            });
        }
        self.run(|c| {
            let deleted: i64 = match c.flavour.delete {
                _ if as_int.is_some() => scripts::RELEASE
                    .key(full)
                    .key(&line)
                    .arg(&as_str)
                    .arg(&channel)
                    .arg(c.publish.command())
                    .arg(expected)
                    .invoke(&mut c.con)?,
                DeleteBy::Lua => scripts::RELEASE
                    .key(full)
                    .key(&line)
                    .arg(&as_str)
                    .arg(&channel)
                    .arg(c.publish.command())
                    .invoke(&mut c.con)?,
                native => {
                    let mut del = match native {
                        DeleteBy::Delex => redis::cmd("DELEX"),
                        _ => redis::cmd("DELIFEQ"),
                    };
                    del.arg(full);
                    if native == DeleteBy::Delex {
                        del.arg("IFEQ");
                    }
                    del.arg(&as_str);
                    let (deleted, _, _): (i64, i64, i64) = redis::pipe()
                        .add_command(del)
                        .cmd("PUBLISH")
                        .arg(&channel)
                        .arg("")
                        .add_command(queue::hand_over_if_free(full, &line))
                        .query(&mut c.con)?;
                    deleted
                }
            };
            Ok(deleted == 1)
        })
    }
}

/// `script`'s EVALSHA with `keys`, for a pipeline (arguments follow); see `with_script`.
fn evalsha(script: &redis::Script, keys: &[&[u8]]) -> redis::Cmd {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(script.get_hash()).arg(keys.len());
    for key in keys {
        cmd.arg(*key);
    }
    cmd
}

/// Runs `f`, a pipeline that calls `script` by EVALSHA: a pipeline cannot load a script
/// the server lost (a restart, `SCRIPT FLUSH`), so on NOSCRIPT — nothing of the script
/// ran — it loads the script and runs `f` once more.
fn with_script<T>(
    script: &redis::Script,
    con: &mut Link,
    mut f: impl FnMut(&mut Link) -> redis::RedisResult<T>,
) -> redis::RedisResult<T> {
    match f(con) {
        Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
            script.load(con)?;
            f(con)
        }
        other => other,
    }
}

/// Milliseconds for PX: Redis counts whole milliseconds, and 0 is an error there, so a
/// TTL is rounded up.
fn millis(ttl: Duration) -> u64 {
    let ms = ttl.as_nanos().div_ceil(1_000_000);
    ms.clamp(1, i64::MAX as u128 / 2) as u64
}

fn encoded(value: Value<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    bytes::encode(value, &mut out);
    out
}

fn set_cmd(full: &[u8], stored: &[u8], ttl: Option<Duration>, nx: bool) -> redis::Cmd {
    let mut cmd = redis::cmd("SET");
    cmd.arg(full).arg(stored);
    if nx {
        cmd.arg("NX");
    }
    if let Some(ttl) = ttl {
        cmd.arg("PX").arg(millis(ttl));
    }
    cmd
}

impl Store for RedisStore {
    /// A GET, from a replica with `?read_from=replica`.
    fn read(&self, key: &[u8], visit: &mut dyn FnMut(Value<'_>)) -> Result<Option<u64>> {
        let full = self.key(key);
        let stored: Option<Vec<u8>> = self.run_idempotent(|c| {
            let link = c.reads(&self.target)?;
            redis::cmd("GET").arg(&full).query(link)
        })?;
        Ok(stored.map(|b| {
            visit(bytes::decode(&b));
            fingerprint(&b)
        }))
    }

    /// One MGET (from replicas with `?read_from=replica`).
    fn get_many(&self, keys: &[&[u8]], found: &mut dyn FnMut(usize, Hit, &[u8])) -> Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut cmd = redis::cmd("MGET");
        for key in keys {
            cmd.arg(self.key(key));
        }
        let stored: Vec<Option<Vec<u8>>> =
            self.run_idempotent(|c| cmd.query(c.reads(&self.target)?))?;
        let mut buf = Vec::new();
        for (i, b) in stored.iter().enumerate() {
            if let Some(b) = b {
                let value = bytes::decode(b).copy_into(&mut buf);
                let version = fingerprint(b);
                found(i, Hit { value, version }, &buf);
            }
        }
        Ok(())
    }

    fn exists(&self, key: &[u8]) -> Result<bool> {
        let n: i64 =
            self.run_idempotent(|c| redis::cmd("EXISTS").arg(self.key(key)).query(&mut c.con))?;
        Ok(n > 0)
    }

    fn set(&self, key: &[u8], value: Value<'_>, ttl: Option<Duration>) -> Result<()> {
        let cmd = set_cmd(&self.key(key), &encoded(value), ttl, false);
        self.run_set(|c| cmd.query::<()>(&mut c.con))
    }

    /// One pipeline of SETs (not a transaction: each lands on its own, as `set` would).
    fn set_many(&self, entries: &[(&[u8], Value<'_>)], ttl: Option<Duration>) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let sets: Vec<redis::Cmd> = entries
            .iter()
            .map(|(key, value)| set_cmd(&self.key(key), &encoded(*value), ttl, false))
            .collect();
        self.run_set(|c| c.con.pipeline::<Vec<Reply>>(sets.clone()))
            .map(drop)
    }

    fn set_nx(&self, key: &[u8], value: Value<'_>, ttl: Option<Duration>) -> Result<SetNx> {
        if crate::fault::on("broken-atomicity") {
            if self.exists(key)? {
                return Ok(SetNx::Exists);
            }
            std::thread::yield_now();
            return self.set(key, value, ttl).map(|()| SetNx::Inserted);
        }
        let cmd = set_cmd(&self.key(key), &encoded(value), ttl, true);
        let reply: Reply = self.run(|c| cmd.query(&mut c.con))?;
        Ok(match reply {
            Reply::Nil => SetNx::Exists,
            _ => SetNx::Inserted,
        })
    }

    fn del(&self, key: &[u8]) -> Result<bool> {
        let n: i64 = self.run(|c| redis::cmd("DEL").arg(self.key(key)).query(&mut c.con))?;
        Ok(n > 0)
    }

    fn del_if_eq(&self, key: &[u8], expected: &[u8]) -> Result<bool> {
        self.compare_and_delete(&self.key(key), expected)
    }

    fn incr_by(&self, key: &[u8], by: i64, ttl: Option<Duration>) -> Result<i64> {
        if crate::fault::on("broken-atomicity") {
            let mut out = Vec::new();
            let now = match self.get(key, &mut out)? {
                Some(super::Hit {
                    value: super::Fetched::Int(n),
                    ..
                }) => n,
                Some(_) => return Err(StoreError::NotAnInteger),
                None => 0,
            };
            std::thread::yield_now();
            let new = now.checked_add(by).ok_or(StoreError::Overflow)?;
            self.set(key, Value::Int(new), ttl)?;
            return Ok(new);
        }
        let full = self.key(key);
        let native = self.run(|c| match ttl {
            None => redis::cmd("INCRBY").arg(&full).arg(by).query(&mut c.con),
            Some(ttl) => scripts::INCR_WITH_TTL
                .key(&full)
                .arg(by)
                .arg(millis(ttl))
                .invoke(&mut c.con),
        });
        match native {
            Err(StoreError::NotAnInteger) => {
                self.run(|c| scripts::INCR_TEXT.key(&full).arg(by).invoke(&mut c.con))
            }
            other => other,
        }
    }

    fn expire(&self, key: &[u8], ttl: Option<Duration>) -> Result<bool> {
        let full = self.key(key);
        self.run(|c| match ttl {
            Some(ttl) => redis::cmd("PEXPIRE")
                .arg(&full)
                .arg(millis(ttl))
                .query::<i64>(&mut c.con)
                .map(|n| n == 1),
            None => c
                .con
                .pipeline::<(i64, i64)>(vec![
                    redis::cmd("PERSIST").arg(&full).clone(),
                    redis::cmd("EXISTS").arg(&full).clone(),
                ])
                .map(|(_, n)| n == 1),
        })
    }

    fn ttl(&self, key: &[u8]) -> Result<KeyTtl> {
        let ms: i64 =
            self.run_idempotent(|c| redis::cmd("PTTL").arg(self.key(key)).query(&mut c.con))?;
        Ok(match ms {
            -2 => KeyTtl::Missing,
            -1 => KeyTtl::Persistent,
            ms => KeyTtl::Remaining(Duration::from_millis(ms.max(0) as u64)),
        })
    }

    /// GET and PTTL in one round trip.
    fn version_and_ttl(&self, key: &[u8]) -> Result<Option<(u64, KeyTtl)>> {
        let full = self.key(key);
        let (stored, ms): (Option<Vec<u8>>, i64) = self.run_idempotent(|c| {
            c.con.pipeline(vec![
                redis::cmd("GET").arg(&full).clone(),
                redis::cmd("PTTL").arg(&full).clone(),
            ])
        })?;
        Ok(match (stored, ms) {
            (None, _) | (_, -2) => None,
            (Some(b), -1) => Some((fingerprint(&b), KeyTtl::Persistent)),
            (Some(b), ms) => Some((
                fingerprint(&b),
                KeyTtl::Remaining(Duration::from_millis(ms.max(0) as u64)),
            )),
        })
    }

    fn clear(&self, prefix: &[u8]) -> Result<u64> {
        let mut pattern = keys::glob_escape(&self.key(prefix));
        pattern.push(b'*');
        let mut cursor = 0u64;
        let mut removed = 0u64;
        loop {
            let (next, found) = self.scan_page(&pattern, cursor, CLEAR_BATCH)?;
            if !found.is_empty() {
                // One UNLINK per key: on a cluster, keys of different slots cannot share one.
                let unlinks: Vec<redis::Cmd> = found
                    .iter()
                    .map(|k| redis::cmd("UNLINK").arg(k).clone())
                    .collect();
                let n: Vec<u64> = self.run(|c| c.con.pipeline(unlinks.clone()))?;
                removed += n.iter().sum::<u64>();
            }
            if next == 0 {
                return Ok(removed);
            }
            cursor = next;
        }
    }

    fn scan(&self, prefix: &[u8], cursor: u64, out: &mut Vec<ScanEntry>) -> Result<u64> {
        self.scan_batch(prefix, cursor, out)
    }

    /// The server's figures; on a cluster, every master's added up (a shard a master).
    fn stats(&self) -> Result<Stats> {
        let per_master: Vec<(String, u64)> = self.run_idempotent(|c| {
            let mut info = redis::cmd("INFO");
            info.arg("memory")
                .arg("stats")
                .arg("server")
                .arg("errorstats");
            c.con
                .masters()?
                .iter()
                .map(|m| {
                    Ok((
                        c.con.on_master(m, &info)?,
                        c.con.on_master(m, &redis::cmd("DBSIZE"))?,
                    ))
                })
                .collect()
        })?;
        let field = |name: &str| -> u64 {
            per_master
                .iter()
                .filter_map(|(info, _)| {
                    info.lines()
                        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                        .and_then(|v| v.trim().parse::<u64>().ok())
                })
                .sum()
        };
        // Each master's figure (not a sum): the time base, and Redis' refusals for want of
        // memory (`-OOM`, counted in `errorstat_OOM:count=N`).
        let each = |name: &str, tail: &str| -> Vec<u64> {
            per_master
                .iter()
                .filter_map(|(info, _)| {
                    info.lines()
                        .find_map(|l| l.strip_prefix(name)?.strip_prefix(tail))
                        .and_then(|v| v.trim().parse::<u64>().ok())
                })
                .collect()
        };
        let events: Vec<Option<u64>> = self
            .run_idempotent(|c| {
                redis::cmd("HMGET")
                    .arg(self.key(keys::EVENTS))
                    .arg(&EVENT_FIELDS[..])
                    .query(&mut c.con)
            })
            .unwrap_or_default();
        let event = |i: usize| events.get(i).copied().flatten().unwrap_or(0);
        // CONFIG may be renamed away: then the limit is unknown (0).
        let max_item: Option<(String, u64)> = self
            .run_idempotent(|c| {
                redis::cmd("CONFIG")
                    .arg("GET")
                    .arg("proto-max-bulk-len")
                    .query::<Option<(String, u64)>>(&mut c.con)
            })
            .ok()
            .flatten();
        Ok(Stats {
            age_seconds: each("uptime_in_seconds", ":")
                .into_iter()
                .min()
                .unwrap_or(0),
            max_item_size: max_item.map_or(0, |(_, n)| n),
            lock_waits: event(0),
            lock_timeouts: event(1),
            stampedes_avoided: event(2),
            full_refusals: each("errorstat_OOM", ":count=").into_iter().sum(),
            memory_size: field("maxmemory"),
            memory_used: field("used_memory"),
            entries: per_master.iter().map(|(_, n)| n).sum(),
            hits: field("keyspace_hits"),
            misses: field("keyspace_misses"),
            evictions: field("evicted_keys"),
            // The server's policy evicts without telling what an entry was.
            evictions_anonymous: 0,
            evictions_cache: 0,
            evictions_session: 0,
            expirations: field("expired_keys"),
            repairs: 0,
            resets: 0,
            shards: per_master.len() as u64,
            shards_locked: 0,
            shards_writing: 0,
        })
    }

    /// The server's policy evicts without saying what an entry was, and a Redis server
    /// has no shard locks to repair or find held; `shards` are its masters.
    fn not_counted(&self) -> &'static [&'static str] {
        &[
            "evictions_anonymous",
            "evictions_cache",
            "evictions_session",
            "repairs",
            "resets",
            "shards_locked",
            "shards_writing",
        ]
    }

    /// One HINCRBY on the events hash (`keys::EVENTS`); a failure is dropped.
    fn note(&self, event: Event) {
        let field = EVENT_FIELDS[match event {
            Event::LockWait => 0,
            Event::LockTimeout => 1,
            Event::StampedeAvoided => 2,
        }];
        let key = self.key(keys::EVENTS);
        let _ = self.run(|c| {
            redis::cmd("HINCRBY")
                .arg(&key)
                .arg(field)
                .arg(1)
                .query::<i64>(&mut c.con)
        });
    }

    fn wait_for_change(&self, key: &[u8], last_version: u64, timeout: Duration) -> Result<bool> {
        let full = self.key(key);
        let channel = keys::derived(&full, keys::WAKE);
        self.wakeups()?.wait(&channel, timeout, || {
            Ok(self.version(&full)? != last_version)
        })
    }

    fn lock_acquire(&self, name: &[u8], token: &[u8], ttl: Duration) -> Result<Option<u64>> {
        let full = self.key(name);
        let fence_key = keys::derived(&full, keys::FENCE);
        if crate::fault::on("broken-atomicity") {
            if self.exists(name)? {
                return Ok(None);
            }
            std::thread::yield_now();
            self.set(name, Value::Str(token), Some(ttl))?;
            return self
                .run(|c| redis::cmd("INCR").arg(&fence_key).query(&mut c.con))
                .map(Some);
        }
        let fence: u64 = self.run(|c| {
            scripts::ACQUIRE
                .key(&full)
                .key(&fence_key)
                .arg(encoded(Value::Str(token)))
                .arg(millis(ttl))
                .arg(millis(ttl + FENCE_KEEP))
                .invoke(&mut c.con)
        })?;
        Ok((fence > 0).then_some(fence))
    }

    /// The acquire script and the GET in one pipeline on a single server (on a cluster
    /// the two keys live on different masters: two calls).
    fn lock_acquire_and_get(
        &self,
        name: &[u8],
        token: &[u8],
        ttl: Duration,
        key: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Option<(u64, Option<Hit>)>> {
        if crate::fault::on("broken-atomicity") || matches!(*self.target, Target::Cluster(_)) {
            return super::acquire_then_get(self, name, token, ttl, key, out);
        }
        let full = self.key(name);
        let fence_key = keys::derived(&full, keys::FENCE);
        let data = self.key(key);
        let (fence, stored): (u64, Option<Vec<u8>>) = self.run(|c| {
            let mut acquire = evalsha(&scripts::ACQUIRE, &[&full, &fence_key]);
            acquire
                .arg(encoded(Value::Str(token)))
                .arg(millis(ttl))
                .arg(millis(ttl + FENCE_KEEP));
            let mut get = redis::cmd("GET");
            get.arg(&data);
            with_script(&scripts::ACQUIRE, &mut c.con, |con| {
                redis::pipe()
                    .add_command(acquire.clone())
                    .add_command(get.clone())
                    .query(con)
            })
        })?;
        if fence == 0 {
            return Ok(None);
        }
        let hit = stored.map(|b| Hit {
            value: bytes::decode(&b).copy_into(out),
            version: fingerprint(&b),
        });
        Ok(Some((fence, hit)))
    }

    /// One script on a single server (on a cluster the two keys live on different
    /// masters: the extend, then the SET). The retention is the server's business (its
    /// `maxmemory-policy`).
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
        if crate::fault::on("broken-atomicity") || matches!(*self.target, Target::Cluster(_)) {
            return super::extend_then_set(self, name, token, lock_ttl, key, value, ttl, retention);
        }
        let done: i64 = self.run(|c| {
            scripts::SET_IF_LOCKED
                .key(self.key(name))
                .key(self.key(key))
                .arg(encoded(Value::Str(token)))
                .arg(millis(lock_ttl))
                .arg(encoded(value))
                .arg(ttl.map_or(0, millis))
                .invoke(&mut c.con)
        })?;
        Ok(done == 1)
    }

    fn lock_extend(&self, name: &[u8], token: &[u8], ttl: Duration) -> Result<bool> {
        let full = self.key(name);
        let token = encoded(Value::Str(token));
        self.run(|c| match c.flavour.extend {
            ExtendBy::Lua => scripts::EXTEND
                .key(&full)
                .arg(&token)
                .arg(millis(ttl))
                .invoke::<i64>(&mut c.con)
                .map(|n| n == 1),
            ExtendBy::SetIfeq => redis::cmd("SET")
                .arg(&full)
                .arg(&token)
                .arg("IFEQ")
                .arg(&token)
                .arg("PX")
                .arg(millis(ttl))
                .query::<Reply>(&mut c.con)
                .map(|r| !matches!(r, Reply::Nil)),
        })
    }

    fn lock_release(&self, name: &[u8], token: &[u8]) -> Result<bool> {
        self.compare_and_delete(&self.key(name), token)
    }

    fn lock_wait(&self, name: &[u8], timeout: Duration) -> Result<bool> {
        self.wait_in_line(name, timeout)
    }

    fn rw_lock(
        &self,
        name: &[u8],
        op: &crate::ground::rwstate::Op,
    ) -> Result<crate::ground::rwstate::Outcome> {
        self.rw_apply(name, op)
    }

    fn describe(&self) -> String {
        match self.flavour() {
            Ok(f) => format!(
                "{} ({}, timeout {} ms)",
                self.dsn.address,
                f.describe(),
                self.dsn.timeout.as_millis()
            ),
            Err(e) => format!("{} (not reachable now: {e})", self.dsn.address),
        }
    }
}
