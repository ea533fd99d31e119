//! `Ephpm\StaleCache`: stale-while-revalidate from PHP over `crate::stale`, and the
//! refreshes it defers until the response has gone.
//!
//! An elected refresh that waits for the response is queued per thread with the lock
//! that elected it. The first one of a request registers `StaleCache::runDeferred(true)`
//! as a shutdown function, which ends the response (`fastcgi_finish_request()` under
//! FPM) and runs the queue. Request shutdown releases the locks of anything still
//! queued (a refresh that hit a fatal error, an `exit()` in an earlier shutdown
//! function), so that no election outlives its request.

use std::cell::{Cell, RefCell};
use std::time::Duration;

use ext_php_rs::args::Arg;
use ext_php_rs::builders::FunctionBuilder;
use ext_php_rs::class::{ConstructorMeta, ConstructorResult};
use ext_php_rs::flags::{ClassFlags, DataType, MethodFlags};
use ext_php_rs::types::{ZendClassObject, ZendHashTable, Zval};
use ext_php_rs::zend::ExecuteData;

use super::call::{
    Call, MAX_SECONDS, arg_type_error, clamp_to_execution_time, run, seconds_within_limit,
    type_name,
};
use super::class::{native_class, nullable, public};
use super::convert::{from_value, new_reference, with_scratch, with_value};
use super::error::{throw, value_error, warn};
use super::kv::keyspace_arg;
use super::memo_lock::{DEFAULT_LOCK_TTL, DEFAULT_WAIT, MemoLock};
use super::userland::{call, call_function, log_exception, take_exception};
use crate::keyspace::Keyspace;
use crate::lock::{Held, Locks};
use crate::memo::Step;
use crate::stale::{self, Got, How, Source, Times, Windows, decode, encode, now_ms};
use crate::store::{Fetched, StoreError, Value};

/// The Rust side of an `Ephpm\StaleCache`.
pub struct StaleCache {
    space: Keyspace,
    swr: stale::StaleCache,
    after_response: bool,
    logger: Option<Zval>,
}

native_class!(
    StaleCache,
    "Ephpm\\StaleCache",
    ClassFlags::Final,
    &[],
    methods,
    Some(ConstructorMeta {
        constructor: construct,
        build_fn: constructor_args,
        flags: None
    })
);

/// `__construct(?Ephpm\Kv $store = null, int $staleSeconds = 60, int
/// $staleIfErrorSeconds = 0, ?Ephpm\MemoLock $lock = null, bool $refreshAfterResponse =
/// true, ?object $logger = null)`
fn construct(ex: &mut ExecuteData) -> ConstructorResult<StaleCache> {
    let Some(c) = Call::new(ex, 0, 6) else {
        return ConstructorResult::ArgError;
    };
    let (Some(space), Some(stale), Some(stale_if_error)) = (
        keyspace_arg(&c, 0, "Ephpm\\StaleCache::__construct()"),
        c.seconds_or(1, 60),
        c.seconds_or(2, 0),
    ) else {
        return ConstructorResult::ArgError;
    };
    let (locks, lock_ttl, wait) = match c.mixed(3).filter(|z| !z.is_null()) {
        None => (
            Locks::new(space.store().clone()),
            DEFAULT_LOCK_TTL,
            DEFAULT_WAIT,
        ),
        Some(zv) => match zv
            .object()
            .and_then(ZendClassObject::<MemoLock>::from_zend_obj)
        {
            Some(m) => m.locking(),
            None => {
                arg_type_error(
                    4,
                    &format!("must be of type ?Ephpm\\MemoLock, {} given", type_name(zv)),
                );
                return ConstructorResult::ArgError;
            }
        },
    };
    let after_response = match c.arg(4) {
        None => true,
        Some(zv) => match zv.dereference().bool() {
            Some(b) => b,
            None => {
                arg_type_error(5, &format!("must be of type bool, {} given", type_name(zv)));
                return ConstructorResult::ArgError;
            }
        },
    };
    let Some(logger) = c.object_or_null(5) else {
        return ConstructorResult::ArgError;
    };
    ConstructorResult::Ok(StaleCache {
        space,
        swr: stale::StaleCache {
            locks,
            lock_ttl,
            wait,
            windows: Windows {
                stale,
                stale_if_error,
            },
        },
        after_response,
        logger,
    })
}

fn constructor_args(f: FunctionBuilder) -> FunctionBuilder {
    f.arg(nullable("store", DataType::object("Ephpm\\Kv")))
        .arg(Arg::new("staleSeconds", DataType::Long).default("60"))
        .arg(Arg::new("staleIfErrorSeconds", DataType::Long).default("0"))
        .arg(nullable("lock", DataType::object("Ephpm\\MemoLock")))
        .arg(Arg::new("refreshAfterResponse", DataType::Bool).default("true"))
        .arg(nullable("logger", DataType::object("")))
        .required_args(0)
}

/// One key of a StaleCache, as `crate::stale` sees it: records read and written through
/// the keyspace, values computed by the PHP callable.
struct Entry<'a> {
    space: &'a Keyspace,
    key: &'a [u8],
    compute: &'a Zval,
    /// Seconds; `$compute(&$ttl)` may change it.
    ttl: f64,
    logger: Option<&'a Zval>,
}

impl Entry<'_> {
    fn shown(&self) -> String {
        String::from_utf8_lossy(self.key).into_owned()
    }
}

impl Source<Zval> for Entry<'_> {
    fn read(&mut self) -> Step<(Times, Zval)> {
        with_scratch(|buf| match self.space.get(self.key, buf) {
            Ok(Some(hit)) if hit.value == Fetched::Str => match decode(buf) {
                Some((times, value)) => {
                    let mut zv = Zval::new();
                    if from_value(value, &mut zv) {
                        Step::Got((times, zv))
                    } else {
                        Step::Missing
                    }
                }
                None => Step::Missing,
            },
            // Something that is not a record (written by Kv::set, say): a miss, which
            // the computation overwrites.
            Ok(_) => Step::Missing,
            // A store that cannot be used is a miss: the value is computed (without
            // protection: the lock lives in the same store), warned about, and served.
            Err(e) => {
                self.warn(format!(
                    "ephpm: StaleCache could not read \"{}\": {e}",
                    self.shown()
                ));
                Step::Missing
            }
        })
    }

    fn compute(&mut self) -> Step<(Zval, Duration)> {
        let mut given = Zval::new();
        given.set_double(self.ttl);
        let ttl = new_reference(given);
        let Some(value) = call(self.compute, vec![&ttl]) else {
            return Step::Failed;
        };
        let set = ttl.dereference();
        let seconds = set.long().map(|n| n as f64).or(set.double());
        match seconds.and_then(seconds_within_limit) {
            Some(d) => Step::Got((value, d)),
            None => {
                super::error::throw_new(
                    ext_php_rs::zend::ce::value_error(),
                    format!(
                        "Ephpm\\StaleCache: the $ttl set by the compute callable for \"{}\" must be a number between 0 and {MAX_SECONDS}, {} given",
                        self.shown(),
                        type_name(set)
                    ),
                );
                Step::Failed
            }
        }
    }

    fn store(&mut self, value: &Zval, times: Times) {
        let stored = with_value(value, |v| {
            let mut record = Vec::new();
            encode(times, v, &mut record);
            self.space.set(
                self.key,
                Value::Str(&record),
                Some(times.keep_for(now_ms())),
            )
        });
        if let Some(Err(e)) = stored {
            self.warn(format!(
                "ephpm: StaleCache could not store \"{}\": {e}",
                self.shown()
            ));
        }
    }

    fn warn(&mut self, message: String) {
        warn_or_log(self.logger, message);
    }
}

/// A warning through the cache's PSR-3 logger, or an E_WARNING without one.
fn warn_or_log(logger: Option<&Zval>, message: String) {
    match logger {
        Some(l) => super::userland::warn_to(Some(l), message),
        None => warn(&message),
    }
}

/// A refresh waiting for the response to end.
struct Deferred {
    swr: stale::StaleCache,
    space: Keyspace,
    key: Vec<u8>,
    compute: Zval,
    ttl: f64,
    logger: Option<Zval>,
    held: Held,
}

thread_local! {
    static DEFERRED: RefCell<Vec<Deferred>> = const { RefCell::new(Vec::new()) };
    /// Whether this request registered the shutdown function that runs the queue.
    static HOOKED: Cell<bool> = const { Cell::new(false) };
}

fn defer(refresh: Deferred) {
    DEFERRED.with(|q| q.borrow_mut().push(refresh));
    if !HOOKED.replace(true)
        && call_function(
            "register_shutdown_function",
            vec![&"Ephpm\\StaleCache::runDeferred", &true],
        )
        .is_none()
    {
        HOOKED.set(false);
    }
}

/// Runs an elected refresh; a failure keeps the stale value and is logged.
fn refresh_now(swr: &stale::StaleCache, held: &Held, entry: &mut Entry<'_>) -> Option<Zval> {
    match swr.refresh_elected(held, entry) {
        Step::Got(v) => Some(v),
        _ => {
            if let Some(e) = take_exception() {
                let what = format!(
                    "ephpm: refreshing \"{}\" failed; its stale value stays",
                    entry.shown()
                );
                log_exception(entry.logger, &what, &e);
            }
            None
        }
    }
}

/// `get(string $key, callable $compute, int|float $ttl = 300, ?array &$metadata = null): mixed`
extern "C" fn get(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 2, 4) else { return };
        let Some((sc, mut entry, lock)) = begin(&c, "Ephpm\\StaleCache::get()") else {
            return;
        };
        let key = entry.key;
        let compute = entry.compute;
        let ttl = entry.ttl;
        let swr = swr_for_request(sc);
        let (value, how, computed) = match swr.get(&lock, &mut entry) {
            Got::Failed => return,
            Got::Served {
                value,
                how,
                refresh: None,
            } => (value, how, how == How::Computed),
            Got::Served {
                value,
                how,
                refresh: Some(held),
            } if sc.after_response => {
                defer(Deferred {
                    swr: sc.swr.clone(),
                    space: sc.space.clone(),
                    key: key.to_vec(),
                    compute: compute.shallow_clone(),
                    ttl,
                    logger: sc.logger.as_ref().map(Zval::shallow_clone),
                    held,
                });
                (value, how, false)
            }
            Got::Served {
                value,
                how,
                refresh: Some(held),
            } => match refresh_now(&swr, &held, &mut entry) {
                Some(fresh) => (fresh, How::Computed, true),
                None => (value, how, false),
            },
        };
        if how == How::StaleOnError {
            if let Some(e) = take_exception() {
                let what = format!(
                    "ephpm: serving the stale value of \"{}\": computing it failed",
                    String::from_utf8_lossy(key)
                );
                log_exception(entry.logger, &what, &e);
            }
        }
        if let Some(metadata) = c.arg(3) {
            set_metadata(metadata.dereference_mut(), how, computed);
        }
        *rv = value;
    })
}

/// The cache's settings with the wait kept out of max_execution_time.
fn swr_for_request(sc: &StaleCache) -> stale::StaleCache {
    stale::StaleCache {
        wait: clamp_to_execution_time(sc.swr.wait),
        ..sc.swr.clone()
    }
}

/// `$metadata = ['stale' => …, 'computed' => …, 'error' => …]`.
fn set_metadata(out: &mut Zval, how: How, computed: bool) {
    let mut a = ZendHashTable::new();
    let _ = a.insert("stale", matches!(how, How::Stale | How::StaleOnError));
    let _ = a.insert("computed", computed);
    let _ = a.insert("error", how == How::StaleOnError);
    out.set_hashtable(a);
}

/// A `int|float $ttl = 300` argument: seconds, greater than 0, at most `MAX_SECONDS`.
fn ttl_arg(c: &Call, i: u32) -> Option<f64> {
    let s = c.number_or(i, 300.0)?;
    if !s.is_finite() {
        value_error(i + 1, "must be a finite number");
        return None;
    }
    if s <= 0.0 || s > MAX_SECONDS as f64 {
        value_error(
            i + 1,
            &format!("must be greater than 0 and less than or equal to {MAX_SECONDS}"),
        );
        return None;
    }
    Some(s)
}

/// The object, its entry for the `(string $key, callable $compute, int|float $ttl)`
/// arguments of get() and refresh(), and the key's lock name; `None` with the error
/// thrown.
fn begin<'a>(c: &Call<'a>, what: &str) -> Option<(&'a StaleCache, Entry<'a>, Vec<u8>)> {
    let sc: &'a StaleCache = c.this::<StaleCache>()?;
    let (key, compute, ttl) = (c.string(0)?, c.callable(1)?, ttl_arg(c, 2)?);
    let lock = lock_name(sc, key, what)?;
    let entry = Entry {
        space: &sc.space,
        key,
        compute,
        ttl,
        logger: sc.logger.as_ref(),
    };
    Some((sc, entry, lock))
}

/// The lock that elects a key's refresher and guards its computation: `swr:<key>`, under
/// the store's prefix (so that it stays inside a Redis DSN's `?prefix=` too).
fn lock_name(sc: &StaleCache, key: &[u8], what: &str) -> Option<Vec<u8>> {
    // The key itself is checked first: an empty one is refused as a key.
    let name = sc
        .space
        .full_key(key)
        .and_then(|_| sc.space.full_key(&[&b"swr:"[..], key].concat()));
    match name {
        Ok(full) => Some(full),
        Err(e) => {
            throw(&e, 1, what);
            None
        }
    }
}

/// `refresh(string $key, callable $compute, int|float $ttl = 300): mixed` — computes and
/// stores a new value now, behind the key's lock.
extern "C" fn refresh(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 2, 3) else { return };
        let Some((sc, mut entry, lock)) = begin(&c, "Ephpm\\StaleCache::refresh()") else {
            return;
        };
        if let Got::Served { value, .. } = swr_for_request(sc).recompute(&lock, &mut entry) {
            *rv = value;
        }
    })
}

/// `delete(string $key): bool` — the next read is a miss: a deleted key is never served
/// stale.
extern "C" fn delete(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 1, 1) else { return };
        let (Some(sc), Some(key)) = (c.this::<StaleCache>(), c.string(0)) else {
            return;
        };
        match sc.space.del(key) {
            Ok(existed) => rv.set_bool(existed),
            Err(e @ (StoreError::EmptyKey | StoreError::KeyTooLong(_))) => {
                throw(&e, 1, "Ephpm\\StaleCache::delete()")
            }
            // As every StaleCache path: a store that cannot be used is warned about, never
            // thrown (the record stays, and expires with its stale windows).
            Err(e) => {
                warn_or_log(
                    sc.logger.as_ref(),
                    format!(
                        "ephpm: StaleCache could not delete \"{}\": {e}",
                        key.escape_ascii()
                    ),
                );
                rv.set_bool(false);
            }
        }
    })
}

/// `static runDeferred(bool $finishResponse = false): int` — runs the refreshes this
/// request deferred, now, and returns how many ran. With `$finishResponse` it first ends
/// the response (`fastcgi_finish_request()`, under FPM), as the shutdown hook does.
extern "C" fn run_deferred(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 0, 1) else { return };
        let finish = match c.arg(0) {
            None => false,
            Some(zv) => zv.dereference().bool().unwrap_or(false),
        };
        if finish {
            // Absent outside FPM: then the response ends with the process.
            let _ = call_function("fastcgi_finish_request", vec![]);
        }
        HOOKED.set(false);
        let mut ran = 0;
        while let Some(d) = DEFERRED.with(|q| {
            let mut q = q.borrow_mut();
            (!q.is_empty()).then(|| q.remove(0))
        }) {
            let mut entry = Entry {
                space: &d.space,
                key: &d.key,
                compute: &d.compute,
                ttl: d.ttl,
                logger: d.logger.as_ref(),
            };
            refresh_now(&d.swr, &d.held, &mut entry);
            ran += 1;
        }
        rv.set_long(ran);
    })
}

/// RSHUTDOWN: releases the elections of refreshes that never ran.
pub fn release_undone() {
    HOOKED.set(false);
    for d in DEFERRED.with(|q| std::mem::take(&mut *q.borrow_mut())) {
        let _ = d.swr.locks.release(&d.held);
    }
}

fn methods() -> Vec<(FunctionBuilder<'static>, MethodFlags)> {
    let key = || Arg::new("key", DataType::String);
    let compute = || Arg::new("compute", DataType::Callable);
    let ttl = || Arg::new("ttl", DataType::Mixed).default("300");
    let methods = vec![
        FunctionBuilder::new("get", get)
            .arg(key())
            .arg(compute())
            .arg(ttl())
            .arg(
                Arg::new("metadata", DataType::Array)
                    .allow_null()
                    .as_ref()
                    .default("null"),
            )
            .required_args(2)
            .returns(DataType::Mixed, false, false),
        FunctionBuilder::new("refresh", refresh)
            .arg(key())
            .arg(compute())
            .arg(ttl())
            .required_args(2)
            .returns(DataType::Mixed, false, false),
        FunctionBuilder::new("delete", delete)
            .arg(key())
            .required_args(1)
            .returns(DataType::Bool, false, false),
    ];
    let mut methods = public(methods);
    methods.push((
        FunctionBuilder::new("runDeferred", run_deferred)
            .arg(Arg::new("finishResponse", DataType::Bool).default("false"))
            .required_args(0)
            .returns(DataType::Long, false, false),
        MethodFlags::Public | MethodFlags::Static,
    ));
    methods
}
