//! Which server to talk to: the one the DSN names, the master of a set that Redis
//! Sentinel watches (`redis-sentinel://`), or a Redis Cluster (`redis-cluster://`).
//!
//! With Sentinel, the master is asked for (`SENTINEL get-master-addr-by-name`, one
//! sentinel after another until one names it) when the first connection opens, and again
//! after a connection to it failed or found it read-only (a demoted master). Connections
//! carry the generation of the master they were opened to; a failure on an older
//! generation than the current one asks nobody again. Every discovery, including the
//! tries of every sentinel, fits in the DSN's timeout: while the sentinels still name a
//! dead master, calls fail fast (StoreError::Unavailable) and the next one asks again.
//!
//! A Redis Cluster's commands go through the redis crate's cluster client (slot map,
//! MOVED/ASK). Its generation counts the seeds tried for Pub/Sub: a failed connection
//! moves the subscriber on to the next seed, and drops the pool's cluster connections,
//! whose slot maps may name a master that is gone (a new one asks the seeds again).
//! Retries inside the client are few and short, so that a dead master makes calls fail
//! within about the DSN's timeout rather than after the crate's default backoff; they
//! follow only replies that say a command was not run (MOVED, ASK, TRYAGAIN, …): a failed
//! connection is never retried by the crate (`node.rs`), but by the store.
//!
//! TLS (`rediss://`, `rediss-cluster://`, `rediss-sentinel://`): every connection —
//! commands, the subscriber, the sentinels, the masters they name, every node of a
//! cluster — verifies its server against the DSN's `?ca=` (or the system's CAs) and
//! presents `?cert=`/`?key=` when given.
//!
//! `?read_from=replica` (cluster): a second cluster client that sends reads to a replica
//! of the key's slot (`READONLY` on each node connection), for `get` and `get_many` only.
//!
//! The redis crate's `sentinel` feature was not used: its sync client keeps its own
//! connection per client and re-asks on its own schedule, while the pool in `mod.rs`
//! decides when a connection is dead; these few commands let the pool say so.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use redis::{RedisError, RedisResult};

use super::link::Link;
use super::node::Node;
use super::scripts::Publish;
use crate::ground::dsn::{SentinelDsn, TlsFiles};

/// Tries a cluster client makes after a failed command (a redirect is one).
const CLUSTER_RETRIES: u32 = 2;
/// The longest it pauses between them, in ms.
const CLUSTER_RETRY_WAIT_MS: u64 = 100;

/// The server a connection is opened to.
pub enum Target {
    /// The DSN's own server: never changes.
    Fixed(redis::Client),
    Sentinel(Sentinel),
    /// Boxed: several clients and their settings.
    Cluster(Box<Cluster>),
}

/// A Redis Cluster, reached through its seeds.
pub struct Cluster {
    client: redis::cluster::ClusterClient,
    /// `?read_from=replica`: the client whose reads go to replicas.
    replicas: Option<redis::cluster::ClusterClient>,
    /// The TLS certificates of every connection (None: plain, or the system's CAs).
    certs: Option<redis::TlsCertificates>,
    /// One client per seed, for a classic Pub/Sub subscriber (any node of a cluster
    /// delivers every PUBLISH; a server without sharded Pub/Sub).
    seeds: Vec<redis::Client>,
    /// The DSN's seeds and timeout, for the sharded subscriber's own cluster client.
    seed_urls: Vec<String>,
    timeout: Duration,
    /// How its servers publish, asked once (`publish`).
    publish: OnceLock<Publish>,
    /// Failures seen so far: picks the seed, and is the generation.
    failures: AtomicU64,
}

/// A master set, found through its sentinels.
pub struct Sentinel {
    dsn: SentinelDsn,
    timeout: Duration,
    /// `rediss-sentinel://`: the certificates of the sentinels' and the masters'
    /// connections (None: plain, or the system's CAs).
    certs: Option<redis::TlsCertificates>,
    /// The master last named and its generation; None until asked, or after it failed.
    master: Mutex<Master>,
}

struct Master {
    client: Option<redis::Client>,
    generation: u64,
}

impl Target {
    pub fn cluster(
        seeds: &[String],
        timeout: Duration,
        tls: Option<&TlsFiles>,
        read_from_replica: bool,
    ) -> Result<Target, String> {
        let certs = tls.map(certificates).transpose()?.flatten();
        let builder = || {
            let b = redis::cluster::ClusterClientBuilder::new(seeds.iter().map(String::as_str))
                .connection_timeout(timeout)
                .response_timeout(timeout)
                .retries(CLUSTER_RETRIES)
                .min_retry_wait(10)
                .max_retry_wait(CLUSTER_RETRY_WAIT_MS);
            match &certs {
                Some(c) => b.certs(c.clone()),
                None => b,
            }
        };
        let e = |e: RedisError| e.to_string();
        let client = builder().build().map_err(e)?;
        let replicas = read_from_replica
            .then(|| {
                builder()
                    .read_routing_strategy(redis::cluster_read_routing::RandomReplicaStrategy)
                    .build()
            })
            .transpose()
            .map_err(e)?;
        let seed_urls = seeds.to_vec();
        let seeds = seeds
            .iter()
            .map(|s| open_client(s, &certs))
            .collect::<RedisResult<_>>()
            .map_err(e)?;
        Ok(Target::Cluster(Box::new(Cluster {
            client,
            replicas,
            certs,
            seeds,
            seed_urls,
            timeout,
            publish: OnceLock::new(),
            failures: AtomicU64::new(0),
        })))
    }

    /// Opens a connection for commands, with `timeout` on each, and its generation.
    pub fn open(&self, timeout: Duration) -> RedisResult<(Link, u64)> {
        if let Target::Cluster(c) = self {
            let generation = c.failures.load(Ordering::Relaxed);
            return Ok((
                Link::Cluster(Box::new(c.client.get_generic_connection::<Node>()?), None),
                generation,
            ));
        }
        let (client, generation) = self.client()?;
        let mut con = client.get_connection_with_timeout(timeout)?;
        con.set_read_timeout(Some(timeout))?;
        con.set_write_timeout(Some(timeout))?;
        self.check(&mut con, generation)?;
        Ok((Link::Server(con), generation))
    }

    /// A cluster connection whose reads go to replicas (`?read_from=replica`), or None.
    pub fn open_replicas(&self) -> Option<RedisResult<Link>> {
        let Target::Cluster(c) = self else {
            return None;
        };
        Some(
            c.replicas
                .as_ref()?
                .get_generic_connection::<Node>()
                .map(|c| Link::Cluster(Box::new(c), None)),
        )
    }

    pub fn sentinel(
        dsn: SentinelDsn,
        timeout: Duration,
        tls: Option<&TlsFiles>,
    ) -> Result<Target, String> {
        Ok(Target::Sentinel(Sentinel {
            dsn,
            timeout,
            certs: tls.map(certificates).transpose()?.flatten(),
            master: Mutex::new(Master {
                client: None,
                generation: 0,
            }),
        }))
    }

    /// A single server's client: `rediss://` with the DSN's certificates.
    pub fn fixed(url: &str, tls: Option<&TlsFiles>) -> Result<Target, String> {
        let certs = tls.map(certificates).transpose()?.flatten();
        open_client(url, &certs)
            .map(Target::Fixed)
            .map_err(|e| e.to_string())
    }

    /// The client to connect a single connection (the subscriber's) with now, and its
    /// generation.
    pub fn client(&self) -> RedisResult<(redis::Client, u64)> {
        let s = match self {
            Target::Fixed(client) => return Ok((client.clone(), 0)),
            Target::Cluster(c) => {
                let generation = c.failures.load(Ordering::Relaxed);
                let seed = &c.seeds[(generation % c.seeds.len() as u64) as usize];
                return Ok((seed.clone(), generation));
            }
            Target::Sentinel(s) => s,
        };
        // Held while asking, so that one thread asks and the others take its answer.
        let mut master = s.master.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(client) = &master.client {
            return Ok((client.clone(), master.generation));
        }
        let client = s.discover()?;
        master.generation += 1;
        master.client = Some(client.clone());
        Ok((client, master.generation))
    }

    /// A cluster client for a sharded Pub/Sub subscriber: RESP3 (the crate's SSUBSCRIBE
    /// needs it), messages pushed to `push`. The crate sends each SSUBSCRIBE to the master
    /// of the channel's slot and subscribes again after a failover or a slot's move.
    /// None for a single server.
    pub fn sharded_client(
        &self,
        push: tokio::sync::mpsc::UnboundedSender<redis::PushInfo>,
    ) -> Option<RedisResult<redis::cluster::ClusterClient>> {
        let Target::Cluster(c) = self else {
            return None;
        };
        Some({
            let b =
                redis::cluster::ClusterClientBuilder::new(c.seed_urls.iter().map(String::as_str))
                    .use_protocol(redis::ProtocolVersion::RESP3)
                    .push_sender(push)
                    .connection_timeout(c.timeout)
                    .response_timeout(c.timeout);
            match &c.certs {
                Some(certs) => b.certs(certs.clone()),
                None => b,
            }
            .build()
        })
    }

    /// How the target's servers publish wake-ups: classic on a single server; on a
    /// cluster, asked once of the seeds in turn (one may be the dead master of a failover:
    /// the cluster client would ask a random node).
    pub fn publish(&self) -> RedisResult<Publish> {
        let Target::Cluster(c) = self else {
            return Ok(Publish::Classic);
        };
        if let Some(p) = c.publish.get() {
            return Ok(*p);
        }
        let mut failed = None;
        for seed in &c.seeds {
            let asked = seed
                .get_connection_with_timeout(c.timeout)
                .and_then(|mut con| {
                    con.set_read_timeout(Some(c.timeout))?;
                    Publish::detect(&mut con)
                });
            match asked {
                Ok(p) => return Ok(*c.publish.get_or_init(|| p)),
                Err(e) => failed = Some(e),
            }
        }
        Err(failed.unwrap_or_else(|| unavailable("no seed".into())))
    }

    /// The generation connections should be on (older ones are dropped).
    pub fn generation(&self) -> u64 {
        match self {
            Target::Fixed(_) => 0,
            Target::Cluster(c) => c.failures.load(Ordering::Relaxed),
            Target::Sentinel(s) => {
                s.master
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .generation
            }
        }
    }

    /// A connection of `generation` failed, or its server is no longer the master: the
    /// next connection asks the sentinels again.
    pub fn failed(&self, generation: u64) {
        match self {
            Target::Fixed(_) => {}
            Target::Cluster(c) => {
                let _ = c.failures.compare_exchange(
                    generation,
                    generation + 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
            }
            Target::Sentinel(s) => {
                let mut master = s.master.lock().unwrap_or_else(|e| e.into_inner());
                if master.generation == generation {
                    master.client = None;
                }
            }
        }
    }

    /// Checks that a new connection reached a master (a sentinel may name one that has
    /// just been demoted, and a replica would answer reads with stale data).
    fn check(&self, con: &mut redis::Connection, generation: u64) -> RedisResult<()> {
        if !matches!(self, Target::Sentinel(_)) {
            return Ok(());
        }
        let role: Vec<redis::Value> = redis::cmd("ROLE").query(con)?;
        if matches!(role.first(), Some(redis::Value::BulkString(r)) if r == b"master") {
            return Ok(());
        }
        self.failed(generation);
        Err(unavailable(
            "the server the sentinels named is not a master".into(),
        ))
    }
}

impl Sentinel {
    /// Asks each sentinel in turn, within the DSN's timeout in all.
    fn discover(&self) -> RedisResult<redis::Client> {
        let deadline = Instant::now() + self.timeout;
        let mut why = String::from("no sentinel answered in time");
        for addr in &self.dsn.sentinels {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.ask(addr, left) {
                Ok(Some(client)) => return Ok(client),
                Ok(None) => why = format!("sentinel {addr} knows no master {}", self.dsn.master),
                Err(e) => why = format!("sentinel {addr}: {e}"),
            }
        }
        Err(unavailable(why))
    }

    fn ask(&self, addr: &str, left: Duration) -> RedisResult<Option<redis::Client>> {
        let mut con = open_client(&self.dsn.sentinel_url(addr), &self.certs)?
            .get_connection_with_timeout(left)?;
        con.set_read_timeout(Some(left))?;
        con.set_write_timeout(Some(left))?;
        let named: Option<(String, u16)> = redis::cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg(&self.dsn.master)
            .query(&mut con)?;
        named
            .map(|(host, port)| open_client(&self.dsn.master_url(&host, port), &self.certs))
            .transpose()
    }
}

/// The PEM files of a TLS DSN, read; None when there is nothing but the scheme (the
/// system's CAs, no client certificate).
fn certificates(files: &TlsFiles) -> Result<Option<redis::TlsCertificates>, String> {
    // The process's rustls provider, chosen once; another library may have chosen first.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let read = |what: &str, path: &str| {
        std::fs::read(path).map_err(|e| format!("cannot read {what} {path}: {e}"))
    };
    if files.ca.is_none() && files.client.is_none() {
        return Ok(None);
    }
    Ok(Some(redis::TlsCertificates {
        client_tls: match &files.client {
            Some((cert, key)) => Some(redis::ClientTlsConfig {
                client_cert: read("cert", cert)?,
                client_key: read("key", key)?,
            }),
            None => None,
        },
        root_cert: files.ca.as_deref().map(|ca| read("ca", ca)).transpose()?,
    }))
}

/// A client for `url` (`rediss://` verified with `certs` when given).
fn open_client(url: &str, certs: &Option<redis::TlsCertificates>) -> RedisResult<redis::Client> {
    match certs {
        Some(c) if url.starts_with("rediss://") => redis::Client::build_with_tls(url, c.clone()),
        _ => redis::Client::open(url),
    }
}

/// An error the pool reports as StoreError::Unavailable (not a server's reply).
fn unavailable(why: String) -> RedisError {
    std::io::Error::new(std::io::ErrorKind::NotConnected, why).into()
}
