//! A real Redis Cluster for the tests: three masters and a replica each (Debian's
//! redis-server, `redis-cli --cluster create`), on loopback ports, in a private directory,
//! never persisted, killed with the test binary. A node that stops answering is failed
//! over after `NODE_TIMEOUT_MS`; `cluster-require-full-coverage no`, as the README
//! advises, keeps the other masters' slots served meanwhile.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use super::redis::{Proc, ask, free_port, spawn, wait_until};

pub const NODE_TIMEOUT_MS: u64 = 1000;

pub struct RedisCluster {
    dir: PathBuf,
    /// Every node's port and process (None once killed); the first three were created
    /// masters.
    pub nodes: Vec<(u16, Option<Proc>)>,
}

impl RedisCluster {
    pub fn start() -> RedisCluster {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ephpm-redis-cluster-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).expect("test dir");
        let mut nodes = Vec::new();
        for i in 0..6 {
            let port = free_port();
            let data = dir.join(format!("node{i}"));
            std::fs::create_dir_all(&data).expect("node dir");
            let args = [
                "--bind".to_string(),
                "127.0.0.1".into(),
                "--port".into(),
                port.to_string(),
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
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            nodes.push((port, Some(spawn("redis-server", &args))));
        }
        wait_until("the nodes answer", || {
            nodes
                .iter()
                .all(|(p, _)| ask(*p, &redis::cmd("PING")).is_some())
        });
        let mut create = Command::new("redis-cli");
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
        let cluster = RedisCluster { dir, nodes };
        cluster.wait_until_ok();
        cluster
    }

    /// Waits until every live node says the cluster is ok and every replica is in sync.
    pub fn wait_until_ok(&self) {
        wait_until("the cluster is ok", || {
            self.live()
                .all(|p| cluster_info(p).is_some_and(|i| i.contains("cluster_state:ok")))
                && self.live().all(|p| {
                    super::redis::info_field(p, "replication", "role").as_deref() == Some("master")
                        || super::redis::info_field(p, "replication", "master_link_status")
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

    /// `redis-cluster://` with every node as a seed, and `query`.
    pub fn dsn(&self, query: &str) -> String {
        let seeds: Vec<String> = self
            .nodes
            .iter()
            .map(|(p, _)| format!("127.0.0.1:{p}"))
            .collect();
        format!("redis-cluster://{}{query}", seeds.join(","))
    }

    /// The port of the master that serves `key` now, as a live node sees it.
    pub fn master_of(&self, key: &[u8]) -> u16 {
        let any = self.live().next().expect("a live node");
        let Some(redis::Value::Int(slot)) = ask(any, redis::cmd("CLUSTER").arg("KEYSLOT").arg(key))
        else {
            panic!("CLUSTER KEYSLOT")
        };
        let Some(redis::Value::Array(ranges)) = ask(any, redis::cmd("CLUSTER").arg("SLOTS")) else {
            panic!("CLUSTER SLOTS")
        };
        for range in ranges {
            let redis::Value::Array(r) = range else {
                continue;
            };
            if let (
                Some(redis::Value::Int(a)),
                Some(redis::Value::Int(b)),
                Some(redis::Value::Array(m)),
            ) = (r.first(), r.get(1), r.get(2))
                && (*a..=*b).contains(&slot)
                && let Some(redis::Value::Int(port)) = m.get(1)
            {
                return *port as u16;
            }
        }
        panic!("no master serves slot {slot}")
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

fn cluster_info(port: u16) -> Option<String> {
    match ask(port, redis::cmd("CLUSTER").arg("INFO"))? {
        redis::Value::BulkString(b) => String::from_utf8(b).ok(),
        redis::Value::VerbatimString { text, .. } => Some(text),
        _ => None,
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        self.nodes.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The cluster this test binary shares (`EPHPM_TEST_STORE=redis-cluster`), started once;
/// its DSN without a query. Tests keep apart by key prefix.
pub fn shared() -> &'static String {
    static DSN: OnceLock<String> = OnceLock::new();
    DSN.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        // The thread that starts the nodes never ends, so PR_SET_PDEATHSIG fires only
        // when the whole test binary exits.
        std::thread::spawn(move || {
            let cluster = RedisCluster::start();
            tx.send(cluster.dsn("")).expect("send dsn");
            loop {
                std::thread::park();
            }
        });
        rx.recv().expect("shared redis cluster")
    })
}
