//! The hand-off's batches: entries bound for one node are gathered into `Op::PutMany`
//! requests of at most `wire::BATCH_BYTES`, and up to `IN_FLIGHT` of them are on their
//! way to each node at once, each on a connection of its own (`peers.rs`), sealed like
//! every data-plane frame. One request per entry waited a round trip per key: minutes
//! for a million keys, past the time an owner looks for a key in the previous placement
//! (`HANDOFF_WINDOW`).
//!
//! A batch that fails (no answer within `BATCH_TIMEOUT`, a connection refused) is sent
//! once more: entries it had applied are simply not newer the second time. Then its
//! entries are counted as missed; an owner that misses one of them still finds it in
//! the previous placement while the window lasts.

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::*;
use crate::wire::{self, BATCH_BYTES};

/// Batches on their way to one node at once: enough that the receiver always has the
/// next one while it applies one and the sender gathers another.
const IN_FLIGHT: usize = 4;
/// How long a batch may take. A node's timeout is sized for one entry; a batch is up to
/// `BATCH_BYTES` of them, applied one by one, possibly behind other nodes' batches
/// (`IN_FLIGHT` each) on a receiver that is also serving its own host.
const BATCH_TIMEOUT: Duration = Duration::from_secs(15);
/// Tries per batch.
const TRIES: usize = 2;

#[derive(Default)]
struct Batch {
    entries: Vec<(Vec<u8>, Entry)>,
    bytes: usize,
}

/// What became of the entries handed to `Outbox::push`.
#[derive(Default, Debug, Clone, Copy)]
pub(super) struct Tally {
    pub moved: usize,
    pub missed: usize,
    pub batches: usize,
}

/// The batches of one hand-off, per target node.
pub(super) struct Outbox {
    node: Arc<Node>,
    filling: HashMap<Arc<str>, Batch>,
    slots: HashMap<Arc<str>, Arc<Semaphore>>,
    sending: JoinSet<(usize, bool)>,
    tally: Tally,
}

impl Outbox {
    pub fn new(node: Arc<Node>) -> Self {
        Outbox {
            node,
            filling: HashMap::new(),
            slots: HashMap::new(),
            sending: JoinSet::new(),
            tally: Tally::default(),
        }
    }

    /// Adds an entry for `target`; sends the target's batch first when the entry
    /// would take it over `BATCH_BYTES`, waiting while `IN_FLIGHT` are on their way.
    pub async fn push(&mut self, target: &Arc<str>, key: Vec<u8>, entry: Entry) {
        let size = wire::batch_bytes(&key, &entry);
        let batch = self.filling.entry(target.clone()).or_default();
        // `take` leaves an empty batch in the map, which the entry starts.
        let full = if !batch.entries.is_empty() && batch.bytes + size > BATCH_BYTES {
            Some(std::mem::take(batch))
        } else {
            None
        };
        batch.entries.push((key, entry));
        batch.bytes += size;
        if let Some(full) = full {
            self.send(target.clone(), full).await;
        }
    }

    /// Sends what is left and waits for every batch's answer.
    pub async fn finish(mut self) -> Tally {
        let left: Vec<_> = self.filling.drain().collect();
        for (target, batch) in left {
            if !batch.entries.is_empty() {
                self.send(target, batch).await;
            }
        }
        while let Some(done) = self.sending.join_next().await {
            self.count(done);
        }
        self.tally
    }

    async fn send(&mut self, target: Arc<str>, batch: Batch) {
        let slots = self
            .slots
            .entry(target.clone())
            .or_insert_with(|| Arc::new(Semaphore::new(IN_FLIGHT)))
            .clone();
        // Never closed, so acquiring fails never; without a slot the batch would go
        // out anyway rather than be lost.
        let slot = slots.acquire_owned().await.ok();
        let node = self.node.clone();
        self.sending.spawn(async move {
            let _slot = slot;
            node.send_batch(&target, batch.entries).await
        });
        self.tally.batches += 1;
        while let Some(done) = self.sending.try_join_next() {
            self.count(done);
        }
    }

    fn count(&mut self, done: Result<(usize, bool), tokio::task::JoinError>) {
        match done {
            Ok((n, true)) => self.tally.moved += n,
            Ok((n, false)) => self.tally.missed += n,
            // A batch's task does not panic; if it did, its count is unknown.
            Err(_) => {}
        }
    }
}

impl Node {
    /// Sends one batch to `target`, twice at most: (its entries, whether it landed).
    async fn send_batch(&self, target: &str, entries: Vec<(Vec<u8>, Entry)>) -> (usize, bool) {
        let n = entries.len();
        let op = Op::PutMany { entries };
        let timeout = self.cfg.timeout.max(BATCH_TIMEOUT);
        let mut why = String::new();
        let member: Arc<str> = Arc::from(target);
        for _ in 0..TRIES {
            // A try that fails counts its entries as dropped (`health.rs`), even when the
            // next one lands them.
            let ask = self.ask(target, Route::Here, &op, timeout);
            match health::counted(&self.copies, &member, n as u64, ask).await {
                Ok(Response::Done) => return (n, true),
                Ok(other) => why = format!("{other:?}"),
                Err(e) => why = e,
            }
        }
        tracing::warn!(
            "cluster node {}: a hand-off batch of {n} entries did not reach {target}: {why}",
            self.id
        );
        (n, false)
    }
}
