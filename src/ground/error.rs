//! The one error every store operation returns. A backend's own failure travels as its
//! source (`Segment`, `Cluster`), so this file names no backend's types and sits below
//! all of them; each backend converts its error (`From` beside its own type).

use super::dsn::DsnError;
use super::rwstate::Foreign;

/// A backend's own error, as the source of a `StoreError`.
pub type BoxedError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the key must not be empty")]
    EmptyKey,
    #[error("the key is {0} bytes long; the limit is 65536 bytes")]
    KeyTooLong(usize),
    #[error(
        "the store has no room for this value ({need} bytes needed, one shard holds {capacity}) \
         even after evicting everything that may be evicted"
    )]
    Full { need: u64, capacity: u64 },
    #[error("the value stored at this key is not an integer")]
    NotAnInteger,
    #[error("the increment would overflow a 64-bit integer")]
    Overflow,
    #[error("the store at {address} cannot be reached: {cause}")]
    Unavailable { address: String, cause: String },
    #[error("the store at {address} refused the command: {reply}")]
    Remote { address: String, reply: String },
    /// A host segment failed (the shm backend's error, or the segment under a cluster
    /// node), carried as the source it came as.
    #[error("{0}")]
    Segment(#[source] BoxedError),
    #[error(transparent)]
    Dsn(#[from] DsnError),
    /// The gossip cluster failed or refused (its error, carried as the source).
    #[error("{0}")]
    Cluster(#[source] BoxedError),
    #[error(transparent)]
    NotAnRwLock(#[from] Foreign),
}

pub type Result<T> = std::result::Result<T, StoreError>;
