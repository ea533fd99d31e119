//! The data plane's sessions: every TCP connection between two nodes agrees keys of its
//! own, so that nothing recorded on the wire executes again.
//!
//! # Protocol (version 2)
//!
//! Both sides write their hello as soon as the connection is up, then read the other's:
//!
//! 1. initiator → responder: `hello = MAGIC[8] ‖ Ni[32]`
//! 2. responder → initiator: `hello = MAGIC[8] ‖ Nr[32]`
//!
//! `Ni` and `Nr` are 32 fresh random bytes (getrandom) per connection. Each side derives,
//! from the cluster secret `S` and both nonces:
//!
//! - `PRK = HKDF-Extract(salt = Ni ‖ Nr, IKM = S)` (HKDF-SHA256)
//! - `K_ir = HKDF-Expand(PRK, "ephpm-data-v2 initiator->responder", 32)`
//! - `K_ri = HKDF-Expand(PRK, "ephpm-data-v2 responder->initiator", 32)`
//!
//! From then on everything is a frame `[length u32 BE][seq u64 BE][ChaCha20-Poly1305]`,
//! sealed with the key of its direction under the nonce `0u32 ‖ seq` (seq big-endian);
//! seq counts 0, 1, 2… per direction. The first frame each way proves the secret:
//!
//! 3. initiator → responder: seq 0, `CONFIRM_I`, under `K_ir`
//! 4. responder → initiator: seq 0, `CONFIRM_R`, under `K_ri`
//!
//! then requests (initiator → responder, seq 1, 2…) and responses (seq 1, 2…).
//!
//! **Rotation.** The initiator derives its keys from its first secret (the one that
//! signs). The responder does not know which secret that was: it derives the keys of
//! each of its secrets in turn and keeps the first whose `K_ir` opens message 3, and
//! answers with that same secret's `K_ri`. A fleet moving from secret A to B in three
//! rolling steps — `A,B` on every node, then `B,A`, then `B` — never fails a handshake:
//! at every moment each responder holds every initiator's first secret. (Going straight
//! from `A` to `B,A` would not: a node still on `A` alone cannot answer one that
//! already signs with B — nor open its gossip.)
//!
//! **Why a replay fails.** Recorded frames replayed on a new connection meet a fresh
//! nonce of the other side, hence other keys: they fail authentication (message 3 first,
//! so the connection ends before any request is read). On the same connection a frame
//! is accepted only with the next sequence number of its direction: a duplicate, a
//! reordered or a dropped frame is refused and the connection closed. The two
//! directions have distinct keys, so a frame reflected back to its sender fails too.
//! A peer without the secret cannot produce message 3 or 4, so both sides are
//! authenticated before a request is read or a response trusted. Before message 3
//! opens, the responder reads 40 bytes and one frame of at most `HANDSHAKE_MAX` bytes.
//!
//! **What it does not protect.** No forward secrecy: whoever learns a secret and holds a
//! recording of past connections can derive their keys (both nonces travel in the
//! clear) and read and forge them. Lengths and timing of frames are visible. An on-path
//! attacker can still drop, delay or cut connections (a denial of service, never a
//! wrong answer). Any holder of the secret is a full member of the cluster.
//!
//! Without secrets (`allow_insecure_no_auth`) there is no handshake: frames pass plain,
//! without sequence numbers.

use std::io;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use hkdf::Hkdf;
use sha2::Sha256;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::wire;

/// The first bytes of either side's hello: the protocol and its version.
pub const MAGIC: [u8; 8] = *b"ephpmD2\n";
const NONCE_LEN: usize = 32;
const HELLO_LEN: usize = MAGIC.len() + NONCE_LEN;
/// The largest frame read before the peer has proven the secret (message 3 is 47).
pub const HANDSHAKE_MAX: usize = 64 << 10;
const CONFIRM_I: &[u8] = b"ephpm-data-v2 initiator";
const CONFIRM_R: &[u8] = b"ephpm-data-v2 responder";
const SEQ_LEN: usize = 8;

/// Why a session refused a connection or a frame.
#[derive(Debug)]
pub enum Refused {
    Io(io::Error),
    /// Not sealed with the session's key: another secret, a replay of another
    /// connection, or not a node at all.
    Unauthentic,
    /// Authentic perhaps, but not the next frame: replayed, reordered or one was dropped.
    OutOfOrder,
}

impl From<io::Error> for Refused {
    fn from(e: io::Error) -> Self {
        Refused::Io(e)
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Io(e) => e.fmt(f),
            Refused::Unauthentic => f.write_str("a frame that fails authentication"),
            Refused::OutOfOrder => f.write_str("a frame out of order (replayed?)"),
        }
    }
}

/// One direction of a session: its key and the sequence number of its next frame.
struct Direction {
    cipher: ChaCha20Poly1305,
    seq: u64,
}

impl Direction {
    fn nonce(seq: u64) -> Nonce {
        let mut n = [0u8; 12];
        n[4..].copy_from_slice(&seq.to_be_bytes());
        Nonce::from(n)
    }
}

/// The keys and sequence numbers of one connection; `None` when the cluster runs
/// without authentication.
pub struct Session {
    keys: Option<(Direction, Direction)>,
}

impl Session {
    /// A frame body for `plain`: `[seq][ciphertext and tag]`.
    pub fn seal(&mut self, plain: &[u8]) -> Vec<u8> {
        let Some((send, _)) = &mut self.keys else {
            return plain.to_vec();
        };
        let seq = send.seq;
        send.seq += 1;
        let sealed = send
            .cipher
            .encrypt(&Direction::nonce(seq), plain)
            .expect("ChaCha20-Poly1305 encrypts any message below 256 GiB");
        let mut out = Vec::with_capacity(SEQ_LEN + sealed.len());
        out.extend_from_slice(&seq.to_be_bytes());
        out.extend_from_slice(&sealed);
        out
    }

    /// The plain message of the next frame of the other side.
    pub fn open(&mut self, frame: &[u8]) -> Result<Vec<u8>, Refused> {
        let Some((_, recv)) = &mut self.keys else {
            return Ok(frame.to_vec());
        };
        let (seq, body) = frame
            .split_at_checked(SEQ_LEN)
            .ok_or(Refused::Unauthentic)?;
        let seq = u64::from_be_bytes(seq.try_into().map_err(|_| Refused::Unauthentic)?);
        if seq != recv.seq {
            return Err(Refused::OutOfOrder);
        }
        let plain = recv
            .cipher
            .decrypt(&Direction::nonce(seq), Payload::from(body))
            .map_err(|_| Refused::Unauthentic)?;
        recv.seq += 1;
        Ok(plain)
    }
}

/// The two keys of `secret` for this pair of nonces: (initiator→responder, back).
fn derive(secret: &[u8], ni: &[u8; NONCE_LEN], nr: &[u8; NONCE_LEN]) -> (Direction, Direction) {
    let mut salt = [0u8; 2 * NONCE_LEN];
    salt[..NONCE_LEN].copy_from_slice(ni);
    salt[NONCE_LEN..].copy_from_slice(nr);
    let prk = Hkdf::<Sha256>::new(Some(&salt), secret);
    let key = |info: &[u8]| {
        let mut k = [0u8; 32];
        prk.expand(info, &mut k)
            .expect("32 bytes is a valid HKDF-SHA256 output length");
        Direction {
            cipher: ChaCha20Poly1305::new(&Key::from(k)),
            seq: 0,
        }
    };
    (
        key(b"ephpm-data-v2 initiator->responder"),
        key(b"ephpm-data-v2 responder->initiator"),
    )
}

fn fresh_nonce() -> [u8; NONCE_LEN] {
    let mut n = [0u8; NONCE_LEN];
    for chunk in n.chunks_mut(8) {
        chunk.copy_from_slice(&super::random_u64().to_le_bytes());
    }
    n
}

/// Writes our hello and reads the other side's nonce.
async fn hellos(
    conn: &mut (impl AsyncRead + AsyncWrite + Unpin),
    ours: &[u8; NONCE_LEN],
) -> Result<[u8; NONCE_LEN], Refused> {
    let mut hello = [0u8; HELLO_LEN];
    hello[..MAGIC.len()].copy_from_slice(&MAGIC);
    hello[MAGIC.len()..].copy_from_slice(ours);
    conn.write_all(&hello).await?;
    let mut theirs = [0u8; HELLO_LEN];
    conn.read_exact(&mut theirs).await?;
    if theirs[..MAGIC.len()] != MAGIC {
        return Err(Refused::Unauthentic);
    }
    let mut nonce = [0u8; NONCE_LEN];
    nonce.copy_from_slice(&theirs[MAGIC.len()..]);
    Ok(nonce)
}

/// The connecting side's handshake, with the first of `secrets`.
pub async fn initiate(
    conn: &mut (impl AsyncRead + AsyncWrite + Unpin),
    secrets: &[Vec<u8>],
) -> Result<Session, Refused> {
    let Some(secret) = secrets.first() else {
        return Ok(Session { keys: None });
    };
    let ni = fresh_nonce();
    let nr = hellos(conn, &ni).await?;
    let (send, recv) = derive(secret, &ni, &nr);
    let mut session = Session {
        keys: Some((send, recv)),
    };
    let confirm = session.seal(CONFIRM_I);
    wire::write_frame_async(conn, &confirm).await?;
    let answer = wire::read_frame_async_max(conn, HANDSHAKE_MAX).await?;
    match session.open(&answer)? {
        plain if plain == CONFIRM_R => Ok(session),
        _ => Err(Refused::Unauthentic),
    }
}

/// The accepting side's handshake: whichever of `secrets` the initiator used.
pub async fn respond(
    conn: &mut (impl AsyncRead + AsyncWrite + Unpin),
    secrets: &[Vec<u8>],
) -> Result<Session, Refused> {
    if secrets.is_empty() {
        return Ok(Session { keys: None });
    }
    let nr = fresh_nonce();
    let ni = hellos(conn, &nr).await?;
    let confirm = wire::read_frame_async_max(conn, HANDSHAKE_MAX).await?;
    // Each secret's keys in turn: the initiator proved one of them (see "Rotation").
    for secret in secrets {
        let (recv, send) = derive(secret, &ni, &nr);
        let mut session = Session {
            keys: Some((send, recv)),
        };
        if let Ok(plain) = session.open(&confirm) {
            if plain != CONFIRM_I {
                return Err(Refused::Unauthentic);
            }
            let answer = session.seal(CONFIRM_R);
            wire::write_frame_async(conn, &answer).await?;
            return Ok(session);
        }
    }
    Err(Refused::Unauthentic)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(a: &[Vec<u8>], b: &[Vec<u8>]) -> (Result<Session, Refused>, Result<Session, Refused>) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            // Each side owns its end, so one that gives up closes it for the other.
            let (mut x, mut y) = tokio::io::duplex(1 << 16);
            tokio::join!(async move { initiate(&mut x, a).await }, async move {
                respond(&mut y, b).await
            })
        })
    }

    #[test]
    fn sessions_agree_and_refuse_replays_reorders_and_reflections() {
        let s = vec![b"0123456789abcdef".to_vec()];
        let (i, r) = pair(&s, &s);
        let (mut i, mut r) = (i.unwrap(), r.unwrap());
        let one = i.seal(b"one");
        let two = i.seal(b"two");
        assert!(matches!(r.open(&two), Err(Refused::OutOfOrder)));
        assert_eq!(r.open(&one).unwrap(), b"one");
        assert!(matches!(r.open(&one), Err(Refused::OutOfOrder)));
        assert_eq!(r.open(&two).unwrap(), b"two");
        assert_eq!(i.open(&r.seal(b"back")).unwrap(), b"back");
        // A frame reflected to its sender: the number it expects, the other key.
        let (i2, _) = pair(&s, &s);
        let mut i2 = i2.unwrap();
        let reflected = i2.seal(b"x");
        assert!(matches!(i2.open(&reflected), Err(Refused::Unauthentic)));
        // A frame of another session with the same secret.
        let (other, _) = pair(&s, &s);
        let mut other = other.unwrap();
        let _ = other.seal(b"x");
        let _ = other.seal(b"y");
        assert!(matches!(
            r.open(&other.seal(b"z")),
            Err(Refused::Unauthentic)
        ));
    }

    #[test]
    fn a_responder_accepts_any_of_its_secrets_and_answers_with_it() {
        let old = b"old-secret-0123456789".to_vec();
        let new = b"new-secret-0123456789".to_vec();
        let (i, r) = pair(std::slice::from_ref(&new), &[old.clone(), new.clone()]);
        let (mut i, mut r) = (i.unwrap(), r.unwrap());
        assert_eq!(r.open(&i.seal(b"req")).unwrap(), b"req");
        assert_eq!(i.open(&r.seal(b"resp")).unwrap(), b"resp");
        let (i, r) = pair(std::slice::from_ref(&old), std::slice::from_ref(&new));
        assert!(matches!(r, Err(Refused::Unauthentic)));
        assert!(i.is_err());
    }
}
