//! The Redis keys and channels of an ephpm key: the DSN's prefix goes before every one,
//! and a lock's fencing counter, wake-up channel and waiters' line are named after the
//! lock so that they share its Redis Cluster hash slot.

/// The suffix of a lock's fencing counter.
pub const FENCE: &[u8] = b":ephpm:fence";
/// The suffix of a key's wake-up channel (published on release and compare-and-delete).
pub const WAKE: &[u8] = b":ephpm:wake";
/// The suffix of a lock's line of waiters (`queue.rs`).
pub const QUEUE: &[u8] = b":ephpm:queue";

/// The hash (after the DSN's prefix) where `Store::note` counts events for every
/// process; `scan` leaves it out, as it leaves out fencing counters.
pub const EVENTS: &[u8] = b"{ephpm}:ephpm:events";

/// `key` with the DSN's prefix.
pub fn full(prefix: &[u8], key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(prefix.len() + key.len());
    k.extend_from_slice(prefix);
    k.extend_from_slice(key);
    k
}

/// A name derived from the full key `key` that lands in the same hash slot: Redis hashes
/// only a key's first `{tag}` when it has one, so a key with a tag keeps it, and a key
/// without becomes the tag. (A key with a `}` but no tag cannot be wrapped; such names are
/// left as they are, which matters only on Redis Cluster.)
pub fn derived(key: &[u8], suffix: &[u8]) -> Vec<u8> {
    let mut d = Vec::with_capacity(key.len() + suffix.len() + 2);
    if hash_tag(key).is_some() || key.contains(&b'}') {
        d.extend_from_slice(key);
    } else {
        d.push(b'{');
        d.extend_from_slice(key);
        d.push(b'}');
    }
    d.extend_from_slice(suffix);
    d
}

/// The part of `key` Redis Cluster hashes when it is not the whole key.
fn hash_tag(key: &[u8]) -> Option<&[u8]> {
    let open = key.iter().position(|&b| b == b'{')?;
    let len = key[open + 1..].iter().position(|&b| b == b'}')?;
    (len > 0).then(|| &key[open + 1..open + 1 + len])
}

/// Escapes glob characters, for `SCAN MATCH`.
pub fn glob_escape(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 1);
    for &b in bytes {
        if matches!(b, b'*' | b'?' | b'[' | b']' | b'\\') {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes Redis Cluster hashes for `key` (CRC16 of this picks the slot).
    fn hashed(key: &[u8]) -> &[u8] {
        hash_tag(key).unwrap_or(key)
    }

    #[test]
    fn derived_names_hash_like_their_key() {
        for key in [&b"session_lock:abc"[..], b"a{b}c", b"{{a}", b"a{"] {
            assert_eq!(
                hashed(&derived(key, FENCE)),
                hashed(key),
                "{}",
                String::from_utf8_lossy(key)
            );
        }
        assert_eq!(derived(b"job", WAKE), b"{job}:ephpm:wake");
        assert_eq!(derived(b"a{b}", FENCE), b"a{b}:ephpm:fence");
    }

    #[test]
    fn globs_are_escaped() {
        assert_eq!(glob_escape(b"a*b?[c]\\"), b"a\\*b\\?\\[c\\]\\\\");
    }
}
