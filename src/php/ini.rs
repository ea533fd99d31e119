//! The `ephpm.*` ini entries, in one table with their defaults and scope, and the
//! `Config` they are read into.
//!
//! | entry | default | scope | meaning |
//! |---|---|---|---|
//! | `ephpm.dsn` | `shm://` | PERDIR | the store `new Ephpm\Kv()` and the `ephpm_kv_*` functions use |
//! | `ephpm.deploys` | `0` | PERDIR | at each request start, look at the store's release number (`ephpm deploy`): a new one clears the stat and realpath caches and, once per php-fpm master, invalidates OPcache |
//! | `ephpm.store_name` | `default` | PERDIR | the name of the `shm://` store (one segment per user and name) |
//! | `ephpm.shm_size` | `64M` | SYSTEM | size of a shm store's segment when this process creates it (K/M/G shorthand) |
//! | `ephpm.shm_dir` | `/dev/shm` | SYSTEM | where each user's private directory of segments is made |
//! | `ephpm.compress_threshold` | `64K` | SYSTEM | values of at least this many bytes are lz4-compressed when it pays; 0 = never |
//! | `ephpm.session.locking` | `1` | ALL | sessions are locked from read to close |
//! | `ephpm.session.lock_ttl` | `0` | ALL | seconds a session lock lives; 0 = max_execution_time, or 30 when that is 0 |
//! | `ephpm.session.lock_wait` | `30` | ALL | seconds a read waits for a session's lock (never into max_execution_time) |
//! | `ephpm.session.lock_timeout` | `warn` | ALL | when the wait runs out: `warn` goes on without the lock, `fail` fails session_start() |
//! | `ephpm.cluster.enabled` | `0` | SYSTEM | this process may run the host's cluster node (`cluster://`) |
//! | `ephpm.cluster.node_id` | host name | SYSTEM | the node's id, the same across restarts |
//! | `ephpm.cluster.gossip_addr` | `127.0.0.1:7946` | SYSTEM | IP:PORT gossip listens on (UDP) and peers are told |
//! | `ephpm.cluster.data_addr` | gossip IP, any port | SYSTEM | IP:PORT of the data plane (TCP); its address travels on gossip |
//! | `ephpm.cluster.seeds` | empty | SYSTEM | comma-separated gossip addresses to join through |
//! | `ephpm.cluster.secret` | empty | SYSTEM | the cluster's shared secret (≥ 128 bits; several comma-separated while rotating: the first signs); required unless `secret_file` |
//! | `ephpm.cluster.secret_file` | empty | SYSTEM | a file holding the secret(s), one per line: kept out of ini_get() and phpinfo() |
//! | `ephpm.cluster.allow_insecure_no_auth` | `0` | SYSTEM | run without a secret: no authentication, no encryption |
//! | `ephpm.cluster.replication_factor` | `2` | SYSTEM | copies of each key, owner included |
//! | `ephpm.cluster.small_key_threshold` | `512` | SYSTEM | entries up to this many bytes also travel on gossip |
//! | `ephpm.cluster.gossip_interval` | `1000` | SYSTEM | milliseconds between gossip rounds |
//! | `ephpm.cluster.push_writes` | `1` | SYSTEM | copy each write to every host before it returns; 0 = other hosts learn it by gossip |
//!
//! Why these scopes: which store a script uses is the application's choice, so `ephpm.dsn`
//! and `ephpm.store_name` are PERDIR (php.ini, an FPM pool's `php_value` or
//! `php_admin_value`, `.user.ini`), never `ini_set()`: a store chosen at run time by code
//! could be a store another application believes is its own. The size, the directory and
//! compression are the operator's (SYSTEM: php.ini or `php_admin_value`). The session
//! entries are per request (ALL). The store entries and the session entries are read
//! when a store or a session is opened, never only at startup: an FPM pool applies its
//! `php_admin_value`s in each worker after the master started, and they must take effect
//! exactly as `ini_get()` reports them. The cluster entries are the host's node's and
//! are read once at startup.

use std::ffi::c_int;
use std::sync::OnceLock;

use ext_php_rs::ffi::{php_printf, zend_ini_entry};

use ext_php_rs::flags::IniEntryPermission;
use ext_php_rs::zend::{ExecutorGlobals, IniEntryDef, IniEntryDefs};

use super::error::warn;
use crate::config::{ClusterSettings, Config, parse_size};

/// php.ini, a pool's php_value/php_admin_value and .user.ini; never ini_set().
const PERDIR: IniEntryPermission = IniEntryPermission::PerDir.union(IniEntryPermission::System);

static ENTRIES: IniEntryDefs<23> = IniEntryDefs::new([
    IniEntryDef::new(c"ephpm.dsn", c"shm://", PERDIR),
    IniEntryDef::new(c"ephpm.deploys", c"0", PERDIR),
    IniEntryDef::new(c"ephpm.store_name", c"default", PERDIR),
    IniEntryDef::new(c"ephpm.shm_size", c"64M", IniEntryPermission::System),
    IniEntryDef::new(c"ephpm.shm_dir", c"/dev/shm", IniEntryPermission::System),
    IniEntryDef::new(
        c"ephpm.compress_threshold",
        c"64K",
        IniEntryPermission::System,
    ),
    IniEntryDef::new(c"ephpm.session.locking", c"1", IniEntryPermission::All),
    IniEntryDef::new(c"ephpm.session.lock_ttl", c"0", IniEntryPermission::All),
    IniEntryDef::new(c"ephpm.session.lock_wait", c"30", IniEntryPermission::All),
    IniEntryDef::new(
        c"ephpm.session.lock_timeout",
        c"warn",
        IniEntryPermission::All,
    ),
    IniEntryDef::new(c"ephpm.cluster.enabled", c"0", IniEntryPermission::System),
    IniEntryDef::new(c"ephpm.cluster.node_id", c"", IniEntryPermission::System),
    IniEntryDef::new(
        c"ephpm.cluster.gossip_addr",
        c"127.0.0.1:7946",
        IniEntryPermission::System,
    ),
    IniEntryDef::new(c"ephpm.cluster.data_addr", c"", IniEntryPermission::System),
    IniEntryDef::new(c"ephpm.cluster.seeds", c"", IniEntryPermission::System),
    IniEntryDef {
        displayer: Some(hide_value),
        ..IniEntryDef::new(c"ephpm.cluster.secret", c"", IniEntryPermission::System)
    },
    IniEntryDef::new(
        c"ephpm.cluster.secret_file",
        c"",
        IniEntryPermission::System,
    ),
    IniEntryDef::new(
        c"ephpm.cluster.allow_insecure_no_auth",
        c"0",
        IniEntryPermission::System,
    ),
    IniEntryDef::new(
        c"ephpm.cluster.replication_factor",
        c"2",
        IniEntryPermission::System,
    ),
    IniEntryDef::new(
        c"ephpm.cluster.small_key_threshold",
        c"512",
        IniEntryPermission::System,
    ),
    IniEntryDef::new(
        c"ephpm.cluster.gossip_interval",
        c"1000",
        IniEntryPermission::System,
    ),
    IniEntryDef::new(
        c"ephpm.cluster.push_writes",
        c"1",
        IniEntryPermission::System,
    ),
    IniEntryDef::end(),
]);

/// phpinfo() and `php --ri` show whether the secret is set, never the secret.
///
/// # Safety
/// PHP calls it with one of its ini entries, whose value strings are NULL or valid.
unsafe extern "C" fn hide_value(entry: *mut zend_ini_entry, kind: c_int) {
    // ZEND_INI_DISPLAY_ORIG: the value before a runtime change, if there was one.
    const DISPLAY_ORIG: c_int = 1;
    // SAFETY: PHP passes a live entry (above).
    let e = unsafe { &*entry };
    // `modified` is a zend_uchar up to PHP 8.5 and a bool from 8.6: its default (0,
    // false) is "not modified" in both.
    let value = if kind == DISPLAY_ORIG && e.modified != Default::default() {
        e.orig_value
    } else {
        e.value
    };
    // SAFETY: NULL or a valid zend_string (above).
    let set = !value.is_null() && unsafe { (*value).len } > 0;
    let shown = if set {
        c"(set, not shown)"
    } else {
        c"no value"
    };
    // SAFETY: a NUL-terminated format string without conversions.
    unsafe { php_printf(shown.as_ptr()) };
}

static CLUSTER: OnceLock<ClusterSettings> = OnceLock::new();

/// The settings a store opened now gets: the store entries as `ini_get()` reports them
/// now, the cluster's as read at startup. A size that cannot be parsed is reported and
/// replaced by its default.
pub fn config() -> Config {
    let defaults = Config::default();
    let size = |name: &std::ffi::CStr, default: u64| {
        let raw = string(name);
        parse_size(&raw).unwrap_or_else(|| {
            warn(&format!(
                "ephpm: {}={raw:?} is not a size (like 64M); using the default",
                name.to_string_lossy()
            ));
            default
        })
    };
    Config {
        dsn: string(c"ephpm.dsn"),
        store_name: string(c"ephpm.store_name"),
        shm_size: size(c"ephpm.shm_size", defaults.shm_size),
        shm_dir: string(c"ephpm.shm_dir"),
        compress_threshold: size(c"ephpm.compress_threshold", defaults.compress_threshold),
        cluster: CLUSTER.get().cloned().unwrap_or_default(),
    }
}

/// Registers the entries and reads the cluster's (MINIT). A value that cannot be parsed
/// is reported and replaced by its default.
pub fn register(module_number: i32) {
    IniEntryDef::register(ENTRIES.as_slice(), module_number);
    let values = ExecutorGlobals::get().ini_values();
    let get = |name: &str| values.get(name).cloned().flatten().unwrap_or_default();
    let flag = |name: &str| {
        matches!(
            get(name).trim().to_ascii_lowercase().as_str(),
            "1" | "on" | "yes" | "true"
        )
    };
    let count = |name: &str, default: u64| {
        let raw = get(name);
        raw.trim().parse::<u64>().unwrap_or_else(|_| {
            warn(&format!(
                "ephpm: {name}={raw:?} is not a number; using the default"
            ));
            default
        })
    };
    let cluster_defaults = ClusterSettings::default();
    let cluster = ClusterSettings {
        enabled: flag("ephpm.cluster.enabled"),
        node_id: get("ephpm.cluster.node_id"),
        gossip_addr: get("ephpm.cluster.gossip_addr"),
        data_addr: get("ephpm.cluster.data_addr"),
        seeds: get("ephpm.cluster.seeds"),
        secret: get("ephpm.cluster.secret"),
        secret_file: get("ephpm.cluster.secret_file"),
        allow_insecure_no_auth: flag("ephpm.cluster.allow_insecure_no_auth"),
        replication_factor: count(
            "ephpm.cluster.replication_factor",
            cluster_defaults.replication_factor,
        ),
        small_key_threshold: count(
            "ephpm.cluster.small_key_threshold",
            cluster_defaults.small_key_threshold,
        ),
        gossip_interval_ms: count(
            "ephpm.cluster.gossip_interval",
            cluster_defaults.gossip_interval_ms,
        ),
        push_writes: flag("ephpm.cluster.push_writes"),
    };
    // A node that could never start is said at startup, not first at a request's use.
    if cluster.enabled {
        let store = crate::store::shm::ShmOptions::new("default", 0);
        if let Err(e) = crate::cluster::NodeConfig::from_settings(&cluster, store) {
            warn(&format!("ephpm: the cluster node cannot run: {e}"));
        }
    }
    // The sizes are parsed now too, so that a bad one in php.ini is said at startup.
    let _ = config();
    let _ = CLUSTER.set(cluster);
}

/// The current value of an ini entry as a number (0 when unset or not a number).
pub fn number(name: &std::ffi::CStr) -> f64 {
    // SAFETY: a NUL-terminated name with its length; zend_ini_double only reads it.
    unsafe { super::ffi::zend_ini_double(name.as_ptr(), name.count_bytes(), 0) }
}

/// The current value of an ini entry as a string (empty when unset).
pub fn string(name: &std::ffi::CStr) -> String {
    // SAFETY: as in `number`; the result is NULL or the entry's NUL-terminated value,
    // alive while the entry is, and copied at once.
    let p = unsafe { super::ffi::zend_ini_string(name.as_ptr(), name.count_bytes(), 0) };
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null, NUL-terminated (above).
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}
