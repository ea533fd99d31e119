//! The data plane's sessions: every TCP connection between two nodes agrees keys of its
//! own, so that nothing recorded on the wire executes again.
//!
//! # Protocol (version V; 2 is the first, `wire/version.rs`)
//!
//! The initiator writes its hello as soon as the connection is up; the responder reads
//! it, then answers with its own:
//!
//! 1. initiator → responder: `hello = "ephpmD" ‖ '0'+V ‖ "\n" ‖ Ni[32]`
//! 2. responder → initiator: `hello = "ephpmD" ‖ '0'+V ‖ "\n" ‖ Nr[32]`
//!
//! `V` is the version the initiator chose: the highest that both sides know, from the
//! versions the responder publishes in its gossip state (`wire/version.rs`). The
//! responder answers in `V` when it knows it; when it does not, it answers with its own
//! highest version and closes the connection, and each side reports both versions
//! (`Refused::Version`). Version 2's hello is the one builds from before versions were
//! negotiated send (`"ephpmD2\n"`): they write theirs without waiting, and expect
//! exactly it, which a responder that reads first and answers in 2 gives them.
//!
//! `Ni` and `Nr` are 32 fresh random bytes (getrandom) per connection. Each side derives,
//! from the cluster secret `S` and both nonces:
//!
//! - `PRK = HKDF-Extract(salt = Ni ‖ Nr, IKM = S)` (HKDF-SHA256)
//! - `K_ir = HKDF-Expand(PRK, "ephpm-data-vV initiator->responder", 32)`
//! - `K_ri = HKDF-Expand(PRK, "ephpm-data-vV responder->initiator", 32)`
//!
//! so that keys of one version never open another's frames.
//!
//! From then on everything is a frame `[length u32 BE][seq u64 BE][ChaCha20-Poly1305]`,
//! sealed with the key of its direction under the nonce `0u32 ‖ seq` (seq big-endian);
//! seq counts 0, 1, 2… per direction. The first frame each way proves the secret:
//!
//! 3. initiator → responder: seq 0, `"ephpm-data-vV initiator"`, under `K_ir`
//! 4. responder → initiator: seq 0, `"ephpm-data-vV responder"`, under `K_ri`
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
use crate::wire::version::{self, Version};

/// The first bytes of either side's hello: the protocol, then its version (`magic`).
const MAGIC_PREFIX: &[u8; 6] = b"ephpmD";
const MAGIC_LEN: usize = 8;
const NONCE_LEN: usize = 32;
const HELLO_LEN: usize = MAGIC_LEN + NONCE_LEN;
/// The largest frame read before the peer has proven the secret (message 3 is 47).
pub const HANDSHAKE_MAX: usize = 64 << 10;
const SEQ_LEN: usize = 8;

/// The hello's first bytes in version `v`: `"ephpmD2\n"` for 2.
pub fn magic(v: Version) -> [u8; MAGIC_LEN] {
    let mut m = [0u8; MAGIC_LEN];
    m[..6].copy_from_slice(MAGIC_PREFIX);
    m[6] = b'0'.saturating_add(v);
    m[7] = b'\n';
    m
}

/// The version a hello's first bytes name, or `None` when they are not a hello.
fn version_of(m: &[u8]) -> Option<Version> {
    if m.len() != MAGIC_LEN || &m[..6] != MAGIC_PREFIX || m[7] != b'\n' {
        return None;
    }
    m[6].checked_sub(b'0').filter(|&v| v > 0)
}

/// What the initiator proves in version `v` (message 3), and the responder (message 4).
fn confirm(v: Version, side: &str) -> Vec<u8> {
    format!("ephpm-data-v{v} {side}").into_bytes()
}

/// Why a session refused a connection or a frame.
#[derive(Debug)]
pub enum Refused {
    Io(io::Error),
    /// Not sealed with the session's key: another secret, a replay of another
    /// connection, or not a node at all.
    Unauthentic,
    /// Authentic perhaps, but not the next frame: replayed, reordered or one was dropped.
    OutOfOrder,
    /// A hello in a version the receiver does not speak: `theirs`, where the receiver
    /// speaks `ours` (the versions it knows, or the one it asked for).
    Version {
        theirs: Version,
        ours: Vec<Version>,
    },
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
            Refused::Version { theirs, ours } => write!(
                f,
                "the other side speaks data-plane version {theirs}, this node {}",
                version::named(ours)
            ),
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

/// The keys and sequence numbers of one connection, and the version it speaks; `None`
/// when the cluster runs without authentication (then no version is named either).
pub struct Session {
    keys: Option<(Direction, Direction)>,
    version: Option<Version>,
}

impl Session {
    /// The version the handshake agreed on; `None` without authentication.
    pub fn version(&self) -> Option<Version> {
        self.version
    }

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

/// The two keys of `secret` in version `v` for this pair of nonces:
/// (initiator→responder, back).
fn derive(
    secret: &[u8],
    v: Version,
    ni: &[u8; NONCE_LEN],
    nr: &[u8; NONCE_LEN],
) -> (Direction, Direction) {
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
        key(format!("ephpm-data-v{v} initiator->responder").as_bytes()),
        key(format!("ephpm-data-v{v} responder->initiator").as_bytes()),
    )
}

fn fresh_nonce() -> [u8; NONCE_LEN] {
    let mut n = [0u8; NONCE_LEN];
    for chunk in n.chunks_mut(8) {
        chunk.copy_from_slice(&super::random_u64().to_le_bytes());
    }
    n
}

fn hello(v: Version, nonce: &[u8; NONCE_LEN]) -> [u8; HELLO_LEN] {
    let mut hello = [0u8; HELLO_LEN];
    hello[..MAGIC_LEN].copy_from_slice(&magic(v));
    hello[MAGIC_LEN..].copy_from_slice(nonce);
    hello
}

/// Reads the other side's hello: its version and nonce.
async fn read_hello(
    conn: &mut (impl AsyncRead + AsyncWrite + Unpin),
) -> Result<(Version, [u8; NONCE_LEN]), Refused> {
    let mut theirs = [0u8; HELLO_LEN];
    conn.read_exact(&mut theirs).await?;
    let v = version_of(&theirs[..MAGIC_LEN]).ok_or(Refused::Unauthentic)?;
    let mut nonce = [0u8; NONCE_LEN];
    nonce.copy_from_slice(&theirs[MAGIC_LEN..]);
    Ok((v, nonce))
}

/// The connecting side's handshake in version `v` (the highest both sides know:
/// `version::choose`), with the first of `secrets`.
pub async fn initiate(
    conn: &mut (impl AsyncRead + AsyncWrite + Unpin),
    secrets: &[Vec<u8>],
    v: Version,
) -> Result<Session, Refused> {
    let Some(secret) = secrets.first() else {
        return Ok(Session {
            keys: None,
            version: None,
        });
    };
    let ni = fresh_nonce();
    conn.write_all(&hello(v, &ni)).await?;
    let (answered, nr) = read_hello(conn).await?;
    if answered != v {
        return Err(Refused::Version {
            theirs: answered,
            ours: vec![v],
        });
    }
    let (send, recv) = derive(secret, v, &ni, &nr);
    let mut session = Session {
        keys: Some((send, recv)),
        version: Some(v),
    };
    let proof = session.seal(&confirm(v, "initiator"));
    wire::write_frame_async(conn, &proof).await?;
    let answer = wire::read_frame_async_max(conn, HANDSHAKE_MAX).await?;
    match session.open(&answer)? {
        plain if plain == confirm(v, "responder") => Ok(session),
        _ => Err(Refused::Unauthentic),
    }
}

/// The accepting side's handshake, in the version the initiator asked for when it is
/// one of `versions` (those this node knows), with whichever of `secrets` the initiator
/// used.
pub async fn respond(
    conn: &mut (impl AsyncRead + AsyncWrite + Unpin),
    secrets: &[Vec<u8>],
    versions: &[Version],
) -> Result<Session, Refused> {
    if secrets.is_empty() {
        return Ok(Session {
            keys: None,
            version: None,
        });
    }
    let (v, ni) = read_hello(conn).await?;
    let nr = fresh_nonce();
    if !versions.contains(&v) {
        // Our own highest version, so that the initiator can say what we speak.
        let ours = versions.iter().copied().max().unwrap_or(version::LEGACY);
        conn.write_all(&hello(ours, &nr)).await?;
        return Err(Refused::Version {
            theirs: v,
            ours: versions.to_vec(),
        });
    }
    conn.write_all(&hello(v, &nr)).await?;
    let proof = wire::read_frame_async_max(conn, HANDSHAKE_MAX).await?;
    // Each secret's keys in turn: the initiator proved one of them (see "Rotation").
    for secret in secrets {
        let (recv, send) = derive(secret, v, &ni, &nr);
        let mut session = Session {
            keys: Some((send, recv)),
            version: Some(v),
        };
        if let Ok(plain) = session.open(&proof) {
            if plain != confirm(v, "initiator") {
                return Err(Refused::Unauthentic);
            }
            let answer = session.seal(&confirm(v, "responder"));
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
        pair_in(a, 2, b, &[2])
    }

    /// An initiator with secrets `a` asking for version `v`, a responder with `b` that
    /// knows `versions`.
    fn pair_in(
        a: &[Vec<u8>],
        v: Version,
        b: &[Vec<u8>],
        versions: &[Version],
    ) -> (Result<Session, Refused>, Result<Session, Refused>) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            // Each side owns its end, so one that gives up closes it for the other.
            let (mut x, mut y) = tokio::io::duplex(1 << 16);
            tokio::join!(async move { initiate(&mut x, a, v).await }, async move {
                respond(&mut y, b, versions).await
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

    #[test]
    fn the_version_asked_for_is_spoken_and_one_the_responder_lacks_is_refused_naming_both() {
        let s = vec![b"0123456789abcdef".to_vec()];
        assert_eq!(
            &magic(2),
            b"ephpmD2\n",
            "version 2's hello is the legacy one"
        );
        for v in [2, 3] {
            let (i, r) = pair_in(&s, v, &s, &[2, 3]);
            let (mut i, mut r) = (i.unwrap(), r.unwrap());
            assert_eq!(r.open(&i.seal(b"req")).unwrap(), b"req");
        }
        // Keys of one version never open another's: a responder that answered in 3
        // while the initiator asked for 2 is refused, and the other way round.
        let (i, r) = pair_in(&s, 9, &s, &[2, 3]);
        match (i, r) {
            (
                Err(Refused::Version { theirs: 3, ours: i }),
                Err(Refused::Version { theirs: 9, ours: r }),
            ) => {
                assert_eq!(i, [9]);
                assert_eq!(r, [2, 3]);
                let said = Refused::Version { theirs: 9, ours: r }.to_string();
                assert!(said.contains('9') && said.contains("2, 3"), "{said}");
            }
            (i, r) => panic!("not refused for the version: {:?} {:?}", i.err(), r.err()),
        }
        let (i, r) = pair_in(&s, 3, &s, &[2]);
        assert!(matches!(i, Err(Refused::Version { theirs: 2, .. })));
        assert!(matches!(r, Err(Refused::Version { theirs: 3, .. })));
    }
}
