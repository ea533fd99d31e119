//! The secrets a running node uses, replaceable while it runs: a fleet rotates its
//! secret by editing the secret file, with no restart and so no moment at which a node's
//! keys are unreachable (`secrets.rs` says in which three steps). A node started with
//! `ephpm.cluster.secret_file` (`--secret-file`) looks at the file's modification time
//! every `CHECK_EVERY` and takes a changed file that holds valid secrets; one that does
//! not (unreadable, empty, a weak secret) is reported and the running secrets are kept.
//!
//! New data-plane connections and every gossip datagram use the current keys; a
//! connection already open keeps the session keys it agreed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use super::crypto::Sealer;
use super::secrets;

/// How often the secret file is looked at.
pub const CHECK_EVERY: Duration = Duration::from_secs(1);

/// One generation of the node's secrets and the gossip keys made from them.
pub struct Keys {
    /// The first signs, all are accepted (`crypto/handshake.rs`).
    pub secrets: Vec<Vec<u8>>,
    pub gossip: Sealer,
}

pub struct Keyring {
    current: RwLock<Arc<Keys>>,
}

impl Keyring {
    pub fn new(secrets: &[Vec<u8>]) -> Self {
        Keyring {
            current: RwLock::new(Arc::new(Keys::of(secrets))),
        }
    }

    pub fn current(&self) -> Arc<Keys> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn replace(&self, secrets: &[Vec<u8>]) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(Keys::of(secrets));
    }
}

impl Keys {
    fn of(secrets: &[Vec<u8>]) -> Self {
        Keys {
            secrets: secrets.to_vec(),
            gossip: Sealer::new(secrets),
        }
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Follows `file` forever (until the node's runtime stops), replacing the keyring's
/// secrets when it changes, and logs what happened (as node `id`).
pub async fn follow(keyring: Arc<Keyring>, file: PathBuf, id: String) {
    let mut seen = modified(&file);
    loop {
        tokio::time::sleep(CHECK_EVERY).await;
        let now = modified(&file);
        if now == seen {
            continue;
        }
        seen = now;
        match secrets::read_file(&file).and_then(|s| {
            if s.is_empty() {
                return Err(super::ClusterError::NoSecret);
            }
            s.iter().try_for_each(|x| secrets::check_strength(x))?;
            Ok(s)
        }) {
            Ok(s) => {
                keyring.replace(&s);
                tracing::info!(
                    "cluster node {id}: took {} secret(s) from {} (the first signs)",
                    s.len(),
                    file.display()
                );
            }
            Err(e) => tracing::warn!(
                "cluster node {id}: kept its secrets: {} changed but cannot be used: {e}",
                file.display()
            ),
        }
    }
}
