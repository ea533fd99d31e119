//! A real Redis Cluster for the tests: three masters and a replica each (Debian's
//! redis-server, `redis-cli --cluster create`), on loopback ports, in a private directory,
//! never persisted, killed with the test binary. A node that stops answering is failed
//! over after `NODE_TIMEOUT_MS`; `cluster-require-full-coverage no`, as docs/fleet-redis.md
//! advises, keeps the other masters' slots served meanwhile. `start_tls` starts the same
//! cluster speaking TLS only (clients, cluster bus, replication), with a CA made for the
//! test and a client certificate required (`common::tls`).
#![allow(dead_code)]

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use ephpm::lock::Locks;
use ephpm::store::redis::RedisStore;
use ephpm::store::{Fetched, Store, Value};
use std::sync::OnceLock;

use super::redis::{Proc, free_port, info_field_at, spawn, wait_until};
use super::tls::{Certs, ask_at};

pub const NODE_TIMEOUT_MS: u64 = 1000;

pub struct RedisCluster {
    dir: PathBuf,
    /// Every node's port and process (None once killed); the first three were created
    /// masters.
    pub nodes: Vec<(u16, Option<Proc>)>,
    /// `start_tls`: the certificates every node and client uses.
    pub tls: Option<Certs>,
}

impl RedisCluster {
    pub fn start() -> RedisCluster {
        Self::start_with(false)
    }

    /// The same cluster over TLS only, asking clients for a certificate.
    pub fn start_tls() -> RedisCluster {
        Self::start_with(true)
    }

    fn start_with(tls: bool) -> RedisCluster {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ephpm-redis-cluster-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).expect("test dir");
        let certs = tls.then(|| Certs::make(&dir));
        let mut nodes = Vec::new();
        for i in 0..6 {
            let port = free_port();
            let data = dir.join(format!("node{i}"));
            std::fs::create_dir_all(&data).expect("node dir");
            let listen = match &certs {
                Some(c) => c.server_args(port, true),
                None => vec!["--port".into(), port.to_string()],
            };
            let mut args = vec![
                "--bind".to_string(),
                "127.0.0.1".into(),
                "--cluster-enabled".into(),
                "yes".into(),
                "--cluster-node-timeout".into(),
                NODE_TIMEOUT_MS.to_string(),
                // A master down stops its own slots only (the default stops them all).
                "--cluster-require-full-coverage".into(),
                "no".into(),
                "--save".into(),
                String::new(),
                "--appendonly".into(),
                "no".into(),
                "--repl-diskless-sync-delay".into(),
                "0".into(),
                "--dir".into(),
                data.display().to_string(),
            ];
            args.extend(listen);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            nodes.push((port, Some(spawn("redis-server", &args))));
        }
        wait_until("the nodes answer", || {
            nodes
                .iter()
                .all(|(p, _)| ask_at(certs.as_ref(), *p, &redis::cmd("PING")).is_some())
        });
        let mut create = Command::new("redis-cli");
        if let Some(c) = &certs {
            create.args(c.cli_args());
        }
        create.args(["--cluster", "create"]);
        for (port, _) in &nodes {
            create.arg(format!("127.0.0.1:{port}"));
        }
        let ok = create
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli")
            .success();
        assert!(ok, "redis-cli --cluster create failed");
        let cluster = RedisCluster {
            dir,
            nodes,
            tls: certs,
        };
        cluster.wait_until_ok();
        cluster
    }

    /// Waits until every live node says the cluster is ok, names every live node in its
    /// slot map (a replica is known only once gossip spread its role), and every replica
    /// is in sync.
    pub fn wait_until_ok(&self) {
        wait_until("the cluster is ok", || {
            let live = self.live().count();
            self.live().all(|p| {
                self.cluster_info(p)
                    .is_some_and(|i| i.contains("cluster_state:ok"))
            }) && self.live().all(|p| self.slot_map_nodes(p) == live)
                && self.live().all(|p| {
                    self.info_field(p, "replication", "role").as_deref() == Some("master")
                        || self
                            .info_field(p, "replication", "master_link_status")
                            .as_deref()
                            == Some("up")
                })
        });
    }

    pub fn live(&self) -> impl Iterator<Item = u16> + '_ {
        self.nodes
            .iter()
            .filter(|(_, p)| p.is_some())
            .map(|(port, _)| *port)
    }

    /// A command to the node on `port`, or None while it does not answer.
    pub fn ask(&self, port: u16, cmd: &redis::Cmd) -> Option<redis::Value> {
        ask_at(self.tls.as_ref(), port, cmd)
    }

    pub fn info_field(&self, port: u16, section: &str, field: &str) -> Option<String> {
        info_field_at(self.tls.as_ref(), port, section, field)
    }

    /// `redis-cluster://` (`rediss-cluster://` with the CA and the client certificate)
    /// with every node as a seed, and `query` ("" or "?a=b&…").
    pub fn dsn(&self, query: &str) -> String {
        let seeds: Vec<String> = self
            .nodes
            .iter()
            .map(|(p, _)| format!("127.0.0.1:{p}"))
            .collect();
        match &self.tls {
            None => format!("redis-cluster://{}{query}", seeds.join(",")),
            Some(c) => format!(
                "rediss-cluster://{}?{}{}",
                seeds.join(","),
                c.query(),
                query.replacen('?', "&", 1)
            ),
        }
    }

    /// Writes `n` integers under `prefix` in one `set_many` (keys of many slots, a
    /// pipeline per master underneath), checks they landed on all three masters and that
    /// one `get_many` reads every one back; the keys, without the prefix.
    pub fn spread_over_every_master(&self, s: &dyn Store, prefix: &str, n: usize) -> Vec<Vec<u8>> {
        let keys: Vec<Vec<u8>> = (0..n).map(|i| format!("k{i}").into_bytes()).collect();
        let entries: Vec<(&[u8], Value<'_>)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (&k[..], Value::Int(i as i64)))
            .collect();
        s.set_many(&entries, None).unwrap();
        let masters: HashSet<u16> = keys
            .iter()
            .map(|k| self.master_of(&[prefix.as_bytes(), &k[..]].concat()))
            .collect();
        assert_eq!(masters.len(), 3, "the keys landed on {masters:?}");
        let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let mut seen = 0;
        s.get_many(&refs, &mut |i, hit, _| {
            assert!(matches!(hit.value, Fetched::Int(v) if v == i as i64));
            seen += 1;
        })
        .unwrap();
        assert_eq!(seen, n);
        keys
    }

    /// The port of the master that serves `key` now, as a live node sees it.
    pub fn master_of(&self, key: &[u8]) -> u16 {
        self.nodes_of(key).0
    }

    /// The ports of the master that serves `key` now and of its replicas.
    pub fn nodes_of(&self, key: &[u8]) -> (u16, Vec<u16>) {
        let any = self.live().next().expect("a live node");
        let Some(redis::Value::Int(slot)) =
            self.ask(any, redis::cmd("CLUSTER").arg("KEYSLOT").arg(key))
        else {
            panic!("CLUSTER KEYSLOT")
        };
        let Some(redis::Value::Array(ranges)) = self.ask(any, redis::cmd("CLUSTER").arg("SLOTS"))
        else {
            panic!("CLUSTER SLOTS")
        };
        let port = |node: Option<&redis::Value>| match node {
            Some(redis::Value::Array(n)) => match n.get(1) {
                Some(redis::Value::Int(p)) => Some(*p as u16),
                _ => None,
            },
            _ => None,
        };
        for range in ranges {
            let redis::Value::Array(r) = range else {
                continue;
            };
            if let (Some(redis::Value::Int(a)), Some(redis::Value::Int(b))) = (r.first(), r.get(1))
                && (*a..=*b).contains(&slot)
                && let Some(master) = port(r.get(2))
            {
                return (
                    master,
                    r.iter().skip(3).filter_map(|n| port(Some(n))).collect(),
                );
            }
        }
        panic!("no master serves slot {slot}")
    }

    fn cluster_info(&self, port: u16) -> Option<String> {
        match self.ask(port, redis::cmd("CLUSTER").arg("INFO"))? {
            redis::Value::BulkString(b) => String::from_utf8(b).ok(),
            redis::Value::VerbatimString { text, .. } => Some(text),
            _ => None,
        }
    }

    /// How many nodes (masters and replicas) the slot map of the node on `port` names.
    fn slot_map_nodes(&self, port: u16) -> usize {
        let Some(redis::Value::Array(ranges)) = self.ask(port, redis::cmd("CLUSTER").arg("SLOTS"))
        else {
            return 0;
        };
        let mut ports = std::collections::HashSet::new();
        for range in ranges {
            if let redis::Value::Array(r) = range {
                for node in r.iter().skip(2) {
                    if let redis::Value::Array(n) = node
                        && let Some(redis::Value::Int(p)) = n.get(1)
                    {
                        ports.insert(*p);
                    }
                }
            }
        }
        ports.len()
    }

    /// `holder` takes `lock`, a thread waits for it through `waiter`, and the release hands
    /// it over; returns how many times the release's message woke the waiter (0: it found the
    /// lock free after a slice only).
    pub fn wakes_a_waiter(
        &self,
        holder: &Arc<RedisStore>,
        waiter: &Arc<RedisStore>,
        prefix: &str,
        lock: &[u8],
    ) -> u64 {
        let ttl = Duration::from_secs(30);
        let full = [prefix.as_bytes(), lock].concat();
        let line = [b"{", &full[..], b"}:ephpm:queue"].concat();
        let held = Locks::new(holder.clone())
            .acquire(lock, ttl, Duration::ZERO)
            .unwrap()
            .expect("a free lock");
        let before = waiter.wake_counts().woken;
        // After a failover, a connection kept from before still maps the slot to the dead
        // master; a read (retried at once on a fresh connection) replaces it, where a write
        // sent to the dead master would fail once (it may have landed).
        waiter.read(lock, &mut |_| {}).unwrap();
        let (w, l) = (waiter.clone(), lock.to_vec());
        let thread = std::thread::spawn(move || {
            let locks = Locks::new(w);
            let got = locks.acquire(&l, ttl, Duration::from_secs(30)).unwrap();
            assert!(locks.release(&got.expect("the lock")).unwrap());
        });
        wait_until("the waiter in line", || {
            let owner = self.master_of(&full);
            matches!(
                self.ask(owner, redis::cmd("LLEN").arg(&line)),
                Some(redis::Value::Int(1))
            )
        });
        assert!(Locks::new(holder.clone()).release(&held).unwrap());
        super::no_hang(move || thread.join().expect("the waiter failed"));
        waiter.wake_counts().woken - before
    }

    /// The process of the node on `port`.
    pub fn proc(&self, port: u16) -> &Proc {
        self.nodes
            .iter()
            .find(|(p, _)| *p == port)
            .and_then(|(_, proc)| proc.as_ref())
            .expect("a live node on that port")
    }

    /// Kills the node on `port` (SIGKILL, as if it crashed).
    pub fn kill(&mut self, port: u16) {
        for (p, proc) in &mut self.nodes {
            if *p == port {
                proc.take();
            }
        }
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        self.nodes.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The cluster this test binary shares (`EPHPM_TEST_STORE=redis-cluster`, and
/// `redis-cluster-tls` for `tls`), started once; its DSN (with the TLS query, if any).
/// Tests keep apart by key prefix.
pub fn shared(tls: bool) -> &'static String {
    static DSN: OnceLock<String> = OnceLock::new();
    static TLS_DSN: OnceLock<String> = OnceLock::new();
    let dsn = if tls { &TLS_DSN } else { &DSN };
    dsn.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        // The thread that starts the nodes never ends, so PR_SET_PDEATHSIG fires only
        // when the whole test binary exits.
        std::thread::spawn(move || {
            let cluster = RedisCluster::start_with(tls);
            tx.send(cluster.dsn("")).expect("send dsn");
            loop {
                std::thread::park();
            }
        });
        rx.recv().expect("shared redis cluster")
    })
}
