//! The values and answers the `Store` trait speaks: what `set` stores, what `get` finds,
//! what an entry is to eviction, what a key's lifetime is.

use std::time::Duration;

/// A value: what `set` stores, and what `read` shows (borrowed from the store for the
/// duration of the callback). Strings are bytes; `Serialized` is the PHP layer's
/// serializer output (arrays, objects), opaque to the engine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Str(&'a [u8]),
    Serialized(&'a [u8]),
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
}

/// The kind of a value read by `get`; for `Str` and `Serialized` the bytes are in the
/// buffer passed to `get`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fetched {
    Str,
    Serialized,
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
}

impl Value<'_> {
    /// Copies the value out: its kind, and for strings its bytes into `out` (cleared).
    pub fn copy_into(self, out: &mut Vec<u8>) -> Fetched {
        out.clear();
        match self {
            Value::Str(b) => {
                out.extend_from_slice(b);
                Fetched::Str
            }
            Value::Serialized(b) => {
                out.extend_from_slice(b);
                Fetched::Serialized
            }
            Value::Int(n) => Fetched::Int(n),
            Value::Float(x) => Fetched::Float(x),
            Value::Bool(b) => Fetched::Bool(b),
            Value::Null => Fetched::Null,
        }
    }
}

impl Fetched {
    /// The value again, its bytes (for `Str` and `Serialized`) being `bytes`.
    pub fn with(self, bytes: &[u8]) -> Value<'_> {
        match self {
            Fetched::Str => Value::Str(bytes),
            Fetched::Serialized => Value::Serialized(bytes),
            Fetched::Int(n) => Value::Int(n),
            Fetched::Float(x) => Value::Float(x),
            Fetched::Bool(b) => Value::Bool(b),
            Fetched::Null => Value::Null,
        }
    }
}

/// An entry as `Store::scan` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanEntry {
    /// The key as the store holds it (a Keyspace's prefix included, a DSN's not).
    pub key: Vec<u8>,
    /// `Persistent` or `Remaining`.
    pub ttl: KeyTtl,
    /// The value's size in bytes, as stored.
    pub size: u64,
    /// For a held lock (an entry added with a TTL, which is never evicted before it
    /// expires), its fencing number.
    pub fence: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub value: Fetched,
    pub version: u64,
}

/// What an entry is to a store that must evict to make room: the order it gives entries
/// up in, first to last. A lock is never evicted before it expires, whatever its class.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Retention {
    /// A name claimed that holds nothing yet: a new session's id (`reserve`), a session
    /// with no data (an anonymous visitor's). Losing one loses nothing but the name.
    Anonymous,
    /// An ordinary entry: `set`, `set_nx`, everything a cache holds.
    #[default]
    Cache,
    /// A written session: a logged-in user, whom losing it logs out.
    Session,
}

/// The outcome of `set_nx`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetNx {
    Inserted,
    Exists,
}

/// A key's remaining lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyTtl {
    Missing,
    Persistent,
    Remaining(Duration),
}
