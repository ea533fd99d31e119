//! The PHP binding: the only part of the crate that knows PHP. Each file is one class or
//! function family with a `register` step; none holds logic the engine could hold.
//!
//! - `kv.rs`         `Ephpm\Kv`
//! - `lock.rs`       `Ephpm\Lock`, `Ephpm\KeepAlive`
//! - `memo_lock.rs`  `Ephpm\MemoLock`
//! - `stale_cache.rs` `Ephpm\StaleCache`, and the refreshes it defers past the response
//! - `session.rs`    the save handler `ephpm` and `Ephpm\SessionHandler`
//! - `functions.rs`  the ePHPm-compatible `ephpm_kv_*` functions
//! - `deploy.rs`     the request-start look at the release number (`ephpm deploy`)
//! - `admin.rs`      `ephpm_store_remove()`, the operator's resize or reset of a host store
//! - `error.rs`      engine errors to PHP exceptions; `Ephpm\StoreException`, `Ephpm\StoreFull`
//! - `convert.rs`    PHP values to engine values and back (PHP's serializer for arrays/objects)
//! - `call.rs`       argument checking with PHP's own rules and wording
//! - `userland.rs`   guarded calls into PHP code (closures, methods, loggers)
//! - `ini.rs`, `info.rs`  settings and `php --ri ephpm`
//! - `ffi.rs`        the few PHP C functions ext-php-rs does not bind

#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod admin;
mod call;
mod class;
mod convert;
mod deploy;
mod error;
mod ffi;
pub mod functions;
pub mod info;
pub mod ini;
pub mod iterator;
pub mod kv;
pub mod lock;
pub mod memo_lock;
pub mod session;
pub mod stale_cache;
mod string_room;
mod userland;

use crate::keyspace::Keyspace;
use crate::store::{self, StoreError};

/// Opens a keyspace on the store `dsn` names (`ephpm.dsn` when `None`), raising the
/// warnings of its opening (a segment that had to be replaced) as E_WARNING.
pub fn open_keyspace(dsn: Option<&[u8]>, prefix: &[u8]) -> store::Result<Keyspace> {
    let config = ini::config();
    let dsn = match dsn {
        Some(bytes) => std::str::from_utf8(bytes).map_err(|_| {
            StoreError::Dsn(crate::ground::dsn::DsnError::Malformed(
                String::from_utf8_lossy(bytes).into(),
            ))
        })?,
        None => config.dsn.as_str(),
    };
    let (store, warnings) = crate::open::open(dsn, &config)?;
    for w in warnings {
        error::warn(&w);
    }
    Ok(Keyspace::new(store, prefix))
}

/// MINIT: ini entries and the exception classes. Nothing here starts a thread or maps
/// memory: the FPM master forks after it.
pub unsafe extern "C" fn startup(_ty: i32, module_number: i32) -> i32 {
    ini::register(module_number);
    // The cluster node a PHP process may run logs to stderr (the FPM log): RUST_LOG's
    // levels, info by default. No thread starts.
    crate::logging::init("ephpm", None);
    // A test build's fault points are read here, in php-fpm's master, before its workers
    // fork and clear their environment (nothing in other builds).
    crate::fault::configure();
    crate::store::shm::notice::quiet_corruption_panics();
    if !session::register_save_handler() {
        error::warn("ephpm: cannot register the session save handler \"ephpm\"");
    }
    match error::register() {
        Ok(()) => 0,
        Err(e) => {
            error::warn(&format!(
                "ephpm: cannot register its exception classes: {e}"
            ));
            -1
        }
    }
}

/// RINIT: a deploy (`ephpm.deploys`) is acted on before the request compiles anything.
pub unsafe extern "C" fn request_startup(_ty: i32, _module_number: i32) -> i32 {
    deploy::at_request_start();
    0
}

/// RSHUTDOWN: nothing of a request outlives it (StaleCache's deferred refreshes that never
/// ran give their elections back; the default store of the ephpm_kv_* functions is
/// looked up again by the next request's settings).
pub unsafe extern "C" fn request_shutdown(_ty: i32, _module_number: i32) -> i32 {
    stale_cache::release_undone();
    functions::forget_default();
    0
}

/// MSHUTDOWN: stops the background runtime (the Redis subscriber, a cluster node), if
/// this process started one, then gives up the node's lease for the next process.
pub unsafe extern "C" fn shutdown(_ty: i32, _module_number: i32) -> i32 {
    crate::runtime::shutdown();
    crate::cluster::lease::give_up();
    0
}
