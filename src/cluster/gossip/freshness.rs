//! Freshness of gossip datagrams: a recorded datagram played again is dropped.
//!
//! Inside the seal, every datagram starts with a header
//! `[sender u64][sent µs since the epoch u64][seq u64]` (big-endian):
//!
//! - `sender`: 64 random bits drawn once per process, so a restarted node is a new sender;
//! - `sent`: the sender's wall clock when it sealed the datagram;
//! - `seq`: the sender's count of datagrams, from 1.
//!
//! A receiver drops a datagram sent more than `WINDOW` ago (or that far in the future),
//! and one whose `seq` it has already accepted from that sender: a sliding window of the
//! last 64 numbers per sender, as IPsec and WireGuard keep, so datagrams that UDP
//! reorders a little still pass. A sender is forgotten once all it sent is older than
//! `WINDOW`, since the time check alone refuses whatever it sent before then.
//!
//! `WINDOW` is 20 s: twice the failure detector's longest expected gossip interval
//! (chitchat's `max_interval`, 10 s), so a node that gossips at all is never refused, and
//! a datagram older than that describes a state every live node has gossiped past.
//! Hosts' clocks must agree to well within it (NTP). The header is authenticated by the
//! seal, so nobody without the secret can forge a fresher one.
//!
//! Not covered: within `WINDOW`, a recorded datagram can still be delivered once to a
//! receiver that never got it (another node, or one that restarted and forgot what it
//! saw); it then carries state at most `WINDOW` old, which chitchat's versions order
//! behind anything newer the receiver has heard.

use std::collections::HashMap;
use std::sync::Mutex;

/// How old (or how far ahead) a datagram may be.
pub const WINDOW_MICROS: u64 = 20_000_000;
/// How many senders are remembered at most; a cluster has far fewer within `WINDOW`.
const MAX_SENDERS: usize = 4096;
const HEADER_LEN: usize = 24;

/// What this process stamps on its datagrams.
pub struct Stamper {
    sender: u64,
    seq: Mutex<u64>,
}

impl Stamper {
    pub fn new() -> Self {
        Stamper {
            sender: crate::cluster::crypto::random_u64(),
            seq: Mutex::new(0),
        }
    }

    /// The header of the next datagram, sent at `now` (µs).
    pub fn header(&self, now: u64) -> [u8; HEADER_LEN] {
        let mut seq = self.seq.lock().unwrap_or_else(|e| e.into_inner());
        *seq += 1;
        let mut h = [0u8; HEADER_LEN];
        h[..8].copy_from_slice(&self.sender.to_be_bytes());
        h[8..16].copy_from_slice(&now.to_be_bytes());
        h[16..].copy_from_slice(&seq.to_be_bytes());
        h
    }
}

/// The highest seq accepted from a sender, which of the 64 before it were, and the
/// latest time it sent.
struct Seen {
    top: u64,
    bits: u64,
    last_sent: u64,
}

/// What a receiver remembers of the senders it heard within `WINDOW`.
#[derive(Default)]
pub struct Receiver {
    senders: HashMap<u64, Seen>,
}

impl Receiver {
    /// The message after the header and when it was sent (µs, the sender's clock) when
    /// the datagram is fresh and new, received at `now` (µs); `None` when it is stale,
    /// from the future, seen or too short.
    pub fn accept<'a>(&mut self, plain: &'a [u8], now: u64) -> Option<(&'a [u8], u64)> {
        let (h, message) = plain.split_at_checked(HEADER_LEN)?;
        let num = |r: std::ops::Range<usize>| u64::from_be_bytes(h[r].try_into().unwrap_or([0; 8]));
        let (sender, sent, seq) = (num(0..8), num(8..16), num(16..24));
        if sent.abs_diff(now) > WINDOW_MICROS {
            return None;
        }
        if !self.senders.contains_key(&sender) && self.senders.len() >= MAX_SENDERS {
            self.forget(now);
        }
        let seen = self.senders.entry(sender).or_insert(Seen {
            top: 0,
            bits: 0,
            last_sent: sent,
        });
        if seq > seen.top {
            let shift = seq - seen.top;
            seen.bits = if shift >= 64 { 0 } else { seen.bits << shift };
            seen.bits |= 1;
            seen.top = seq;
        } else {
            let back = seen.top - seq;
            if back >= 64 || seen.bits & (1 << back) != 0 {
                return None;
            }
            seen.bits |= 1 << back;
        }
        seen.last_sent = seen.last_sent.max(sent);
        Some((message, sent))
    }

    /// Forgets senders whose every datagram is now refused by age; if all are recent
    /// (more senders than `MAX_SENDERS` within `WINDOW`), the one heard from least lately.
    fn forget(&mut self, now: u64) {
        self.senders
            .retain(|_, s| now.saturating_sub(s.last_sent) <= WINDOW_MICROS);
        if self.senders.len() >= MAX_SENDERS {
            let oldest = self
                .senders
                .iter()
                .min_by_key(|(_, s)| s.last_sent)
                .map(|(k, _)| *k);
            if let Some(k) = oldest {
                self.senders.remove(&k);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datagram(stamper: &Stamper, now: u64) -> Vec<u8> {
        let mut d = stamper.header(now).to_vec();
        d.extend_from_slice(b"msg");
        d
    }

    #[test]
    fn a_datagram_passes_once_and_only_while_fresh() {
        let t = 1_000_000_000_000;
        let a = Stamper::new();
        let mut r = Receiver::default();
        let d1 = datagram(&a, t);
        let d2 = datagram(&a, t);
        let d3 = datagram(&a, t);
        // Reordered a little: still accepted, each once.
        assert_eq!(r.accept(&d2, t), Some((&b"msg"[..], t)));
        assert_eq!(r.accept(&d1, t), Some((&b"msg"[..], t)));
        assert_eq!(r.accept(&d1, t), None);
        assert_eq!(r.accept(&d2, t), None);
        assert_eq!(r.accept(&d3, t + 1), Some((&b"msg"[..], t)));
        // Played later, to a receiver that never saw it (restarted): refused by age.
        let mut fresh = Receiver::default();
        assert_eq!(fresh.accept(&d3, t + WINDOW_MICROS + 1), None);
        assert_eq!(fresh.accept(&datagram(&a, t + 2 * WINDOW_MICROS), t), None);
        // Far behind the newest: refused even if never seen.
        let old = datagram(&a, t);
        for _ in 0..70 {
            r.accept(&datagram(&a, t), t);
        }
        assert_eq!(r.accept(&old, t), None);
        // A restarted sender is a new sender.
        assert!(r.accept(&datagram(&Stamper::new(), t), t).is_some());
        assert_eq!(r.accept(b"short", t), None);
    }

    #[test]
    fn senders_are_bounded() {
        let t = 1_000_000_000_000;
        let mut r = Receiver::default();
        for i in 0..MAX_SENDERS + 10 {
            assert!(
                r.accept(&datagram(&Stamper::new(), t + i as u64), t)
                    .is_some()
            );
        }
        assert!(r.senders.len() <= MAX_SENDERS);
    }
}
