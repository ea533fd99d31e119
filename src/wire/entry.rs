//! How the cluster keeps a key in each host's segment: `[stamp u64 BE][flag][value]`.
//!
//! The stamp is the deciding owner's hybrid clock at the write (`clock.rs`): the same on
//! every copy, so copies are compared by it (the later write wins: replication, hand-off
//! and gossip all apply an entry only over an older one), and the version PHP sees is a
//! fingerprint of the whole entry, so it is the same on every host and changes on every
//! write. A delete leaves a tombstone for a grace period, so that an older copy arriving
//! late cannot bring the key back; a large value that lives only at its owner and
//! replicas is announced on gossip by a marker, which replaces (invalidates) any copy a
//! host kept.

use crate::store::{Value, bytes};

const FLAG_VALUE: u8 = 0;
const FLAG_TOMBSTONE: u8 = 1;
const FLAG_ELSEWHERE: u8 = 2;
/// A value that is a lock: every copy is kept pinned (never evicted before it expires).
const FLAG_LOCK: u8 = 3;
const HEADER: usize = 9;

/// What an entry says about its key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum State<'a> {
    Value(Value<'a>),
    /// Deleted at `stamp`.
    Deleted,
    /// Written at `stamp`, too large for gossip: ask the owner.
    Elsewhere,
}

/// An entry holding `value`.
pub fn value(stamp: u64, value: Value<'_>) -> Vec<u8> {
    let mut encoded = Vec::new();
    bytes::encode(value, &mut encoded);
    from_encoded(stamp, &encoded, false)
}

/// An entry holding a value already in its stored form (`bytes::encode`); a lock's
/// when `lock`.
pub fn from_encoded(stamp: u64, encoded: &[u8], lock: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + encoded.len());
    out.extend_from_slice(&stamp.to_be_bytes());
    out.push(if lock { FLAG_LOCK } else { FLAG_VALUE });
    out.extend_from_slice(encoded);
    out
}

pub fn tombstone(stamp: u64) -> Vec<u8> {
    header(stamp, FLAG_TOMBSTONE)
}

/// The marker that stands for `entry` on hosts that do not hold it.
pub fn marker_for(entry: &[u8]) -> Vec<u8> {
    header(stamp(entry).unwrap_or(0), FLAG_ELSEWHERE)
}

fn header(stamp: u64, flag: u8) -> Vec<u8> {
    let mut out = stamp.to_be_bytes().to_vec();
    out.push(flag);
    out
}

/// Whether the entry is a lock's (to be kept pinned).
pub fn is_lock(entry: &[u8]) -> bool {
    entry.get(8) == Some(&FLAG_LOCK)
}

/// The stored form of a value entry's value.
pub fn body(entry: &[u8]) -> &[u8] {
    entry.get(HEADER..).unwrap_or_default()
}

pub fn stamp(entry: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(entry.get(..8)?.try_into().ok()?))
}

/// Reads an entry; `None` when the bytes are not one (never written by a node).
pub fn parse(entry: &[u8]) -> Option<(u64, State<'_>)> {
    let stamp = stamp(entry)?;
    let state = match *entry.get(8)? {
        FLAG_VALUE | FLAG_LOCK => State::Value(bytes::decode(&entry[HEADER..])),
        FLAG_TOMBSTONE => State::Deleted,
        FLAG_ELSEWHERE => State::Elsewhere,
        _ => return None,
    };
    Some((stamp, state))
}

/// Whether `incoming` should replace `current` (absent: yes).
pub fn is_newer(incoming: &[u8], current: Option<&[u8]>) -> bool {
    match current.and_then(stamp) {
        Some(have) => stamp(incoming).is_some_and(|s| s > have),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_order_by_stamp() {
        let v = value(7, Value::Str(b"hello"));
        assert_eq!(parse(&v), Some((7, State::Value(Value::Str(b"hello")))));
        assert_eq!(
            parse(&value(8, Value::Int(-3))).unwrap().1,
            State::Value(Value::Int(-3))
        );
        assert_eq!(parse(&tombstone(9)), Some((9, State::Deleted)));
        let lock = from_encoded(10, b"tok", true);
        assert_eq!(parse(&lock), Some((10, State::Value(Value::Str(b"tok")))));
        assert!(is_lock(&lock) && !is_lock(&v));
        assert_eq!(body(&lock), b"tok");
        assert_eq!(parse(&marker_for(&v)), Some((7, State::Elsewhere)));
        assert_eq!(parse(b"short"), None);
        assert!(is_newer(&tombstone(9), Some(&v)));
        assert!(!is_newer(&v, Some(&tombstone(9))));
        assert!(!is_newer(&v, Some(&v)));
        assert!(is_newer(&v, None));
    }
}
