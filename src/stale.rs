//! Stale-while-revalidate and stale-if-error over any store: the algorithm behind
//! `Ephpm\StaleCache`. No PHP here: the PHP layer supplies the hooks (read and decode a
//! record, compute, store).
//!
//! A key holds one record: the value and three wall-clock times, so that a reader
//! decides with one read. Until `fresh_until` the value is served. Until `stale_until`
//! it is served at once, and one caller, elected by a lock that nobody waits for, is
//! told to refresh it (the caller chooses when: inline or after its response). Past
//! that, the value is computed like a miss, behind the same lock, so that the waiters of
//! a miss are also woken by a refresh that ends. Until `error_until` a failed
//! computation serves the old value instead of failing.
//!
//! The times are wall-clock milliseconds since the epoch, so that the hosts sharing a
//! Redis agree on them; the store's own TTL (`Times::keep_for`) removes the record once
//! no window can use it.

use std::time::Duration;

pub use crate::ground::wall::now_ms;

use crate::lock::{Held, Locks};
use crate::memo::{Maker, Outcome, Plan, Step, make_once};
use crate::store::Value;

/// Marks a record, and its format version.
const MAGIC: &[u8; 4] = b"eSW1";
const HEADER: usize = 4 + 3 * 8 + 1;

/// How long past its lifetime a value may still be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Windows {
    /// Served at once while one caller refreshes it.
    pub stale: Duration,
    /// Served when computing a new value fails.
    pub stale_if_error: Duration,
}

/// A record's three times, in milliseconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    pub fresh_until: u64,
    pub stale_until: u64,
    pub error_until: u64,
}

/// Where a record is in its life at some moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Fresh,
    Stale,
    /// Past the stale window: computed like a miss; `fallback` when a failed
    /// computation may still serve the old value.
    Expired {
        fallback: bool,
    },
}

fn ms(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

impl Times {
    /// The times of a value computed at `now` that lives `ttl`.
    pub fn new(now: u64, ttl: Duration, windows: Windows) -> Times {
        let fresh_until = now.saturating_add(ms(ttl));
        Times {
            fresh_until,
            stale_until: fresh_until.saturating_add(ms(windows.stale)),
            error_until: fresh_until.saturating_add(ms(windows.stale_if_error)),
        }
    }

    pub fn phase(&self, now: u64) -> Phase {
        if now < self.fresh_until {
            Phase::Fresh
        } else if now < self.stale_until {
            Phase::Stale
        } else {
            Phase::Expired {
                fallback: now < self.error_until,
            }
        }
    }

    /// How long the store must keep the record, from `now`.
    pub fn keep_for(&self, now: u64) -> Duration {
        let until = self.stale_until.max(self.error_until);
        Duration::from_millis(until.saturating_sub(now).max(1))
    }
}

/// Writes the record of `value` with `times` into `out` (cleared first).
pub fn encode(times: Times, value: Value<'_>, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(MAGIC);
    for t in [times.fresh_until, times.stale_until, times.error_until] {
        out.extend_from_slice(&t.to_le_bytes());
    }
    match value {
        Value::Str(b) => {
            out.push(b's');
            out.extend_from_slice(b);
        }
        Value::Serialized(b) => {
            out.push(b'o');
            out.extend_from_slice(b);
        }
        Value::Int(n) => {
            out.push(b'i');
            out.extend_from_slice(&n.to_le_bytes());
        }
        Value::Float(x) => {
            out.push(b'f');
            out.extend_from_slice(&x.to_le_bytes());
        }
        Value::Bool(b) => out.push(if b { b'T' } else { b'F' }),
        Value::Null => out.push(b'n'),
    }
}

/// The times and value of a record; `None` when `bytes` is not one (a key written by
/// something else).
pub fn decode(bytes: &[u8]) -> Option<(Times, Value<'_>)> {
    if bytes.len() < HEADER || &bytes[..4] != MAGIC {
        return None;
    }
    let time = |i: usize| {
        let at = 4 + 8 * i;
        bytes[at..at + 8].try_into().ok().map(u64::from_le_bytes)
    };
    let times = Times {
        fresh_until: time(0)?,
        stale_until: time(1)?,
        error_until: time(2)?,
    };
    let body = &bytes[HEADER..];
    let eight = || -> Option<[u8; 8]> { body.try_into().ok() };
    let value = match bytes[HEADER - 1] {
        b's' => Value::Str(body),
        b'o' => Value::Serialized(body),
        b'i' => Value::Int(i64::from_le_bytes(eight()?)),
        b'f' => Value::Float(f64::from_le_bytes(eight()?)),
        b'T' if body.is_empty() => Value::Bool(true),
        b'F' if body.is_empty() => Value::Bool(false),
        b'n' if body.is_empty() => Value::Null,
        _ => return None,
    };
    Some((times, value))
}

/// The caller's side of a cached value: `V` is its value (in PHP, a zval).
pub trait Source<V> {
    /// Reads the key's record (`Missing` when absent or not a record).
    fn read(&mut self) -> Step<(Times, V)>;
    /// Computes a new value and the lifetime it should have; a zero lifetime means
    /// "serve it, but do not store it".
    fn compute(&mut self) -> Step<(V, Duration)>;
    /// Stores `value` with `times` (a failure is the source's to report: the value is
    /// served anyway).
    fn store(&mut self, value: &V, times: Times);
    /// Reports something the caller should know, such as a computation that ran
    /// without protection.
    fn warn(&mut self, message: String);
}

/// How a value came to be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    Fresh,
    Stale,
    /// Computed by this caller.
    Computed,
    /// The computation failed (in PHP an exception is pending, to be logged and
    /// cleared) and the old value was served.
    StaleOnError,
}

/// The result of `StaleCache::get`.
#[derive(Debug, PartialEq)]
pub enum Got<V> {
    Served {
        value: V,
        how: How,
        /// This caller won the election: it must call `StaleCache::refresh_elected`
        /// (now or after its response), which releases the lock.
        refresh: Option<Held>,
    },
    /// The computation failed and nothing could be served (in PHP: the exception is
    /// pending, for the caller).
    Failed,
}

/// Stale-while-revalidate over one lock store.
#[derive(Clone)]
pub struct StaleCache {
    pub locks: Locks,
    /// How long an elected refresh or a computation may hold the key's lock.
    pub lock_ttl: Duration,
    /// How long a miss waits for another caller's computation.
    pub wait: Duration,
    pub windows: Windows,
}

impl StaleCache {
    /// Serves the key: fresh, stale (electing one refresher), or computed behind the
    /// lock named `lock`.
    pub fn get<V>(&self, lock: &[u8], src: &mut impl Source<V>) -> Got<V> {
        let (times, value) = match src.read() {
            Step::Got(found) => found,
            Step::Missing => return self.compute_once(lock, src, None),
            Step::Failed => return Got::Failed,
        };
        match times.phase(now_ms()) {
            Phase::Fresh => Got::Served {
                value,
                how: How::Fresh,
                refresh: None,
            },
            Phase::Stale => Got::Served {
                value,
                how: How::Stale,
                refresh: self.elect(lock, src),
            },
            Phase::Expired { fallback } => self.compute_once(lock, src, fallback.then_some(value)),
        }
    }

    /// The election: the lock if nobody holds it, taken without waiting.
    fn elect<V>(&self, lock: &[u8], src: &mut impl Source<V>) -> Option<Held> {
        match self.locks.acquire(lock, self.lock_ttl, Duration::ZERO) {
            Ok(held) => held,
            Err(e) => {
                src.warn(format!(
                    "ephpm: the stale value of \"{}\" is served without a refresh: the lock store cannot be used: {e}",
                    String::from_utf8_lossy(lock)
                ));
                None
            }
        }
    }

    /// The elected caller's refresh: computes, stores and releases the lock. A
    /// computation that fails stores nothing, so the stale value stays (`Failed`: in
    /// PHP the exception is pending, to be logged).
    pub fn refresh_elected<V>(&self, held: &Held, src: &mut impl Source<V>) -> Step<V> {
        let step = compute_and_store(self.windows, src);
        let _ = self.locks.release(held);
        step
    }

    /// Computes and stores a new value whatever the record holds, behind the lock
    /// (waiting for a computation in progress, then computing again).
    pub fn recompute<V>(&self, lock: &[u8], src: &mut impl Source<V>) -> Got<V> {
        let plan = Plan {
            find_first: false,
            find_after_winning: false,
            find_after_waiting: false,
        };
        self.behind_lock(lock, plan, src, None)
    }

    /// A miss: one caller computes; the others wait and are served what it stored.
    fn compute_once<V>(
        &self,
        lock: &[u8],
        src: &mut impl Source<V>,
        fallback: Option<V>,
    ) -> Got<V> {
        let plan = Plan {
            find_first: false,
            find_after_winning: true,
            find_after_waiting: true,
        };
        self.behind_lock(lock, plan, src, fallback)
    }

    fn behind_lock<V>(
        &self,
        lock: &[u8],
        plan: Plan,
        src: &mut impl Source<V>,
        fallback: Option<V>,
    ) -> Got<V> {
        let mut maker = Computing {
            src: &mut *src,
            windows: self.windows,
        };
        let why = match make_once(
            &self.locks,
            lock,
            self.lock_ttl,
            self.wait,
            plan,
            &mut maker,
        ) {
            Outcome::Done((value, how)) => {
                return Got::Served {
                    value,
                    how,
                    refresh: None,
                };
            }
            Outcome::Failed => return served_or_failed(None, fallback),
            Outcome::TimedOut => "its lock was not released in time".to_string(),
            Outcome::StoreFailed(e) => e,
        };
        // A duplicated computation beats a failed request (ARCHITECTURE.md §8.7).
        src.warn(format!(
            "ephpm: computing \"{}\" without stampede protection: {why}",
            String::from_utf8_lossy(lock)
        ));
        let step = compute_and_store(self.windows, src);
        served_or_failed(Some(step), fallback)
    }
}

/// A computation's value, else the fallback, else `Failed`.
fn served_or_failed<V>(step: Option<Step<V>>, fallback: Option<V>) -> Got<V> {
    match (step, fallback) {
        (Some(Step::Got(value)), _) => Got::Served {
            value,
            how: How::Computed,
            refresh: None,
        },
        (_, Some(value)) => Got::Served {
            value,
            how: How::StaleOnError,
            refresh: None,
        },
        (_, None) => Got::Failed,
    }
}

/// Computes a value and stores it with fresh times.
fn compute_and_store<V>(windows: Windows, src: &mut impl Source<V>) -> Step<V> {
    match src.compute() {
        Step::Got((value, ttl)) => {
            if !ttl.is_zero() {
                src.store(&value, Times::new(now_ms(), ttl, windows));
            }
            Step::Got(value)
        }
        Step::Missing | Step::Failed => Step::Failed,
    }
}

/// `make_once`'s hooks for a miss: a servable record is found; a computation stores.
struct Computing<'a, S> {
    src: &'a mut S,
    windows: Windows,
}

impl<V, S: Source<V>> Maker<(V, How)> for Computing<'_, S> {
    fn find(&mut self) -> Step<(V, How)> {
        match self.src.read() {
            Step::Got((times, value)) => match times.phase(now_ms()) {
                Phase::Fresh => Step::Got((value, How::Fresh)),
                Phase::Stale => Step::Got((value, How::Stale)),
                Phase::Expired { .. } => Step::Missing,
            },
            Step::Missing => Step::Missing,
            Step::Failed => Step::Failed,
        }
    }

    fn make(&mut self, _held: &Held) -> Step<(V, How)> {
        match compute_and_store(self.windows, self.src) {
            Step::Got(value) => Step::Got((value, How::Computed)),
            _ => Step::Failed,
        }
    }
}
