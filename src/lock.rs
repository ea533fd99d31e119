//! Token locks over any `Store`: a fresh random token per acquisition, release and extend
//! by compare on that token, a fencing number per acquisition, and waiting that is woken
//! by the release rather than by polling. No PHP here. See ARCHITECTURE.md §8.
//!
//! A waiter re-checks the lock before every sleep and sleeps at most until the lock's
//! TTL runs out, the caller's deadline, or one wait slice (the store bounds each sleep),
//! whichever is first: a release that happened just before the sleep began costs one
//! slice at worst, and a holder that died is waited for at most its TTL.

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::ground::token::{Token, new_token};
use crate::store::{Event, Hit, Result, Retention, Store, Value};

/// A lock this process took: its name, token and fencing number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub name: Vec<u8>,
    pub token: Token,
    pub fence: u64,
}

/// Locks on one store.
#[derive(Clone)]
pub struct Locks {
    store: Arc<dyn Store>,
}

impl Locks {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Locks { store }
    }

    /// Takes the lock, waiting up to `wait` for it to become free. Waiters wait in line
    /// where the store keeps one (`Store::lock_wait`): a release wakes one of them.
    pub fn acquire(&self, name: &[u8], ttl: Duration, wait: Duration) -> Result<Option<Held>> {
        self.acquire_with(name, wait, |token| {
            self.store.lock_acquire(name, token, ttl)
        })
    }

    /// `acquire`, and the value of `key` (a store key: what the lock guards) read the
    /// moment the lock is taken — in the same round trip on a remote store.
    pub fn acquire_and_get(
        &self,
        name: &[u8],
        ttl: Duration,
        wait: Duration,
        key: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Option<(Held, Option<Hit>)>> {
        let mut hit = None;
        let held = self.acquire_with(name, wait, |token| {
            match self.store.lock_acquire_and_get(name, token, ttl, key, out) {
                Ok(taken) => Ok(taken.map(|(fence, h)| {
                    hit = h;
                    fence
                })),
                Err(e) => {
                    // The lock may have been taken before the read failed (a separate
                    // call on some stores): release it by token, which touches nobody
                    // else's, so that the caller's error does not leave it held until
                    // its TTL.
                    let _ = self.store.lock_release(name, token);
                    Err(e)
                }
            }
        })?;
        Ok(held.map(|h| (h, hit)))
    }

    /// Tries `take` with a fresh token, and again each time the store says the lock may
    /// be free, until it returns a fence or `wait` passes.
    fn acquire_with(
        &self,
        name: &[u8],
        wait: Duration,
        mut take: impl FnMut(&Token) -> Result<Option<u64>>,
    ) -> Result<Option<Held>> {
        let deadline = Instant::now() + wait;
        let token = new_token();
        let mut waited = false;
        loop {
            if let Some(fence) = take(&token)? {
                return Ok(Some(Held {
                    name: name.to_vec(),
                    token,
                    fence,
                }));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                // A try (no wait asked for) that finds the lock held is neither.
                if waited {
                    self.store.note(Event::LockTimeout);
                }
                return Ok(None);
            }
            if !waited {
                waited = true;
                self.store.note(Event::LockWait);
            }
            if crate::fault::on("broadcast-wakeups") {
                // Every waiter woken by every release, as before the lines (for the
                // tests that count wake-ups to be seen failing).
                self.wait_until_free(name, left)?;
            } else {
                self.store.lock_wait(name, left)?;
            }
        }
    }

    /// Counts `event` in the store (`Store::note`): for callers that wait on their own
    /// terms (`memo::make_once`).
    pub fn note(&self, event: Event) {
        self.store.note(event);
    }

    /// Waits until the lock may be free — it was released or changed hands, or its holder's
    /// TTL ran out — or `timeout` passes (false). Every waiter wakes at a release, which
    /// is what MemoLock's waiters want: they all look for the value its holder made.
    /// Callers race for it again: a wake-up costs the store one call (the race), not a
    /// look and then a race.
    pub fn wait_until_free(&self, name: &[u8], timeout: Duration) -> Result<bool> {
        crate::store::wait_for_release(&*self.store, name, timeout)
    }

    /// Extends a held lock to `ttl` from now; false when it is no longer ours.
    pub fn extend(&self, held: &Held, ttl: Duration) -> Result<bool> {
        self.store.lock_extend(&held.name, &held.token, ttl)
    }

    /// Writes `key` (a store key) only while `held` is still ours, extending the lock to
    /// `ttl` from now — one atomic step on a remote store; false (nothing written) when
    /// the lock is no longer ours.
    pub fn set_if_held(
        &self,
        held: &Held,
        ttl: Duration,
        key: &[u8],
        value: Value<'_>,
        value_ttl: Option<Duration>,
        retention: Retention,
    ) -> Result<bool> {
        self.store.set_if_locked(
            &held.name,
            &held.token,
            ttl,
            key,
            value,
            value_ttl,
            retention,
        )
    }

    /// Releases a held lock; false when it was no longer ours (it expired, and maybe
    /// somebody else holds it now: their lock is untouched).
    pub fn release(&self, held: &Held) -> Result<bool> {
        self.store.lock_release(&held.name, &held.token)
    }

    /// Whether `held` still holds its lock.
    pub fn is_held(&self, held: &Held) -> Result<bool> {
        let mut ours = false;
        self.store.read(&held.name, &mut |v| {
            ours = matches!(v, crate::store::Value::Str(t) if t == held.token);
        })?;
        Ok(ours)
    }
}
