//! Read/write (shared) locks over any `Store`: readers never block readers, a writer
//! excludes everyone, with tokens, fencing numbers, per-holder TTLs, promotion and
//! demotion as symfony/lock defines them. No PHP here.
//!
//! - `crate::ground::rwstate`  the lock's state and the rules, a pure function every
//!   backend runs atomically on the lock's key (`Store::rw_lock`)
//!
//! # Protocol choice
//! The whole lock is one key whose value is the state (mode, holders with their own
//! expiries, last fence), changed only by `rwstate::apply` run where the data lives:
//! under the shard lock on shm, as a compare-and-swap script on Redis (read, decide in
//! Rust, swap only if the bytes are still those read), at the key's owner in a cluster.
//! One key means one atomic step per operation on every backend, and the rules exist
//! once, in Rust. Waiting is the exclusive locks' (`lock.rs`): a refused caller gets the
//! key's version and the longest remaining TTL in its way, and sleeps on
//! `wait_for_change` until a release changes the key (a futex on shm, Pub/Sub on Redis),
//! never past that TTL, its deadline or one slice.

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::ground::rwstate::{Mode, Op, Outcome};
use crate::ground::{Token, new_token};
use crate::store::{Result, Store};

/// A share of a read/write lock this process holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub name: Vec<u8>,
    pub token: Token,
    pub fence: u64,
    pub mode: Mode,
}

/// Read/write locks on one store.
#[derive(Clone)]
pub struct RwLocks {
    store: Arc<dyn Store>,
}

impl RwLocks {
    pub fn new(store: Arc<dyn Store>) -> Self {
        RwLocks { store }
    }

    /// Takes the lock in `mode` with a fresh token, waiting up to `wait`.
    pub fn acquire(
        &self,
        name: &[u8],
        mode: Mode,
        ttl: Duration,
        wait: Duration,
    ) -> Result<Option<Held>> {
        self.take(name, new_token(), mode, ttl, wait)
    }

    /// Makes a held read share the write lock, waiting up to `wait` for the other
    /// readers to leave; `None` when they did not (the read share stays). A write lock
    /// is kept as it is, with a new TTL.
    pub fn promote(&self, held: &Held, ttl: Duration, wait: Duration) -> Result<Option<Held>> {
        self.take(&held.name, held.token, Mode::Write, ttl, wait)
    }

    /// Makes a held write lock a read share (other readers may then join); a read share
    /// stays one, with a new TTL. `None` when the token no longer holds the lock and
    /// another token's write lock is in the way.
    pub fn demote(&self, held: &Held, ttl: Duration) -> Result<Option<Held>> {
        self.take(&held.name, held.token, Mode::Read, ttl, Duration::ZERO)
    }

    /// Gives the share `ttl` from now; false when it is no longer held.
    pub fn extend(&self, held: &Held, ttl: Duration) -> Result<bool> {
        let op = Op::Extend {
            token: held.token,
            ttl,
        };
        Ok(self.store.rw_lock(&held.name, &op)? == Outcome::Done(true))
    }

    /// Drops the share; false when it was no longer held (other holders are untouched).
    pub fn release(&self, held: &Held) -> Result<bool> {
        let op = Op::Release { token: held.token };
        Ok(self.store.rw_lock(&held.name, &op)? == Outcome::Done(true))
    }

    /// How the share holds its lock now, if it still does.
    pub fn mode(&self, held: &Held) -> Result<Option<Mode>> {
        let op = Op::Probe { token: held.token };
        Ok(match self.store.rw_lock(&held.name, &op)? {
            Outcome::Holds(mode) => mode,
            _ => None,
        })
    }

    /// Asks for the lock until granted or `wait` passes. A refusal carries the key's
    /// version, so the sleep that follows cannot miss a release made after the refusal:
    /// `wait_for_change` returns at once when the version already moved on.
    fn take(
        &self,
        name: &[u8],
        token: Token,
        mode: Mode,
        ttl: Duration,
        wait: Duration,
    ) -> Result<Option<Held>> {
        let deadline = Instant::now() + wait;
        let op = Op::Acquire { mode, token, ttl };
        loop {
            let (left, version) = match self.store.rw_lock(name, &op)? {
                Outcome::Acquired { fence } => {
                    return Ok(Some(Held {
                        name: name.to_vec(),
                        token,
                        fence,
                        mode,
                    }));
                }
                Outcome::Busy { left, version } => (left, version),
                // Only a confused backend answers an acquisition otherwise.
                _ => return Err(crate::ground::rwstate::Foreign.into()),
            };
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Ok(None);
            }
            // Never sleep past the holders' TTL: a dead holder's share frees itself
            // then, and nobody signals an expiry.
            let until_expiry = left + Duration::from_millis(1);
            self.store
                .wait_for_change(name, version, remaining.min(until_expiry))?;
        }
    }
}
