//! Which server to talk to: the one the DSN names, or the master of a set that Redis
//! Sentinel watches (`redis-sentinel://`).
//!
//! With Sentinel, the master is asked for (`SENTINEL get-master-addr-by-name`, one
//! sentinel after another until one names it) when the first connection opens, and again
//! after a connection to it failed or found it read-only (a demoted master). Connections
//! carry the generation of the master they were opened to; a failure on an older
//! generation than the current one asks nobody again. Every discovery, including the
//! tries of every sentinel, fits in the DSN's timeout: while the sentinels still name a
//! dead master, calls fail fast (StoreError::Unavailable) and the next one asks again.
//!
//! The redis crate's `sentinel` feature was not used: its sync client keeps its own
//! connection per client and re-asks on its own schedule, while the pool in `mod.rs`
//! decides when a connection is dead; these few commands let the pool say so.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use redis::{RedisError, RedisResult};

use crate::store::dsn::SentinelDsn;

/// The server a connection is opened to.
pub enum Target {
    /// The DSN's own server: never changes.
    Fixed(redis::Client),
    Sentinel(Sentinel),
}

/// A master set, found through its sentinels.
pub struct Sentinel {
    dsn: SentinelDsn,
    timeout: Duration,
    /// The master last named and its generation; None until asked, or after it failed.
    master: Mutex<Master>,
}

struct Master {
    client: Option<redis::Client>,
    generation: u64,
}

impl Target {
    pub fn sentinel(dsn: SentinelDsn, timeout: Duration) -> Target {
        Target::Sentinel(Sentinel {
            dsn,
            timeout,
            master: Mutex::new(Master {
                client: None,
                generation: 0,
            }),
        })
    }

    /// The client to connect with now, and its generation.
    pub fn client(&self) -> RedisResult<(redis::Client, u64)> {
        let s = match self {
            Target::Fixed(client) => return Ok((client.clone(), 0)),
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

    /// The generation connections should be on (older ones are dropped).
    pub fn generation(&self) -> u64 {
        match self {
            Target::Fixed(_) => 0,
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
        if let Target::Sentinel(s) = self {
            let mut master = s.master.lock().unwrap_or_else(|e| e.into_inner());
            if master.generation == generation {
                master.client = None;
            }
        }
    }

    /// Checks that a new connection reached a master (a sentinel may name one that has
    /// just been demoted, and a replica would answer reads with stale data).
    pub fn check(&self, con: &mut redis::Connection, generation: u64) -> RedisResult<()> {
        if let Target::Fixed(_) = self {
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
        let mut con =
            redis::Client::open(format!("redis://{addr}"))?.get_connection_with_timeout(left)?;
        con.set_read_timeout(Some(left))?;
        con.set_write_timeout(Some(left))?;
        let named: Option<(String, u16)> = redis::cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg(&self.dsn.master)
            .query(&mut con)?;
        named
            .map(|(host, port)| redis::Client::open(self.dsn.master_url(&host, port)))
            .transpose()
    }
}

/// An error the pool reports as StoreError::Unavailable (not a server's reply).
fn unavailable(why: String) -> RedisError {
    std::io::Error::new(std::io::ErrorKind::NotConnected, why).into()
}
