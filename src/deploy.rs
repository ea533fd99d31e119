//! Deploys that reach every worker: a release number in the store, which `ephpm deploy`
//! raises and each PHP worker with `ephpm.deploys` on looks at when a request starts
//! (`php/deploy.rs`). A worker that sees a new number drops its own caches of the file
//! system (PHP's stat and realpath caches); the first worker of each php-fpm master to
//! see it also invalidates the master's OPcache, which all its workers share — once per
//! master, decided in the store (`claim_master`), so that twelve workers do not compile
//! every script twelve times. The engine knows only the keys and the numbers.

use std::time::{Duration, Instant};

use crate::ground::values::{Fetched, SetNx, Value};
use crate::keyspace::Keyspace;
use crate::store::{Result, Store};

/// The store key of the release number: an integer, absent before the first deploy.
pub const RELEASE_KEY: &[u8] = b"ephpm:release";

/// How long a master's claim on a release is kept: long past any worker's next request.
const CLAIM_TTL: Duration = Duration::from_secs(24 * 3600);

/// Raises the release number by one; the new number.
pub fn bump(store: &dyn Store) -> Result<i64> {
    store.incr_by(RELEASE_KEY, 1, None)
}

/// The release number now (0 before the first deploy, or when the key holds anything
/// but an integer).
pub fn current(space: &Keyspace) -> Result<i64> {
    let mut out = Vec::new();
    Ok(match space.get(RELEASE_KEY, &mut out)? {
        Some(hit) => match hit.value {
            Fetched::Int(n) => n,
            _ => 0,
        },
        None => 0,
    })
}

/// The key by which the workers of master `master` on `host` decide who acts on
/// release `release` for the master's OPcache: 0 while that worker works, 1 once done.
pub fn master_key(release: i64, host: &str, master: u32) -> Vec<u8> {
    format!("ephpm:release:{release}:{host}:{master}").into_bytes()
}

/// Whether this process is the first of its master to claim `key` (one `set_nx`): then
/// it invalidates the master's OPcache and says so with [`master_done`].
pub fn claim_master(space: &Keyspace, key: &[u8]) -> Result<bool> {
    Ok(space.set_nx(key, Value::Int(0), Some(CLAIM_TTL))? == SetNx::Inserted)
}

/// Marks the master's OPcache done for the release of `key`.
pub fn master_done(space: &Keyspace, key: &[u8]) -> Result<()> {
    space.set(key, Value::Int(1), Some(CLAIM_TTL))
}

/// Waits until the worker that claimed `key` is done, at most `timeout` (a claimant that
/// died before it said so costs each other worker that long, once): a worker that did
/// not claim must not compile from the master's OPcache before it is invalidated.
pub fn await_master(space: &Keyspace, key: &[u8], timeout: Duration) -> Result<bool> {
    let deadline = Instant::now() + timeout;
    let mut out = Vec::new();
    loop {
        if matches!(space.get(key, &mut out)?, Some(hit) if hit.value == Fetched::Int(1)) {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}
