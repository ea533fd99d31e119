//! What a node of the gossip cluster knows of its fleet's health: `ephpm cluster`,
//! `Ephpm\Kv::members()`, the status page and the metrics show it. Plain data; the node
//! fills it (`cluster/node/health.rs`), the wire carries it (`wire/mod.rs`).

/// A member's state, from the gossip layer's failure detection (chitchat's phi accrual
/// detector): `Alive` while it counts the member live and its heartbeat moves, `Suspect`
/// while it still counts it live but its heartbeat has not moved for a while (the
/// detector has not made up its mind yet), `Dead` once the detector gave up on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberState {
    Alive = 1,
    Suspect = 2,
    Dead = 3,
}

impl MemberState {
    pub fn name(self) -> &'static str {
        match self {
            MemberState::Alive => "alive",
            MemberState::Suspect => "suspect",
            MemberState::Dead => "dead",
        }
    }
}

/// One member as the answering node sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// Its node id.
    pub id: String,
    pub state: MemberState,
    /// Whether it is the node that answered.
    pub this_node: bool,
    /// Milliseconds since its heartbeat last moved; `None` for the answering node, and
    /// for one never heard.
    pub last_heard_ms: Option<u64>,
    /// Of the keys the answering host holds a live copy of, how many this member owns
    /// under the current placement (at most the first `fleet::SHARE_SAMPLE` keys are
    /// looked at), and that as a share of them (0 to 1).
    pub keys: u64,
    pub share: f64,
    /// Copies of writes (replication, pushes to every host, hand-off entries) from the
    /// answering node to this member still on their way, and those that never landed
    /// (no answer in time, refused, or given up past the bound on background copies).
    pub copies_pending: u64,
    pub copies_dropped: u64,
    /// How far its clock is ahead of the answering node's (negative: behind), in
    /// milliseconds, from the send time in its last gossip datagram heard directly;
    /// `None` when none was.
    pub clock_skew_ms: Option<i64>,
    /// The data-plane versions it publishes, and the one the answering node speaks with
    /// it (`None`: none in common).
    pub versions: Vec<u8>,
    pub version: Option<u8>,
}

/// What a node answers about its fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct Health {
    /// The answering node's id.
    pub node: String,
    /// Every member it knows of, dead ones included, sorted by id.
    pub members: Vec<Member>,
    /// What it refused since it started, by cause (`cluster/node/serve.rs`).
    pub refusals: Vec<(String, u64)>,
}

/// How many keys of the host's copy the ownership share looks at, at most.
pub const SHARE_SAMPLE: usize = 100_000;
