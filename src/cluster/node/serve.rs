//! The node's two listeners, built to outlast what the network and the host throw at
//! them:
//!
//! - every accept error (EMFILE under a connection flood, ENOBUFS…) is logged, waited
//!   out with a short backoff, and the loop keeps listening;
//! - the data plane takes at most `MAX_PEER_CONNECTIONS` connections, and at most
//!   `MAX_PENDING_PER_ADDRESS` from one IP address that have not finished their
//!   handshake (a peer that has is bounded by the total only: a busy node opens one
//!   connection per request in flight); a handshake must finish within
//!   `HANDSHAKE_TIMEOUT` (reading at most one small frame before: `session.rs`), and a
//!   connection is closed after `IDLE` without a request;
//! - the unix socket serves only processes of the node's own user (SO_PEERCRED), with
//!   no idle timeout: a PHP process keeps its connection for its whole life.
//!
//! What is refused is counted in `Refusals` and reported every 10 s.

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};

use super::{Node, invalid};
use crate::cluster::crypto::handshake::{self, Refused};
use crate::wire::{self, Route, version};

/// Data-plane connections at most, and connections still in their handshake from one
/// IP address at most.
const MAX_PEER_CONNECTIONS: usize = 1024;
const MAX_PENDING_PER_ADDRESS: usize = 64;
/// A connection that has not proven the secret by then is closed.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(1);
/// An authenticated connection without a request for this long is closed (peers stop
/// reusing theirs well before: `peers.rs`, `KEEP_FOR`).
pub(super) const IDLE: Duration = Duration::from_secs(60);

/// What the node refused since it started.
#[derive(Default)]
pub(super) struct Refusals {
    /// Datagrams, handshakes and frames that failed authentication.
    pub unauthentic: Arc<AtomicU64>,
    /// Gossip datagrams stale or already seen, data-plane frames out of order.
    pub replayed: Arc<AtomicU64>,
    /// Connections over a cap, or closed for not finishing their handshake in time.
    pub flood: AtomicU64,
    /// Unix-socket clients of another user.
    pub foreign: AtomicU64,
    /// Accept calls that failed (EMFILE…).
    pub accept_errors: AtomicU64,
    /// Data-plane connections in a version this node does not speak, and nodes of
    /// gossip with no version in common (`wire/version.rs`).
    pub version: AtomicU64,
    /// The version the last connection refused for its version asked for.
    pub last_version: AtomicU64,
}

impl Refusals {
    pub(super) fn counts(&self) -> [u64; 6] {
        [
            self.unauthentic.load(Ordering::Relaxed),
            self.replayed.load(Ordering::Relaxed),
            self.flood.load(Ordering::Relaxed),
            self.foreign.load(Ordering::Relaxed),
            self.accept_errors.load(Ordering::Relaxed),
            self.version.load(Ordering::Relaxed),
        ]
    }
}

/// Says, at most every 10 s, what the node refused since it last said so.
pub(super) async fn report_refusals(node: Arc<Node>) {
    const WHAT: [&str; 6] = [
        "that failed authentication (a node with another ephpm.cluster.secret?)",
        "replayed or out of order",
        "connections over a cap or too slow to authenticate",
        "socket clients of another user",
        "failed accepts (out of file descriptors?)",
        "connections in a data-plane version this node does not speak",
    ];
    let mut reported = [0u64; 6];
    loop {
        tokio::time::sleep(Duration::from_secs(10)).await;
        let now = node.refused.counts();
        let mut parts: Vec<String> = (0..WHAT.len())
            .filter(|&i| now[i] > reported[i])
            .map(|i| format!("{} {}", now[i] - reported[i], WHAT[i]))
            .collect();
        let asked = node.refused.last_version.load(Ordering::Relaxed);
        if now[5] > reported[5] && asked != 0 {
            // A connection's refusal names both sides' versions (a member's: `membership.rs`).
            parts.push(format!(
                "the last connection asked for version {asked}, this node speaks {}",
                version::named(version::known())
            ));
        }
        if !parts.is_empty() {
            tracing::warn!(
                "cluster node {}: refused in the last 10 s: {}",
                node.id,
                parts.join("; ")
            );
        }
        reported = now;
    }
}

/// Waits after a failed accept: 10 ms, doubling to 1 s while accepts keep failing, and
/// logs the first failure of every 10 s.
struct Backoff {
    wait: Duration,
    logged: Option<Instant>,
}

impl Backoff {
    fn new() -> Self {
        Backoff {
            wait: Duration::from_millis(10),
            logged: None,
        }
    }

    async fn failed(&mut self, node: &Node, what: &str, e: &io::Error) {
        node.refused.accept_errors.fetch_add(1, Ordering::Relaxed);
        if self
            .logged
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(10))
        {
            tracing::error!(
                "cluster node {}: accepting on the {what} failed ({e}); retrying",
                node.id
            );
            self.logged = Some(Instant::now());
        }
        tokio::time::sleep(self.wait).await;
        self.wait = (self.wait * 2).min(Duration::from_secs(1));
    }

    fn succeeded(&mut self) {
        self.wait = Duration::from_millis(10);
    }
}

/// The data plane's open connections, and those still in their handshake per address.
#[derive(Default)]
struct Admission {
    open: Mutex<(usize, HashMap<IpAddr, usize>)>,
}

/// A place among the open connections (and, until `authenticated`, among its address's
/// pending ones), given back when the connection ends.
struct Admitted {
    admission: Arc<Admission>,
    pending: Option<IpAddr>,
}

impl Admission {
    fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<Admitted> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let (total, pending) = &mut *open;
        let here = pending.entry(ip).or_default();
        if *total >= MAX_PEER_CONNECTIONS || *here >= MAX_PENDING_PER_ADDRESS {
            return None;
        }
        *here += 1;
        *total += 1;
        Some(Admitted {
            admission: self.clone(),
            pending: Some(ip),
        })
    }
}

impl Admitted {
    fn authenticated(&mut self) {
        if let Some(ip) = self.pending.take() {
            let mut open = self
                .admission
                .open
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if let Some(n) = open.1.get_mut(&ip) {
                *n -= 1;
                if *n == 0 {
                    open.1.remove(&ip);
                }
            }
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.authenticated();
        let mut open = self
            .admission
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        open.0 -= 1;
    }
}

pub(super) async fn serve_peers(node: Arc<Node>, listener: TcpListener) {
    let admission = Arc::new(Admission::default());
    let mut backoff = Backoff::new();
    loop {
        let (conn, from) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                backoff.failed(&node, "data plane", &e).await;
                continue;
            }
        };
        backoff.succeeded();
        let Some(place) = admission.admit(from.ip()) else {
            node.refused.flood.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        tokio::spawn(serve_peer(node.clone(), conn, place));
    }
}

async fn serve_peer(node: Arc<Node>, mut conn: TcpStream, mut place: Admitted) {
    let _ = conn.set_nodelay(true);
    let keys = node.peers.keys();
    let mut session = match tokio::time::timeout(
        HANDSHAKE_TIMEOUT,
        handshake::respond(&mut conn, &keys.secrets, version::known()),
    )
    .await
    {
        Err(_) => {
            node.refused.flood.fetch_add(1, Ordering::Relaxed);
            return;
        }
        Ok(Err(why)) => {
            if let Refused::Version { theirs, .. } = &why {
                node.refused
                    .last_version
                    .store(u64::from(*theirs), Ordering::Relaxed);
            }
            count(&node, &why);
            return;
        }
        Ok(Ok(s)) => s,
    };
    place.authenticated();
    loop {
        let frame = match tokio::time::timeout(IDLE, wire::read_frame_async(&mut conn)).await {
            Ok(Ok(f)) => f,
            // Idle for too long, closed, or a frame larger than any request.
            _ => return,
        };
        // A frame refused ends the connection unanswered: the sender has another
        // secret, is not a node at all, or replays what it recorded.
        let (route, op) = match session.open(&frame) {
            Err(why) => {
                count(&node, &why);
                return;
            }
            // A request the connection's version does not carry is malformed in it
            // (`Op::carried_by`), as it is to a build of that version.
            Ok(plain) => match wire::decode_request(&plain) {
                Some((route, op)) if session.version().is_none_or(|v| op.carried_by(v)) => {
                    (route, op)
                }
                _ => return,
            },
        };
        let response = match route {
            Route::Owner => node.decide_as_owner(op).await,
            Route::Here => node.here(op).await,
            Route::Client => invalid("a client request over the data plane"),
        };
        let body = session.seal(&wire::encode_response(&response));
        if wire::write_frame_async(&mut conn, &body).await.is_err() {
            return;
        }
    }
}

fn count(node: &Node, why: &Refused) {
    let counter = match why {
        Refused::Io(_) => return,
        Refused::Unauthentic => &node.refused.unauthentic,
        Refused::OutOfOrder => &node.refused.replayed,
        Refused::Version { .. } => &node.refused.version,
    };
    counter.fetch_add(1, Ordering::Relaxed);
}

pub(super) async fn serve_clients(node: Arc<Node>, listener: UnixListener) {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    let mut backoff = Backoff::new();
    loop {
        let conn = match listener.accept().await {
            Ok((c, _)) => c,
            Err(e) => {
                backoff.failed(&node, "unix socket", &e).await;
                continue;
            }
        };
        backoff.succeeded();
        // SO_PEERCRED: who connected, as the kernel recorded it at connect(). The socket
        // sits in the user's 0700 directory already; this holds even if its mode or the
        // directory's is loosened.
        if !conn.peer_cred().is_ok_and(|c| c.uid() == uid) {
            node.refused.foreign.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        tokio::spawn(serve_client(node.clone(), conn));
    }
}

async fn serve_client(node: Arc<Node>, mut conn: UnixStream) {
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
}
