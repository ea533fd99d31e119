//! PUBLISH and SUBSCRIBE among the clients of one server. A subscriber's messages wait
//! in a bounded queue: one that does not read them is disconnected when the queue is
//! full (as Redis' pub/sub output buffer limit does), so a slow subscriber never makes
//! the server hold an unbounded backlog nor slows a publisher.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::glob;
use super::lock;

/// Messages a subscriber may have waiting before it is cut off.
pub const QUEUE: usize = 4096;

#[derive(Debug, Clone)]
pub enum Message {
    Message {
        channel: Arc<[u8]>,
        payload: Arc<[u8]>,
    },
    PMessage {
        pattern: Arc<[u8]>,
        channel: Arc<[u8]>,
        payload: Arc<[u8]>,
    },
}

type Subscribers = HashMap<u64, mpsc::Sender<Message>>;

#[derive(Default)]
pub struct Hub {
    channels: Mutex<HashMap<Vec<u8>, Subscribers>>,
    patterns: Mutex<HashMap<Vec<u8>, Subscribers>>,
    /// Subscribers whose queue overflowed: their connection closes at its next look.
    overflowed: Mutex<Vec<u64>>,
}

impl Hub {
    pub fn subscribe(&self, id: u64, channel: &[u8], tx: &mpsc::Sender<Message>) {
        lock(&self.channels)
            .entry(channel.to_vec())
            .or_default()
            .insert(id, tx.clone());
    }

    pub fn psubscribe(&self, id: u64, pattern: &[u8], tx: &mpsc::Sender<Message>) {
        lock(&self.patterns)
            .entry(pattern.to_vec())
            .or_default()
            .insert(id, tx.clone());
    }

    pub fn unsubscribe(&self, id: u64, channel: &[u8]) {
        remove(&self.channels, id, channel);
    }

    pub fn punsubscribe(&self, id: u64, pattern: &[u8]) {
        remove(&self.patterns, id, pattern);
    }

    /// Drops every subscription of a client that went away.
    pub fn forget(&self, id: u64) {
        for map in [&self.channels, &self.patterns] {
            lock(map).retain(|_, subs| {
                subs.remove(&id);
                !subs.is_empty()
            });
        }
    }

    /// Sends to every subscriber of the channel and of a matching pattern; returns how
    /// many received it.
    pub fn publish(&self, channel: &[u8], payload: &[u8]) -> i64 {
        let channel: Arc<[u8]> = channel.into();
        let payload: Arc<[u8]> = payload.into();
        let mut delivered = 0;
        if let Some(subs) = lock(&self.channels).get(&*channel) {
            for (id, tx) in subs {
                delivered += self.deliver(
                    *id,
                    tx,
                    Message::Message {
                        channel: channel.clone(),
                        payload: payload.clone(),
                    },
                );
            }
        }
        for (pattern, subs) in lock(&self.patterns).iter() {
            if !glob::matches(pattern, &channel) {
                continue;
            }
            let pattern: Arc<[u8]> = pattern.as_slice().into();
            for (id, tx) in subs {
                delivered += self.deliver(
                    *id,
                    tx,
                    Message::PMessage {
                        pattern: pattern.clone(),
                        channel: channel.clone(),
                        payload: payload.clone(),
                    },
                );
            }
        }
        delivered
    }

    fn deliver(&self, id: u64, tx: &mpsc::Sender<Message>, m: Message) -> i64 {
        match tx.try_send(m) {
            Ok(()) => 1,
            Err(mpsc::error::TrySendError::Full(_)) => {
                lock(&self.overflowed).push(id);
                0
            }
            Err(mpsc::error::TrySendError::Closed(_)) => 0,
        }
    }

    /// Whether this subscriber's queue overflowed (and forgets it).
    pub fn overflowed(&self, id: u64) -> bool {
        let mut o = lock(&self.overflowed);
        let before = o.len();
        o.retain(|&x| x != id);
        o.len() != before
    }

    /// Channels with subscribers, matching `pattern` when given (PUBSUB CHANNELS).
    pub fn channels(&self, pattern: Option<&[u8]>) -> Vec<Vec<u8>> {
        lock(&self.channels)
            .keys()
            .filter(|c| pattern.is_none_or(|p| glob::matches(p, c)))
            .cloned()
            .collect()
    }

    /// Subscribers of one channel (PUBSUB NUMSUB).
    pub fn numsub(&self, channel: &[u8]) -> i64 {
        lock(&self.channels)
            .get(channel)
            .map_or(0, |s| s.len() as i64)
    }

    /// Patterns subscribed to (PUBSUB NUMPAT).
    pub fn numpat(&self) -> i64 {
        lock(&self.patterns).len() as i64
    }
}

fn remove(map: &Mutex<HashMap<Vec<u8>, Subscribers>>, id: u64, name: &[u8]) {
    let mut map = lock(map);
    if let Some(subs) = map.get_mut(name) {
        subs.remove(&id);
        if subs.is_empty() {
            map.remove(name);
        }
    }
}
