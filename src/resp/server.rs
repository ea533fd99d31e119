//! What the connections of one RESP server share: the store, the settings, the clients
//! (for CLIENT LIST and KILL), the counters INFO shows, the pub/sub hub, and the lock
//! that makes MULTI/EXEC and the read-modify-write commands one step among this server's
//! clients.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::Notify;

use super::lock;
use super::parse::Limits;
use super::pubsub::Hub;
use crate::store::Store;

/// The operator's settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// What an authenticated request may be.
    pub limits: Limits,
    pub max_clients: usize,
    /// A client idle this long is disconnected (None: never), as Redis' `timeout`.
    pub idle_timeout: Option<Duration>,
    /// The passwords `AUTH` accepts (the secret file's lines). Empty: a unix socket's
    /// peers are known by their uid and need none.
    pub passwords: Vec<Vec<u8>>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            limits: Limits {
                max_args: 1 << 20,
                max_bulk: 512 << 20,
                max_inline: 64 << 10,
            },
            max_clients: 10_000,
            idle_timeout: None,
            passwords: Vec::new(),
        }
    }
}

/// What CLIENT LIST shows of a connection, and how CLIENT KILL stops it.
pub struct Client {
    pub id: u64,
    pub addr: String,
    pub created: Instant,
    pub name: Mutex<Vec<u8>>,
    /// CLIENT SETINFO lib-name and lib-ver.
    pub lib: Mutex<(String, String)>,
    pub last_command: Mutex<&'static str>,
    /// Commands this connection ran (summed into INFO; one counter per connection, so
    /// that connections on different cores do not fight over one cache line).
    pub commands: AtomicU64,
    pub killed: AtomicBool,
    pub kill: Notify,
    /// A key this connection WATCHes had its lifetime changed by this server (a change
    /// of value shows in the key's version; a change of lifetime does not).
    pub watch_touched: AtomicBool,
}

#[derive(Default)]
pub struct Counters {
    pub connections_received: AtomicU64,
    pub rejected_connections: AtomicU64,
    /// Commands of connections that have closed (the open ones count their own).
    pub commands_of_closed: AtomicU64,
    pub auth_failures: AtomicU64,
    /// What INFO's counters stood at when CONFIG RESETSTAT last ran: the store's figures
    /// are shared with every PHP process of the host and are not this server's to zero,
    /// so INFO shows them as counted since then.
    pub reset_at: Mutex<ResetAt>,
}

/// The figures INFO subtracts (see `Counters::reset_at`).
#[derive(Default, Clone, Copy)]
pub struct ResetAt {
    pub commands: u64,
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    pub expirations: u64,
}

pub struct Server {
    pub store: Arc<dyn Store>,
    /// Store calls may wait on the network (redis://, cluster://): they then run where a
    /// blocked thread does not stall other connections.
    pub store_blocks: bool,
    pub settings: Settings,
    pub started: Instant,
    pub started_at: SystemTime,
    pub counters: Counters,
    pub hub: Hub,
    /// Where the server listens, for INFO.
    pub listening: Vec<String>,
    /// The encoding settings CONFIG SET was given (see `commands::info::ENCODINGS`).
    pub encodings: Mutex<HashMap<&'static str, Vec<u8>>>,
    clients: Mutex<HashMap<u64, Arc<Client>>>,
    /// Who WATCHes each watched key.
    watching: Mutex<HashMap<Vec<u8>, Vec<Arc<Client>>>>,
    next_id: AtomicU64,
    exclusive: RwLock<()>,
}

impl Server {
    pub fn new(store: Arc<dyn Store>, store_blocks: bool, settings: Settings) -> Self {
        Server {
            store,
            store_blocks,
            settings,
            started: Instant::now(),
            started_at: SystemTime::now(),
            counters: Counters::default(),
            hub: Hub::default(),
            listening: Vec::new(),
            encodings: Mutex::new(HashMap::new()),
            clients: Mutex::new(HashMap::new()),
            watching: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            exclusive: RwLock::new(()),
        }
    }

    /// Registers a new connection, or `None` when `max_clients` are connected.
    pub fn connect(&self, addr: String) -> Option<Arc<Client>> {
        self.counters
            .connections_received
            .fetch_add(1, Ordering::Relaxed);
        let mut clients = self.clients();
        if clients.len() >= self.settings.max_clients {
            self.counters
                .rejected_connections
                .fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let client = Arc::new(Client {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            addr,
            created: Instant::now(),
            name: Mutex::new(Vec::new()),
            lib: Mutex::new((String::new(), String::new())),
            last_command: Mutex::new(""),
            commands: AtomicU64::new(0),
            killed: AtomicBool::new(false),
            kill: Notify::new(),
            watch_touched: AtomicBool::new(false),
        });
        clients.insert(client.id, client.clone());
        Some(client)
    }

    pub fn disconnect(&self, id: u64) {
        if let Some(c) = self.clients().remove(&id) {
            let n = c.commands.load(Ordering::Relaxed);
            self.counters
                .commands_of_closed
                .fetch_add(n, Ordering::Relaxed);
        }
        self.hub.forget(id);
        self.unwatch_all(id);
    }

    /// `client` WATCHes `key`.
    pub fn watch(&self, client: &Arc<Client>, key: &[u8]) {
        lock(&self.watching)
            .entry(key.to_vec())
            .or_default()
            .push(client.clone());
    }

    /// The client with this id WATCHes nothing any more.
    pub fn unwatch_all(&self, id: u64) {
        lock(&self.watching).retain(|_, clients| {
            clients.retain(|c| c.id != id);
            !clients.is_empty()
        });
    }

    /// The lifetime of `key` changed: its watchers' EXEC will abort.
    pub fn touch(&self, key: &[u8]) {
        if let Some(clients) = lock(&self.watching).get(key) {
            for c in clients {
                c.watch_touched.store(true, Ordering::Relaxed);
            }
        }
    }

    /// The connected clients, by id.
    pub fn clients(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Client>>> {
        lock(&self.clients)
    }

    /// CONFIG RESETSTAT: INFO's counters start again from zero (the store's own figures,
    /// which `ephpm status` and the metrics show, are left as they are).
    pub fn reset_stats(&self, stats: &crate::store::Stats) {
        let c = &self.counters;
        for n in [
            &c.connections_received,
            &c.rejected_connections,
            &c.auth_failures,
        ] {
            n.store(0, Ordering::Relaxed);
        }
        *lock(&c.reset_at) = ResetAt {
            commands: self.commands_processed(),
            hits: stats.hits,
            misses: stats.misses,
            evictions: stats.evictions,
            expirations: stats.expirations,
        };
    }

    /// Commands run since the server started.
    pub fn commands_processed(&self) -> u64 {
        let open: u64 = self
            .clients()
            .values()
            .map(|c| c.commands.load(Ordering::Relaxed))
            .sum();
        open + self.counters.commands_of_closed.load(Ordering::Relaxed)
    }

    /// Held by every command: many at once.
    pub fn shared(&self) -> RwLockReadGuard<'_, ()> {
        self.exclusive.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Held by EXEC and the read-modify-write commands: alone among this server's
    /// commands (not against PHP processes writing the store directly).
    pub fn alone(&self) -> RwLockWriteGuard<'_, ()> {
        self.exclusive.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs a store call; where it may block on the network, tells the runtime first.
    pub fn call<T>(&self, f: impl FnOnce(&dyn Store) -> T) -> T {
        if self.store_blocks {
            tokio::task::block_in_place(|| f(&*self.store))
        } else {
            f(&*self.store)
        }
    }
}
