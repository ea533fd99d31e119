//! The ground floor: the vocabulary every store, backend and algorithm above speaks, and
//! nothing else. No file here names a module outside `ground` (`tests/layers.rs` checks
//! it), so a backend, the cluster or the PHP layer can change without this moving.
//!
//! - `values`   what a store holds and answers: `Value`, `Fetched`, `Hit`, `KeyTtl`, …
//! - `stats`    a store's counters
//! - `fleet`    a cluster node's view of its fleet's health (`Health`, `Member`)
//! - `error`    `StoreError` and `Result`, backends' own errors carried as sources
//! - `dsn`      the DSNs that name a store, parsed
//! - `token`    a lock holder's token
//! - `rwstate`  the read/write lock's state machine, a pure function every backend runs
//! - `wall`     the wall clock: the time since the epoch

pub mod dsn;
pub mod error;
pub mod fleet;
pub mod rwstate;
pub mod stats;
pub mod token;
pub mod values;
pub mod wall;

pub use error::{BoxedError, Result, StoreError};
pub use stats::{Event, ShardFill, Stats};
pub use token::{Token, new_token};
pub use values::{Fetched, Hit, KeyTtl, Retention, Room, ScanEntry, SetNx, Value, fill};
