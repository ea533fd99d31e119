//! Typed values as bytes: how they are kept in Redis strings and in the cluster's
//! entries, and the version a stored form gets.
//!
//! Integers are stored as their canonical decimal text, so that `INCRBY` works on them
//! natively and other clients see numbers. A string is stored as its own bytes whenever
//! that cannot be mistaken for anything else, so tokens and serialized caches look the
//! same to `redis-cli` as they do to PHP. Everything else — and a string that would be
//! ambiguous (it starts with a tag byte, or reads as an integer) — is one tag byte and a
//! payload.

use crate::store::Value;

/// A version from stored bytes: xxh3 in 63 bits (PHP shows versions as positive
/// ints), with 0 kept for "absent".
pub fn fingerprint(stored: &[u8]) -> u64 {
    (xxhash_rust::xxh3::xxh3_64(stored) >> 1).max(1)
}

const TAG_STR: u8 = 0x01;
const TAG_SERIALIZED: u8 = 0x02;
const TAG_FLOAT: u8 = 0x03;
const TAG_BOOL: u8 = 0x04;
const TAG_NULL: u8 = 0x05;

/// Appends the stored form of `value` to `out` (cleared first).
pub fn encode(value: Value<'_>, out: &mut Vec<u8>) {
    out.clear();
    match value {
        Value::Str(b) => {
            if needs_tag(b) {
                out.push(TAG_STR);
            }
            out.extend_from_slice(b);
        }
        Value::Serialized(b) => {
            out.push(TAG_SERIALIZED);
            out.extend_from_slice(b);
        }
        Value::Int(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Value::Float(x) => {
            out.push(TAG_FLOAT);
            out.extend_from_slice(&x.to_bits().to_be_bytes());
        }
        Value::Bool(b) => out.extend_from_slice(&[TAG_BOOL, b as u8]),
        Value::Null => out.push(TAG_NULL),
    }
}

/// Reads a stored form back. Bytes another application wrote read as a string, or as an
/// integer when they are one (unless they happen to start with a tag byte).
pub fn decode(stored: &[u8]) -> Value<'_> {
    match stored.split_first() {
        Some((&TAG_STR, rest)) => Value::Str(rest),
        Some((&TAG_SERIALIZED, rest)) => Value::Serialized(rest),
        Some((&TAG_FLOAT, rest)) if rest.len() == 8 => {
            let mut bits = [0u8; 8];
            bits.copy_from_slice(rest);
            Value::Float(f64::from_bits(u64::from_be_bytes(bits)))
        }
        Some((&TAG_BOOL, [b])) => Value::Bool(*b != 0),
        Some((&TAG_NULL, [])) => Value::Null,
        _ => match canonical_int(stored) {
            Some(n) => Value::Int(n),
            None => Value::Str(stored),
        },
    }
}

/// Whether a string's own bytes would decode as something else.
fn needs_tag(b: &[u8]) -> bool {
    matches!(b.first(), Some(TAG_STR..=TAG_NULL)) || canonical_int(b).is_some()
}

/// The integer `b` spells in exactly the form `i64::to_string` writes (and Redis's
/// INCRBY accepts): no sign but a leading '-', no leading zeros, no spaces.
fn canonical_int(b: &[u8]) -> Option<i64> {
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    let n: i64 = std::str::from_utf8(b).ok()?.parse().ok()?;
    (n.to_string().as_bytes() == b).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(v: Value<'_>) -> Vec<u8> {
        let mut out = Vec::new();
        encode(v, &mut out);
        assert_eq!(decode(&out), v, "{out:?}");
        out
    }

    #[test]
    fn every_kind_comes_back_as_itself() {
        assert_eq!(round_trip(Value::Str(b"token-abc")), b"token-abc");
        assert_eq!(round_trip(Value::Int(-42)), b"-42");
        round_trip(Value::Str(b"42"));
        round_trip(Value::Str(b""));
        round_trip(Value::Str(b"\x01x"));
        round_trip(Value::Serialized(b"a:0:{}"));
        round_trip(Value::Float(1.5));
        round_trip(Value::Float(-0.0));
        round_trip(Value::Bool(true));
        round_trip(Value::Bool(false));
        round_trip(Value::Null);
        round_trip(Value::Int(i64::MIN));
    }

    #[test]
    fn foreign_bytes_read_as_strings_unless_they_are_integers() {
        assert_eq!(decode(b"007"), Value::Str(b"007"));
        assert_eq!(decode(b"+7"), Value::Str(b"+7"));
        assert_eq!(decode(b"7"), Value::Int(7));
        assert_eq!(decode(b"\x03short"), Value::Str(b"\x03short"));
    }
}
