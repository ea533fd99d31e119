//! Exactly one node per host store: the node's lease is a lock in the host's cluster
//! segment, held for `LEASE_TTL` and extended every `RENEW`. Every process that may run
//! the node (a PHP process with `ephpm.cluster.enabled=1`, or `ephpm-node`) keeps trying
//! to take it; when its holder exits or dies, the lock expires and another process
//! takes over within `LEASE_TTL` + `RENEW`, starting the node as a new chitchat
//! generation of the same node id.

use std::time::Duration;

use super::{NodeConfig, RESERVED, node, segment_options};
use crate::store::Store;
use crate::store::shm::open_shared;

pub const LEASE_TTL: Duration = Duration::from_secs(2);
pub const RENEW: Duration = Duration::from_millis(500);

fn lease_key() -> Vec<u8> {
    [RESERVED, b"node-lease"].concat()
}

/// Runs the node whenever this process holds the lease, forever (until the runtime
/// stops). `report` hears when the node starts and stops, and why it could not start
/// (it is retried).
pub async fn keep(cfg: NodeConfig, report: impl Fn(String)) {
    if let Err(e) = cfg.check() {
        return report(e.to_string());
    }
    let segment = match open_shared(&segment_options(&cfg.store)) {
        Ok((s, _)) => s,
        Err(e) => return report(e.to_string()),
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
                report(running.describe());
                while matches!(segment.lock_extend(&key, &token, LEASE_TTL), Ok(true)) {
                    tokio::time::sleep(RENEW).await;
                }
                report("the node lost its lease (this process was paused too long)".into());
                running.stop().await;
            }
            Err(e) => {
                report(e.to_string());
                let _ = segment.lock_release(&key, &token);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// Starts `keep` on this process's background runtime, once per store per process (a
/// forked child starts its own). Why a node could not start goes to stderr, which is
/// the FPM log or the terminal.
pub fn keep_in_background(cfg: NodeConfig) -> Result<(), super::ClusterError> {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static KEPT: Mutex<Option<HashSet<(u32, std::path::PathBuf)>>> = Mutex::new(None);
    let key = (crate::runtime::pid(), segment_options(&cfg.store).path());
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    if !kept.get_or_insert_with(HashSet::new).insert(key) {
        return Ok(());
    }
    let runtime = crate::runtime::handle()
        .map_err(|e| super::ClusterError::Start(format!("the background runtime: {e}")))?;
    let id = cfg.node_id.clone();
    runtime.spawn(keep(cfg, move |why| {
        eprintln!("ephpm: cluster node {id}: {why}")
    }));
    Ok(())
}
