//! Exactly one node per host store: the node's lease is a lock in the host's cluster
//! segment, held for `LEASE_TTL` and extended every `RENEW`. Every process that may run
//! the node (a PHP process with `ephpm.cluster.enabled=1`, or `ephpm-node`) keeps trying
//! to take it; when its holder exits or dies, the lock expires and another process
//! takes over within `LEASE_TTL` + `RENEW`, starting the node as a new chitchat
//! generation of the same node id.

use std::time::Duration;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::{NodeConfig, RESERVED, node};
use crate::store::Store;
use crate::store::shm::{ShmStore, open_shared};
use crate::wire::{segment_options, socket_path};

pub const LEASE_TTL: Duration = Duration::from_secs(2);
pub const RENEW: Duration = Duration::from_millis(500);

/// A lease this process holds: (pid, segment, token, the node's socket).
type Held = (u32, Arc<ShmStore>, Vec<u8>, PathBuf);

/// The leases this process holds, given up at module shutdown (`give_up`).
static HELD: Mutex<Vec<Held>> = Mutex::new(Vec::new());

fn lease_key() -> Vec<u8> {
    [RESERVED, b"node-lease"].concat()
}

/// Runs the node whenever this process holds the lease, forever (until the runtime
/// stops). It logs when the node starts and stops, and why it could not start (it is
/// retried).
pub async fn keep(cfg: NodeConfig) {
    let id = cfg.node_id.clone();
    if let Err(e) = cfg.check() {
        return tracing::error!("cluster node {id}: {e}");
    }
    let (segment, socket) = match open_shared(&segment_options(&cfg.store))
        .and_then(|(s, _)| Ok((s, socket_path(&cfg.store)?)))
    {
        Ok(found) => found,
        Err(e) => return tracing::error!("cluster node {id}: {e}"),
    };
    let token = format!("{}:{:x}", std::process::id(), super::crypto::random_u64()).into_bytes();
    let key = lease_key();
    loop {
        if !matches!(segment.lock_acquire(&key, &token, LEASE_TTL), Ok(Some(_))) {
            tokio::time::sleep(RENEW).await;
            continue;
        }
        match node::start(cfg.clone()).await {
            Ok(running) => {
                tracing::info!("cluster node {id}: {}", running.describe());
                let held = (
                    crate::runtime::pid(),
                    segment.clone(),
                    token.clone(),
                    socket.clone(),
                );
                held_leases().push(held);
                while matches!(segment.lock_extend(&key, &token, LEASE_TTL), Ok(true)) {
                    tokio::time::sleep(RENEW).await;
                }
                held_leases().retain(|(_, _, t, _)| *t != token);
                tracing::warn!(
                    "cluster node {id}: the node lost its lease (this process was paused too long)"
                );
                running.stop().await;
            }
            Err(e) => {
                tracing::error!("cluster node {id}: {e}");
                let _ = segment.lock_release(&key, &token);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// Starts `keep` on this process's background runtime, once per store per process (a
/// forked child starts its own). Why a node could not start is logged (`crate::logging`:
/// stderr, which is the FPM log or the terminal).
pub fn keep_in_background(cfg: NodeConfig) -> Result<(), super::ClusterError> {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static KEPT: Mutex<Option<HashSet<(u32, std::path::PathBuf)>>> = Mutex::new(None);
    let path = segment_options(&cfg.store)
        .path()
        .map_err(|e| super::ClusterError::Start(e.to_string()))?;
    let key = (crate::runtime::pid(), path);
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    if !kept.get_or_insert_with(HashSet::new).insert(key) {
        return Ok(());
    }
    let runtime = crate::runtime::handle()
        .map_err(|e| super::ClusterError::Start(format!("the background runtime: {e}")))?;
    runtime.spawn(keep(cfg));
    Ok(())
}

fn held_leases() -> std::sync::MutexGuard<'static, Vec<Held>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// Gives up the leases this process holds, once its runtime (and so its node) has
/// stopped: module shutdown, an FPM worker recycled. The next process takes over at its
/// next try (every `RENEW`) instead of after the lease's TTL. An inherited entry (a
/// forked child's copy of its parent's) is left alone.
pub fn give_up() {
    let pid = crate::runtime::pid();
    let key = lease_key();
    for (holder, segment, token, socket) in held_leases().drain(..) {
        if holder == pid {
            let _ = std::fs::remove_file(&socket);
            let _ = segment.lock_release(&key, &token);
        }
    }
}
