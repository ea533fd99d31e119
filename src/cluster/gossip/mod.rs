//! The gossip plane: chitchat membership over a transport that seals every datagram,
//! and the small-value tier carried in each node's gossip state.
//!
//! A node publishes the keys it owns under `k:<base64url key>` with the value
//! `<base64 entry>:<expiry, ms since the epoch, 0 = none>`: the entry itself when it is at
//! most `small_key_threshold` bytes, otherwise a marker that tells other hosts to drop
//! their copy and ask the owner. Deletes are published as tombstone entries (chitchat's
//! own deletes fire no event anywhere), and every host applies what it hears only over
//! an older stamp. Published keys are bounded (`MAX_PUBLISHED`) and collected once
//! expired, or a grace period after their delete, so one node's state stays far below
//! the ~65 KB that one gossip key+value may take (a larger one would stop its gossip).
//!
//! Every datagram is sealed (`crypto/mod.rs`) and carries a freshness header inside the
//! seal (`freshness.rs`): one played again, or later, is dropped and counted.

mod freshness;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chitchat::transport::{Socket, Transport};
use chitchat::{ChitchatMessage, Deserializable, Serializable};

use super::clock::now_micros;
use super::keyring::Keyring;
use freshness::{Receiver, Stamper};

/// The prefix of published keys in a node's gossip state.
pub const KEY_PREFIX: &str = "k:";
/// The gossip state key that carries the node's data-plane address.
pub const DATA_ADDR: &str = "data";
/// At most this many published keys per node; past it, small values are served by their
/// owner only (hosts then read them through, as they do large ones).
pub const MAX_PUBLISHED: usize = 10_000;

pub fn gossip_key(key: &[u8]) -> String {
    format!("{KEY_PREFIX}{}", URL_SAFE_NO_PAD.encode(key))
}

/// The key a gossip key (without its prefix) names.
pub fn key_of(gossip_key: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(gossip_key).ok()
}

pub fn gossip_value(entry: &[u8], expiry_ms: u64) -> String {
    format!("{}:{expiry_ms}", STANDARD.encode(entry))
}

/// The entry and expiry a gossip value carries.
pub fn parse_value(value: &str) -> Option<(Vec<u8>, u64)> {
    let (entry, expiry) = value.rsplit_once(':')?;
    Some((STANDARD.decode(entry).ok()?, expiry.parse().ok()?))
}

/// Each gossip peer's clock minus ours, in µs, by the address its datagrams come from:
/// the send time in its last fresh datagram (`freshness.rs`) against our clock when it
/// arrived, so it also counts the datagram's way (microseconds on a LAN).
pub type Skews = std::sync::Arc<std::sync::Mutex<std::collections::HashMap<SocketAddr, i64>>>;

/// chitchat's UDP transport with every datagram sealed (`crypto/mod.rs`) and stamped
/// (`freshness.rs`). A datagram that does not open with the cluster's key is dropped and
/// counted in `dropped`: a node with another secret never becomes a member. One that
/// opens but is stale or already seen is dropped and counted in `replayed`. A fresh one
/// tells its sender's clock skew (`skews`).
pub struct SealedUdp {
    pub keyring: std::sync::Arc<Keyring>,
    pub dropped: std::sync::Arc<AtomicU64>,
    pub replayed: std::sync::Arc<AtomicU64>,
    pub skews: Skews,
}

struct SealedSocket {
    socket: tokio::net::UdpSocket,
    keyring: std::sync::Arc<Keyring>,
    dropped: std::sync::Arc<AtomicU64>,
    replayed: std::sync::Arc<AtomicU64>,
    skews: Skews,
    stamper: Stamper,
    seen: Receiver,
    buf: Vec<u8>,
}

/// The largest UDP payload; chitchat sizes its messages for it, and zstd keeps real
/// datagrams far enough below it that the seal's 28 bytes fit (measured in the research
/// spike), and the freshness header's 24; a message that would not fit is dropped
/// rather than sent truncated.
const MAX_DATAGRAM: usize = 65_507;

#[async_trait]
impl Transport for SealedUdp {
    async fn open(&self, listen_addr: SocketAddr) -> anyhow::Result<Box<dyn Socket>> {
        let socket = tokio::net::UdpSocket::bind(listen_addr)
            .await
            .map_err(|e| anyhow::anyhow!("cannot bind the gossip socket {listen_addr}/udp: {e}"))?;
        Ok(Box::new(SealedSocket {
            socket,
            keyring: self.keyring.clone(),
            dropped: self.dropped.clone(),
            replayed: self.replayed.clone(),
            skews: self.skews.clone(),
            stamper: Stamper::new(),
            seen: Receiver::default(),
            buf: vec![0; MAX_DATAGRAM],
        }))
    }
}

#[async_trait]
impl Socket for SealedSocket {
    async fn send(&mut self, to: SocketAddr, msg: ChitchatMessage) -> anyhow::Result<()> {
        let mut plain = self.stamper.header(now_micros()).to_vec();
        plain.extend_from_slice(&msg.serialize_to_vec());
        let sealed = self.keyring.current().gossip.seal(&plain);
        if sealed.len() > MAX_DATAGRAM {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        // A peer that is down is not an error of the transport.
        let _ = self.socket.send_to(&sealed, to).await;
        Ok(())
    }

    async fn recv(&mut self) -> anyhow::Result<(SocketAddr, ChitchatMessage)> {
        loop {
            let (len, from) = match self.socket.recv_from(&mut self.buf).await {
                Ok(r) => r,
                // ICMP errors of an earlier send to a peer that is down.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => continue,
                Err(e) => return Err(anyhow::anyhow!("the gossip socket failed: {e}")),
            };
            let Some(plain) = self.keyring.current().gossip.open(&self.buf[..len]) else {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                continue;
            };
            let now = now_micros();
            let Some((fresh, sent)) = self.seen.accept(&plain, now) else {
                self.replayed.fetch_add(1, Ordering::Relaxed);
                continue;
            };
            let skew = sent as i64 - now as i64;
            self.skews
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(from, skew);
            match ChitchatMessage::deserialize(&mut &fresh[..]) {
                Ok(m) => return Ok((from, m)),
                Err(_) => {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gossip_keys_and_values_round_trip() {
        let k = gossip_key(b"user:\x00\xff");
        assert!(k.starts_with(KEY_PREFIX));
        assert_eq!(
            key_of(&k[KEY_PREFIX.len()..]).as_deref(),
            Some(&b"user:\x00\xff"[..])
        );
        let v = gossip_value(b"\x00entry:with:colons", 123);
        assert_eq!(
            parse_value(&v),
            Some((b"\x00entry:with:colons".to_vec(), 123))
        );
        assert_eq!(parse_value("junk"), None);
    }
}
