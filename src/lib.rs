//! ephpm: a host-wide key/value store for PHP, with token locks and stampede protection.
//!
//! # Layout, from the ground up
//! Each floor uses only the floors below it (`tests/layers.rs` checks every `crate::`
//! path against this order):
//!
//! 1. `ground`    the vocabulary: `Value`, `KeyTtl`, `Stats`, `StoreError`, DSNs, lock
//!    tokens, the read/write lock's state machine. With it, needing nothing but std and
//!    each other: `codec` (lz4 of large values), `config` (the process's settings),
//!    `runtime` (the background tokio runtime: one per process, lazy, fork-aware),
//!    `logging` (where the long-running parts' log lines go), `fault` (the points where
//!    `make prove-tests-can-fail` switches a guarantee off; nothing in other builds)
//! 2. `store`     the `Store` trait, and `store::bytes` (values as bytes for remote stores)
//! 3. the backends, beside each other: `store::shm` (the host's shared memory) and
//!    `store::redis` (Redis, Valkey, Sentinel, Redis Cluster)
//! 4. `wire`      what the gossip cluster's node and its client share (frames, entries,
//!    the socket's peer, paths); it stands on `store::shm`, whose segment both read
//! 5. `store::cluster` (the `cluster://` client) and `cluster` (the node: membership,
//!    placement, owner-decided writes, replication, hand-off), beside each other
//! 6. `open`      a DSN to a store: picks the backend, starts a node for `cluster://`
//! 7. over the trait: `keyspace` (a prefix and the PHP API's key rules), `lock` (token
//!    locks), `rwlock` (read/write locks), `memo` (MemoLock), `stale` (StaleCache),
//!    `session` (the locking session handler), `deploy` (the release number `ephpm
//!    deploy` raises), `resp_probe` (asks a running ephpm-resp)
//! 8. `resp`      (feature `node`) the store over the Redis protocol, for `ephpm-resp`
//! 9. `php`       (feature `php`) the PHP extension: the only module that knows PHP;
//!    everything below it is tested with `cargo test`.

pub mod cluster;
pub mod codec;
pub mod config;
pub mod deploy;
pub mod fault;
pub mod ground;
pub mod keyspace;
pub mod lock;
pub mod logging;
pub mod memo;
pub mod open;
#[cfg(feature = "node")]
pub mod resp;
pub mod resp_probe;
pub mod runtime;
pub mod rwlock;
pub mod session;
pub mod stale;
pub mod store;
pub mod wire;

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
        .request_startup_function(php::request_startup)
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
