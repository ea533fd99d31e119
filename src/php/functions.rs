//! The `ephpm_kv_*` functions, with ePHPm's names, signatures and return conventions, so
//! code written for ePHPm's KV runs on stock PHP: strings in and out, TTLs in whole
//! seconds where 0 or less means none. Bad arguments throw PHP's TypeError or
//! ValueError; every store failure (a store that cannot be opened or reached, a value
//! that cannot fit, a value larger than memory_limit leaves room for) returns `false`
//! with an E_WARNING, never an exception. They use the default store (`ephpm.dsn`),
//! unprefixed.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use ext_php_rs::args::Arg;
use ext_php_rs::builders::{FunctionBuilder, ModuleBuilder};
use ext_php_rs::flags::DataType;
use ext_php_rs::types::{ZendHashTable, ZendStr, Zval};
use ext_php_rs::zend::ExecuteData;

use super::call::{Call, Handler, MAX_SECONDS, run};
use super::convert::{to_php_string, with_scratch};
use super::error::value_error;
use super::error::{throw, too_large_message, warn};
use super::open_keyspace;
use super::string_room::{Roomed, StringRoom, no_room_for_string};
use crate::keyspace::{Keyspace, Waited};
use crate::store::{Fetched, KeyTtl, SetNx, StoreError, Value};

thread_local! {
    /// The default keyspace, opened on first use in a request. `ephpm.dsn` and
    /// `ephpm.store_name` are PERDIR (a `.user.ini`, a FastCGI `PHP_VALUE` may change
    /// them for the next request), so it is forgotten at the end of each request.
    static DEFAULT: RefCell<Option<Rc<Keyspace>>> = const { RefCell::new(None) };
}

/// RSHUTDOWN: the next request opens the default store its own settings name.
pub fn forget_default() {
    DEFAULT.with(|d| d.borrow_mut().take());
}

/// The default keyspace, or `None` with the warning raised and `false` returned: a store
/// that cannot be opened is a store failure like any other here. Shared through an `Rc`:
/// a clone of the keyspace itself would take and give back a reference to its store,
/// two atomic operations on every call.
fn default_space(what: &str, rv: &mut Zval) -> Option<Rc<Keyspace>> {
    DEFAULT.with(|d| {
        if let Some(s) = d.borrow().as_ref() {
            return Some(s.clone());
        }
        let s = Rc::new(soft(open_keyspace(None, b""), what, rv)?);
        *d.borrow_mut() = Some(s.clone());
        Some(s)
    })
}

/// A key check failure is a ValueError (as for `Ephpm\Kv`); any other store failure is
/// reported ePHPm's way: a warning and `false`.
fn soft<T>(r: crate::store::Result<T>, what: &str, rv: &mut Zval) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e @ (StoreError::EmptyKey | StoreError::KeyTooLong(_))) => {
            throw(&e, 1, what);
            None
        }
        Err(e) => {
            warn(&e.to_string());
            rv.set_bool(false);
            None
        }
    }
}

/// ePHPm's TTL argument `arg`: whole seconds, 0 or negative meaning none; `None` with the
/// ValueError thrown when it is beyond `MAX_SECONDS`.
fn seconds(c: &Call, arg: u32, default: i64) -> Option<Option<Duration>> {
    let ttl = c.long_or(arg, default)?;
    if ttl > MAX_SECONDS {
        value_error(
            arg + 1,
            &format!("must be less than or equal to {MAX_SECONDS}"),
        );
        return None;
    }
    Some((ttl > 0).then(|| Duration::from_secs(ttl.unsigned_abs())))
}

/// A stored value as a PHP string, or `None` with a warning and `false` in `rv` when
/// memory_limit has no room for it (as for any store failure here).
fn php_string(bytes: &[u8], key: &[u8], rv: &mut Zval) -> Option<Zval> {
    if let Some(left) = no_room_for_string(bytes.len()) {
        warn(&too_large_message(key, bytes.len(), left));
        rv.set_bool(false);
        return None;
    }
    let mut out = Zval::new();
    out.set_zend_string(ZendStr::new(bytes, false));
    Some(out)
}

/// The checked call and its key (argument 1); `None` with the exception thrown. The
/// store is opened (`default_space`) once every argument has been checked, so that a bad
/// argument is reported the same whether the store works or not.
fn begin(ex: &mut ExecuteData, min: u32, max: u32) -> Option<(Call<'_>, &[u8])> {
    let c = Call::new(ex, min, max)?;
    let key = c.string(0)?;
    Some((c, key))
}

extern "C" fn kv_get(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        const WHAT: &str = "ephpm_kv_get()";
        let Some((_, key)) = begin(ex, 1, 1) else {
            return;
        };
        let Some(s) = default_space(WHAT, rv) else {
            return;
        };
        with_scratch(|buf| {
            // A stored string (or serialized value, returned as it is) is copied once,
            // straight into the PHP string returned.
            let mut room = StringRoom::new(buf, true);
            let Some(found) = soft(s.get_into(key, &mut room), WHAT, rv) else {
                return;
            };
            let Some(hit) = found else {
                return rv.set_null();
            };
            match (hit.value, room.take()) {
                (Fetched::Str | Fetched::Serialized, Roomed::String(string)) => {
                    rv.set_zend_string(string)
                }
                (Fetched::Str | Fetched::Serialized, Roomed::TooLarge { len, left }) => {
                    warn(&too_large_message(key, len, left));
                    rv.set_bool(false);
                }
                // Never: every string hit asks for its room.
                (Fetched::Str | Fetched::Serialized, Roomed::Scratch) => rv.set_null(),
                (number, _) => {
                    if let Some(v) = php_string(&to_php_string(number, &[]), key, rv) {
                        *rv = v;
                    }
                }
            }
        })
    })
}

fn store_string(ex: &mut ExecuteData, rv: &mut Zval, what: &str, only_if_absent: bool) {
    let Some((c, key)) = begin(ex, 2, 3) else {
        return;
    };
    let (Some(value), Some(ttl)) = (c.string(1), seconds(&c, 2, 0)) else {
        return;
    };
    let Some(s) = default_space(what, rv) else {
        return;
    };
    let v = Value::Str(value);
    let stored = if only_if_absent {
        soft(s.set_nx(key, v, ttl), what, rv).map(|o| o == SetNx::Inserted)
    } else {
        soft(s.set(key, v, ttl), what, rv).map(|()| true)
    };
    if let Some(b) = stored {
        rv.set_bool(b);
    }
}

extern "C" fn kv_set(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        store_string(ex, rv, "ephpm_kv_set()", false)
    })
}

extern "C" fn kv_setnx(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        store_string(ex, rv, "ephpm_kv_setnx()", true)
    })
}

extern "C" fn kv_del(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        const WHAT: &str = "ephpm_kv_del()";
        let Some((_, key)) = begin(ex, 1, 1) else {
            return;
        };
        let Some(s) = default_space(WHAT, rv) else {
            return;
        };
        if let Some(d) = soft(s.del(key), WHAT, rv) {
            rv.set_long(i64::from(d));
        }
    })
}

extern "C" fn kv_del_if_eq(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        const WHAT: &str = "ephpm_kv_del_if_eq()";
        let Some((c, key)) = begin(ex, 2, 2) else {
            return;
        };
        let Some(token) = c.string(1) else { return };
        let Some(s) = default_space(WHAT, rv) else {
            return;
        };
        if let Some(d) = soft(s.del_if_eq(key, token), WHAT, rv) {
            rv.set_bool(d);
        }
    })
}

extern "C" fn kv_exists(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        const WHAT: &str = "ephpm_kv_exists()";
        let Some((_, key)) = begin(ex, 1, 1) else {
            return;
        };
        let Some(s) = default_space(WHAT, rv) else {
            return;
        };
        if let Some(e) = soft(s.exists(key), WHAT, rv) {
            rv.set_bool(e);
        }
    })
}

fn incr(ex: &mut ExecuteData, rv: &mut Zval, what: &str, sign: i64, by_arg: bool) {
    let args = 1 + u32::from(by_arg);
    let Some((c, key)) = begin(ex, args, args) else {
        return;
    };
    let Some(by) = (if by_arg { c.long_or(1, 0) } else { Some(1) }) else {
        return;
    };
    let Some(s) = default_space(what, rv) else {
        return;
    };
    let Some(by) = by.checked_mul(sign) else {
        return rv.set_bool(false);
    };
    match s.incr_by(key, by, None) {
        Ok(n) => rv.set_long(n),
        // ePHPm returns false for a non-integer value and for an overflow, silently.
        Err(StoreError::NotAnInteger | StoreError::Overflow) => rv.set_bool(false),
        Err(e) => {
            soft::<()>(Err(e), what, rv);
        }
    }
}

extern "C" fn kv_incr(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| incr(ex, rv, "ephpm_kv_incr()", 1, false))
}

extern "C" fn kv_decr(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| incr(ex, rv, "ephpm_kv_decr()", -1, false))
}

extern "C" fn kv_incr_by(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| incr(ex, rv, "ephpm_kv_incr_by()", 1, true))
}

extern "C" fn kv_expire(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        const WHAT: &str = "ephpm_kv_expire()";
        let Some((c, key)) = begin(ex, 2, 2) else {
            return;
        };
        let Some(ttl) = seconds(&c, 1, 0) else { return };
        let Some(s) = default_space(WHAT, rv) else {
            return;
        };
        // ePHPm refuses a TTL of 0 or less, changing nothing.
        if ttl.is_none() {
            return rv.set_bool(false);
        }
        if let Some(e) = soft(s.expire(key, ttl), WHAT, rv) {
            rv.set_bool(e);
        }
    })
}

fn ttl_in(ex: &mut ExecuteData, rv: &mut Zval, what: &str, unit: Duration) {
    let Some((_, key)) = begin(ex, 1, 1) else {
        return;
    };
    let Some(s) = default_space(what, rv) else {
        return;
    };
    match soft(s.ttl(key), what, rv) {
        Some(KeyTtl::Missing) => rv.set_long(-2),
        Some(KeyTtl::Persistent) => rv.set_long(-1),
        // Rounded up, as ePHPm does: a key with 0.2 s left reports 1, not 0.
        Some(KeyTtl::Remaining(d)) => {
            rv.set_long(i64::try_from(d.as_nanos().div_ceil(unit.as_nanos())).unwrap_or(i64::MAX))
        }
        None => {}
    }
}

extern "C" fn kv_ttl(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        ttl_in(ex, rv, "ephpm_kv_ttl()", Duration::from_secs(1))
    })
}

extern "C" fn kv_pttl(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        ttl_in(ex, rv, "ephpm_kv_pttl()", Duration::from_millis(1))
    })
}

extern "C" fn kv_flush_all(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        const WHAT: &str = "ephpm_kv_flush_all()";
        if Call::new(ex, 0, 0).is_none() {
            return;
        }
        let Some(s) = default_space(WHAT, rv) else {
            return;
        };
        if soft(s.clear(), WHAT, rv).is_some() {
            rv.set_bool(true);
        }
    })
}

extern "C" fn kv_wait(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        const WHAT: &str = "ephpm_kv_wait()";
        let Some((c, key)) = begin(ex, 3, 3) else {
            return;
        };
        let Some(last) = c.long_or(1, 0) else { return };
        let Ok(last) = u64::try_from(last) else {
            return value_error(2, "must be greater than or equal to 0");
        };
        let Some(timeout) = c.millis_or(2, 0, 0) else {
            return;
        };
        let Some(s) = default_space(WHAT, rv) else {
            return;
        };
        with_scratch(
            |buf| match soft(s.wait(key, last, timeout, buf), WHAT, rv) {
                Some(Waited::Changed(hit)) => {
                    let value = match hit {
                        Some(h) => match php_string(&to_php_string(h.value, buf), key, rv) {
                            Some(v) => v,
                            None => return,
                        },
                        None => Zval::null(),
                    };
                    let mut a = ZendHashTable::new();
                    let version = hit.map_or(0, |h| i64::try_from(h.version).unwrap_or(i64::MAX));
                    let _ = a.insert("version", version);
                    let _ = a.insert("value", value);
                    rv.set_hashtable(a);
                }
                Some(Waited::TimedOut) => rv.set_bool(false),
                None => {}
            },
        )
    })
}

fn function(
    name: &str,
    h: Handler,
    args: &[(&str, DataType, Option<&str>)],
    ret: Option<(DataType, bool)>,
) -> FunctionBuilder<'static> {
    let mut f = FunctionBuilder::new(name, h);
    let required = args.iter().take_while(|(_, _, d)| d.is_none()).count();
    for &(n, t, d) in args {
        let a = Arg::new(n, t);
        f = f.arg(match d {
            Some(d) => a.default(d),
            None => a,
        });
    }
    f = f.required_args(required);
    match ret {
        Some((t, nullable)) => f.returns(t, false, nullable),
        None => f,
    }
}

pub fn register(m: ModuleBuilder<'_>) -> ModuleBuilder<'_> {
    use DataType::{Bool, Long, String as Str};
    let key = ("key", Str, None);
    m.function(function("ephpm_kv_get", kv_get, &[key], None))
        .function(function(
            "ephpm_release",
            super::deploy::release,
            &[],
            Some((Long, false)),
        ))
        .function(function(
            "ephpm_kv_set",
            kv_set,
            &[key, ("value", Str, None), ("ttl", Long, Some("0"))],
            Some((Bool, false)),
        ))
        .function(function(
            "ephpm_kv_setnx",
            kv_setnx,
            &[key, ("value", Str, None), ("ttl", Long, Some("0"))],
            Some((Bool, false)),
        ))
        .function(function("ephpm_kv_del", kv_del, &[key], None))
        .function(function(
            "ephpm_kv_del_if_eq",
            kv_del_if_eq,
            &[key, ("token", Str, None)],
            Some((Bool, false)),
        ))
        .function(function(
            "ephpm_kv_exists",
            kv_exists,
            &[key],
            Some((Bool, false)),
        ))
        .function(function("ephpm_kv_incr", kv_incr, &[key], None))
        .function(function("ephpm_kv_decr", kv_decr, &[key], None))
        .function(function(
            "ephpm_kv_incr_by",
            kv_incr_by,
            &[key, ("by", Long, None)],
            None,
        ))
        .function(function(
            "ephpm_kv_expire",
            kv_expire,
            &[key, ("ttl", Long, None)],
            Some((Bool, false)),
        ))
        .function(function("ephpm_kv_ttl", kv_ttl, &[key], None))
        .function(function("ephpm_kv_pttl", kv_pttl, &[key], None))
        .function(function(
            "ephpm_kv_flush_all",
            kv_flush_all,
            &[],
            Some((Bool, false)),
        ))
        .function(function(
            "ephpm_kv_wait",
            kv_wait,
            &[
                key,
                ("last_version", Long, None),
                ("timeout_ms", Long, None),
            ],
            None,
        ))
}
