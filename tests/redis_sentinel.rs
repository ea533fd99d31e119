//! `redis-sentinel://`: a master and two replicas watched by three sentinels (Debian's
//! redis-server and redis-sentinel on loopback ports, in a private directory, stopped by
//! pid). The master is killed: calls fail with `Unavailable` (never hang) until the
//! sentinels promote a replica, then work on it, and fences keep growing. The same over
//! `rediss-sentinel://`: the sentinels and the servers speak TLS only, with one CA made
//! by the test and a client certificate required (`common::tls`).

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::no_hang;
use common::redis::{Proc, free_port, info_field_at, spawn, wait_until};
use common::tls::{Certs, ask_at};
use ephpm::ground::dsn::{self, Dsn};
use ephpm::lock::Locks;
use ephpm::store::redis::RedisStore;
use ephpm::store::{Fetched, Store, StoreError, Value};

const MASTER: &str = "ephpmtest";

struct SentinelSet {
    dir: PathBuf,
    /// Ports of the master and the replicas, and their processes (None once killed).
    servers: Vec<(u16, Option<Proc>)>,
    sentinels: Vec<(u16, Proc)>,
    /// TLS only, with these certificates.
    tls: Option<Certs>,
}

impl SentinelSet {
    fn start(tls: bool) -> SentinelSet {
        let dir = std::env::temp_dir().join(format!(
            "ephpm-sentinel-{}-{}",
            std::process::id(),
            if tls { "tls" } else { "plain" }
        ));
        std::fs::create_dir_all(&dir).expect("test dir");
        let certs = tls.then(|| Certs::make(&dir));
        let ask = |port: u16, cmd: &redis::Cmd| ask_at(certs.as_ref(), port, cmd);
        let info_field = |port: u16, section: &str, field: &str| {
            info_field_at(certs.as_ref(), port, section, field)
        };
        let master = free_port();
        let mut servers = Vec::new();
        for i in 0..3 {
            let port = if i == 0 { master } else { free_port() };
            let data = dir.join(format!("server{i}"));
            std::fs::create_dir_all(&data).expect("server dir");
            let mut args = vec![
                "--bind".to_string(),
                "127.0.0.1".into(),
                "--save".into(),
                String::new(),
                "--appendonly".into(),
                "no".into(),
                "--repl-diskless-sync-delay".into(),
                "0".into(),
                "--dir".into(),
                data.display().to_string(),
            ];
            match &certs {
                Some(c) => args.extend(c.server_args(port, true)),
                None => args.extend(["--port".into(), port.to_string()]),
            }
            if i > 0 {
                args.extend(["--replicaof".into(), "127.0.0.1".into(), master.to_string()]);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            servers.push((port, Some(spawn("redis-server", &args))));
        }
        wait_until("replicas in sync", || {
            servers[1..].iter().all(|(p, _)| {
                info_field(*p, "replication", "master_link_status").as_deref() == Some("up")
            })
        });
        let sentinels = (0..3)
            .map(|i| {
                let port = free_port();
                let conf = write_sentinel_conf(&dir, i, port, master, certs.as_ref());
                (
                    port,
                    spawn("redis-sentinel", &[conf.to_str().expect("path")]),
                )
            })
            .collect::<Vec<_>>();
        // Each sentinel knows both replicas and the two other sentinels: a failover needs
        // a majority of them.
        wait_until("sentinels know each other and the replicas", || {
            sentinels.iter().all(|(p, _)| {
                let Some(redis::Value::Array(m)) =
                    ask(*p, redis::cmd("SENTINEL").arg("MASTER").arg(MASTER))
                else {
                    return false;
                };
                let field = |name: &str| {
                    m.chunks(2).find_map(|kv| match kv {
                        [redis::Value::BulkString(k), redis::Value::BulkString(v)]
                            if k == name.as_bytes() =>
                        {
                            String::from_utf8(v.clone()).ok()
                        }
                        _ => None,
                    })
                };
                field("num-slaves").as_deref() == Some("2")
                    && field("num-other-sentinels").as_deref() == Some("2")
            })
        });
        SentinelSet {
            dir,
            servers,
            sentinels,
            tls: certs,
        }
    }

    fn ask(&self, port: u16, cmd: &redis::Cmd) -> Option<redis::Value> {
        ask_at(self.tls.as_ref(), port, cmd)
    }

    fn dsn(&self) -> String {
        let hosts: Vec<String> = self
            .sentinels
            .iter()
            .map(|(p, _)| format!("127.0.0.1:{p}"))
            .collect();
        match &self.tls {
            None => format!("redis-sentinel://{}/{MASTER}?timeout=0.5", hosts.join(",")),
            Some(c) => format!(
                "rediss-sentinel://{}/{MASTER}?timeout=0.5&{}",
                hosts.join(","),
                c.query()
            ),
        }
    }

    /// The master's port, as the first sentinel names it.
    fn named_master(&self) -> Option<u16> {
        let cmd = redis::cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg(MASTER)
            .clone();
        let named = self.ask(self.sentinels[0].0, &cmd)?;
        let (_, port): (String, u16) = redis::from_redis_value(named).ok()?;
        Some(port)
    }

    fn kill(&mut self, port: u16) {
        for (p, proc) in &mut self.servers {
            if *p == port {
                proc.take();
            }
        }
    }
}

impl Drop for SentinelSet {
    fn drop(&mut self) {
        self.sentinels.clear();
        self.servers.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Small down-after and failover timeouts, so that the failover takes about a second.
fn write_sentinel_conf(
    dir: &Path,
    i: usize,
    port: u16,
    master: u16,
    tls: Option<&Certs>,
) -> PathBuf {
    let path = dir.join(format!("sentinel{i}.conf"));
    let listen = match tls {
        Some(c) => c.conf_lines(port),
        None => format!("port {port}\n"),
    };
    let conf = format!(
        "bind 127.0.0.1\n{listen}dir {dir}\n\
         sentinel monitor {MASTER} 127.0.0.1 {master} 2\n\
         sentinel down-after-milliseconds {MASTER} 200\n\
         sentinel failover-timeout {MASTER} 1000\n\
         sentinel parallel-syncs {MASTER} 2\n",
        dir = dir.display()
    );
    std::fs::write(&path, conf).expect("sentinel conf");
    path
}

#[test]
fn the_master_dies_and_service_resumes_on_the_promoted_replica_with_greater_fences() {
    fails_over(SentinelSet::start(false));
}

#[test]
fn over_tls_the_master_dies_and_service_resumes_on_the_promoted_replica() {
    fails_over(SentinelSet::start(true));
}

fn fails_over(mut set: SentinelSet) {
    let Ok(Dsn::Redis(target)) = dsn::parse(&set.dsn()) else {
        panic!("not a redis dsn")
    };
    let store = Arc::new(RedisStore::new(target).expect("store"));
    let locks = Locks::new(store.clone());
    let ttl = Duration::from_secs(30);

    let held = locks
        .acquire(b"job", ttl, Duration::ZERO)
        .unwrap()
        .expect("free");
    let before = held.fence;
    assert!(locks.release(&held).unwrap());
    store.set(b"kept", Value::Int(7), None).unwrap();
    let old = set.named_master().expect("a master");
    // Both replicas have every write so far, so the promoted one has them too.
    set.ask(old, redis::cmd("WAIT").arg(2).arg(5000))
        .expect("WAIT");

    set.kill(old);
    // Until a replica is promoted: every call fails at once with Unavailable.
    let mut failures = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s = store.clone();
        match no_hang(move || s.set(b"probe", Value::Int(1), None)) {
            Ok(()) => break,
            Err(StoreError::Unavailable { .. }) => failures += 1,
            Err(other) => panic!("expected Unavailable during the failover, got {other}"),
        }
        assert!(Instant::now() < deadline, "no failover within a minute");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        failures > 0,
        "the first call after the kill reached a master"
    );
    assert_ne!(
        set.named_master(),
        Some(old),
        "the sentinels promoted a replica"
    );

    let mut out = Vec::new();
    let hit = store.get(b"kept", &mut out).unwrap().expect("replicated");
    assert!(matches!(hit.value, Fetched::Int(7)));
    let held = locks
        .acquire(b"job", ttl, Duration::ZERO)
        .unwrap()
        .expect("free on the new master");
    assert!(
        held.fence > before,
        "fence {} after the failover, {before} before",
        held.fence
    );
    assert!(locks.release(&held).unwrap());
}
