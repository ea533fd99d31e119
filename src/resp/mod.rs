//! A Redis-protocol (RESP2 and RESP3) server in front of any store: redis-cli, phpredis,
//! Predis, redis-py, a Node client — any Redis client — reads and writes the store that
//! PHP processes share, and takes the same token locks (`commands/locks.rs`).
//!
//! It is its own command, `ephpm-resp`, not a part of `ephpm-node`: a host store
//! (`shm://`) needs no cluster node, and a fleet's store (`cluster://`) is served through
//! the host's node as a PHP process reaches it (SET NX, DELIFEQ and locks decided by each
//! key's owner). One more door to the store is one more process an operator turns on
//! deliberately, with its own unit, its own socket and its own rights.
//!
//! - `parse`   requests off the wire, bounded before and after AUTH
//! - `reply`   replies in RESP2 or RESP3
//! - `text`    how PHP's typed values read to a Redis client (one data model)
//! - `glob`    KEYS / SCAN MATCH / PSUBSCRIBE patterns
//! - `server`  what connections share; `conn` one connection, `state` what it keeps
//!   between requests; `listen` the sockets
//! - `pubsub`  PUBLISH/SUBSCRIBE among this server's clients
//! - `commands` the command table and every command

pub mod commands;
pub mod conn;
pub mod glob;
pub mod listen;
pub mod parse;
pub mod pubsub;
pub mod reply;
pub mod server;
pub mod state;
pub mod text;

/// Locks a mutex, taking over one a panicking thread left poisoned (the data is plain):
/// one command's panic never wedges the server.
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
