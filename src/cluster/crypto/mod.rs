//! Sealing what crosses the network, with ChaCha20-Poly1305 and keys derived from
//! `ephpm.cluster.secret` by HKDF-SHA256.
//!
//! - Gossip datagrams (`Sealer`): one key per secret, labelled for gossip only. A sealed
//!   datagram is `[nonce 12][ciphertext][tag 16]`; one that fails authentication is
//!   dropped by the caller, and freshness (no replays) is `gossip/freshness.rs`'s job.
//! - Data-plane connections (`handshake.rs`): keys of their own per connection, agreed
//!   from both sides' nonces, and a sequence number per frame.
//!
//! Gossip nonces are a random 64-bit prefix drawn per process and a 32-bit counter:
//! unique per key as long as no two processes draw the same prefix (odds about n²/2⁶⁵).
//! A new prefix is drawn when the counter wraps.

pub mod handshake;

use std::sync::Mutex;

use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use hkdf::Hkdf;
use sha2::Sha256;

/// What sealing adds to a message.
pub const OVERHEAD: usize = 12 + 16;

const SALT: &[u8] = b"ephpm-cluster";
/// v2: datagrams carry a freshness header (`gossip/freshness.rs`); a v1 node's are
/// refused as unauthentic rather than misread.
const GOSSIP_INFO: &[u8] = b"ephpm-gossip-v2";

/// The gossip keys, one per secret: the first seals, every one opens (a fleet in
/// the middle of a rotation, see `secrets.rs`). None when the cluster runs without
/// authentication (`ephpm.cluster.allow_insecure_no_auth`): then messages pass as they
/// are.
pub struct Sealer {
    ciphers: Vec<ChaCha20Poly1305>,
}

impl Sealer {
    /// The keys for `secrets`; no secrets means no sealing.
    pub fn new(secrets: &[Vec<u8>]) -> Self {
        let ciphers = secrets
            .iter()
            .map(|secret| {
                let mut key = [0u8; 32];
                Hkdf::<Sha256>::new(Some(SALT), secret)
                    .expand(GOSSIP_INFO, &mut key)
                    .expect("32 bytes is a valid HKDF-SHA256 output length");
                ChaCha20Poly1305::new(&Key::from(key))
            })
            .collect();
        Sealer { ciphers }
    }

    pub fn seal(&self, plain: &[u8]) -> Vec<u8> {
        let Some(cipher) = self.ciphers.first() else {
            return plain.to_vec();
        };
        let nonce = next_nonce();
        let sealed = cipher
            .encrypt(&Nonce::from(nonce), plain)
            .expect("ChaCha20-Poly1305 encrypts any message below 256 GiB");
        let mut out = Vec::with_capacity(OVERHEAD + plain.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        out
    }

    /// The plain message, or `None` when `sealed` was not sealed with this key (or was
    /// altered).
    pub fn open(&self, sealed: &[u8]) -> Option<Vec<u8>> {
        if self.ciphers.is_empty() {
            return Some(sealed.to_vec());
        }
        if sealed.len() < OVERHEAD {
            return None;
        }
        let (nonce, body) = sealed.split_at(12);
        let nonce = Nonce::from(<[u8; 12]>::try_from(nonce).ok()?);
        self.ciphers
            .iter()
            .find_map(|c| c.decrypt(&nonce, body).ok())
    }
}

fn next_nonce() -> [u8; 12] {
    static STATE: Mutex<(u64, u32, u32)> = Mutex::new((0, 0, 0));
    let mut s = STATE.lock().unwrap_or_else(|e| e.into_inner());
    // (prefix, counter, pid that drew the prefix): a forked child draws its own.
    let pid = std::process::id();
    if s.1 == u32::MAX || s.2 != pid {
        *s = (random_u64(), 0, pid);
    }
    s.1 += 1;
    let mut nonce = [0u8; 12];
    nonce[..8].copy_from_slice(&s.0.to_le_bytes());
    nonce[8..].copy_from_slice(&s.1.to_le_bytes());
    nonce
}

/// 64 random bits from the kernel.
pub fn random_u64() -> u64 {
    // As `new_token`: getrandom(2) fails only on a kernel without it.
    getrandom::u64().expect("getrandom(2) failed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_message_opens_only_with_the_same_secret() {
        let a = Sealer::new(&[b"s3cret".to_vec()]);
        let sealed = a.seal(b"hello");
        assert_eq!(sealed.len(), 5 + OVERHEAD);
        assert_eq!(a.open(&sealed).as_deref(), Some(&b"hello"[..]));
        assert_eq!(Sealer::new(&[b"other".to_vec()]).open(&sealed), None);
        // Rotating: a node with (new, old) opens what either seals, and seals with new.
        let both = Sealer::new(&[b"new".to_vec(), b"s3cret".to_vec()]);
        assert_eq!(both.open(&sealed).as_deref(), Some(&b"hello"[..]));
        let from_both = both.seal(b"hi");
        assert_eq!(a.open(&from_both), None);
        assert!(Sealer::new(&[b"new".to_vec()]).open(&from_both).is_some());
        let mut altered = sealed.clone();
        altered[14] ^= 1;
        assert_eq!(a.open(&altered), None);
        assert_eq!(a.open(b"short"), None);
    }

    #[test]
    fn nonces_never_repeat() {
        let a = Sealer::new(&[b"k".to_vec()]);
        let x = a.seal(b"same");
        let y = a.seal(b"same");
        assert_ne!(x[..12], y[..12]);
        assert_ne!(x, y);
    }
}
