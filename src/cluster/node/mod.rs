//! A running node: the unix socket its host's PHP processes talk to, the data plane
//! other nodes talk to, membership from gossip, and the hand-off of keys when it
//! changes. Every decision about a key is made here, at the key's owner, under the key's
//! stripe lock (`decide.rs`); the owner never forwards a decision it was asked for.
//!
//! - `decisions.rs`  what a request does: routing to the owner, deciding, reads, waits
//! - `copies.rs`     the segment's copies: keeping them, copying them to the other
//!   members and to gossip, applying what gossip brings, clearing
//! - `membership.rs` chitchat's live nodes as the view, and the hand-off when it changes
//! - `batches.rs`    the hand-off's entries, in batches per node
//! - `serve.rs`      the listeners: caps, timeouts, SO_PEERCRED, what is refused
//! - `health.rs`     what it knows of the fleet: members' states, copies, skew, refusals

mod batches;
mod copies;
mod decisions;
mod health;
mod lines;
mod membership;
mod serve;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use chitchat::{ChitchatConfig, ChitchatHandle, ChitchatId, FailureDetectorConfig};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::clock::{HybridClock, now_micros};
use super::decide::{self, Current, TOMBSTONE_GRACE, Write};
use super::gossip::{self, SealedUdp};
use super::keyring::{self, Keyring};
use super::peers::Peers;
use super::placement::Members;
use super::{ClusterError, NodeConfig, RESERVED};
use crate::store::shm::{ShmStore, open_shared};
use crate::store::{KeyTtl, Store, Value, bytes};
use crate::wire::entry::{self, State};
use crate::wire::version::{self, Version};
use crate::wire::{Entry, Failure, Op, Response, Route};
use crate::wire::{segment_options, socket_path};

/// After a membership change, an owner that misses a key asks the previous placement
/// for this long: the time the hand-off has to move it.
const HANDOFF_WINDOW: Duration = Duration::from_secs(30);
/// A copy of a remote large value is kept after this many reads of it within
/// `HOT_WINDOW`, until gossip announces a newer write (or `HOT_COPY_TTL`).
const HOT_READS: u32 = 2;
const HOT_WINDOW: Duration = Duration::from_secs(10);
const HOT_COPY_TTL: Duration = Duration::from_secs(60);
const STRIPES: usize = 256;

struct View {
    members: Members,
    addrs: HashMap<Arc<str>, SocketAddr>,
    /// The data-plane version spoken with each member (`wire/version.rs`).
    versions: HashMap<Arc<str>, Version>,
    previous: Members,
    changed_at: Instant,
    /// Until then this node is catching up: it just found its peers (it started, or
    /// came back), so its own copies may be missing or older than the cluster's, and as
    /// an owner it compares them with the previous placement's before deciding.
    catching_up_until: Instant,
}

pub struct Node {
    id: Arc<str>,
    cfg: NodeConfig,
    local: Arc<ShmStore>,
    clock: HybridClock,
    peers: Peers,
    view: RwLock<View>,
    stripes: Vec<tokio::sync::Mutex<()>>,
    handoff: tokio::sync::Mutex<()>,
    /// Waiters of the exclusive locks this node owns (`lines.rs`).
    lines: lines::Lines,
    reads: Mutex<HashMap<Vec<u8>, (u32, Instant)>>,
    gossip: std::sync::OnceLock<Arc<tokio::sync::Mutex<chitchat::Chitchat>>>,
    refused: serve::Refusals,
    started: Instant,
    /// Lock copies to other hosts still on their way in the background (`propagate`).
    background_copies: std::sync::atomic::AtomicUsize,
    /// Copies of `?copies=async` lock operations waiting for their members (`copies.rs`).
    queued: copies::Queued,
    /// Copies of writes per member, on their way and dropped (`health.rs`).
    copies: Arc<health::Copies>,
    /// When each node's heartbeat last moved (`health.rs`).
    heard: health::Heard,
    /// Each gossip peer's clock minus ours, in µs (`gossip/mod.rs`).
    skews: gossip::Skews,
}

/// A started node; `stop` ends it.
pub struct Running {
    node: Arc<Node>,
    chitchat: ChitchatHandle,
    tasks: Vec<JoinHandle<()>>,
    socket: PathBuf,
}

impl Running {
    /// One line: where the node listens.
    pub fn describe(&self) -> String {
        let data = self
            .node
            .addr(&self.node.id)
            .map_or("?".into(), |a| a.to_string());
        format!(
            "serving: gossip {}, data plane {data}, socket {}",
            self.node.cfg.gossip_addr,
            self.socket.display()
        )
    }

    pub async fn stop(self) {
        for t in &self.tasks {
            t.abort();
        }
        let _ = self.chitchat.shutdown().await;
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// Starts a node on the current runtime.
pub async fn start(cfg: NodeConfig) -> Result<Running, ClusterError> {
    cfg.check()?;
    let fail = |what: &str, e: &dyn std::fmt::Display| ClusterError::Start(format!("{what}: {e}"));
    let (local, _) = open_shared(&segment_options(&cfg.store)).map_err(|e| fail("segment", &e))?;
    let data = TcpListener::bind(cfg.data_addr)
        .await
        .map_err(|e| fail(&format!("data plane {}", cfg.data_addr), &e))?;
    let mut data_addr = data.local_addr().map_err(|e| fail("data plane", &e))?;
    if data_addr.ip().is_unspecified() {
        data_addr.set_ip(cfg.gossip_addr.ip());
    }
    let socket = socket_path(&cfg.store).map_err(|e| fail("socket", &e))?;
    // A socket left by a node that died; the lease says nobody else serves it.
    let _ = std::fs::remove_file(&socket);
    let clients =
        UnixListener::bind(&socket).map_err(|e| fail(&socket.display().to_string(), &e))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| fail("socket mode", &e))?;
    }
    if cfg.secrets.is_empty() {
        tracing::warn!(
            "cluster node {} runs WITHOUT AUTHENTICATION OR ENCRYPTION \
             (ephpm.cluster.allow_insecure_no_auth=1): anyone who can reach {} and {} can \
             read and change every key",
            cfg.node_id,
            cfg.gossip_addr,
            data_addr
        );
    }
    let id: Arc<str> = Arc::from(cfg.node_id.as_str());
    let keyring = Arc::new(Keyring::new(&cfg.secrets));
    let node = Arc::new(Node {
        id: id.clone(),
        local,
        clock: HybridClock::default(),
        peers: Peers::new(keyring.clone()),
        view: RwLock::new(View {
            members: Members::new([id.clone()]),
            addrs: HashMap::from([(id.clone(), data_addr)]),
            versions: HashMap::new(),
            previous: Members::new([id.clone()]),
            changed_at: Instant::now(),
            catching_up_until: Instant::now(),
        }),
        stripes: (0..STRIPES).map(|_| tokio::sync::Mutex::new(())).collect(),
        handoff: tokio::sync::Mutex::new(()),
        lines: lines::Lines::default(),
        reads: Mutex::new(HashMap::new()),
        gossip: std::sync::OnceLock::new(),
        refused: serve::Refusals::default(),
        started: Instant::now(),
        background_copies: std::sync::atomic::AtomicUsize::new(0),
        queued: copies::Queued::default(),
        copies: Arc::default(),
        heard: health::Heard::default(),
        skews: gossip::Skews::default(),
        cfg: cfg.clone(),
    });

    let chitchat_cfg = ChitchatConfig {
        chitchat_id: ChitchatId::new(cfg.node_id.clone(), now_micros(), cfg.gossip_addr),
        cluster_id: "ephpm".into(),
        gossip_interval: cfg.gossip_interval,
        listen_addr: cfg.gossip_addr,
        seed_nodes: cfg.seeds.clone(),
        failure_detector_config: FailureDetectorConfig {
            initial_interval: cfg.gossip_interval * 5,
            dead_node_grace_period: Duration::from_secs(3600),
            ..FailureDetectorConfig::default()
        },
        marked_for_deletion_grace_period: Duration::from_secs(600),
        catchup_callback: None,
        extra_liveness_predicate: None,
    };
    let transport = SealedUdp {
        keyring: keyring.clone(),
        dropped: node.refused.unauthentic.clone(),
        replayed: node.refused.replayed.clone(),
        skews: node.skews.clone(),
    };
    let handle = chitchat::spawn_chitchat(
        chitchat_cfg,
        vec![
            (gossip::DATA_ADDR.into(), data_addr.to_string()),
            (
                version::GOSSIP_KEY.into(),
                version::publish(version::known()),
            ),
        ],
        &transport,
    )
    .await
    .map_err(|e| fail("gossip", &e))?;
    let chitchat = handle.chitchat();
    let _ = node.gossip.set(chitchat.clone());
    let (tx, rx) = mpsc::unbounded_channel();
    let watcher = {
        let c = chitchat.lock().await;
        c.subscribe_event(gossip::KEY_PREFIX, move |ev| {
            let _ = tx.send((
                ev.node.node_id.clone(),
                ev.key.to_string(),
                ev.value.to_string(),
            ));
        })
        .forever();
        c.live_nodes_watcher()
    };
    let mut tasks = vec![
        tokio::spawn(serve::serve_clients(node.clone(), clients)),
        tokio::spawn(serve::serve_peers(node.clone(), data)),
        tokio::spawn(membership::follow_membership(node.clone(), watcher)),
        tokio::spawn(copies::apply_gossip(node.clone(), rx)),
        tokio::spawn(copies::collect_published(node.clone())),
        tokio::spawn(serve::report_refusals(node.clone())),
        tokio::spawn(health::follow_heartbeats(node.clone())),
    ];
    if let Some(file) = node.cfg.secret_file.clone() {
        let id = node.cfg.node_id.clone();
        tasks.push(tokio::spawn(keyring::follow(keyring, file, id)));
    }
    Ok(Running {
        node,
        chitchat: handle,
        tasks,
        socket,
    })
}

fn invalid(why: &str) -> Response {
    Response::Failed(Failure::Invalid, why.into())
}

fn unavailable(node: &str, why: &str) -> Response {
    Response::Failed(Failure::Unavailable, format!("cluster node {node}: {why}"))
}

impl Node {
    pub fn members(&self) -> Vec<String> {
        let v = self.view.read().unwrap_or_else(|e| e.into_inner());
        v.members.ids().map(|id| id.to_string()).collect()
    }

    fn placement(&self, key: &[u8]) -> Vec<Arc<str>> {
        let v = self.view.read().unwrap_or_else(|e| e.into_inner());
        v.members.place(key, self.cfg.replication_factor)
    }

    /// The previous placement's nodes while a hand-off may still be moving the key.
    fn previous_placement(&self, key: &[u8]) -> Vec<Arc<str>> {
        let v = self.view.read().unwrap_or_else(|e| e.into_inner());
        if v.changed_at.elapsed() > HANDOFF_WINDOW {
            return Vec::new();
        }
        v.previous.place(key, self.cfg.replication_factor)
    }

    fn addr(&self, node: &str) -> Option<SocketAddr> {
        let v = self.view.read().unwrap_or_else(|e| e.into_inner());
        v.addrs.get(node).copied()
    }

    /// Where `node`'s data plane is, and the version spoken with it.
    fn peer(&self, node: &str) -> Result<(SocketAddr, Version), String> {
        let v = self.view.read().unwrap_or_else(|e| e.into_inner());
        let addr = v.addrs.get(node).copied();
        let addr = addr.ok_or_else(|| "its address is not known".to_string())?;
        Ok((
            addr,
            v.versions.get(node).copied().unwrap_or(version::LEGACY),
        ))
    }

    /// Asks `node`, in the version spoken with it: an operation that version cannot
    /// carry goes as it can (`Op::spoken_in`: `Async` copies as awaited ones).
    async fn ask(
        &self,
        node: &str,
        route: Route,
        op: &Op,
        timeout: Duration,
    ) -> Result<Response, String> {
        let (addr, v) = self.peer(node)?;
        let op = op.spoken_in(v);
        self.peers.ask((addr, v), route, &op, timeout).await
    }

    fn stripe(&self, key: &[u8]) -> &tokio::sync::Mutex<()> {
        &self.stripes[(xxhash_rust::xxh3::xxh3_64(key) % STRIPES as u64) as usize]
    }

    /// Until the first membership view has settled, a node that was given seeds does
    /// not decide: alone, it would think it owns every key.
    async fn settled(&self) {
        let grace = Duration::from_secs(2) + self.cfg.gossip_interval * 3;
        loop {
            let (peers, since) = {
                let v = self.view.read().unwrap_or_else(|e| e.into_inner());
                (v.members.len() > 1, v.changed_at.elapsed())
            };
            let quiet = since >= self.cfg.gossip_interval * 2;
            if self.cfg.seeds.is_empty() || (peers && quiet) || self.started.elapsed() >= grace {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
