//! What this node knows of its fleet's health (`Op::Health`, `ground::fleet`): each
//! member's state, from chitchat's failure detector and from how long its heartbeat has
//! not moved; the share of this host's keys it owns; the copies on their way to it and
//! those that never landed; how far its clock is from ours; the versions it speaks. And
//! what this node refused, by cause.
//!
//! Everything here is this node's own view: another node may see the fleet otherwise
//! (a member it cannot reach, copies it could not deliver).

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use super::*;
use crate::ground::fleet::{Health, Member, MemberState, SHARE_SAMPLE};
use crate::wire::version::{self, Version};

/// A member the failure detector still counts live is a suspect once its heartbeat has
/// not moved for this many gossip intervals, and at least `SUSPECT_AFTER_AT_LEAST`: a
/// node gossips, and so moves its heartbeat, once per interval, and three missed rounds
/// are no longer the jitter of a busy host.
const SUSPECT_AFTER_INTERVALS: u32 = 3;
const SUSPECT_AFTER_AT_LEAST: Duration = Duration::from_millis(500);

/// Copies of writes per member: (on their way, never landed).
#[derive(Default)]
pub(super) struct Copies {
    per: Mutex<HashMap<Arc<str>, (u64, u64)>>,
}

/// `n` copies to one member on their way: counted as landed only when told so
/// (`landed`), as dropped when let go otherwise — an error, a refusal, or a future
/// dropped before it finished.
pub(super) struct InFlight {
    copies: Arc<Copies>,
    member: Arc<str>,
    n: u64,
    landed: bool,
}

impl Copies {
    pub fn start(self: &Arc<Self>, member: &Arc<str>, n: u64) -> InFlight {
        let mut per = self.per.lock().unwrap_or_else(|e| e.into_inner());
        per.entry(member.clone()).or_default().0 += n;
        InFlight {
            copies: self.clone(),
            member: member.clone(),
            n,
            landed: false,
        }
    }

    fn counts(&self, member: &str) -> (u64, u64) {
        let per = self.per.lock().unwrap_or_else(|e| e.into_inner());
        per.get(member).copied().unwrap_or_default()
    }
}

impl InFlight {
    pub fn landed(mut self) {
        self.landed = true;
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut per = self.copies.per.lock().unwrap_or_else(|e| e.into_inner());
        let c = per.entry(self.member.clone()).or_default();
        c.0 = c.0.saturating_sub(self.n);
        if !self.landed {
            c.1 += self.n;
        }
    }
}

/// When each node's heartbeat last moved, as this node saw it: node id → (generation,
/// heartbeat, when it moved).
#[derive(Default)]
pub(super) struct Heard {
    beats: Mutex<HashMap<Arc<str>, (u64, u64, Instant)>>,
}

/// Looks at every node's heartbeat once per gossip interval.
pub(super) async fn follow_heartbeats(node: Arc<Node>) {
    let Some(chitchat) = node.gossip.get().cloned() else {
        return;
    };
    loop {
        tokio::time::sleep(node.cfg.gossip_interval).await;
        let beats: Vec<(Arc<str>, u64, u64)> = {
            let c = chitchat.lock().await;
            c.node_states()
                .iter()
                .map(|(id, s)| (id.node_id.clone(), id.generation_id, s.heartbeat().into()))
                .collect()
        };
        let mut heard = node.heard.beats.lock().unwrap_or_else(|e| e.into_inner());
        for (id, generation, beat) in beats {
            let seen = heard
                .entry(id)
                .or_insert((generation, beat, Instant::now()));
            // An older generation (a node that restarted) says nothing new.
            if generation > seen.0 || (generation == seen.0 && beat != seen.1) {
                *seen = (generation, beat, Instant::now());
            }
        }
    }
}

/// What the failure detector says of the newest generation of one node id.
struct Seen {
    id: chitchat::ChitchatId,
    versions: Vec<Version>,
    live: bool,
    dead: bool,
}

impl Node {
    /// The answer to `Op::Health`.
    pub(super) async fn health(&self) -> Response {
        let Some(chitchat) = self.gossip.get() else {
            return invalid("the node has not started its gossip yet");
        };
        let mut seen: HashMap<Arc<str>, Seen> = HashMap::new();
        {
            let c = chitchat.lock().await;
            let live: HashSet<_> = c.live_nodes().cloned().collect();
            let dead: HashSet<_> = c.dead_nodes().cloned().collect();
            for (id, state) in c.node_states() {
                if seen
                    .get(&id.node_id)
                    .is_some_and(|s| s.id.generation_id > id.generation_id)
                {
                    continue;
                }
                let versions = match state.get(version::GOSSIP_KEY) {
                    None => vec![version::LEGACY],
                    Some(text) => version::parse(text).unwrap_or_default(),
                };
                seen.insert(
                    id.node_id.clone(),
                    Seen {
                        id: id.clone(),
                        versions,
                        live: live.contains(id),
                        dead: dead.contains(id),
                    },
                );
            }
        }
        let owned = self.owned_keys();
        let total: u64 = owned.values().sum();
        let members_now = {
            let v = self.view.read().unwrap_or_else(|e| e.into_inner());
            v.members.len().max(1)
        };
        let suspect_after =
            (self.cfg.gossip_interval * SUSPECT_AFTER_INTERVALS).max(SUSPECT_AFTER_AT_LEAST);
        let skews = self.skews.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let beats = self
            .heard
            .beats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let mut members: Vec<Member> = seen
            .into_values()
            .map(|s| {
                let this_node = s.id.node_id == self.id;
                let silent = beats
                    .get(&s.id.node_id)
                    .filter(|(generation, _, _)| *generation == s.id.generation_id)
                    .map(|(_, _, at)| at.elapsed());
                let state = if this_node {
                    MemberState::Alive
                } else if s.dead && !s.live {
                    MemberState::Dead
                } else if s.live && silent.is_some_and(|d| d < suspect_after) {
                    MemberState::Alive
                } else {
                    MemberState::Suspect
                };
                let keys = owned.get(&s.id.node_id).copied().unwrap_or(0);
                let share = match total {
                    // Nothing held here: the share placement gives each member.
                    0 if state != MemberState::Dead => 1.0 / members_now as f64,
                    0 => 0.0,
                    t => keys as f64 / t as f64,
                };
                let (pending, dropped) = self.copies.counts(&s.id.node_id);
                Member {
                    id: s.id.node_id.to_string(),
                    state,
                    this_node,
                    last_heard_ms: silent
                        .filter(|_| !this_node)
                        .map(|d| d.as_millis().min(u64::MAX as u128) as u64),
                    keys,
                    share,
                    copies_pending: pending,
                    copies_dropped: dropped,
                    clock_skew_ms: skews
                        .get(&s.id.gossip_advertise_addr)
                        .filter(|_| !this_node)
                        .map(|us| us / 1000),
                    version: version::choose(version::known(), &s.versions),
                    versions: s.versions,
                }
            })
            .collect();
        members.sort_by(|a, b| a.id.cmp(&b.id));
        Response::Health(Health {
            node: self.id.to_string(),
            members,
            refusals: self.refused.by_cause(),
        })
    }

    /// How many of the keys this host holds a live copy of each member owns (the first
    /// `SHARE_SAMPLE` looked at).
    fn owned_keys(&self) -> HashMap<Arc<str>, u64> {
        let mut owned = HashMap::new();
        let Ok(keys) = self.local.keys() else {
            return owned;
        };
        let members = {
            let v = self.view.read().unwrap_or_else(|e| e.into_inner());
            v.members.clone()
        };
        for key in keys
            .iter()
            .filter(|k| !k.starts_with(RESERVED))
            .take(SHARE_SAMPLE)
        {
            let live = self
                .local_entry(key)
                .is_some_and(|(e, _)| matches!(entry::parse(&e), Some((_, State::Value(_)))));
            if let Some(owner) = members.place(key, 1).into_iter().next().filter(|_| live) {
                *owned.entry(owner).or_insert(0) += 1;
            }
        }
        owned
    }
}

/// Copies to `member` in flight while `ask` runs: landed when it answers `Done`.
pub(super) async fn counted(
    copies: &Arc<Copies>,
    member: &Arc<str>,
    n: u64,
    ask: impl std::future::Future<Output = Result<Response, String>>,
) -> Result<Response, String> {
    let flight = copies.start(member, n);
    let result = ask.await;
    if matches!(result, Ok(Response::Done)) {
        flight.landed();
    }
    result
}

impl serve::Refusals {
    /// The counts by cause, as `Health` names them.
    pub(super) fn by_cause(&self) -> Vec<(String, u64)> {
        let [
            unauthentic,
            replayed,
            flood,
            foreign,
            accept_errors,
            version,
        ] = self.counts();
        [
            ("unauthentic", unauthentic),
            ("replayed", replayed),
            ("flood", flood),
            ("foreign_uid", foreign),
            ("accept_errors", accept_errors),
            ("version", version),
        ]
        .into_iter()
        .map(|(cause, n)| (cause.to_string(), n))
        .collect()
    }

    pub(super) fn count_version(&self) {
        self.version.fetch_add(1, Ordering::Relaxed);
    }
}
