//! The `ephpm.*` ini entries, in one table with their defaults and scope, and the
//! `Config` they are read into once at module startup.
//!
//! | entry | default | scope | meaning |
//! |---|---|---|---|
//! | `ephpm.dsn` | `shm://` | SYSTEM | the store `new Ephpm\Kv()` and the `ephpm_kv_*` functions use |
//! | `ephpm.store_name` | `default` | SYSTEM | the name of the `shm://` store (one segment per user and name) |
//! | `ephpm.shm_size` | `64M` | SYSTEM | size of a shm store's segment, in bytes (K/M/G shorthand) |
//! | `ephpm.compress_threshold` | `64K` | SYSTEM | values of at least this many bytes are lz4-compressed when it pays; 0 = never |
//! | `ephpm.session.locking` | `1` | ALL | sessions are locked from read to close |
//! | `ephpm.session.lock_ttl` | `0` | ALL | seconds a session lock lives; 0 = max_execution_time, or 30 when that is 0 |
//! | `ephpm.session.lock_wait` | `30` | ALL | seconds a read waits for a session's lock (never into max_execution_time) |
//! | `ephpm.session.lock_timeout` | `warn` | ALL | when the wait runs out: `warn` goes on without the lock, `fail` fails session_start() |
//!
//! The session entries are read at every session open, so `ini_set()` before
//! session_start() applies.

use std::sync::OnceLock;

use ext_php_rs::flags::IniEntryPermission;
use ext_php_rs::zend::{ExecutorGlobals, IniEntryDef, IniEntryDefs};

use super::error::warn;
use crate::config::{Config, parse_size};

static ENTRIES: IniEntryDefs<9> = IniEntryDefs::new([
    IniEntryDef::new(c"ephpm.dsn", c"shm://", IniEntryPermission::System),
    IniEntryDef::new(c"ephpm.store_name", c"default", IniEntryPermission::System),
    IniEntryDef::new(c"ephpm.shm_size", c"64M", IniEntryPermission::System),
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
    IniEntryDef::end(),
]);

static CONFIG: OnceLock<Config> = OnceLock::new();

/// The settings this process runs with.
pub fn config() -> &'static Config {
    CONFIG.get_or_init(Config::default)
}

/// Registers the entries and reads them (MINIT). A value that cannot be parsed is
/// reported and replaced by its default.
pub fn register(module_number: i32) {
    IniEntryDef::register(ENTRIES.as_slice(), module_number);
    let values = ExecutorGlobals::get().ini_values();
    let get = |name: &str| values.get(name).cloned().flatten().unwrap_or_default();
    let defaults = Config::default();
    let size = |name: &str, default: u64| {
        let raw = get(name);
        parse_size(&raw).unwrap_or_else(|| {
            warn(&format!(
                "ephpm: {name}={raw:?} is not a size (like 64M); using the default"
            ));
            default
        })
    };
    let config = Config {
        dsn: get("ephpm.dsn"),
        store_name: get("ephpm.store_name"),
        shm_size: size("ephpm.shm_size", defaults.shm_size),
        compress_threshold: size("ephpm.compress_threshold", defaults.compress_threshold),
    };
    let _ = CONFIG.set(config);
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
