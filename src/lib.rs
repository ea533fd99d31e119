//! ephpm: a host-wide key/value store for PHP, with token locks and stampede protection.
//!
//! # Layout
//! The major components are:
//! - `store`     the `Store` trait every backend implements, DSN parsing, and the
//!   backends: `store::shm` (the host-wide shared-memory store) and `store::redis`
//!   (a Redis or Valkey server, for a fleet)
//! - `keyspace`  a store seen through a key prefix, with the key rules of the PHP API
//! - `lock`      token locks over any store: tokens, fencing, waiting woken by release
//! - `rwlock`    read/write (shared) locks over any store: readers share, a writer
//!   excludes, promotion and demotion as symfony/lock defines them
//! - `memo`      making a thing once across processes (MemoLock's wrapper and once())
//! - `stale`     stale-while-revalidate and stale-if-error (StaleCache)
//! - `session`   the locking session handler behind both PHP entry points
//! - `cluster`   the gossip cluster's node: membership, placement, owner-decided
//!   writes, replication and hand-off (`store::cluster` is its PHP processes' side)
//! - `resp`      (feature `node`) the store over the Redis protocol, for `ephpm-resp`;
//!   `resp_probe` asks a running one how it is (php --ri, the CLI)
//! - `runtime`   the background tokio runtime: one per process, lazy, fork-aware
//! - `codec`     lz4 compression of large values
//! - `config`    the process's settings and the parsing of their values
//! - `php`       (feature `php`) the PHP extension: classes, functions, ini, phpinfo.
//!   The only module that knows PHP; everything above is tested with `cargo test`.

pub mod cluster;
pub mod codec;
pub mod config;
pub mod keyspace;
pub mod lock;
pub mod memo;
#[cfg(feature = "node")]
pub mod resp;
pub mod resp_probe;
pub mod runtime;
pub mod rwlock;
pub mod session;
pub mod stale;
pub mod store;

#[cfg(feature = "php")]
mod php;

#[cfg(feature = "php")]
use ext_php_rs::prelude::*;

/// The module: ini and exceptions at startup, then the classes and functions.
#[cfg(feature = "php")]
#[php_module]
pub fn get_module(module: ModuleBuilder) -> ModuleBuilder {
    let module = module
        .startup_function(php::startup)
        .request_shutdown_function(php::request_shutdown)
        .shutdown_function(php::shutdown)
        .info_function(php::info::module_info);
    php::admin::register(php::functions::register(
        module
            .class::<php::kv::Kv>()
            .class::<php::iterator::KvIterator>()
            .class::<php::lock::Lock>()
            .class::<php::lock::KeepAlive>()
            .class::<php::memo_lock::MemoLock>()
            .class::<php::stale_cache::StaleCache>()
            .class::<php::session::SessionHandler>(),
    ))
}
