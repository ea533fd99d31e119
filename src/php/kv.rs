//! `Ephpm\Kv`: the store, from PHP. Each method converts its arguments, calls one
//! `Keyspace` method, and converts the result or throws.

use ext_php_rs::args::Arg;
use ext_php_rs::builders::FunctionBuilder;
use ext_php_rs::class::{ConstructorMeta, ConstructorResult};
use ext_php_rs::flags::{ClassFlags, DataType, MethodFlags};
use ext_php_rs::types::array::Iter;
use ext_php_rs::types::{ArrayKey, ZendClassObject, ZendHashTable, ZendStr, Zval};
use ext_php_rs::zend::{ExecuteData, ExecutorGlobals, ce};

use super::call::{Call, Handler, arg_type_error, run, ttl_from_seconds, type_name};
use super::class::{native_class, nullable, public};
use super::convert::{Fetch, fetch, from_value, with_scratch, with_value};
use super::error::value_error;
use super::error::{throw, throw_new, too_large};
use super::open_keyspace;
use super::string_room::no_room_for_string;
use crate::keyspace::{Keyspace, Waited};
use crate::store::{Fetched, KeyTtl, SetNx, Value};

/// The Rust side of an `Ephpm\Kv` object.
///
pub struct Kv {
    space: Option<Keyspace>,
}

native_class!(
    Kv,
    "Ephpm\\Kv",
    ClassFlags::Final,
    &[],
    methods,
    Some(ConstructorMeta {
        constructor: construct,
        build_fn: constructor_args,
        flags: None
    })
);

/// A `?Ephpm\Kv $store = null` argument: its keyspace, or the default store's
/// (`ephpm.dsn`, no prefix) when null or absent. `None` when the exception is thrown.
pub fn keyspace_arg(c: &Call, i: u32, what: &str) -> Option<Keyspace> {
    let given = c.mixed(i).filter(|zv| !zv.is_null());
    let Some(zv) = given else {
        return ok(open_keyspace(None, b""), i + 1, what);
    };
    match zv.object().and_then(ZendClassObject::<Kv>::from_zend_obj) {
        Some(kv) => match kv.space.as_ref() {
            Some(s) => Some(s.clone()),
            None => {
                throw_new(ce::error(), "Ephpm\\Kv has not been constructed".into());
                None
            }
        },
        None => {
            arg_type_error(
                i + 1,
                &format!("must be of type ?Ephpm\\Kv, {} given", type_name(zv)),
            );
            None
        }
    }
}

/// The checked call and the object's keyspace, or `None` with the exception thrown.
fn begin(ex: &mut ExecuteData, min: u32, max: u32) -> Option<(Call<'_>, &Keyspace)> {
    let c = Call::new(ex, min, max)?;
    let Some(space) = c.this::<Kv>().and_then(|kv| kv.space.as_ref()) else {
        throw_new(ce::error(), "Ephpm\\Kv has not been constructed".into());
        return None;
    };
    Some((c, space))
}

/// The value of a store result, or `None` with the PHP exception thrown.
fn ok<T>(r: crate::store::Result<T>, key_arg: u32, what: &str) -> Option<T> {
    r.map_err(|e| throw(&e, key_arg, what)).ok()
}

fn ttl_arg(c: &Call, i: u32) -> Option<Option<std::time::Duration>> {
    ttl_from_seconds(c.number_or(i, 0.0)?, i + 1)
}

/// `__construct(?string $dsn = null, string $prefix = '')`. `ArgError` tells
/// ext-php-rs the exception is already thrown.
fn construct(ex: &mut ExecuteData) -> ConstructorResult<Kv> {
    let Some(c) = Call::new(ex, 0, 2) else {
        return ConstructorResult::ArgError;
    };
    let Some(dsn) = c.string_or_null(0) else {
        return ConstructorResult::ArgError;
    };
    let Some(prefix) = (if c.arg(1).is_some() {
        c.string(1)
    } else {
        Some(&b""[..])
    }) else {
        return ConstructorResult::ArgError;
    };
    match ok(open_keyspace(dsn, prefix), 1, "Ephpm\\Kv::__construct()") {
        Some(space) => ConstructorResult::Ok(Kv { space: Some(space) }),
        None => ConstructorResult::ArgError,
    }
}

fn constructor_args(f: FunctionBuilder) -> FunctionBuilder {
    f.arg(nullable("dsn", DataType::String))
        .arg(Arg::new("prefix", DataType::String).default("''"))
        .required_args(0)
}

/// `fetch` for `what`: `Some(true)` for a hit in `out`, `Some(false)` for a miss, `None`
/// with the exception thrown.
fn fetch_or_throw(s: &Keyspace, key: &[u8], out: &mut Zval, what: &str) -> Option<bool> {
    match ok(fetch(s, key, out), 1, what)? {
        Fetch::Hit => Some(true),
        Fetch::Miss => Some(false),
        Fetch::TooLarge { len, left } => {
            too_large(what, key, len, left);
            None
        }
    }
}

extern "C" fn get(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((c, s)) = begin(ex, 1, 2) else {
            return;
        };
        let Some(key) = c.string(0) else { return };
        if fetch_or_throw(s, key, rv, "Ephpm\\Kv::get()") == Some(false) {
            match c.mixed(1) {
                Some(default) => *rv = default.shallow_clone(),
                None => rv.set_null(),
            }
        }
    })
}

extern "C" fn set(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((c, s)) = begin(ex, 2, 3) else {
            return;
        };
        let (Some(key), Some(value), Some(ttl)) = (c.string(0), c.mixed(1), ttl_arg(&c, 2)) else {
            return;
        };
        if with_value(value, |v| ok(s.set(key, v, ttl), 1, "Ephpm\\Kv::set()"))
            .flatten()
            .is_some()
        {
            rv.set_bool(true);
        }
    })
}

extern "C" fn add(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((c, s)) = begin(ex, 2, 3) else {
            return;
        };
        let (Some(key), Some(value), Some(ttl)) = (c.string(0), c.mixed(1), ttl_arg(&c, 2)) else {
            return;
        };
        if let Some(outcome) =
            with_value(value, |v| ok(s.set_nx(key, v, ttl), 1, "Ephpm\\Kv::add()")).flatten()
        {
            rv.set_bool(outcome == SetNx::Inserted);
        }
    })
}

extern "C" fn delete(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((c, s)) = begin(ex, 1, 1) else {
            return;
        };
        let Some(key) = c.string(0) else { return };
        if let Some(deleted) = ok(s.del(key), 1, "Ephpm\\Kv::delete()") {
            rv.set_bool(deleted);
        }
    })
}

extern "C" fn delete_if_equals(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((c, s)) = begin(ex, 2, 2) else {
            return;
        };
        let (Some(key), Some(expected)) = (c.string(0), c.string(1)) else {
            return;
        };
        if let Some(deleted) = ok(s.del_if_eq(key, expected), 1, "Ephpm\\Kv::deleteIfEquals()") {
            rv.set_bool(deleted);
        }
    })
}

/// `expireIfEquals(string $key, string $expected, int|float $ttl): bool`: a lifetime of
/// `$ttl` seconds from now (more than 0) only while the key holds `$expected`.
extern "C" fn expire_if_equals(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((c, s)) = begin(ex, 3, 3) else {
            return;
        };
        let (Some(key), Some(expected), Some(ttl)) = (c.string(0), c.string(1), ttl_arg(&c, 2))
        else {
            return;
        };
        let Some(ttl) = ttl else {
            return value_error(3, "must be greater than 0");
        };
        let done = ok(
            s.expire_if_eq(key, expected, ttl),
            1,
            "Ephpm\\Kv::expireIfEquals()",
        );
        if let Some(extended) = done {
            rv.set_bool(extended);
        }
    })
}

extern "C" fn has(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((c, s)) = begin(ex, 1, 1) else {
            return;
        };
        let Some(key) = c.string(0) else { return };
        if let Some(present) = ok(s.exists(key), 1, "Ephpm\\Kv::has()") {
            rv.set_bool(present);
        }
    })
}

extern "C" fn increment(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((c, s)) = begin(ex, 1, 3) else {
            return;
        };
        let (Some(key), Some(by), Some(ttl)) = (c.string(0), c.long_or(1, 1), ttl_arg(&c, 2))
        else {
            return;
        };
        if let Some(n) = ok(s.incr_by(key, by, ttl), 1, "Ephpm\\Kv::increment()") {
            rv.set_long(n);
        }
    })
}

extern "C" fn ttl(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((c, s)) = begin(ex, 1, 1) else {
            return;
        };
        let Some(key) = c.string(0) else { return };
        match ok(s.ttl(key), 1, "Ephpm\\Kv::ttl()") {
            Some(KeyTtl::Missing) => rv.set_null(),
            Some(KeyTtl::Persistent) => rv.set_double(-1.0),
            Some(KeyTtl::Remaining(d)) => rv.set_double(d.as_secs_f64()),
            None => {}
        }
    })
}

extern "C" fn expire(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((c, s)) = begin(ex, 2, 2) else {
            return;
        };
        let (Some(key), Some(ttl)) = (c.string(0), ttl_arg(&c, 1)) else {
            return;
        };
        if let Some(present) = ok(s.expire(key, ttl), 1, "Ephpm\\Kv::expire()") {
            rv.set_bool(present);
        }
    })
}

/// `wait(string $key, int $lastVersion = 0, int|float $timeout = 0): int|false`: sleeps
/// until the key's version is no longer `$lastVersion` (woken by the write, never
/// polling), at most `$timeout` seconds. The new version (0: the key is gone), or false
/// when it did not change in time; `wait($key, 0, 0)` is the current version, or false
/// when the key is absent.
extern "C" fn wait(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((c, s)) = begin(ex, 1, 3) else {
            return;
        };
        let (Some(key), Some(last), Some(timeout)) = (c.string(0), c.long_or(1, 0), ttl_arg(&c, 2))
        else {
            return;
        };
        let Ok(last) = u64::try_from(last) else {
            return value_error(2, "must be greater than or equal to 0");
        };
        let timeout = timeout.unwrap_or_default();
        let waited =
            with_scratch(|buf| ok(s.wait(key, last, timeout, buf), 1, "Ephpm\\Kv::wait()"));
        match waited {
            Some(Waited::Changed(hit)) => {
                rv.set_long(hit.map_or(0, |h| i64::try_from(h.version).unwrap_or(i64::MAX)))
            }
            Some(Waited::TimedOut) => rv.set_bool(false),
            None => {}
        }
    })
}

/// An element of `getMany()`'s list as a key: a string's bytes as they are, an int in
/// decimal (as PHP turns an int into a string).
fn key_of(zv: &Zval) -> Option<std::borrow::Cow<'_, [u8]>> {
    let zv = zv.dereference();
    if let Some(s) = zv.zend_str() {
        return Some(std::borrow::Cow::Borrowed(s.as_bytes()));
    }
    zv.long()
        .map(|n| std::borrow::Cow::Owned(n.to_string().into_bytes()))
}

extern "C" fn get_many(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        const WHAT: &str = "Ephpm\\Kv::getMany()";
        let Some((c, s)) = begin(ex, 1, 1) else {
            return;
        };
        let Some(list) = c.array(0) else { return };
        // The raw iterator: ext-php-rs's `iter()`/`values()` panic on a key that is not
        // UTF-8, and the list's own keys are anything.
        let mut keys = Vec::with_capacity(list.len());
        let mut elements = Iter::new(list);
        while let Some((_, zv)) = elements.next_zval() {
            let Some(key) = key_of(zv) else {
                return arg_type_error(1, "must contain only strings and integers");
            };
            keys.push(key);
        }
        let wanted: Vec<&[u8]> = keys.iter().map(|k| &**k).collect();
        let mut out = ZendHashTable::with_capacity(u32::try_from(keys.len()).unwrap_or(u32::MAX));
        // The values arrive in one batch (one round trip on Redis); PHP values are made
        // from each as it comes, no store lock held. The first failure ends the call.
        let mut failed = false;
        let batch = s.get_many(&wanted, &mut |i, hit, bytes| {
            if failed {
                return;
            }
            if let (Fetched::Str, Some(left)) = (hit.value, no_room_for_string(bytes.len())) {
                too_large(WHAT, wanted[i], bytes.len(), left);
                failed = true;
                return;
            }
            let mut value = Zval::new();
            if !from_value(hit.value.with(bytes), &mut value) {
                // Not unserializable: a miss (with its warning), unless it threw.
                failed = ExecutorGlobals::has_exception();
                return;
            }
            // The same PHP string as the key given, so that a canonical decimal ("123")
            // becomes an int key, exactly as PHP stores `$a["123"]`.
            let name = ZendStr::new(wanted[i], false);
            let _ = out.insert(ArrayKey::from(&name), value);
        });
        if ok(batch, 1, WHAT).is_some() && !failed {
            rv.set_hashtable(out);
        }
    })
}

extern "C" fn set_many(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((c, s)) = begin(ex, 1, 2) else {
            return;
        };
        let (Some(values), Some(ttl)) = (c.array(0), ttl_arg(&c, 1)) else {
            return;
        };
        // Each value converted (serialized) once into a buffer of its own, then all
        // stored in one batch (one round trip on Redis). The raw iterator, for keys that
        // are not UTF-8 (see get_many).
        let mut owned = Vec::with_capacity(values.len());
        let mut entries = Iter::new(values);
        while let Some((k, zv)) = entries.next_zval() {
            let Some(key) = key_of(&k) else { return };
            let mut bytes = Vec::new();
            let Some(kind) = with_value(zv, |v| v.copy_into(&mut bytes)) else {
                return;
            };
            owned.push((key.into_owned(), kind, bytes));
        }
        let batch: Vec<(&[u8], Value<'_>)> = owned
            .iter()
            .map(|(k, kind, bytes)| (k.as_slice(), kind.with(bytes)))
            .collect();
        if ok(s.set_many(&batch, ttl), 1, "Ephpm\\Kv::setMany()").is_some() {
            rv.set_bool(true);
        }
    })
}

extern "C" fn clear(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((_, s)) = begin(ex, 0, 0) else {
            return;
        };
        if ok(s.clear(), 0, "Ephpm\\Kv::clear()").is_some() {
            rv.set_bool(true);
        }
    })
}

extern "C" fn stats(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((_, s)) = begin(ex, 0, 0) else {
            return;
        };
        let Some(st) = ok(s.stats(), 0, "Ephpm\\Kv::stats()") else {
            return;
        };
        let mut a = ZendHashTable::new();
        let _ = a.insert("backend", s.store().describe());
        for (name, n) in st.named() {
            let _ = a.insert(name, i64::try_from(n).unwrap_or(i64::MAX));
        }
        if let Some(resp) = crate::resp_probe::status_of(s.store().as_ref()) {
            let _ = a.insert("resp_server", resp.to_string());
        }
        // Each shard's [used, size, entries]; empty where the store has no shards of its
        // own (Redis). A failure to read them leaves the counters above standing.
        let mut fill = ZendHashTable::new();
        for f in s.store().shard_fill().unwrap_or_default() {
            let mut row = ZendHashTable::new();
            for n in [f.used, f.size, f.entries] {
                let _ = row.push(i64::try_from(n).unwrap_or(i64::MAX));
            }
            let _ = fill.push(row);
        }
        let _ = a.insert("shard_fill", fill);
        let mut not_counted = ZendHashTable::new();
        for name in s.store().not_counted() {
            let _ = not_counted.push(*name);
        }
        let _ = a.insert("not_counted", not_counted);
        rv.set_hashtable(a);
    })
}

/// `members(): array`: the cluster's members as the host's node sees them
/// (`ground::fleet`), one array each; `[]` on a store that is no cluster.
extern "C" fn members(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((_, s)) = begin(ex, 0, 0) else {
            return;
        };
        let Some(health) = ok(s.store().health(), 0, "Ephpm\\Kv::members()") else {
            return;
        };
        let number = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        let mut list = ZendHashTable::new();
        for m in health.map(|h| h.members).unwrap_or_default() {
            let mut a = ZendHashTable::new();
            let _ = a.insert("id", m.id);
            let _ = a.insert("state", m.state.name());
            let _ = a.insert("this_node", m.this_node);
            let _ = a.insert("last_heard_ms", m.last_heard_ms.map(number));
            let _ = a.insert("share", m.share);
            let _ = a.insert("keys", number(m.keys));
            let _ = a.insert("copies_pending", number(m.copies_pending));
            let _ = a.insert("copies_dropped", number(m.copies_dropped));
            let _ = a.insert("clock_skew_ms", m.clock_skew_ms);
            let versions: Vec<i64> = m.versions.iter().map(|&v| i64::from(v)).collect();
            let _ = a.insert("versions", versions);
            let _ = a.insert("version", m.version.map(i64::from));
            let _ = list.push(a);
        }
        rv.set_hashtable(list);
    })
}

fn key() -> Arg<'static> {
    Arg::new("key", DataType::String)
}

fn ttl_param(default: Option<&str>) -> Arg<'static> {
    let a = Arg::new("ttl", DataType::Mixed);
    match default {
        Some(d) => a.default(d),
        None => a,
    }
}

fn method(
    name: &str,
    handler: Handler,
    args: Vec<Arg<'static>>,
    required: usize,
    ret: DataType,
    nullable: bool,
) -> FunctionBuilder<'static> {
    let mut f = FunctionBuilder::new(name, handler);
    for a in args {
        f = f.arg(a);
    }
    f.required_args(required).returns(ret, false, nullable)
}

/// The methods, as ext-php-rs registers them.
fn methods() -> Vec<(FunctionBuilder<'static>, MethodFlags)> {
    use DataType::{Array, Bool, Double, Long, Mixed};
    let value = || Arg::new("value", Mixed);
    let methods: Vec<FunctionBuilder<'static>> = [
        method(
            "get",
            get,
            vec![key(), Arg::new("default", Mixed).default("null")],
            1,
            Mixed,
            false,
        ),
        method(
            "set",
            set,
            vec![key(), value(), ttl_param(Some("0"))],
            2,
            Bool,
            false,
        ),
        method(
            "add",
            add,
            vec![key(), value(), ttl_param(Some("0"))],
            2,
            Bool,
            false,
        ),
        method("delete", delete, vec![key()], 1, Bool, false),
        method(
            "deleteIfEquals",
            delete_if_equals,
            vec![key(), Arg::new("expected", DataType::String)],
            2,
            Bool,
            false,
        ),
        method(
            "expireIfEquals",
            expire_if_equals,
            vec![
                key(),
                Arg::new("expected", DataType::String),
                ttl_param(None),
            ],
            3,
            Bool,
            false,
        ),
        method("has", has, vec![key()], 1, Bool, false),
        method(
            "increment",
            increment,
            vec![
                key(),
                Arg::new("by", Long).default("1"),
                ttl_param(Some("0")),
            ],
            1,
            Long,
            false,
        ),
        method("ttl", ttl, vec![key()], 1, Double, true),
        method(
            "expire",
            expire,
            vec![key(), ttl_param(None)],
            2,
            Bool,
            false,
        ),
        method(
            "getMany",
            get_many,
            vec![Arg::new("keys", Array)],
            1,
            Array,
            false,
        ),
        method(
            "setMany",
            set_many,
            vec![Arg::new("values", Array), ttl_param(Some("0"))],
            1,
            Bool,
            false,
        ),
        method(
            "wait",
            wait,
            vec![
                key(),
                Arg::new("lastVersion", Long).default("0"),
                Arg::new("timeout", Mixed).default("0"),
            ],
            1,
            Mixed,
            false,
        ),
        method("clear", clear, vec![], 0, Bool, false),
        method("stats", stats, vec![], 0, Array, false),
        method("members", members, vec![], 0, Array, false),
    ]
    .into();
    public(methods)
}
