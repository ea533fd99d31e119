//! Where a host store's cluster segment and its node's socket are: both the node, which
//! makes them, and the client, which finds them, take them from here.

use std::path::PathBuf;

use crate::store::shm::{ShmError, ShmOptions};

/// The cluster segment of a host store: beside its shm segment, not in it, so that
/// `shm://NAME` and `cluster://NAME` never see each other's keys. It keeps the size it
/// was made with: the node and the PHP processes may have different `ephpm.shm_size`.
pub fn segment_options(store: &ShmOptions) -> ShmOptions {
    ShmOptions {
        name: format!("{}.cluster", store.name),
        adopt_size: true,
        ..store.clone()
    }
}

/// The node's unix socket: beside the cluster segment, mode 0600, in the user's private
/// directory (so no other user can bind it first).
pub fn socket_path(store: &ShmOptions) -> Result<PathBuf, ShmError> {
    let mut p = segment_options(store).path()?.into_os_string();
    p.push(".sock");
    Ok(PathBuf::from(p))
}
