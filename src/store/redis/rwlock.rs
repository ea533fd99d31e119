//! Read/write locks on Redis: the state is one string key, decided in Rust by
//! `rwlock::state::apply` on what a GET returned, then swapped in by a script only if
//! the key still holds those bytes (`scripts::RW_SWAP`); a swap that lost a race reads
//! and decides again. Uncontended, an operation is two round trips and the rules live
//! once, in Rust, rather than again in Lua.
//!
//! Time is the server's (`TIME`, read with the state), so hosts with skewed clocks agree
//! on every holder's expiry. Fences are the state's counter floored by the server's
//! clock in µs, and a state nobody holds any more is kept `FENCE_KEEP` with its counter
//! instead of deleted, as the exclusive locks' counter is. A release, or a demotion,
//! publishes on the key's channel for the waiters.

use redis::Value as Reply;

use super::keys;
use super::scripts;
use super::{FENCE_KEEP, RedisStore, millis};
use crate::rwlock::Outcome;
use crate::rwlock::state::{self, Change, Op, State};
use crate::store::bytes::fingerprint;
use crate::store::{Result, StoreError};

/// Swaps that may lose a race before the operation gives up as unavailable: each loss
/// means another caller's operation went through, so this is never reached by a fair
/// number of callers.
const MAX_RACES: usize = 1000;

impl RedisStore {
    pub(super) fn rw_apply(&self, name: &[u8], op: &Op) -> Result<Outcome> {
        let full = self.key(name);
        let channel = keys::derived(&full, keys::WAKE);
        for _ in 0..MAX_RACES {
            let (stored, (secs, micros)): (Option<Vec<u8>>, (u64, u64)) =
                self.run_idempotent(|c| {
                    redis::pipe()
                        .cmd("GET")
                        .arg(&full)
                        .cmd("TIME")
                        .query(&mut c.con)
                })?;
            let now_us = secs * 1_000_000 + micros;
            let (change, outcome) = state::apply(stored.as_deref(), op, now_us / 1000, now_us)?;
            let (next, ttl, frees) = match change {
                Change::Keep => {
                    return Ok(match outcome {
                        Outcome::Busy { left, .. } => Outcome::Busy {
                            left,
                            version: stored.as_deref().map_or(0, fingerprint),
                        },
                        other => other,
                    });
                }
                Change::Write { state, ttl, frees } => (state, ttl + FENCE_KEEP, frees),
                Change::Delete { fence } => (
                    State {
                        fence,
                        ..State::default()
                    },
                    FENCE_KEEP,
                    true,
                ),
            };
            let next = state::encode(&next);
            let publish: &[u8] = if frees { &channel } else { b"" };
            if self.swap(
                &full,
                stored.as_deref().unwrap_or(b""),
                &next,
                millis(ttl),
                publish,
            )? {
                return Ok(outcome);
            }
        }
        Err(StoreError::Unavailable {
            address: self.dsn.address.clone(),
            cause: format!("the read/write lock kept changing over {MAX_RACES} tries"),
        })
    }

    /// Stores `next` if the key still holds `expected`; whether it did.
    fn swap(
        &self,
        full: &[u8],
        expected: &[u8],
        next: &[u8],
        ttl_ms: u64,
        publish: &[u8],
    ) -> Result<bool> {
        #[cfg(feature = "broken-atomicity")]
        {
            // For `make prove-tests-can-fail`: no compare, so two callers that decided on
            // the same state are both granted.
            let _ = expected;
            std::thread::yield_now();
            return self.run(|c| {
                let mut p = redis::pipe();
                p.cmd("SET")
                    .arg(full)
                    .arg(next)
                    .arg("PX")
                    .arg(ttl_ms)
                    .ignore();
                if !publish.is_empty() {
                    p.cmd("PUBLISH").arg(publish).arg("").ignore();
                }
                p.query::<()>(&mut c.con).map(|()| true)
            });
        }
        self.run(|c| {
            scripts::RW_SWAP
                .key(full)
                .arg(expected)
                .arg(next)
                .arg(ttl_ms)
                .arg(publish)
                .invoke::<Reply>(&mut c.con)
                .map(|r| matches!(r, Reply::Int(1)))
        })
    }
}
