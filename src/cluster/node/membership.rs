//! Membership: chitchat's live nodes as the view placement uses, and the hand-off of
//! entries to their new placement when it changes.

use super::*;

impl Node {
    /// Moves the entries this node held under `old` to the nodes that hold them under
    /// `new` and did not before, in batches (`batches.rs`). Copies are applied only over
    /// older ones, so a node that was away gets what was written meanwhile, and a move
    /// is never undone by a late one, nor a write that raced with it.
    pub(super) async fn hand_off(self: &Arc<Self>, old: &Members, new: &Members) {
        if old.len() == 1 && old.contains(&self.id) {
            // It was alone (it just started): what it holds came from the others.
            return;
        }
        let _one_at_a_time = self.handoff.lock().await;
        let started = Instant::now();
        let Ok(keys) = self.local.keys() else { return };
        let rf = self.cfg.replication_factor;
        let mut outbox = batches::Outbox::new(self.clone());
        for (i, key) in keys.into_iter().enumerate() {
            if i % YIELD_EVERY == 0 {
                // Gathering is reads of the segment, with no await of its own while the
                // batches' slots are free: let the node's other tasks in.
                tokio::task::yield_now().await;
            }
            if key.starts_with(RESERVED) {
                continue;
            }
            let before = old.place(&key, rf);
            if !before.contains(&self.id) {
                continue;
            }
            let after = new.place(&key, rf);
            let targets: Vec<_> = after
                .iter()
                .filter(|n| **n != self.id && !before.contains(n))
                .collect();
            if targets.is_empty() {
                continue;
            }
            let Some((stored, ttl)) = self.local_entry(&key) else {
                continue;
            };
            if !matches!(
                entry::parse(&stored),
                Some((_, State::Value(_) | State::Deleted))
            ) {
                continue;
            }
            let entry = Entry { stored, ttl };
            for t in targets {
                outbox.push(t, key.clone(), entry.clone()).await;
            }
        }
        let t = outbox.finish().await;
        if t.moved + t.missed > 0 {
            let missed = match t.missed {
                0 => String::new(),
                n => format!("; {n} did not reach their node"),
            };
            tracing::info!(
                "cluster node {}: handed {} entries to their new placement in {} batches, \
                 {} ms{missed}",
                self.id,
                t.moved,
                t.batches,
                started.elapsed().as_millis()
            );
        }
    }
}

/// The hand-off lets other tasks run after gathering this many keys.
const YIELD_EVERY: usize = 256;

/// Follows chitchat's live nodes: the members are the live node ids that published a
/// data-plane address (a restarted node's newest generation wins) and speak a
/// data-plane version this node speaks (`wire/version.rs`). One that speaks none is no
/// member: it is said once per generation, with both sides' versions, and counted.
pub(super) async fn follow_membership(
    node: Arc<Node>,
    mut watcher: tokio::sync::watch::Receiver<
        std::collections::BTreeMap<ChitchatId, chitchat::NodeState>,
    >,
) {
    let mut refused: std::collections::HashSet<(Arc<str>, u64)> = Default::default();
    loop {
        let (members, addrs, versions) = {
            let live = watcher.borrow_and_update();
            let mut addrs: HashMap<Arc<str>, (u64, SocketAddr, Version)> = HashMap::new();
            for (id, state) in live.iter() {
                let Some(addr) = state.get(gossip::DATA_ADDR).and_then(|a| a.parse().ok()) else {
                    continue;
                };
                // A build from before versions were published says nothing: it speaks 2.
                let theirs = match state.get(version::GOSSIP_KEY) {
                    None => vec![version::LEGACY],
                    Some(text) => version::parse(text).unwrap_or_default(),
                };
                let Some(spoken) = version::choose(version::known(), &theirs) else {
                    if refused.insert((id.node_id.clone(), id.generation_id)) {
                        node.refused.count_version();
                        tracing::warn!(
                            "cluster node {}: {} speaks data-plane versions {}, this node {}: \
                             no version in common, so it is no member",
                            node.id,
                            id.node_id,
                            match theirs.is_empty() {
                                true =>
                                    format!("{:?}", state.get(version::GOSSIP_KEY).unwrap_or("")),
                                false => version::named(&theirs),
                            },
                            version::named(version::known())
                        );
                    }
                    continue;
                };
                let e = addrs
                    .entry(id.node_id.clone())
                    .or_insert((id.generation_id, addr, spoken));
                if id.generation_id >= e.0 {
                    *e = (id.generation_id, addr, spoken);
                }
            }
            let own = node.addr(&node.id);
            if let Some(own) = own {
                addrs
                    .entry(node.id.clone())
                    .or_insert((0, own, version::LEGACY));
            }
            let members = Members::new(addrs.keys().cloned());
            let versions = addrs.iter().map(|(k, (_, _, v))| (k.clone(), *v)).collect();
            (
                members,
                addrs
                    .into_iter()
                    .map(|(k, (_, a, _))| (k, a))
                    .collect::<HashMap<_, _>>(),
                versions,
            )
        };
        let changed = {
            let mut v = node.view.write().unwrap_or_else(|e| e.into_inner());
            v.addrs = addrs;
            v.versions = versions;
            if v.members != members {
                let old = std::mem::replace(&mut v.members, members.clone());
                let alone = old.len() == 1 && old.contains(&node.id);
                // Alone, this node's view says nothing of where keys were: the placement
                // before it (re)joined is the new one without it.
                v.previous = if alone {
                    Members::new(members.ids().filter(|n| **n != node.id).cloned())
                } else {
                    old.clone()
                };
                v.changed_at = Instant::now();
                if alone && members.len() > 1 {
                    v.catching_up_until = Instant::now() + HANDOFF_WINDOW;
                }
                Some(old)
            } else {
                None
            }
        };
        if let Some(old) = changed {
            let ids: Vec<_> = members.ids().map(|s| s.to_string()).collect();
            tracing::info!("cluster node {}: members now {}", node.id, ids.join(", "));
            let n = node.clone();
            tokio::spawn(async move { n.hand_off(&old, &members).await });
        }
        if watcher.changed().await.is_err() {
            return;
        }
    }
}
