//! A running node: the unix socket its host's PHP processes talk to, the data plane
//! other nodes talk to, membership from gossip, and the hand-off of keys when it
//! changes. Every decision about a key is made here, at the key's owner, under the key's
//! stripe lock (`decide.rs`); the owner never forwards a decision it was asked for.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use chitchat::{ChitchatConfig, ChitchatHandle, ChitchatId, FailureDetectorConfig};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::clock::{HybridClock, now_micros};
use super::crypto::{Plane, Sealer};
use super::decide::{self, Current, TOMBSTONE_GRACE, Write};
use super::entry::{self, State};
use super::gossip::{self, SealedUdp};
use super::peers::Peers;
use super::placement::Members;
use super::wire::{self, Entry, Failure, Op, Response, Route};
use super::{ClusterError, NodeConfig, RESERVED, segment_options, socket_path};
use crate::store::shm::{ShmStore, open_shared};
use crate::store::{KeyTtl, Store, Value, bytes};

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
    reads: Mutex<HashMap<Vec<u8>, (u32, Instant)>>,
    gossip: std::sync::OnceLock<Arc<tokio::sync::Mutex<chitchat::Chitchat>>>,
    dropped: Arc<AtomicU64>,
    started: Instant,
}

/// A started node; `stop` ends it.
pub struct Running {
    pub node: Arc<Node>,
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
    let socket = socket_path(&cfg.store);
    // A socket left by a node that died; the lease says nobody else serves it.
    let _ = std::fs::remove_file(&socket);
    let clients =
        UnixListener::bind(&socket).map_err(|e| fail(&socket.display().to_string(), &e))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| fail("socket mode", &e))?;
    }
    if cfg.secret.is_empty() {
        eprintln!(
            "ephpm: WARNING: cluster node {} runs WITHOUT AUTHENTICATION OR ENCRYPTION \
             (ephpm.cluster.allow_insecure_no_auth=1): anyone who can reach {} and {} can \
             read and change every key",
            cfg.node_id, cfg.gossip_addr, data_addr
        );
    }
    let id: Arc<str> = Arc::from(cfg.node_id.as_str());
    let dropped = Arc::new(AtomicU64::new(0));
    let node = Arc::new(Node {
        id: id.clone(),
        local,
        clock: HybridClock::default(),
        peers: Peers::new(Sealer::new(&cfg.secret, Plane::Data)),
        view: RwLock::new(View {
            members: Members::new([id.clone()]),
            addrs: HashMap::from([(id.clone(), data_addr)]),
            previous: Members::new([id.clone()]),
            changed_at: Instant::now(),
            catching_up_until: Instant::now(),
        }),
        stripes: (0..STRIPES).map(|_| tokio::sync::Mutex::new(())).collect(),
        handoff: tokio::sync::Mutex::new(()),
        reads: Mutex::new(HashMap::new()),
        gossip: std::sync::OnceLock::new(),
        dropped: dropped.clone(),
        started: Instant::now(),
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
        sealer: Arc::new(Sealer::new(&cfg.secret, Plane::Gossip)),
        dropped,
    };
    let handle = chitchat::spawn_chitchat(
        chitchat_cfg,
        vec![(gossip::DATA_ADDR.into(), data_addr.to_string())],
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
    let tasks = vec![
        tokio::spawn(serve_clients(node.clone(), clients)),
        tokio::spawn(serve_peers(node.clone(), data)),
        tokio::spawn(follow_membership(node.clone(), watcher)),
        tokio::spawn(apply_gossip(node.clone(), rx)),
        tokio::spawn(collect_published(node.clone())),
    ];
    Ok(Running {
        node,
        chitchat: handle,
        tasks,
        socket,
    })
}

async fn serve_clients(node: Arc<Node>, listener: UnixListener) {
    while let Ok((mut conn, _)) = listener.accept().await {
        let node = node.clone();
        tokio::spawn(async move {
            while let Ok(body) = wire::read_frame_async(&mut conn).await {
                let response = match wire::decode_request(&body) {
                    Some((Route::Client, op)) => node.route(op).await,
                    _ => invalid("a malformed request"),
                };
                if wire::write_frame_async(&mut conn, &wire::encode_response(&response))
                    .await
                    .is_err()
                {
                    break;
                }
            }
        });
    }
}

async fn serve_peers(node: Arc<Node>, listener: TcpListener) {
    while let Ok((mut conn, _)) = listener.accept().await {
        let _ = conn.set_nodelay(true);
        let node = node.clone();
        tokio::spawn(async move {
            while let Ok(sealed) = wire::read_frame_async(&mut conn).await {
                // A frame that fails authentication ends the connection unanswered: the
                // sender has another secret, or is not a node at all.
                let Some((route, op)) = node
                    .peers
                    .sealer()
                    .open(&sealed)
                    .and_then(|plain| wire::decode_request(&plain))
                else {
                    node.dropped.fetch_add(1, Ordering::Relaxed);
                    break;
                };
                let response = match route {
                    Route::Owner => node.decide_as_owner(op).await,
                    Route::Here => node.here(op).await,
                    Route::Client => invalid("a client request over the data plane"),
                };
                let body = node.peers.sealer().seal(&wire::encode_response(&response));
                if wire::write_frame_async(&mut conn, &body).await.is_err() {
                    break;
                }
            }
        });
    }
}

fn invalid(why: &str) -> Response {
    Response::Failed(Failure::Invalid, why.into())
}

fn unavailable(node: &str, why: &str) -> Response {
    Response::Failed(Failure::Unavailable, format!("cluster node {node}: {why}"))
}

impl Node {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn members(&self) -> Vec<String> {
        let v = self.view.read().unwrap_or_else(|e| e.into_inner());
        v.members.ids().map(|id| id.to_string()).collect()
    }

    /// Datagrams and frames dropped because they failed authentication.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
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

    async fn ask(
        &self,
        node: &str,
        route: Route,
        op: &Op,
        timeout: Duration,
    ) -> Result<Response, String> {
        let addr = self
            .addr(node)
            .ok_or_else(|| "its address is not known".to_string())?;
        self.peers.ask(addr, route, op, timeout).await
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

    /// A request of a PHP process of this host.
    async fn route(self: &Arc<Self>, op: Op) -> Response {
        match op {
            Op::Members => Response::Members(self.members()),
            Op::Stats => match self.local.stats() {
                Ok(s) => Response::Stats(s),
                Err(e) => Response::Failed(Failure::Invalid, e.to_string()),
            },
            Op::Clear { prefix } => self.clear_everywhere(&prefix).await,
            Op::Put { .. } => invalid("not a client request"),
            Op::Read { key } => {
                self.settled().await;
                self.read_through(&key).await
            }
            op => {
                self.settled().await;
                if cfg!(feature = "no-owner-routing") {
                    // ePHPm's bug, for the tests: every node decides on its own copy.
                    return self.decide(op).await;
                }
                let key = op.key().unwrap_or_default().to_vec();
                let timeout = match &op {
                    Op::Wait { timeout, .. } => *timeout + self.cfg.timeout,
                    _ => self.cfg.timeout,
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
    async fn decide_as_owner(self: &Arc<Self>, op: Op) -> Response {
        let key = op.key().unwrap_or_default();
        let mine = self.placement(key).first().is_some_and(|o| *o == self.id);
        if !mine && !cfg!(feature = "no-owner-routing") {
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
    async fn decide(self: &Arc<Self>, op: Op) -> Response {
        if let Op::Wait {
            key,
            version,
            timeout,
        } = op
        {
            return self.wait_here(key, version, timeout).await;
        }
        let key = op.key().unwrap_or_default().to_vec();
        let _turn = self.stripe(&key).lock().await;
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
            self.propagate(&key, &w).await;
        }
        response
    }

    /// The owner's entry for `key`, fetched from the previous placement when the owner
    /// has none yet and a hand-off may still be moving it.
    /// A node that is catching up also compares a copy it holds with theirs, and keeps
    /// the newer.
    async fn current(&self, key: &[u8]) -> Option<(Vec<u8>, Option<Duration>)> {
        let mut mine = self.local_entry(key);
        let settled = |m: &Option<(Vec<u8>, Option<Duration>)>| {
            m.as_ref()
                .is_some_and(|(e, _)| !matches!(entry::parse(e), Some((_, State::Elsewhere))))
        };
        if (settled(&mine) && !self.catching_up()) || cfg!(feature = "no-owner-routing") {
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

    fn catching_up(&self) -> bool {
        let v = self.view.read().unwrap_or_else(|e| e.into_inner());
        Instant::now() < v.catching_up_until
    }

    /// What the owner answers a read with.
    async fn owner_read(&self, key: &[u8]) -> Response {
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
    async fn read_through(&self, key: &[u8]) -> Response {
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
    fn keep_if_hot(&self, key: &[u8], e: &Entry) {
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
    async fn here(&self, op: Op) -> Response {
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
            Op::Clear { prefix } => self.clear_here(&prefix).await,
            Op::Members => Response::Members(self.members()),
            _ => invalid("not a request for a node's own copy"),
        }
    }

    /// Long-polls the owner's copy until its version differs from `version`.
    async fn wait_here(
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

    /// (the version PHP sees, the segment's own version) of the local copy.
    fn versions(&self, key: &[u8]) -> (u64, u64) {
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
    fn local_entry(&self, key: &[u8]) -> Option<(Vec<u8>, Option<Duration>)> {
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

    fn store_local(&self, key: &[u8], w: &Write) -> crate::store::Result<()> {
        self.keep(key, &w.entry, w.ttl)
    }

    /// Writes an entry to the segment: a lock's pinned, so memory pressure never evicts
    /// it before it expires.
    fn keep(&self, key: &[u8], stored: &[u8], ttl: Option<Duration>) -> crate::store::Result<()> {
        match ttl {
            Some(ttl) if entry::is_lock(stored) => {
                self.local.set_pinned(key, Value::Str(stored), ttl)
            }
            _ => self.local.set(key, Value::Str(stored), ttl),
        }
    }

    /// Stores a copy unless the one held is newer. The caller holds the key's stripe.
    fn install(&self, key: &[u8], e: &Entry) {
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
    /// (which drops their copy) when it is large. So once a write returns, every
    /// reachable host's segment agrees with the owner, and a process that reads its own
    /// segment after taking a lock sees the last holder's writes. A host that missed the
    /// copy (unreachable for a moment) catches up from gossip, where the write is also
    /// published.
    async fn propagate(&self, key: &[u8], w: &Write) {
        let announced = self.announced(&w.entry);
        if cfg!(feature = "no-owner-routing") {
            // ePHPm's design, for the tests: every node's decision spreads by gossip only.
            return self.publish(key, &announced, w.ttl).await;
        }
        let replicas = self.placement(key);
        let others: Vec<Arc<str>> = {
            let v = self.view.read().unwrap_or_else(|e| e.into_inner());
            v.members
                .ids()
                .filter(|n| **n != self.id && (self.cfg.push_writes || replicas.contains(n)))
                .cloned()
                .collect()
        };
        let puts: Vec<(bool, Op)> = others
            .iter()
            .map(|n| {
                let replica = replicas.contains(n);
                let stored = if replica {
                    w.entry.clone()
                } else {
                    announced.to_vec()
                };
                let op = Op::Put {
                    key: key.to_vec(),
                    entry: Entry { stored, ttl: w.ttl },
                };
                (replica, op)
            })
            .collect();
        let asks = others
            .iter()
            .zip(&puts)
            .map(|(n, (_, op))| self.ask(n, Route::Here, op, self.cfg.timeout));
        let results = futures_util::future::join_all(asks).await;
        for ((n, (replica, _)), result) in others.iter().zip(&puts).zip(results) {
            if let (true, Err(why)) = (replica, result) {
                eprintln!(
                    "ephpm: cluster node {}: replica {n} missed a write: {why}",
                    self.id
                );
            }
        }
        self.publish(key, &announced, w.ttl).await;
    }

    /// What hosts that do not hold `stored` get: itself when small, else its marker.
    fn announced<'a>(&self, stored: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        if stored.len() <= self.cfg.small_key_threshold {
            std::borrow::Cow::Borrowed(stored)
        } else {
            std::borrow::Cow::Owned(entry::marker_for(stored))
        }
    }

    /// Puts an entry (small, or a marker) into this node's gossip state.
    async fn publish(&self, key: &[u8], announced: &[u8], ttl: Option<Duration>) {
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
    async fn clear_everywhere(&self, prefix: &[u8]) -> Response {
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
    async fn clear_here(&self, prefix: &[u8]) -> Response {
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
        if let Some(chitchat) = self.gossip.get() {
            let mut c = chitchat.lock().await;
            let state = c.self_node_state();
            let published: Vec<String> = state
                .key_values()
                .filter(|(k, _)| {
                    k.strip_prefix(gossip::KEY_PREFIX)
                        .and_then(gossip::key_of)
                        .is_some_and(|key| key.starts_with(prefix))
                })
                .map(|(k, _)| k.to_string())
                .collect();
            for k in published {
                state.delete(&k);
            }
        }
        Response::Int(owned as i64)
    }

    /// Moves the entries this node held under `old` to the nodes that hold them under
    /// `new` and did not before. Copies are applied only over older ones, so a node that
    /// was away gets what was written meanwhile, and a move is never undone by a late one.
    async fn hand_off(&self, old: &Members, new: &Members) {
        if old.len() == 1 && old.contains(&self.id) {
            // It was alone (it just started): what it holds came from the others.
            return;
        }
        let _one_at_a_time = self.handoff.lock().await;
        let Ok(keys) = self.local.keys() else { return };
        let rf = self.cfg.replication_factor;
        let mut moved = 0;
        for key in keys.iter().filter(|k| !k.starts_with(RESERVED)) {
            let before = old.place(key, rf);
            if !before.contains(&self.id) {
                continue;
            }
            let after = new.place(key, rf);
            let targets: Vec<_> = after
                .iter()
                .filter(|n| **n != self.id && !before.contains(n))
                .collect();
            if targets.is_empty() {
                continue;
            }
            let Some((stored, ttl)) = self.local_entry(key) else {
                continue;
            };
            if !matches!(
                entry::parse(&stored),
                Some((_, State::Value(_) | State::Deleted))
            ) {
                continue;
            }
            let put = Op::Put {
                key: key.clone(),
                entry: Entry { stored, ttl },
            };
            for t in targets {
                if self
                    .ask(t, Route::Here, &put, self.cfg.timeout)
                    .await
                    .is_ok()
                {
                    moved += 1;
                }
            }
        }
        if moved > 0 {
            eprintln!(
                "ephpm: cluster node {}: handed {moved} entries to their new placement",
                self.id
            );
        }
    }
}

/// Follows chitchat's live nodes: the members are the live node ids that published a
/// data-plane address (a restarted node's newest generation wins).
async fn follow_membership(
    node: Arc<Node>,
    mut watcher: tokio::sync::watch::Receiver<
        std::collections::BTreeMap<ChitchatId, chitchat::NodeState>,
    >,
) {
    loop {
        let (members, addrs) = {
            let live = watcher.borrow_and_update();
            let mut addrs: HashMap<Arc<str>, (u64, SocketAddr)> = HashMap::new();
            for (id, state) in live.iter() {
                let Some(addr) = state.get(gossip::DATA_ADDR).and_then(|a| a.parse().ok()) else {
                    continue;
                };
                let e = addrs
                    .entry(id.node_id.clone())
                    .or_insert((id.generation_id, addr));
                if id.generation_id >= e.0 {
                    *e = (id.generation_id, addr);
                }
            }
            let own = node.addr(&node.id);
            if let Some(own) = own {
                addrs.entry(node.id.clone()).or_insert((0, own));
            }
            let members = Members::new(addrs.keys().cloned());
            (
                members,
                addrs
                    .into_iter()
                    .map(|(k, (_, a))| (k, a))
                    .collect::<HashMap<_, _>>(),
            )
        };
        let changed = {
            let mut v = node.view.write().unwrap_or_else(|e| e.into_inner());
            v.addrs = addrs;
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
            eprintln!(
                "ephpm: cluster node {}: members now {}",
                node.id,
                ids.join(", ")
            );
            let n = node.clone();
            tokio::spawn(async move { n.hand_off(&old, &members).await });
        }
        if watcher.changed().await.is_err() {
            return;
        }
    }
}

/// Applies what other nodes published, each entry only over an older one.
async fn apply_gossip(
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
async fn collect_published(node: Arc<Node>) {
    let every = (TOMBSTONE_GRACE / 4).min(Duration::from_secs(5));
    loop {
        tokio::time::sleep(every).await;
        let Some(chitchat) = node.gossip.get() else {
            return;
        };
        let now_ms = now_micros() / 1000;
        let mut c = chitchat.lock().await;
        let state = c.self_node_state();
        let expired: Vec<String> = state
            .key_values()
            .filter(|(k, v)| {
                k.starts_with(gossip::KEY_PREFIX)
                    && gossip::parse_value(v).is_some_and(|(_, at)| at != 0 && at <= now_ms)
            })
            .map(|(k, _)| k.to_string())
            .collect();
        for k in expired {
            state.delete(&k);
        }
    }
}
