//! `Store::scan` on Redis: one SCAN a call, then one pipeline that reads each key's TTL,
//! size and lock fence.

use super::keys;
use super::{KeyTtl, RedisStore, Result, ScanEntry};

/// How many keys a SCAN call is asked to look at.
const SCAN_COUNT: usize = 500;

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
            redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(pattern)
                .arg("COUNT")
                .arg(count)
                .query(&mut c.con)
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
        let found: Vec<Vec<u8>> = found
            .into_iter()
            .filter(|k| !k.ends_with(keys::FENCE))
            .collect();
        if found.is_empty() {
            return Ok(next);
        }
        let mut pipe = redis::pipe();
        for key in &found {
            pipe.cmd("PTTL").arg(key);
            pipe.cmd("STRLEN").arg(key);
            pipe.cmd("GET").arg(keys::derived(key, keys::FENCE));
        }
        let replies: Vec<(i64, u64, Option<u64>)> =
            self.run_idempotent(|c| pipe.query(&mut c.con))?;
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
