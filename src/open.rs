//! Opening a store from its DSN: the one place that picks a backend (`shm://`, the Redis
//! family, `cluster://`) and, for `cluster://`, starts the host's node. It sits above
//! every backend and the cluster, so none of them needs to know of the others.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::config::Config;
use crate::ground::dsn;
use crate::store::cluster::ClusterStore;
use crate::store::redis::RedisStore;
use crate::store::{Result, Store, shm};

/// Opens the store a DSN names (see `ground/dsn.rs`), once per process per store. The strings
/// are warnings for the user (a segment that had to be replaced, and why).
pub fn open(dsn: &str, config: &Config) -> Result<(Arc<dyn Store>, Vec<String>)> {
    match dsn::parse(dsn)? {
        dsn::Dsn::Redis(target) => {
            // One per DSN per process, so that every Kv, lock and session of the process
            // shares its connection and its subscriber.
            static OPEN: Mutex<Option<HashMap<String, Arc<RedisStore>>>> = Mutex::new(None);
            let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
            let open = open.get_or_insert_with(HashMap::new);
            let store = match open.get(dsn) {
                Some(s) => s.clone(),
                None => {
                    let s = Arc::new(RedisStore::new(target)?);
                    open.insert(dsn.to_string(), s.clone());
                    s
                }
            };
            Ok((store, Vec::new()))
        }
        dsn::Dsn::Shm { name } => {
            let (store, warnings) = shm::open_shared(&shm_options(name, config)?)?;
            Ok((store, warnings))
        }
        dsn::Dsn::Cluster {
            name,
            timeout,
            prefix,
            copies,
        } => {
            let opts = shm_options(name, config)?;
            if config.cluster.enabled {
                let node =
                    crate::cluster::NodeConfig::from_settings(&config.cluster, opts.clone())?;
                crate::cluster::lease::keep_in_background(node)?;
            }
            let (store, warnings) = ClusterStore::open(&opts, timeout, &prefix, copies)?;
            Ok((Arc::new(store), warnings))
        }
    }
}

/// Opens the store a DSN names only if it already exists: a host store (`shm://`,
/// `cluster://`) whose segment nobody made yet is `None`, and nothing is created, nor a
/// cluster node started. What `php --ri` and phpinfo() show, which must never make a
/// segment as a side effect.
pub fn open_existing(dsn: &str, config: &Config) -> Result<Option<Arc<dyn Store>>> {
    let segment = match dsn::parse(dsn)? {
        dsn::Dsn::Redis(_) => return open(dsn, config).map(|(s, _)| Some(s)),
        dsn::Dsn::Shm { name } => shm_options(name, config)?,
        dsn::Dsn::Cluster { name, .. } => crate::wire::segment_options(&shm_options(name, config)?),
    };
    if segment.existing_path()?.is_none() {
        return Ok(None);
    }
    let mut quiet = config.clone();
    quiet.cluster.enabled = false;
    open(dsn, &quiet).map(|(s, _)| Some(s))
}

/// Removes the host store `name` (default `ephpm.store_name`) if no process maps it: the
/// operator's resize or reset (`shm::remove_unused`). Returns whether there was one.
pub fn remove_host_store(name: Option<String>, config: &Config) -> Result<bool> {
    Ok(shm::remove_unused(&shm_options(name, config)?)?)
}

/// The shm options of the host store `name` (default `ephpm.store_name`).
fn shm_options(name: Option<String>, config: &Config) -> Result<shm::ShmOptions> {
    let name = name.unwrap_or_else(|| config.store_name.clone());
    dsn::valid_name(&name)?;
    Ok(shm::ShmOptions {
        compress_threshold: config.compress_threshold.min(usize::MAX as u64) as usize,
        dir: config.shm_dir.clone().into(),
        ..shm::ShmOptions::new(&name, config.shm_size)
    })
}
