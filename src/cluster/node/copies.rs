//! The segment's copies: how an entry is kept (a lock's pinned), installed over an
//! older one only, copied to the other members and to gossip after a decision, applied
//! from gossip, and cleared.

use super::*;

use std::sync::atomic::Ordering;

use futures_util::StreamExt;

/// The most lock operations whose copies to other hosts may be in the background at once.
const BACKGROUND_COPIES: usize = 256;

/// The most keys whose async copies may wait for one member (`Node::queue_copy`); past
/// that a new key's copy is dropped (counted), and gossip carries its entry.
const QUEUED_COPIES: usize = 65_536;

/// After a batch of async copies to a member, the next waits this long (the copies
/// queued meanwhile go together). An idle member's first copy goes at once. The longest
/// an async lock operation's copy waits for its batch under load, so what an owner's
/// crash may lose (docs/cluster.md, "Locks without awaited copies"): a millisecond is about a
/// Redis replica's lag, and enough to gather a serial client's next 5–10 operations
/// (bench/RESULTS.md, where copies sent one by one held the cycle at 5–7× phpredis).
const COPY_LINGER: Duration = Duration::from_millis(1);

/// Copies of lock operations with `?copies=async`, per member: the newest entry of each
/// key, waiting to go out as one `PutMany` while the member's previous batch is on its
/// way or lingers (`Node::queue_copy`, `COPY_LINGER`). A stream of lock operations then
/// costs one data-plane round trip per member per batch, not one per operation — on a
/// host whose CPUs the nodes share, each copy's sealing, sending, applying and
/// answering is what a lock cycle waited for even when nobody awaited it — and an
/// acquire and its release in one batch send only the release.
#[derive(Default)]
pub(super) struct Queued {
    by_member: Mutex<HashMap<Arc<str>, Pending>>,
}

#[derive(Default)]
struct Pending {
    /// Each key's newest entry, counted as on its way (`health.rs`) from the moment it
    /// is queued.
    entries: HashMap<Vec<u8>, (Entry, health::InFlight)>,
    /// Whether a task is sending this member's batches.
    sending: bool,
}

/// Which copies of a write its owner awaits before it answers (`Node::propagate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Awaited {
    /// Every member's: a value's write.
    Every,
    /// The replicas' only: a lock's operation.
    Replicas,
    /// None: a lock's operation with `cluster://?copies=async`.
    Nothing,
}

impl Node {
    /// (the version PHP sees, the segment's own version) of the local copy.
    pub(super) fn versions(&self, key: &[u8]) -> (u64, u64) {
        let mut seen = 0;
        let local = self
            .local
            .read(key, &mut |v| {
                if let Value::Str(e) = v {
                    if let Some((_, State::Value(_))) = entry::parse(e) {
                        seen = bytes::fingerprint(e);
                    }
                }
            })
            .ok()
            .flatten()
            .unwrap_or(0);
        (seen, local)
    }

    /// The local copy of `key` and its remaining lifetime.
    pub(super) fn local_entry(&self, key: &[u8]) -> Option<(Vec<u8>, Option<Duration>)> {
        let mut stored = None;
        self.local
            .read(key, &mut |v| {
                if let Value::Str(e) = v {
                    stored = Some(e.to_vec());
                }
            })
            .ok()??;
        let ttl = match self.local.ttl(key).ok()? {
            KeyTtl::Missing => return None,
            KeyTtl::Persistent => None,
            KeyTtl::Remaining(d) => Some(d),
        };
        Some((stored?, ttl))
    }

    pub(super) fn store_local(&self, key: &[u8], w: &Write) -> crate::store::Result<()> {
        self.keep(key, &w.entry, w.ttl)
    }

    /// Writes an entry to the segment: a lock's pinned, so memory pressure never evicts
    /// it before it expires.
    pub(super) fn keep(
        &self,
        key: &[u8],
        stored: &[u8],
        ttl: Option<Duration>,
    ) -> crate::store::Result<()> {
        match ttl {
            Some(ttl) if entry::is_lock(stored) => {
                self.local.set_pinned(key, Value::Str(stored), ttl)
            }
            _ => self.local.set(key, Value::Str(stored), ttl),
        }
    }

    /// Stores a copy unless the one held is newer. The caller holds the key's stripe.
    pub(super) fn install(&self, key: &[u8], e: &Entry) {
        if key.starts_with(RESERVED) || entry::parse(&e.stored).is_none() {
            return;
        }
        if let Some(s) = entry::stamp(&e.stored) {
            self.clock.observe(s);
        }
        let current = self.local_entry(key);
        if entry::is_newer(&e.stored, current.as_ref().map(|(c, _)| c.as_slice())) {
            let _ = self.keep(key, &e.stored, e.ttl);
        }
    }

    /// Copies a decided write to every member before the writer hears back: the
    /// replicas get the entry, the other hosts the entry when it is small and a marker
    /// (which drops their copy) when it is large. So once a value's write returns, every
    /// reachable host's segment agrees with the owner, and a process that reads its own
    /// segment after taking a lock sees the last holder's writes (a lock's own
    /// operations wait for the replicas only: see `await_pushes`). A host that missed the
    /// copy (unreachable for a moment) catches up from gossip, where the write is also
    /// published.
    ///
    /// `turn`, the key's stripe, is held while publishing (so that gossip carries a
    /// key's writes in the order they were decided) and released before the copies go
    /// out: a node that waited for another's acknowledgement while holding a stripe,
    /// while that one did the same towards it on the same stripe (two keys of one
    /// stripe, decided on two nodes), stalled both until the timeout. Copies need no
    /// order: a host installs an entry only over an older one.
    ///
    /// `Awaited::Replicas` (a lock's operations): only the replicas' copies are awaited;
    /// the other hosts' that have not answered by then finish in the background. Nothing
    /// reads a lock from a host's segment — acquire, extend, release, TTLs and waits all
    /// go to the owner — so those copies only save gossip some work; awaited, a paused
    /// host that is no replica held every lock operation for the node timeout until the
    /// failure detector gave up on it (bench/cluster_lock_paths.php). On one machine
    /// running every node, the overlap costs a lock cycle some CPU (bench/RESULTS.md).
    ///
    /// `Awaited::Nothing` (a lock's operation with `?copies=async`): every copy, the
    /// replicas' too, is queued for its member and sent in a batch (`Queued`). The
    /// replicas then learn of the lock after its holder did — a batch's round trip
    /// later at most, under load — or, when the owner dies first, never: the price of
    /// `copies=async` (see `decide`).
    pub(super) async fn propagate(
        self: &Arc<Self>,
        key: &[u8],
        w: &Write,
        turn: tokio::sync::MutexGuard<'_, ()>,
        awaited: Awaited,
    ) {
        let announced = self.announced(&w.entry);
        self.publish(key, &announced, w.ttl).await;
        drop(turn);
        if crate::fault::on("no-owner-routing") {
            // ePHPm's design, for the tests: every node's decision spreads by gossip only.
            return;
        }
        let replicas = self.placement(key);
        let mut others: Vec<Arc<str>> = {
            let v = self.view.read().unwrap_or_else(|e| e.into_inner());
            v.members
                .ids()
                .filter(|n| **n != self.id && (self.cfg.push_writes || replicas.contains(n)))
                .cloned()
                .collect()
        };
        if awaited == Awaited::Nothing {
            for n in others.drain(..) {
                let stored = match replicas.contains(&n) {
                    true => w.entry.clone(),
                    false => announced.to_vec(),
                };
                self.queue_copy(n, key, Entry { stored, ttl: w.ttl });
            }
            return;
        }
        let mut replicas_left = 0;
        let mut asks = futures_util::stream::FuturesUnordered::new();
        for n in others {
            let replica = replicas.contains(&n);
            replicas_left += usize::from(replica);
            let stored = if replica {
                w.entry.clone()
            } else {
                announced.to_vec()
            };
            let op = Op::Put {
                key: key.to_vec(),
                entry: Entry { stored, ttl: w.ttl },
            };
            let node = self.clone();
            // Counted per member (`health.rs`): a copy not answered `Done`, or given up
            // below, is a dropped one.
            asks.push(async move {
                let ask = node.ask(&n, Route::Here, &op, node.cfg.timeout);
                let result = health::counted(&node.copies, &n, 1, ask).await;
                (n, replica, result)
            });
        }
        // Every copy goes out at once; those `awaited` names are awaited.
        loop {
            let more = match awaited {
                Awaited::Every => !asks.is_empty(),
                Awaited::Replicas | Awaited::Nothing => replicas_left > 0,
            };
            if !more {
                break;
            }
            let Some((n, replica, result)) = asks.next().await else {
                break;
            };
            if replica {
                replicas_left -= 1;
                if let Err(why) = result {
                    tracing::warn!(
                        "cluster node {}: replica {n} missed a write: {why}",
                        self.id
                    );
                }
            }
        }
        // A lock's copies that have not answered yet finish in the background (with
        // `Awaited::Replicas` usually they have answered by now, and nothing is
        // spawned). At most `BACKGROUND_COPIES` at once: a paused host would otherwise
        // gather one connection per lock operation until the timeout; past that the
        // copies are dropped (and counted, `health.rs`), and gossip carries the entry
        // to those hosts.
        if !asks.is_empty() {
            let count = &self.background_copies;
            if count.fetch_add(1, Ordering::Relaxed) < BACKGROUND_COPIES {
                let node = self.clone();
                tokio::spawn(async move {
                    while asks.next().await.is_some() {}
                    node.background_copies.fetch_sub(1, Ordering::Relaxed);
                });
            } else {
                count.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// Queues an async copy of `key`'s entry for member `n` (`Queued`), replacing an
    /// older one still waiting, and starts the member's sender unless it runs.
    fn queue_copy(self: &Arc<Self>, n: Arc<str>, key: &[u8], entry: Entry) {
        let start = {
            let mut queued = self
                .queued
                .by_member
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let pending = queued.entry(n.clone()).or_default();
            let full = pending.entries.len() >= QUEUED_COPIES;
            match pending.entries.get_mut(key) {
                // Decided later (stamps order a key's writes): it carries the older one.
                Some((older, _)) if entry::is_newer(&entry.stored, Some(&older.stored)) => {
                    *older = entry;
                }
                Some(_) => {}
                None if full => drop(self.copies.start(&n, 1)),
                None => {
                    let flight = self.copies.start(&n, 1);
                    pending.entries.insert(key.to_vec(), (entry, flight));
                }
            }
            !std::mem::replace(&mut pending.sending, true)
        };
        if start {
            let node = self.clone();
            tokio::spawn(async move { node.send_queued(n).await });
        }
    }

    /// Sends member `n`'s queued copies, a batch of at most `BATCH_BYTES` at a time,
    /// `COPY_LINGER` apart, until none is left.
    async fn send_queued(self: Arc<Self>, n: Arc<str>) {
        for round in 0.. {
            if round > 0 {
                tokio::time::sleep(COPY_LINGER).await;
            }
            let (entries, flights): (Vec<_>, Vec<_>) = {
                let mut queued = self
                    .queued
                    .by_member
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                let Some(pending) = queued.get_mut(&n) else {
                    return;
                };
                if pending.entries.is_empty() {
                    queued.remove(&n);
                    return;
                }
                let mut bytes = 0;
                let mut batch = Vec::new();
                for (key, (entry, flight)) in std::mem::take(&mut pending.entries) {
                    let size = crate::wire::batch_bytes(&key, &entry);
                    if !batch.is_empty() && bytes + size > crate::wire::BATCH_BYTES {
                        pending.entries.insert(key, (entry, flight));
                    } else {
                        bytes += size;
                        batch.push(((key, entry), flight));
                    }
                }
                batch.into_iter().unzip()
            };
            let op = Op::PutMany { entries };
            let landed = matches!(
                self.ask(&n, Route::Here, &op, self.cfg.timeout).await,
                Ok(Response::Done)
            );
            for flight in flights {
                if landed {
                    flight.landed();
                }
            }
        }
    }

    /// What hosts that do not hold `stored` get: itself when small, else its marker.
    pub(super) fn announced<'a>(&self, stored: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        if stored.len() <= self.cfg.small_key_threshold {
            std::borrow::Cow::Borrowed(stored)
        } else {
            std::borrow::Cow::Owned(entry::marker_for(stored))
        }
    }

    /// Puts an entry (small, or a marker) into this node's gossip state.
    pub(super) async fn publish(&self, key: &[u8], announced: &[u8], ttl: Option<Duration>) {
        let Some(chitchat) = self.gossip.get() else {
            return;
        };
        let expiry = ttl.map_or(0, |t| now_micros() / 1000 + t.as_millis() as u64 + 1);
        let gk = gossip::gossip_key(key);
        let mut c = chitchat.lock().await;
        let state = c.self_node_state();
        if state.get(&gk).is_some() || state.num_key_values() < gossip::MAX_PUBLISHED {
            state.set(gk, gossip::gossip_value(announced, expiry));
        }
    }

    /// Clears `prefix` on every member (each counts the keys it owns).
    pub(super) async fn clear_everywhere(&self, prefix: &[u8]) -> Response {
        let members: Vec<Arc<str>> = {
            let v = self.view.read().unwrap_or_else(|e| e.into_inner());
            v.members.ids().cloned().collect()
        };
        let op = Op::Clear {
            prefix: prefix.to_vec(),
        };
        let mut total = 0;
        for m in members {
            let r = if m == self.id {
                self.clear_here(prefix).await
            } else {
                match self.ask(&m, Route::Here, &op, self.cfg.timeout).await {
                    Ok(r) => r,
                    Err(why) => return unavailable(&m, &why),
                }
            };
            if let Response::Int(n) = r {
                total += n;
            }
        }
        Response::Int(total)
    }

    /// Replaces this node's copies under `prefix` with tombstones (so that a copy still
    /// on its way, by gossip or a late replication, cannot bring one back) and withdraws
    /// what it published under it. Counts the live keys it owned, so that a cluster-wide
    /// clear counts every key once.
    pub(super) async fn clear_here(&self, prefix: &[u8]) -> Response {
        let Ok(keys) = self.local.keys() else {
            return invalid("the segment cannot be read");
        };
        let mut owned = 0;
        for key in keys
            .iter()
            .filter(|k| k.starts_with(prefix) && !k.starts_with(RESERVED))
        {
            let _turn = self.stripe(key).lock().await;
            let live = self
                .local_entry(key)
                .is_some_and(|(e, _)| matches!(entry::parse(&e), Some((_, State::Value(_)))));
            if live && self.placement(key).first().is_some_and(|o| *o == self.id) {
                owned += 1;
            }
            let gone = entry::tombstone(self.clock.next());
            let _ = self
                .local
                .set(key, Value::Str(&gone), Some(TOMBSTONE_GRACE));
        }
        self.withdraw(|key, _| key.starts_with(prefix)).await;
        Response::Int(owned as i64)
    }

    /// Deletes from this node's gossip state the published keys `which` picks, given
    /// the key and its gossip value.
    pub(super) async fn withdraw(&self, which: impl Fn(&[u8], &str) -> bool) {
        let Some(chitchat) = self.gossip.get() else {
            return;
        };
        let mut c = chitchat.lock().await;
        let state = c.self_node_state();
        let picked: Vec<String> = state
            .key_values()
            .filter(|(k, v)| {
                k.strip_prefix(gossip::KEY_PREFIX)
                    .and_then(gossip::key_of)
                    .is_some_and(|key| which(&key, v))
            })
            .map(|(k, _)| k.to_string())
            .collect();
        for k in picked {
            state.delete(&k);
        }
    }
}

/// Applies what other nodes published, each entry only over an older one.
pub(super) async fn apply_gossip(
    node: Arc<Node>,
    mut rx: mpsc::UnboundedReceiver<(Arc<str>, String, String)>,
) {
    while let Some((from, gkey, value)) = rx.recv().await {
        if from == node.id {
            continue;
        }
        let (Some(key), Some((stored, expiry_ms))) =
            (gossip::key_of(&gkey), gossip::parse_value(&value))
        else {
            continue;
        };
        let ttl = match expiry_ms {
            0 => None,
            at => match at.checked_sub(now_micros() / 1000) {
                Some(left) if left > 0 => Some(Duration::from_millis(left)),
                _ => continue,
            },
        };
        let _turn = node.stripe(&key).lock().await;
        node.install(&key, &Entry { stored, ttl });
    }
}

/// Removes published keys once expired (a tombstone's expiry is its grace period), so
/// the gossip state holds only what is still true.
pub(super) async fn collect_published(node: Arc<Node>) {
    let every = (TOMBSTONE_GRACE / 4).min(Duration::from_secs(5));
    loop {
        tokio::time::sleep(every).await;
        let now_ms = now_micros() / 1000;
        node.withdraw(|_, v| gossip::parse_value(v).is_some_and(|(_, at)| at != 0 && at <= now_ms))
            .await;
    }
}
