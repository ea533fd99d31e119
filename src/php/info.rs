//! `php --ri ephpm` / phpinfo(): what is live in this process — the default store, its
//! memory and counters — then the ini entries.

use ext_php_rs::zend::ModuleEntry;
use ext_php_rs::{info_table_end, info_table_row, info_table_start};

use super::ffi;
use super::ini::config;
use crate::keyspace::Keyspace;

pub extern "C" fn module_info(module: *mut ModuleEntry) {
    let c = config();
    info_table_start!();
    info_table_row!("ephpm support", "enabled");
    info_table_row!("version", env!("CARGO_PKG_VERSION"));
    info_table_row!("default store (ephpm.dsn)", c.dsn.as_str());
    let opened = crate::open::open_existing(&c.dsn, &c).and_then(|s| {
        s.map(|s| {
            // The counters before the release is read: that read is not the user's.
            let stats = s.stats()?;
            let release = crate::deploy::current(&Keyspace::new(s.clone(), b""))?;
            Ok((
                s.describe(),
                stats,
                crate::resp_probe::status_of(&*s),
                release,
            ))
        })
        .transpose()
    });
    match opened {
        Ok(None) => info_table_row!("backend", "not created yet (made by the first use)"),
        Ok(Some((describe, st, resp, release))) => {
            info_table_row!("backend", describe.as_str());
            // A Redis without maxmemory reports 0: no limit of its own.
            let size = match st.memory_size {
                0 => "no limit".to_string(),
                n => n.to_string(),
            };
            info_table_row!("memory size", size.as_str());
            info_table_row!("memory used", st.memory_used.to_string().as_str());
            info_table_row!("entries", st.entries.to_string().as_str());
            info_table_row!("shards", st.shards.to_string().as_str());
            info_table_row!("hits", st.hits.to_string().as_str());
            info_table_row!("misses", st.misses.to_string().as_str());
            info_table_row!("evictions", st.evictions.to_string().as_str());
            // By what was evicted, in the order the store gives entries up.
            info_table_row!(
                "evictions: anonymous (new session ids, empty sessions)",
                st.evictions_anonymous.to_string().as_str()
            );
            info_table_row!(
                "evictions: cache entries",
                st.evictions_cache.to_string().as_str()
            );
            info_table_row!(
                "evictions: sessions",
                st.evictions_session.to_string().as_str()
            );
            info_table_row!("expirations", st.expirations.to_string().as_str());
            info_table_row!("repairs after a crash", st.repairs.to_string().as_str());
            info_table_row!(
                "shards reset (too damaged to repair)",
                st.resets.to_string().as_str()
            );
            // What `ephpm deploy` raised, and what this process acted on (`ephpm.deploys`):
            // a worker that shows an older number has not served a request since.
            info_table_row!("release (ephpm deploy)", release.to_string().as_str());
            let seen = super::deploy::seen().map_or("none yet".to_string(), |n| n.to_string());
            info_table_row!("release acted on by this process", seen.as_str());
            if let Some(resp) = resp {
                info_table_row!("Redis protocol (ephpm-resp)", resp.to_string().as_str());
            }
        }
        Err(e) => info_table_row!("store error", e.to_string().as_str()),
    }
    info_table_end!();
    // SAFETY: `module` is the module entry PHP passes to its own MINFO callback.
    unsafe { ffi::display_ini_entries(module) };
}
