//! Making a thing once across processes: the algorithm behind `MemoLock`'s cache
//! wrapper (`__invoke`) and `once()`, over the token locks of `lock.rs`. No PHP here: the
//! PHP layer supplies the hooks (look in the pool, compute and publish).
//!
//! One caller wins the thing's lock and makes it; the others sleep until the lock is
//! released (woken by the release, at most the lock's TTL), look for the thing, and race
//! again only if it is still missing. Whether to look before racing and after winning is
//! the caller's plan: a cache wrapper is called after a miss, so it does not look first,
//! and a forced recomputation never looks.

use std::time::{Duration, Instant};

use crate::lock::{Held, Locks};
use crate::store::Event;

/// What a hook produced.
#[derive(Debug, PartialEq)]
pub enum Step<T> {
    /// The thing.
    Got(T),
    /// It is not there (only from `find`).
    Missing,
    /// The hook failed (in PHP: an exception is pending); stop, releasing the lock.
    Failed,
}

/// The caller's side of `make_once`.
pub trait Maker<T> {
    /// Looks for the thing.
    fn find(&mut self) -> Step<T>;
    /// Makes the thing while holding its lock (and publishes it, so that waiters find it).
    fn make(&mut self, held: &Held) -> Step<T>;
}

/// When to look for the thing, and what a wait that runs out means.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub find_first: bool,
    pub find_after_winning: bool,
    pub find_after_waiting: bool,
}

/// How `make_once` ended.
#[derive(Debug, PartialEq)]
pub enum Outcome<T> {
    Done(T),
    /// A hook failed; nothing more was done.
    Failed,
    /// The lock was neither had nor released in time; nothing was made.
    TimedOut,
    /// The lock store failed; nothing was made.
    StoreFailed(String),
}

/// Makes the thing named `name` once among all callers sharing `locks`' store.
pub fn make_once<T>(
    locks: &Locks,
    name: &[u8],
    ttl: Duration,
    wait: Duration,
    plan: Plan,
    maker: &mut impl Maker<T>,
) -> Outcome<T> {
    let deadline = Instant::now() + wait;
    let mut look = plan.find_first;
    let mut waited = false;
    loop {
        if look {
            match maker.find() {
                Step::Got(v) => {
                    // Found after a wait: another process made it, this one did not.
                    if waited {
                        locks.note(Event::StampedeAvoided);
                    }
                    return Outcome::Done(v);
                }
                Step::Failed => return Outcome::Failed,
                Step::Missing => {}
            }
        }
        match locks.acquire(name, ttl, Duration::ZERO) {
            Ok(Some(held)) => {
                let found = if plan.find_after_winning {
                    maker.find()
                } else {
                    Step::Missing
                };
                let step = match found {
                    Step::Missing => maker.make(&held),
                    Step::Got(v) if waited => {
                        locks.note(Event::StampedeAvoided);
                        Step::Got(v)
                    }
                    other => other,
                };
                let _ = locks.release(&held);
                return match step {
                    Step::Got(v) => Outcome::Done(v),
                    _ => Outcome::Failed,
                };
            }
            Ok(None) => {}
            Err(e) => return Outcome::StoreFailed(e.to_string()),
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            if waited {
                locks.note(Event::LockTimeout);
            }
            return Outcome::TimedOut;
        }
        if !waited {
            waited = true;
            locks.note(Event::LockWait);
        }
        if let Err(e) = locks.wait_until_free(name, left) {
            return Outcome::StoreFailed(e.to_string());
        }
        look = plan.find_after_waiting;
    }
}
