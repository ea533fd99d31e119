//! The request-start look at the store's release number (`crate::deploy`), with
//! `ephpm.deploys` on: a new number clears this worker's stat and realpath caches, and
//! the first worker of its php-fpm master to see it invalidates every script in the
//! master's OPcache, so that the next compile reads the files the deploy put in place
//! (through a swapped symlink too) even with `opcache.validate_timestamps=0`. A store
//! that cannot be read leaves the request alone: a deploy watch never fails a request.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicI64, Ordering};

use ext_php_rs::types::Zval;
use ext_php_rs::zend::ExecuteData;

use super::call::run;
use super::{ini, open_keyspace, userland};
use crate::deploy;
use crate::keyspace::Keyspace;

/// The release this process last acted on; `i64::MIN` before its first request.
static SEEN: AtomicI64 = AtomicI64::new(i64::MIN);

/// RINIT, with `ephpm.deploys` on.
pub fn at_request_start() {
    if ini::number(c"ephpm.deploys") == 0.0 {
        return;
    }
    let Some(space) = watched_space() else {
        return;
    };
    let Ok(release) = deploy::current(&space) else {
        return;
    };
    let before = SEEN.swap(release, Ordering::Relaxed);
    if before == release || before == i64::MIN && release == 0 {
        return;
    }
    // A worker started after the deploy has empty caches of its own, but its master's
    // OPcache may still hold the old scripts: it takes part like any other.
    let _ = userland::call_function("clearstatcache", vec![&true]);
    // SAFETY: getppid has no preconditions; under php-fpm it is the worker's master.
    let master = unsafe { libc::getppid() } as u32;
    let key = deploy::master_key(release, &host_name(), master);
    if deploy::claim_master(&space, &key).unwrap_or(false) {
        invalidate_opcache();
        let _ = deploy::master_done(&space, &key);
    } else {
        let _ = deploy::await_master(&space, &key, AWAIT_CLAIMANT);
    }
}

/// The longest a worker waits for the one invalidating its master's OPcache: far more
/// than marking a few thousand scripts takes, short enough that a claimant killed
/// meanwhile delays each other worker's first request once by no more.
const AWAIT_CLAIMANT: std::time::Duration = std::time::Duration::from_secs(2);

thread_local! {
    /// The store this process watches, with the two settings that named it: opened
    /// once, not at every request (building the settings and finding the open store
    /// cost more than the read itself), and again when a request's settings name
    /// another (PERDIR: a `.user.ini` may).
    static WATCHED: RefCell<Option<(String, String, Rc<Keyspace>)>> = const { RefCell::new(None) };
}

/// The default store as this request's settings name it; `None` when it cannot be opened.
fn watched_space() -> Option<Rc<Keyspace>> {
    let (dsn, name) = (ini::string(c"ephpm.dsn"), ini::string(c"ephpm.store_name"));
    WATCHED.with(|w| {
        let mut w = w.borrow_mut();
        if let Some((d, n, space)) = w.as_ref()
            && *d == dsn
            && *n == name
        {
            return Some(space.clone());
        }
        let space = Rc::new(open_keyspace(None, b"").ok()?);
        *w = Some((dsn, name, space.clone()));
        Some(space)
    })
}

/// Marks every script in OPcache stale (`opcache_invalidate(…, true)`): at once, unlike
/// `opcache_reset()`, which waits until no request uses the cache, so the request that
/// does it already compiles the new files. Nothing when OPcache is not loaded.
fn invalidate_opcache() {
    let Some(status) = userland::call_function("opcache_get_status", vec![&true]) else {
        return;
    };
    let Some(scripts) = status
        .array()
        .and_then(|a| a.get("scripts"))
        .and_then(Zval::array)
    else {
        return;
    };
    for (path, _) in scripts {
        let path = path.to_string();
        let _ = userland::call_function("opcache_invalidate", vec![&path, &true]);
    }
}

fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: a writable buffer of its stated length; gethostname NUL-terminates a name
    // that fits and we read up to the first NUL only.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The release this process last acted on at a request start; `None` before its first
/// request with `ephpm.deploys` on.
pub fn seen() -> Option<i64> {
    Some(SEEN.load(Ordering::Relaxed)).filter(|&n| n != i64::MIN)
}

/// `ephpm_release(): int`: the release number this process last acted on at a request
/// start (`ephpm.deploys` on), else the store's now; 0 before the first deploy.
pub extern "C" fn release(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        if super::call::Call::new(ex, 0, 0).is_none() {
            return;
        }
        let release = match seen() {
            Some(seen) => seen,
            None => match open_keyspace(None, b"").and_then(|s| deploy::current(&s)) {
                Ok(n) => n,
                Err(e) => return super::error::throw(&e, 0, "ephpm_release()"),
            },
        };
        rv.set_long(release);
    })
}
