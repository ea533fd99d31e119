//! The `ephpm_kv_*` functions, with ePHPm's names, signatures and return conventions, so
//! code written for ePHPm's KV runs on stock PHP: strings in and out, TTLs in whole
//! seconds where 0 or less means none, `false` (with an E_WARNING) where ePHPm returns
//! false on a store failure. They use the default store (`ephpm.dsn`), unprefixed.

use std::cell::RefCell;
use std::time::Duration;

use ext_php_rs::args::Arg;
use ext_php_rs::builders::{FunctionBuilder, ModuleBuilder};
use ext_php_rs::flags::DataType;
use ext_php_rs::types::{ZendHashTable, ZendStr, Zval};
use ext_php_rs::zend::ExecuteData;

use super::call::{Call, Handler, run, value_error};
use super::convert::{to_php_string, with_scratch};
use super::error::{throw, warn};
use super::open_keyspace;
use crate::keyspace::{Keyspace, Waited};
use crate::store::{KeyTtl, SetNx, StoreError, Value};

thread_local! {
    /// The default keyspace, opened on first use in this process.
    static DEFAULT: RefCell<Option<Keyspace>> = const { RefCell::new(None) };
}

fn default_space(what: &str) -> Option<Keyspace> {
    DEFAULT.with(|d| {
        if let Some(s) = d.borrow().as_ref() {
            return Some(s.clone());
        }
        match open_keyspace(None, b"") {
            Ok(s) => {
                *d.borrow_mut() = Some(s.clone());
                Some(s)
            }
            Err(e) => {
                throw(&e, 1, what);
                None
            }
        }
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

/// ePHPm's TTL: whole seconds, 0 or negative meaning none.
fn seconds(ttl: i64) -> Option<Duration> {
    (ttl > 0).then(|| Duration::from_secs(ttl as u64))
}

fn begin<'a>(
    ex: &'a mut ExecuteData,
    min: u32,
    max: u32,
    what: &str,
) -> Option<(Call<'a>, Keyspace, &'a [u8])> {
    let c = Call::new(ex, min, max)?;
    let key = c.string(0)?;
    let s = default_space(what)?;
    Some((c, s, key))
}

extern "C" fn kv_get(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((_, s, key)) = begin(ex, 1, 1, "ephpm_kv_get()") else {
            return;
        };
        with_scratch(|buf| match soft(s.get(key, buf), "ephpm_kv_get()", rv) {
            Some(Some(hit)) => {
                rv.set_zend_string(ZendStr::new(to_php_string(hit.value, buf), false))
            }
            Some(None) => rv.set_null(),
            None => {}
        })
    })
}

fn store_string(ex: &mut ExecuteData, rv: &mut Zval, what: &str, only_if_absent: bool) {
    let Some((c, s, key)) = begin(ex, 2, 3, what) else {
        return;
    };
    let (Some(value), Some(ttl)) = (c.string(1), c.long_or(2, 0)) else {
        return;
    };
    let v = Value::Str(value);
    let stored = if only_if_absent {
        soft(s.set_nx(key, v, seconds(ttl)), what, rv).map(|o| o == SetNx::Inserted)
    } else {
        soft(s.set(key, v, seconds(ttl)), what, rv).map(|()| true)
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
        let Some((_, s, key)) = begin(ex, 1, 1, "ephpm_kv_del()") else {
            return;
        };
        if let Some(d) = soft(s.del(key), "ephpm_kv_del()", rv) {
            rv.set_long(d as i64);
        }
    })
}

extern "C" fn kv_del_if_eq(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((c, s, key)) = begin(ex, 2, 2, "ephpm_kv_del_if_eq()") else {
            return;
        };
        let Some(token) = c.string(1) else { return };
        if let Some(d) = soft(s.del_if_eq(key, token), "ephpm_kv_del_if_eq()", rv) {
            rv.set_bool(d);
        }
    })
}

extern "C" fn kv_exists(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((_, s, key)) = begin(ex, 1, 1, "ephpm_kv_exists()") else {
            return;
        };
        if let Some(e) = soft(s.exists(key), "ephpm_kv_exists()", rv) {
            rv.set_bool(e);
        }
    })
}

fn incr(ex: &mut ExecuteData, rv: &mut Zval, what: &str, sign: i64, by_arg: bool) {
    let Some((c, s, key)) = begin(ex, 1 + by_arg as u32, 1 + by_arg as u32, what) else {
        return;
    };
    let Some(by) = (if by_arg { c.long_or(1, 0) } else { Some(1) }) else {
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
        let Some((c, s, key)) = begin(ex, 2, 2, "ephpm_kv_expire()") else {
            return;
        };
        let Some(ttl) = c.long_or(1, 0) else { return };
        if ttl <= 0 {
            return rv.set_bool(false);
        }
        if let Some(e) = soft(s.expire(key, seconds(ttl)), "ephpm_kv_expire()", rv) {
            rv.set_bool(e);
        }
    })
}

fn ttl_in(ex: &mut ExecuteData, rv: &mut Zval, what: &str, unit: Duration) {
    let Some((_, s, key)) = begin(ex, 1, 1, what) else {
        return;
    };
    match soft(s.ttl(key), what, rv) {
        Some(KeyTtl::Missing) => rv.set_long(-2),
        Some(KeyTtl::Persistent) => rv.set_long(-1),
        // Rounded up, as ePHPm does: a key with 0.2 s left reports 1, not 0.
        Some(KeyTtl::Remaining(d)) => rv.set_long(d.as_nanos().div_ceil(unit.as_nanos()) as i64),
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
        if Call::new(ex, 0, 0).is_none() {
            return;
        }
        let Some(s) = default_space("ephpm_kv_flush_all()") else {
            return;
        };
        if soft(s.clear(), "ephpm_kv_flush_all()", rv).is_some() {
            rv.set_bool(true);
        }
    })
}

extern "C" fn kv_wait(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((c, s, key)) = begin(ex, 3, 3, "ephpm_kv_wait()") else {
            return;
        };
        let (Some(last), Some(timeout)) = (c.long_or(1, 0), c.long_or(2, 0)) else {
            return;
        };
        if timeout < 0 {
            return value_error(3, "must be greater than or equal to 0");
        }
        let timeout = Duration::from_millis(timeout as u64);
        with_scratch(|buf| {
            match soft(
                s.wait(key, last as u64, timeout, buf),
                "ephpm_kv_wait()",
                rv,
            ) {
                Some(Waited::Changed(hit)) => {
                    let mut a = ZendHashTable::new();
                    let _ = a.insert("version", hit.map_or(0, |h| h.version as i64));
                    let mut value = Zval::new();
                    match hit {
                        Some(h) => {
                            value.set_zend_string(ZendStr::new(to_php_string(h.value, buf), false))
                        }
                        None => value.set_null(),
                    }
                    let _ = a.insert("value", value);
                    rv.set_hashtable(a);
                }
                Some(Waited::TimedOut) => rv.set_bool(false),
                None => {}
            }
        })
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
    m.function(function("ephpm_kv_get", kv_get, &[key], Some((Str, true))))
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
        .function(function(
            "ephpm_kv_del",
            kv_del,
            &[key],
            Some((Long, false)),
        ))
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
        .function(function(
            "ephpm_kv_ttl",
            kv_ttl,
            &[key],
            Some((Long, false)),
        ))
        .function(function(
            "ephpm_kv_pttl",
            kv_pttl,
            &[key],
            Some((Long, false)),
        ))
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
