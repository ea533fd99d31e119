//! What a request does: a client's is routed to the key's owner (or decided here when
//! this node owns it); an owner decides under the key's stripe lock; reads go to the
//! segment, the owner, the replicas, the previous placement; waits long-poll the owner.

use super::copies::Awaited;
use super::*;
use crate::ground::dsn::Copies;

/// The longest a lock's waiter sleeps at the owner before it looks at the lock again.
const LINE_SLICE: Duration = Duration::from_millis(100);

impl Node {
    /// A request of a PHP process of this host.
    pub(super) async fn route(self: &Arc<Self>, op: Op) -> Response {
        match op {
            Op::Members => Response::Members(self.members()),
            Op::Health => self.health().await,
            Op::Stats => match self.local.stats() {
                Ok(s) => Response::Stats(s),
                Err(e) => Response::Failed(Failure::Invalid, e.to_string()),
            },
            Op::Clear { prefix } => self.clear_everywhere(&prefix).await,
            Op::Put { .. } | Op::PutMany { .. } => invalid("not a client request"),
            Op::Read { key } => {
                self.settled().await;
                self.read_through(&key).await
            }
            op => {
                self.settled().await;
                if crate::fault::on("no-owner-routing") {
                    // ePHPm's bug, for the tests: every node decides on its own copy.
                    return self.decide(op).await;
                }
                let key = op.key().unwrap_or_default().to_vec();
                // The owner answers only after its own asks, each bounded by
                // `cfg.timeout`: the entry from the previous placement during a hand-off,
                // then its replicas' acknowledgements. Waiting for it no longer than one
                // of those turned one slow replica into a failed write that had landed.
                let owner_budget = self.cfg.timeout * 5 / 2;
                let timeout = match &op {
                    Op::Wait { timeout, .. } | Op::LockWait { timeout, .. } => {
                        *timeout + owner_budget
                    }
                    _ => owner_budget,
                };
                for attempt in 0..2 {
                    let Some(owner) = self.placement(&key).into_iter().next() else {
                        return unavailable(&self.id, "no members");
                    };
                    if owner == self.id {
                        return self.decide(op).await;
                    }
                    match self.ask(&owner, Route::Owner, &op, timeout).await {
                        // Views differ for a moment after a change: look again, once.
                        Ok(Response::Failed(Failure::NotOwner, _)) if attempt == 0 => {
                            tokio::time::sleep(
                                self.cfg.gossip_interval.min(Duration::from_millis(200)),
                            )
                            .await;
                        }
                        Ok(r) => return r,
                        // Not a guess: the request may still have landed.
                        Err(why) => return unavailable(&owner, &why),
                    }
                }
                unavailable(&self.id, "the nodes do not agree who owns the key yet")
            }
        }
    }

    /// A decision another node routed here as the key's owner.
    pub(super) async fn decide_as_owner(self: &Arc<Self>, op: Op) -> Response {
        let key = op.key().unwrap_or_default();
        let mine = self.placement(key).first().is_some_and(|o| *o == self.id);
        if !mine && !crate::fault::on("no-owner-routing") {
            return Response::Failed(
                Failure::NotOwner,
                format!("{} does not own the key", self.id),
            );
        }
        match op {
            Op::Read { key } => self.owner_read(&key).await,
            op => self.decide(op).await,
        }
    }

    /// Decides a write here, stores it, and copies it to the replicas and to gossip.
    pub(super) async fn decide(self: &Arc<Self>, op: Op) -> Response {
        if let Op::Wait {
            key,
            version,
            timeout,
        } = op
        {
            return self.wait_here(key, version, timeout).await;
        }
        if let Op::LockWait { key, timeout } = op {
            return self.wait_in_line(key, timeout).await;
        }
        let key = op.key().unwrap_or_default().to_vec();
        let turn = self.stripe(&key).lock().await;
        let current = self.current(&key).await;
        let (response, write) = decide::decide(
            &op,
            current.as_ref().map(|(e, ttl)| Current {
                entry: e,
                ttl: *ttl,
            }),
            || self.clock.next(),
        );
        if let Some(w) = write {
            if let Err(e) = self.store_local(&key, &w) {
                return Response::Failed(Failure::Full, e.to_string());
            }
            // Locks are read at their owner only: see `propagate`.
            let lock_op = !crate::fault::on("await-all-copies")
                && matches!(
                    op,
                    Op::LockAcquire { .. }
                        | Op::LockExtend { .. }
                        | Op::LockRelease { .. }
                        | Op::RwLock { .. }
                );
            let awaited = match op.copies() {
                // `cluster://?copies=async` (docs/cluster.md, "Locks without awaited
                // copies"): answered once this owner's copy is written. What
                // an owner's crash may lose then is a lock taken or changed in the
                // moments before it, which its replica never received: the replica
                // that takes the key over may hand it to another process. While this
                // owner lives nothing changes: it alone decides the key, under its
                // stripe, from its own copy, so there is one holder at a time and every
                // fence is a stamp of its clock, which only grows.
                Copies::Async => Awaited::Nothing,
                Copies::Sync if lock_op => Awaited::Replicas,
                Copies::Sync => Awaited::Every,
            };
            self.propagate(&key, &w, turn, awaited).await;
            // A deletion frees an exclusive lock: its next waiter's turn (one, not all).
            if matches!(
                op,
                Op::LockRelease { .. } | Op::DelIfEq { .. } | Op::Del { .. }
            ) {
                self.lines.hand_over(&key);
            }
        }
        response
    }

    /// The owner's entry for `key`, fetched from the previous placement when the owner
    /// has none yet and a hand-off may still be moving it.
    /// A node that is catching up also compares a copy it holds with theirs, and keeps
    /// the newer.
    pub(super) async fn current(&self, key: &[u8]) -> Option<(Vec<u8>, Option<Duration>)> {
        let mut mine = self.local_entry(key);
        let settled = |m: &Option<(Vec<u8>, Option<Duration>)>| {
            m.as_ref()
                .is_some_and(|(e, _)| !matches!(entry::parse(e), Some((_, State::Elsewhere))))
        };
        if (settled(&mine) && !self.catching_up()) || crate::fault::on("no-owner-routing") {
            return mine;
        }
        for node in self.previous_placement(key) {
            if node == self.id {
                continue;
            }
            let op = Op::Read { key: key.to_vec() };
            let Ok(Response::Entry(Some(e))) =
                self.ask(&node, Route::Here, &op, self.cfg.timeout).await
            else {
                continue;
            };
            let usable = matches!(
                entry::parse(&e.stored),
                Some((_, State::Value(_) | State::Deleted))
            );
            let held = mine
                .as_ref()
                .filter(|_| settled(&mine))
                .map(|(m, _)| m.as_slice());
            if usable && entry::is_newer(&e.stored, held) {
                self.install(key, &e);
                mine = Some((e.stored, e.ttl));
            }
            if settled(&mine) && !self.catching_up() {
                break;
            }
        }
        mine
    }

    pub(super) fn catching_up(&self) -> bool {
        let v = self.view.read().unwrap_or_else(|e| e.into_inner());
        Instant::now() < v.catching_up_until
    }

    /// What the owner answers a read with.
    pub(super) async fn owner_read(&self, key: &[u8]) -> Response {
        let _turn = self.stripe(key).lock().await;
        match self.current(key).await {
            Some((stored, ttl)) if matches!(entry::parse(&stored), Some((_, State::Value(_)))) => {
                Response::Entry(Some(Entry { stored, ttl }))
            }
            _ => Response::Entry(None),
        }
    }

    /// A read a PHP process of this host could not serve from the segment: the owner,
    /// then the replicas, then (during a hand-off) the previous placement.
    pub(super) async fn read_through(&self, key: &[u8]) -> Response {
        let placement = self.placement(key);
        if placement.first().is_some_and(|o| *o == self.id) {
            return self.owner_read(key).await;
        }
        let mut asked = Vec::new();
        let candidates = placement
            .iter()
            .cloned()
            .chain(self.previous_placement(key));
        for (i, node) in candidates.enumerate() {
            if asked.contains(&node) {
                continue;
            }
            asked.push(node.clone());
            let found = if node == self.id {
                self.local_entry(key)
                    .map(|(stored, ttl)| Entry { stored, ttl })
            } else {
                let route = if i == 0 { Route::Owner } else { Route::Here };
                match self
                    .ask(
                        &node,
                        route,
                        &Op::Read { key: key.to_vec() },
                        self.cfg.timeout,
                    )
                    .await
                {
                    Ok(Response::Entry(e)) if i == 0 => {
                        // The owner's answer is the answer, a miss included.
                        if let Some(e) = &e {
                            self.keep_if_hot(key, e);
                        }
                        return Response::Entry(e);
                    }
                    Ok(Response::Entry(e)) => e,
                    _ => None,
                }
            };
            match found.as_ref().and_then(|e| entry::parse(&e.stored)) {
                Some((_, State::Value(_))) => return Response::Entry(found),
                Some((_, State::Deleted)) => return Response::Entry(None),
                _ => {}
            }
        }
        Response::Entry(None)
    }

    /// Keeps a copy of a remote value read often from this host; a newer write's
    /// gossip marker replaces it.
    pub(super) fn keep_if_hot(&self, key: &[u8], e: &Entry) {
        let hot = {
            let mut reads = self.reads.lock().unwrap_or_else(|p| p.into_inner());
            if reads.len() > 100_000 {
                reads.retain(|_, (_, at)| at.elapsed() < HOT_WINDOW);
            }
            let r = reads.entry(key.to_vec()).or_insert((0, Instant::now()));
            if r.1.elapsed() > HOT_WINDOW {
                *r = (0, Instant::now());
            }
            r.0 += 1;
            r.0 >= HOT_READS
        };
        if hot {
            let ttl = Some(e.ttl.map_or(HOT_COPY_TTL, |t| t.min(HOT_COPY_TTL)));
            self.install(
                key,
                &Entry {
                    stored: e.stored.clone(),
                    ttl,
                },
            );
        }
    }

    /// A request for this node's own copy, from another node.
    pub(super) async fn here(&self, op: Op) -> Response {
        match op {
            Op::Read { key } => Response::Entry(
                self.local_entry(&key)
                    .map(|(stored, ttl)| Entry { stored, ttl }),
            ),
            Op::Put { key, entry } => {
                let _turn = self.stripe(&key).lock().await;
                self.install(&key, &entry);
                Response::Done
            }
            // Each entry as a `Put`: under its key's stripe (taken one at a time, never
            // two at once, so a batch cannot deadlock with a decision), and installed
            // only over an older copy, so that a write decided here while the batch
            // was on its way is never undone, nor a delete's tombstone replaced. Each
            // stripe lock draws on tokio's cooperative budget, so a long batch yields
            // its worker to the node's other requests.
            Op::PutMany { entries } => {
                for (key, entry) in &entries {
                    let _turn = self.stripe(key).lock().await;
                    self.install(key, entry);
                }
                Response::Done
            }
            Op::Clear { prefix } => self.clear_here(&prefix).await,
            Op::Members => Response::Members(self.members()),
            _ => invalid("not a request for a node's own copy"),
        }
    }

    /// Long-polls the owner's copy until its version differs from `version`.
    pub(super) async fn wait_here(
        self: &Arc<Self>,
        key: Vec<u8>,
        version: u64,
        timeout: Duration,
    ) -> Response {
        let deadline = Instant::now() + timeout;
        loop {
            let (seen, local_version) = self.versions(&key);
            if seen != version {
                return Response::Bool(true);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Response::Bool(false);
            }
            let node = self.clone();
            let k = key.clone();
            let slice = left.min(Duration::from_secs(1));
            let woke = tokio::task::spawn_blocking(move || {
                node.local.wait_for_change(&k, local_version, slice)
            })
            .await;
            if !matches!(woke, Ok(Ok(_))) {
                return Response::Bool(true);
            }
        }
    }

    /// Waits in the line of the exclusive lock `key`, which this node owns, until a
    /// release hands this waiter its turn (one waiter per release, `lines.rs`) or the
    /// lock is free or its TTL ran out (true), or `timeout` passes (false). The look
    /// and the joining are under the key's stripe lock, so a release either finds the
    /// waiter in line or comes before the look that sees the lock free. The waiter
    /// sleeps at most `LINE_SLICE` and looks again: a turn handed to a waiter whose
    /// process died costs the others one slice, never a hang.
    pub(super) async fn wait_in_line(
        self: &Arc<Self>,
        key: Vec<u8>,
        timeout: Duration,
    ) -> Response {
        let deadline = Instant::now() + timeout;
        let mut turn = None;
        loop {
            let ttl = {
                let _turn = self.stripe(&key).lock().await;
                let held = self
                    .current(&key)
                    .await
                    .filter(|(e, _)| matches!(entry::parse(e), Some((_, State::Value(_)))));
                let Some((_, ttl)) = held else {
                    return Response::Bool(true);
                };
                if turn.is_none() {
                    turn = Some(self.lines.join(&key));
                }
                ttl
            };
            let now = Instant::now();
            let mut until = deadline.min(now + LINE_SLICE);
            if let Some(ttl) = ttl {
                // Nobody signals an expiry: look again when the holder's TTL runs out.
                until = until.min(now + ttl + Duration::from_millis(1));
            }
            if let Some(wait) = turn.as_mut() {
                if tokio::time::timeout_at(until.into(), wait).await.is_ok() {
                    return Response::Bool(true);
                }
            }
            if Instant::now() >= deadline {
                drop(turn);
                self.lines.forget_gone(&key);
                return Response::Bool(false);
            }
        }
    }
}
