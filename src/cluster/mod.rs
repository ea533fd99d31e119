//! The gossip cluster: hosts that share one store without Redis. No PHP here.
//!
//! One node runs per host store (`lease.rs`: a PHP process with `ephpm.cluster.enabled=1`
//! or `ephpm-node`). PHP processes of the host read the host's cluster segment directly
//! and send everything else to the node over a unix socket beside the segment
//! (`store::cluster`); what both sides share — frames, an entry's encoding, the socket's
//! peer, where the socket and segment are — is `crate::wire`. Nodes find each other by chitchat gossip, sealed with
//! ChaCha20-Poly1305 (`gossip/mod.rs`, `crypto/mod.rs`), and talk over a sealed TCP data plane
//! (`peers.rs`).
//!
//! - Placement (`placement.rs`): rendezvous hashing over the live node ids; the first is
//!   the key's owner, the next `replication_factor - 1` its replicas.
//! - Arbitration (`decide.rs`): every write is decided by the key's owner, one at a time
//!   per key, stamped by the owner's clock (`clock.rs`, `entry.rs`), then copied to the
//!   replicas; small entries are also published on gossip, large ones as a marker.
//! - Hand-off (`node/membership.rs`): when membership changes, entries move to their new owner and
//!   replicas, and until they have, an owner that misses asks the previous placement.

pub mod clock;
pub mod crypto;
pub mod decide;
pub mod gossip;
pub mod keyring;
pub mod lease;
pub mod node;
pub mod peers;
pub mod placement;
pub mod secrets;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::config::ClusterSettings;
use crate::store::shm::ShmOptions;

/// How a node runs. `ephpm.cluster.*` in php.ini, or `ephpm-node`'s arguments.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// `ephpm.cluster.node_id` (default: the host name): the same across restarts.
    pub node_id: String,
    /// The host store whose cluster segment the node serves.
    pub store: ShmOptions,
    /// `ephpm.cluster.gossip_addr`: where gossip listens (UDP), and what peers are told.
    pub gossip_addr: SocketAddr,
    /// `ephpm.cluster.data_addr`: where the data plane listens (TCP); port 0 picks one,
    /// and the address travels in the node's gossip state.
    pub data_addr: SocketAddr,
    /// `ephpm.cluster.seeds`: gossip addresses of nodes to join through.
    pub seeds: Vec<String>,
    /// `ephpm.cluster.secret` (or `secret_file`): what every key is derived from; several
    /// during a rotation, the first signing, all of them verifying. Required, each at
    /// least 128 bits (see `secrets.rs`).
    pub secrets: Vec<Vec<u8>>,
    /// `ephpm.cluster.secret_file`, followed while the node runs (`keyring.rs`).
    pub secret_file: Option<PathBuf>,
    /// `ephpm.cluster.allow_insecure_no_auth`: run without a secret (loudly).
    pub allow_insecure_no_auth: bool,
    /// `ephpm.cluster.replication_factor`: copies of each key, owner included.
    pub replication_factor: usize,
    /// `ephpm.cluster.small_key_threshold`: entries up to this many bytes go on gossip.
    pub small_key_threshold: usize,
    /// `ephpm.cluster.gossip_interval`.
    pub gossip_interval: Duration,
    /// How long one node waits for another's answer.
    pub timeout: Duration,
    /// `ephpm.cluster.push_writes`: copy every write to every host before it returns
    /// (default). Off, hosts other than the replicas learn a write by gossip only: less
    /// traffic per write in a large fleet, and reads there that lag by a gossip round.
    pub push_writes: bool,
}

impl NodeConfig {
    pub fn new(node_id: &str, store: ShmOptions, gossip_addr: SocketAddr) -> Self {
        NodeConfig {
            node_id: node_id.into(),
            store,
            gossip_addr,
            data_addr: SocketAddr::new(gossip_addr.ip(), 0),
            seeds: Vec::new(),
            secrets: Vec::new(),
            secret_file: None,
            allow_insecure_no_auth: false,
            replication_factor: 2,
            small_key_threshold: 512,
            gossip_interval: Duration::from_secs(1),
            timeout: Duration::from_secs(1),
            push_writes: true,
        }
    }

    /// The node the `ephpm.cluster.*` settings describe, for the host store `store`.
    pub fn from_settings(s: &ClusterSettings, store: ShmOptions) -> Result<Self, ClusterError> {
        let addr = |name: &str, v: &str| {
            v.trim().parse::<SocketAddr>().map_err(|_| {
                ClusterError::Config(format!("ephpm.cluster.{name} must be IP:PORT, not \"{v}\""))
            })
        };
        let gossip_addr = addr("gossip_addr", &s.gossip_addr)?;
        let node_id = match s.node_id.trim() {
            "" => host_name(),
            id => id.to_string(),
        };
        let mut cfg = NodeConfig::new(&node_id, store, gossip_addr);
        if !s.data_addr.trim().is_empty() {
            cfg.data_addr = addr("data_addr", &s.data_addr)?;
        }
        cfg.seeds = s
            .seeds
            .split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(String::from)
            .collect();
        cfg.secrets = secrets::from_settings(s)?;
        cfg.secret_file = Some(s.secret_file.trim())
            .filter(|f| !f.is_empty())
            .map(PathBuf::from);
        cfg.allow_insecure_no_auth = s.allow_insecure_no_auth;
        cfg.push_writes = s.push_writes;
        cfg.replication_factor = s.replication_factor.min(usize::MAX as u64) as usize;
        cfg.small_key_threshold = s.small_key_threshold.min(usize::MAX as u64) as usize;
        if !(10..=60_000).contains(&s.gossip_interval_ms) {
            return Err(ClusterError::Config(
                "ephpm.cluster.gossip_interval must be between 10 and 60000 milliseconds".into(),
            ));
        }
        cfg.gossip_interval = Duration::from_millis(s.gossip_interval_ms);
        cfg.check()?;
        Ok(cfg)
    }

    /// Refuses to run without a secret unless told to, and checks the numbers.
    pub fn check(&self) -> Result<(), ClusterError> {
        if self.secrets.is_empty() && !self.allow_insecure_no_auth {
            return Err(ClusterError::NoSecret);
        }
        for secret in &self.secrets {
            secrets::check_strength(secret)?;
        }
        if self.node_id.is_empty() || self.node_id.len() > 255 {
            return Err(ClusterError::Config(
                "ephpm.cluster.node_id must be 1 to 255 bytes".into(),
            ));
        }
        if !(1..=16).contains(&self.replication_factor) {
            return Err(ClusterError::Config(
                "ephpm.cluster.replication_factor must be between 1 and 16".into(),
            ));
        }
        if self.small_key_threshold > 8192 {
            return Err(ClusterError::Config(
                "ephpm.cluster.small_key_threshold must be at most 8192 bytes: one gossip \
                 value must stay far below chitchat's ~65 KB limit"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// This host's name: the default node id.
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into the buffer.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    match rc {
        0 if len > 0 => String::from_utf8_lossy(&buf[..len]).into_owned(),
        _ => "localhost".into(),
    }
}

/// Keys of the cluster segment that belong to the node itself (its lease), never
/// moved, published or cleared.
pub const RESERVED: &[u8] = b"\0ephpm:";

#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error(
        "ephpm.cluster.secret is empty: every node of a cluster needs the same secret (it \
         keys the encryption of gossip and data). Set it, or set \
         ephpm.cluster.allow_insecure_no_auth=1 to run without authentication on a network \
         you trust"
    )]
    NoSecret,
    #[error("{0}")]
    Config(String),
    #[error("the cluster node cannot start: {0}")]
    Start(String),
}

/// The cluster's failure reaches callers as `StoreError::Cluster`, with this as its source.
impl From<ClusterError> for crate::store::StoreError {
    fn from(e: ClusterError) -> Self {
        crate::store::StoreError::Cluster(Box::new(e))
    }
}
