//! A store seen through a key prefix, with the key rules every PHP entry point applies
//! (non-empty, at most 64 KiB). `Ephpm\Kv` is a thin shell around one of these.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use crate::store::shm::constants::MAX_KEY_LEN;
use crate::store::{
    Hit, KeyTtl, Result, Retention, Room, ScanEntry, SetNx, Stats, Store, StoreError, Value,
};

/// A store and the prefix put before every key.
#[derive(Clone)]
pub struct Keyspace {
    store: Arc<dyn Store>,
    prefix: Vec<u8>,
}

thread_local! {
    /// Reused buffer for prefixed keys, so a prefixed call allocates nothing.
    static FULL_KEY: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Checks a caller's key against the rules.
pub fn check_key(key: &[u8]) -> Result<()> {
    if key.is_empty() {
        Err(StoreError::EmptyKey)
    } else if key.len() > MAX_KEY_LEN {
        Err(StoreError::KeyTooLong(key.len()))
    } else {
        Ok(())
    }
}

/// The outcome of `Keyspace::wait`.
#[derive(Debug, PartialEq)]
pub enum Waited {
    /// The key changed; its value now (None when it is gone), bytes in the buffer.
    Changed(Option<Hit>),
    TimedOut,
}

impl Keyspace {
    pub fn new(store: Arc<dyn Store>, prefix: &[u8]) -> Self {
        Keyspace {
            store,
            prefix: prefix.to_vec(),
        }
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    pub fn prefix(&self) -> &[u8] {
        &self.prefix
    }

    /// Runs `f` with the checked, prefixed key.
    fn with_key<R>(&self, key: &[u8], f: impl FnOnce(&dyn Store, &[u8]) -> Result<R>) -> Result<R> {
        check_key(key)?;
        if self.prefix.is_empty() {
            return f(&*self.store, key);
        }
        FULL_KEY.with(|buf| {
            let mut full = buf.take();
            full.clear();
            full.extend_from_slice(&self.prefix);
            full.extend_from_slice(key);
            let r = f(&*self.store, &full);
            buf.replace(full);
            r
        })
    }

    /// The checked, prefixed form of `key`, as the store sees it (lock names use it).
    pub fn full_key(&self, key: &[u8]) -> Result<Vec<u8>> {
        check_key(key)?;
        Ok([&self.prefix[..], key].concat())
    }

    pub fn get(&self, key: &[u8], out: &mut Vec<u8>) -> Result<Option<Hit>> {
        self.with_key(key, |s, k| s.get(k, out))
    }
    /// `Store::get_into` on this prefix's key.
    pub fn get_into(&self, key: &[u8], room: &mut dyn Room) -> Result<Option<Hit>> {
        self.with_key(key, |s, k| s.get_into(k, room))
    }
    /// `Store::get_many` on this prefix's keys.
    pub fn get_many(&self, keys: &[&[u8]], found: &mut dyn FnMut(usize, Hit, &[u8])) -> Result<()> {
        let full = keys
            .iter()
            .map(|k| self.full_key(k))
            .collect::<Result<Vec<_>>>()?;
        let full: Vec<&[u8]> = full.iter().map(Vec::as_slice).collect();
        self.store.get_many(&full, found)
    }
    /// `Store::set_many` on this prefix's keys.
    pub fn set_many(&self, entries: &[(&[u8], Value<'_>)], ttl: Option<Duration>) -> Result<()> {
        let full = entries
            .iter()
            .map(|(k, _)| self.full_key(k))
            .collect::<Result<Vec<_>>>()?;
        let entries: Vec<(&[u8], Value<'_>)> = full
            .iter()
            .zip(entries)
            .map(|(k, (_, v))| (k.as_slice(), *v))
            .collect();
        self.store.set_many(&entries, ttl)
    }
    pub fn exists(&self, key: &[u8]) -> Result<bool> {
        self.with_key(key, |s, k| s.exists(k))
    }
    pub fn set(&self, key: &[u8], v: Value<'_>, ttl: Option<Duration>) -> Result<()> {
        self.with_key(key, |s, k| s.set(k, v, ttl))
    }
    pub fn set_with_retention(
        &self,
        key: &[u8],
        v: Value<'_>,
        ttl: Option<Duration>,
        retention: Retention,
    ) -> Result<()> {
        self.with_key(key, |s, k| s.set_with_retention(k, v, ttl, retention))
    }
    pub fn set_nx(&self, key: &[u8], v: Value<'_>, ttl: Option<Duration>) -> Result<SetNx> {
        self.with_key(key, |s, k| s.set_nx(k, v, ttl))
    }
    pub fn reserve(&self, key: &[u8], v: Value<'_>, ttl: Option<Duration>) -> Result<SetNx> {
        self.with_key(key, |s, k| s.reserve(k, v, ttl))
    }
    pub fn del(&self, key: &[u8]) -> Result<bool> {
        self.with_key(key, |s, k| s.del(k))
    }
    pub fn del_if_eq(&self, key: &[u8], expected: &[u8]) -> Result<bool> {
        self.with_key(key, |s, k| s.del_if_eq(k, expected))
    }
    pub fn incr_by(&self, key: &[u8], by: i64, ttl: Option<Duration>) -> Result<i64> {
        self.with_key(key, |s, k| s.incr_by(k, by, ttl))
    }
    pub fn expire(&self, key: &[u8], ttl: Option<Duration>) -> Result<bool> {
        self.with_key(key, |s, k| s.expire(k, ttl))
    }
    /// A new lifetime for the key only while it holds `expected`: the store's lock
    /// extension (one step where the key lives), so a holder whose lock expired and was
    /// taken by another never extends the other's.
    pub fn expire_if_eq(&self, key: &[u8], expected: &[u8], ttl: Duration) -> Result<bool> {
        self.with_key(key, |s, k| s.lock_extend(k, expected, ttl))
    }
    pub fn ttl(&self, key: &[u8]) -> Result<KeyTtl> {
        self.with_key(key, |s, k| s.ttl(k))
    }

    /// `Store::scan` on this prefix's keys starting with `prefix`; the keys shown without
    /// this keyspace's prefix.
    pub fn scan(&self, prefix: &[u8], cursor: u64, out: &mut Vec<ScanEntry>) -> Result<u64> {
        let start = out.len();
        let next = self
            .store
            .scan(&[&self.prefix[..], prefix].concat(), cursor, out)?;
        for e in &mut out[start..] {
            e.key.drain(..self.prefix.len());
        }
        Ok(next)
    }

    /// Removes this prefix's keys, or every key when there is no prefix.
    pub fn clear(&self) -> Result<u64> {
        self.store.clear(&self.prefix)
    }

    pub fn stats(&self) -> Result<Stats> {
        self.store.stats()
    }

    /// Waits until the key's version differs from `last_version`, then reads it.
    pub fn wait(
        &self,
        key: &[u8],
        last_version: u64,
        timeout: Duration,
        out: &mut Vec<u8>,
    ) -> Result<Waited> {
        let deadline = std::time::Instant::now() + timeout;
        self.with_key(key, |s, k| {
            loop {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if !s.wait_for_change(k, last_version, left)? {
                    return Ok(Waited::TimedOut);
                }
                // A wake-up says "look again": the key may be back as it was.
                let now = s.get(k, out)?;
                if now.map_or(0, |h| h.version) != last_version {
                    return Ok(Waited::Changed(now));
                }
            }
        })
    }
}
