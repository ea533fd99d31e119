//! Read/write locks on shm: `ground::rwstate::apply` on the lock's entry under its shard
//! lock, so reading the state, deciding and writing it back are one step. The entry is
//! pinned (a lock: never evicted before it expires) and expires with its last holder.
//! A grant's fence is the new entry's version (the shard's write sequence), as for
//! exclusive locks: it never goes back, across releases and expiries.

use std::time::Duration;

use super::ShmStore;
use super::clock::LazyNow;
use super::layout::{FLAG_PINNED, KIND_STR};
use super::shard::Encoded;
use crate::ground::rwstate::Outcome;
use crate::ground::rwstate::{self, Change, Op};
use crate::store::Result;

const NS_PER_MS: u64 = 1_000_000;

impl ShmStore {
    /// Locking: the lock's shard lock, once; wakes the key's waiters after releasing it
    /// when the lock changed.
    pub(super) fn rw_apply(&self, name: &[u8], op: &Op) -> Result<Outcome> {
        if crate::fault::on("broken-atomicity") {
            return self.rw_apply_split(name, op);
        }
        self.locked(name, |g, hash| {
            let mut now = LazyNow::new(&self.clock);
            let mut stored = Vec::new();
            let version = g.read(hash, name, &mut now, |e| {
                // A compressed value was written by something else; it cannot be a state.
                stored.extend_from_slice(if e.kind == KIND_STR && !e.compressed {
                    e.bytes
                } else {
                    b"-"
                });
                e.version
            });
            let now_ns = now.get();
            let (change, outcome) =
                rwstate::apply(version.map(|_| &stored[..]), op, now_ns / NS_PER_MS, 0)?;
            match change {
                Change::Keep => {}
                Change::Delete { .. } => {
                    g.del(hash, name, &mut now);
                }
                Change::Write { state, ttl, .. } => {
                    let bytes = rwstate::encode(&state);
                    let v = Encoded {
                        kind: KIND_STR,
                        flags: FLAG_PINNED,
                        bytes: &bytes,
                        raw_len: bytes.len() as u32,
                    };
                    g.set(hash, name, v, deadline(now_ns, ttl), &mut now)
                        .map_err(|f| self.full(f))?;
                }
            }
            Ok(match outcome {
                Outcome::Acquired { .. } => Outcome::Acquired {
                    fence: g.version(hash, name, &mut now),
                },
                Outcome::Busy { left, .. } => Outcome::Busy {
                    left,
                    version: version.unwrap_or(0),
                },
                other => other,
            })
        })
    }

    /// The same decision with the read and the write under two separate shard locks,
    /// for `make prove-tests-can-fail`: two callers can both decide on the state they
    /// read, and both be granted.
    fn rw_apply_split(&self, name: &[u8], op: &Op) -> Result<Outcome> {
        use crate::store::{Store, Value};
        let mut stored = Vec::new();
        let hit = self.get(name, &mut stored)?;
        let now_ns = self.clock.now_ns();
        let (change, outcome) =
            rwstate::apply(hit.map(|_| &stored[..]), op, now_ns / NS_PER_MS, 0)?;
        std::thread::yield_now();
        match change {
            Change::Keep => {}
            Change::Delete { .. } => {
                self.del(name)?;
            }
            Change::Write { state, ttl, .. } => {
                self.set(name, Value::Str(&rwstate::encode(&state)), Some(ttl))?;
            }
        }
        let version = self.get(name, &mut Vec::new())?.map_or(0, |h| h.version);
        Ok(match outcome {
            Outcome::Acquired { .. } => Outcome::Acquired { fence: version },
            Outcome::Busy { left, .. } => Outcome::Busy {
                left,
                version: hit.map_or(0, |h| h.version),
            },
            other => other,
        })
    }
}

/// The store's expiry (monotonic ns) `ttl` after `now_ns`.
fn deadline(now_ns: u64, ttl: Duration) -> u64 {
    now_ns.saturating_add(ttl.as_nanos().min(u64::MAX as u128) as u64)
}
