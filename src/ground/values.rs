//! The values and answers the `Store` trait speaks: what `set` stores, what `get` finds,
//! what an entry is to eviction, what a key's lifetime is.

use std::mem::MaybeUninit;
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

/// Where a get copies a string-like value. Room of the value's exact length is asked for
/// before its bytes are copied, so that the caller can hand out the memory the value ends
/// up in (the PHP layer: the new PHP string) and the value is copied once, not into a
/// buffer and again out of it.
///
/// A lock-free read may ask more than once (a writer moved the entry meanwhile: the next
/// try asks again, maybe for another length); only the last room asked for holds the
/// value. No lock is held while `room` runs on a lock-free read; on any other path the
/// bytes are copied into a buffer first and into the room after the lock is released.
pub trait Room {
    /// `len` bytes for a value of kind `kind` (`Str` or `Serialized`), or `None` to refuse
    /// it (the caller's memory is short, say): the read then copies nothing and still
    /// reports the hit, which the caller knows it refused.
    fn room(&mut self, len: usize, kind: Fetched) -> Option<&mut [MaybeUninit<u8>]>;

    /// Says the bytes of the last `room` are written.
    ///
    /// # Safety
    /// All `len` bytes of the last `room(len, _)` have been initialised.
    unsafe fn filled(&mut self, len: usize);

    /// Whether the room may be given a value's bytes as the store keeps them, packed, for
    /// the store to unpack afterwards: only a buffer of the engine's own. Any other room
    /// is given the value unpacked.
    fn takes_packed(&self) -> bool {
        false
    }
}

/// A reusable buffer: the room is its spare capacity.
impl Room for Vec<u8> {
    #[inline]
    fn room(&mut self, len: usize, _kind: Fetched) -> Option<&mut [MaybeUninit<u8>]> {
        self.clear();
        self.reserve(len);
        Some(&mut self.spare_capacity_mut()[..len])
    }

    #[inline]
    unsafe fn filled(&mut self, len: usize) {
        // SAFETY: `room` reserved `len` bytes, which the caller says are initialised.
        unsafe { self.set_len(len) }
    }

    fn takes_packed(&self) -> bool {
        true
    }
}

/// Copies `bytes`, a value of kind `kind`, into `room` (unless the room refuses it).
pub fn fill(room: &mut (impl Room + ?Sized), kind: Fetched, bytes: &[u8]) {
    if let Some(dst) = room.room(bytes.len(), kind) {
        // SAFETY: `dst` is `bytes.len()` writable bytes of the room's own memory, which
        // cannot overlap `bytes` (we hold `room` mutably while `bytes` is borrowed).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst.as_mut_ptr().cast(), bytes.len());
            room.filled(bytes.len());
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
