//! `Store::scan` on Redis: one SCAN a call, then one pipeline that reads each key's TTL,
//! size and lock fence.
//!
//! On a Redis Cluster the SCAN walks every master in turn (a SCAN sees one node's keys):
//! the cursor carries the master's index, in slot order, above that master's own cursor.
//! A failover or resharding during a walk can show a key twice or miss one that moved,
//! as SCAN itself may while a server rehashes.

use super::keys;
use super::{KeyTtl, RedisStore, Result, ScanEntry};

/// How many keys a SCAN call is asked to look at.
const SCAN_COUNT: usize = 500;
/// Where a cluster cursor keeps the master's index: a server's own SCAN cursor counts
/// hash-table buckets (Redis 7.4+ adds 14 bits of slot), far below 2^48.
const MASTER_SHIFT: u32 = 48;

impl RedisStore {
    /// One SCAN call: the next cursor and the keys (with the DSN's prefix) it found
    /// matching the glob `pattern`.
    pub(super) fn scan_page(
        &self,
        pattern: &[u8],
        cursor: u64,
        count: usize,
    ) -> Result<(u64, Vec<Vec<u8>>)> {
        self.run_idempotent(|c| {
            let masters = c.con.masters()?;
            let index = (cursor >> MASTER_SHIFT) as usize;
            let Some(master) = masters.get(index) else {
                // The cluster has fewer masters than when the walk began: it is over.
                return Ok((0, Vec::new()));
            };
            let mut scan = redis::cmd("SCAN");
            scan.arg(cursor & ((1 << MASTER_SHIFT) - 1))
                .arg("MATCH")
                .arg(pattern)
                .arg("COUNT")
                .arg(count);
            let (next, found): (u64, Vec<Vec<u8>>) = c.con.on_master(master, &scan)?;
            let next = match next {
                n if n >> MASTER_SHIFT != 0 => {
                    return Err(redis::RedisError::from((
                        redis::ErrorKind::Extension,
                        "SCAN returned a cursor too large to walk several masters",
                    )));
                }
                0 if index + 1 < masters.len() => ((index + 1) as u64) << MASTER_SHIFT,
                0 => 0,
                n => (index as u64) << MASTER_SHIFT | n,
            };
            Ok((next, found))
        })
    }

    pub(super) fn scan_batch(
        &self,
        prefix: &[u8],
        cursor: u64,
        out: &mut Vec<ScanEntry>,
    ) -> Result<u64> {
        let mut pattern = keys::glob_escape(&self.key(prefix));
        pattern.push(b'*');
        let (next, found) = self.scan_page(&pattern, cursor, SCAN_COUNT)?;
        // A lock's fencing counter is a key of its own (with an empty prefix it matches
        // too): it is shown as its lock's fence, not as an entry.
        let events = self.key(keys::EVENTS);
        let found: Vec<Vec<u8>> = found
            .into_iter()
            .filter(|k| !k.ends_with(keys::FENCE) && *k != events)
            .collect();
        if found.is_empty() {
            return Ok(next);
        }
        let mut reads = Vec::with_capacity(found.len() * 3);
        for key in &found {
            reads.push(redis::cmd("PTTL").arg(key).clone());
            reads.push(redis::cmd("STRLEN").arg(key).clone());
            reads.push(
                redis::cmd("GET")
                    .arg(keys::derived(key, keys::FENCE))
                    .clone(),
            );
        }
        let replies: Vec<(i64, u64, Option<u64>)> =
            self.run_idempotent(|c| c.con.pipeline(reads.clone()))?;
        let dsn_prefix = self.dsn.prefix.len();
        for (key, (pttl, size, fence)) in found.into_iter().zip(replies) {
            let ttl = match pttl {
                -2 => continue, // gone since the SCAN
                -1 => KeyTtl::Persistent,
                ms => KeyTtl::Remaining(std::time::Duration::from_millis(ms.unsigned_abs())),
            };
            out.push(ScanEntry {
                key: key[dsn_prefix..].to_vec(),
                ttl,
                size,
                // A key with a fencing counter and a lifetime is a held lock (a lock is
                // taken with a TTL and its key deleted on release).
                fence: fence.filter(|_| pttl >= 0),
            });
        }
        Ok(next)
    }
}
