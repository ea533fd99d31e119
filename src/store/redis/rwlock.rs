//! Read/write locks on Redis: the state is one string key, decided in Rust by
//! `ground::rwstate::apply`, then swapped in by a script only if the key still holds the
//! bytes decided on (`scripts::RW_SWAP`); a swap that lost a race answers the current
//! state and the server's clock, and the caller decides again. The rules live once, in
//! Rust, rather than again in Lua.
//!
//! Time is the server's (`TIME`), so hosts with skewed clocks agree on every holder's
//! expiry. Fences are the state's counter floored by the server's clock in µs, and a
//! state nobody holds any more is kept `FENCE_KEEP` with its counter instead of deleted,
//! as the exclusive locks' counter is. A release, or a demotion, publishes on the key's
//! channel for the waiters.
//!
//! # One round trip per change
//! The process remembers, per lock, the state it last saw or wrote and the server's
//! clock it last read. A change (acquire, extend, release) is decided on that and sent
//! as one swap: the swap itself checks the remembered state is still the key's, so a
//! stale memory costs a retry, never a wrong grant. The clock is estimated as the one
//! read plus the local monotonic time since the answer arrived: never ahead of the
//! server's (the TIME was read before the answer left), so a live holder is never taken
//! for expired; a memory older than `ANCHOR_FOR` is read afresh. An answer that changes
//! nothing (a refusal, a probe, a stale token's release) is only ever given on a fresh
//! read: a remembered state may be out of date.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use redis::Value as Reply;

use super::keys;
use super::scripts;
use super::{FENCE_KEEP, RedisStore, millis};
use crate::ground::rwstate::Outcome;
use crate::ground::rwstate::{self, Change, Op, State};
use crate::store::bytes::fingerprint;
use crate::store::{Result, StoreError};

/// Swaps that may lose a race before the operation gives up as unavailable: each loss
/// means another caller's operation went through, so this is never reached by a fair
/// number of callers.
const MAX_RACES: usize = 1000;
/// How long a remembered server clock is used before it is read again.
const ANCHOR_FOR: Duration = Duration::from_secs(1);
/// Locks remembered per process before the memory is dropped and started afresh.
const REMEMBERED: usize = 4096;

/// A lock's state as last seen, and the server's clock then.
#[derive(Clone)]
struct Seen {
    stored: Option<Vec<u8>>,
    server_us: u64,
    at: Instant,
    /// Read from the server just now, not remembered from an earlier operation.
    fresh: bool,
}

impl Seen {
    fn now_us(&self) -> u64 {
        self.server_us + self.at.elapsed().as_micros() as u64
    }
}

/// A lock as this process names it: the server's address and the full key.
type Memo = (String, Vec<u8>);

/// What this process last saw of each lock.
static SEEN: LazyLock<Mutex<HashMap<Memo, Seen>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

impl RedisStore {
    pub(super) fn rw_apply(&self, name: &[u8], op: &Op) -> Result<Outcome> {
        let full = self.key(name);
        let channel = keys::derived(&full, keys::WAKE);
        let memo = (self.dsn.address.clone(), full.clone());
        let remembered = {
            let seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
            seen.get(&memo)
                .filter(|s| s.at.elapsed() < ANCHOR_FOR)
                .cloned()
        };
        let mut seen = match remembered {
            Some(s) => Seen { fresh: false, ..s },
            None => self.read_state(&full)?,
        };
        for _ in 0..MAX_RACES {
            let now_us = seen.now_us();
            let (change, outcome) =
                rwstate::apply(seen.stored.as_deref(), op, now_us / 1000, now_us)?;
            let (next, ttl, frees) = match change {
                Change::Keep if !seen.fresh => {
                    seen = self.read_state(&full)?;
                    continue;
                }
                Change::Keep => {
                    remember(memo, seen.clone());
                    return Ok(match outcome {
                        Outcome::Busy { left, .. } => Outcome::Busy {
                            left,
                            version: seen.stored.as_deref().map_or(0, fingerprint),
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
            let next = rwstate::encode(&next);
            let publish: &[u8] = if frees { &channel } else { b"" };
            let expected = seen.stored.as_deref().unwrap_or(b"");
            match self.swap(&full, expected, &next, millis(ttl), publish)? {
                None => {
                    remember(
                        memo,
                        Seen {
                            stored: Some(next),
                            ..seen
                        },
                    );
                    return Ok(outcome);
                }
                Some(current) => seen = current,
            }
        }
        Err(StoreError::Unavailable {
            address: self.dsn.address.clone(),
            cause: format!("the read/write lock kept changing over {MAX_RACES} tries"),
        })
    }

    /// The lock's state and the server's clock, in one round trip.
    fn read_state(&self, full: &[u8]) -> Result<Seen> {
        let reply: Vec<Reply> =
            self.run_idempotent(|c| scripts::RW_READ.key(full).invoke(&mut c.con))?;
        seen_in(&reply).ok_or_else(|| self.odd_reply(&reply))
    }

    /// Stores `next` if the key still holds `expected`: `None` when it did, else what
    /// the key holds now.
    fn swap(
        &self,
        full: &[u8],
        expected: &[u8],
        next: &[u8],
        ttl_ms: u64,
        publish: &[u8],
    ) -> Result<Option<Seen>> {
        if crate::fault::on("broken-atomicity") {
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
                    p.cmd(c.publish.command()).arg(publish).arg("").ignore();
                }
                p.query::<()>(&mut c.con).map(|()| None)
            });
        }
        let reply: Vec<Reply> = self.run(|c| {
            scripts::RW_SWAP
                .key(full)
                .arg(expected)
                .arg(next)
                .arg(ttl_ms)
                .arg(publish)
                .arg(c.publish.command())
                .invoke(&mut c.con)
        })?;
        match reply.first() {
            Some(Reply::Int(1)) => Ok(None),
            Some(Reply::Int(0)) => seen_in(&reply[1..])
                .map(Some)
                .ok_or_else(|| self.odd_reply(&reply)),
            _ => Err(self.odd_reply(&reply)),
        }
    }

    fn odd_reply(&self, reply: &[Reply]) -> StoreError {
        StoreError::Remote {
            address: self.dsn.address.clone(),
            reply: format!("an answer the read/write lock script never gives: {reply:?}"),
        }
    }
}

/// What the scripts answer for a state they read: `{exists, state, seconds, micros}`.
fn seen_in(reply: &[Reply]) -> Option<Seen> {
    let int = |r: Option<&Reply>| match r {
        Some(Reply::Int(n)) => Some(*n as u64),
        Some(Reply::BulkString(b)) => std::str::from_utf8(b).ok()?.parse().ok(),
        _ => None,
    };
    let (Some(exists), Some(Reply::BulkString(v)), Some(secs), Some(micros)) = (
        int(reply.first()),
        reply.get(1),
        int(reply.get(2)),
        int(reply.get(3)),
    ) else {
        return None;
    };
    Some(Seen {
        stored: (exists == 1).then(|| v.clone()),
        server_us: secs * 1_000_000 + micros,
        at: Instant::now(),
        fresh: true,
    })
}

/// Remembers a lock's state for this process's next operation on it.
fn remember(memo: Memo, seen: Seen) {
    let mut all = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if all.len() >= REMEMBERED && !all.contains_key(&memo) {
        all.clear();
    }
    all.insert(memo, seen);
}
