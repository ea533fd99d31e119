//! `Ephpm\MemoLock`: locks named after keys, on a store, from PHP. Each method converts
//! its arguments, calls `crate::lock::Locks`, and converts the result.

use std::time::Duration;

use ext_php_rs::args::Arg;
use ext_php_rs::builders::FunctionBuilder;
use ext_php_rs::class::{ConstructorMeta, ConstructorResult};
use ext_php_rs::flags::{ClassFlags, DataType, MethodFlags};
use ext_php_rs::types::{ZendClassObject, Zval};
use ext_php_rs::zend::ExecuteData;

use super::call::{Call, clamp_to_execution_time, run, type_name};
use super::class::{native_class, nullable, public};
use super::error::{lock_unavailable, throw};
use super::kv::keyspace_arg;
use super::lock::{Kind, new_keep_alive, new_lock, ttl_ms_arg};
use super::userland::{call, call_method, warn_to};
use crate::keyspace::Keyspace;
use crate::lock::{Held, Locks};
use crate::memo::{Maker, Outcome, Plan, Step, make_once};
use crate::rwlock::{Mode, RwLocks};

/// The Rust side of an `Ephpm\MemoLock`.
pub struct MemoLock {
    space: Keyspace,
    locks: Locks,
    /// Read/write locks on the same store (`acquireRead()`, `acquireWrite()`).
    rw: RwLocks,
    lock_ttl: Duration,
    wait: Duration,
    logger: Option<Zval>,
}

native_class!(
    MemoLock,
    "Ephpm\\MemoLock",
    ClassFlags::Final,
    &[],
    methods,
    Some(ConstructorMeta {
        constructor: construct,
        build_fn: constructor_args,
        flags: None
    })
);

/// The defaults of `new Ephpm\MemoLock()`, also the locking of a StaleCache without one.
pub const DEFAULT_LOCK_TTL: Duration = Duration::from_millis(30_000);
pub const DEFAULT_WAIT: Duration = Duration::from_millis(5_000);

impl MemoLock {
    /// The lock store and durations, for a StaleCache that locks with this MemoLock.
    pub fn locking(&self) -> (Locks, Duration, Duration) {
        (self.locks.clone(), self.lock_ttl, self.wait)
    }

    fn copy(&self) -> MemoLock {
        MemoLock {
            space: self.space.clone(),
            locks: self.locks.clone(),
            rw: self.rw.clone(),
            lock_ttl: self.lock_ttl,
            wait: self.wait,
            logger: self.logger.as_ref().map(Zval::shallow_clone),
        }
    }
}

/// `__construct(?Ephpm\Kv $store = null, int $lockTtlMs = 30000, int $waitTimeoutMs = 5000, ?object $logger = null)`
fn construct(ex: &mut ExecuteData) -> ConstructorResult<MemoLock> {
    let Some(c) = Call::new(ex, 0, 4) else {
        return ConstructorResult::ArgError;
    };
    let Some(space) = keyspace_arg(&c, 0, "Ephpm\\MemoLock::__construct()") else {
        return ConstructorResult::ArgError;
    };
    match settings(&c, space) {
        Some(m) => ConstructorResult::Ok(m),
        None => ConstructorResult::ArgError,
    }
}

/// The MemoLock on `space` with the settings in arguments 2–4 (lock TTL, wait, logger),
/// or `None` with the exception thrown.
fn settings(c: &Call, space: Keyspace) -> Option<MemoLock> {
    let lock_ttl = c.millis_or(1, DEFAULT_LOCK_TTL.as_millis() as i64, 1)?;
    let wait = c.millis_or(2, DEFAULT_WAIT.as_millis() as i64, 0)?;
    let logger = c.object_or_null(3)?;
    let locks = Locks::new(space.store().clone());
    let rw = RwLocks::new(space.store().clone());
    Some(MemoLock {
        space,
        locks,
        rw,
        lock_ttl,
        wait,
        logger,
    })
}

/// `static fromDsn(string $dsn, int $lockTtlMs = 30000, int $waitTimeoutMs = 5000, ?object $logger = null): static`
/// — a MemoLock on the store a DSN names (`redis://…` for a fleet-wide lock).
extern "C" fn from_dsn(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 1, 4) else { return };
        let Some(dsn) = c.string(0) else { return };
        let space = match super::open_keyspace(Some(dsn), b"") {
            Ok(space) => space,
            Err(e) => return throw(&e, 1, "Ephpm\\MemoLock::fromDsn()"),
        };
        if let Some(m) = settings(&c, space) {
            let _ = ext_php_rs::convert::IntoZval::set_zval(ZendClassObject::new(m), rv, false);
        }
    })
}

fn constructor_args(f: FunctionBuilder) -> FunctionBuilder {
    f.arg(nullable("store", DataType::object("Ephpm\\Kv")))
        .arg(Arg::new("lockTtlMs", DataType::Long).default("30000"))
        .arg(Arg::new("waitTimeoutMs", DataType::Long).default("5000"))
        .arg(nullable("logger", DataType::object("")))
        .required_args(0)
}

/// The object, the lock's name as given, and its name in the store.
fn begin<'a>(c: &Call<'a>) -> Option<(&'a MemoLock, &'a [u8], Vec<u8>)> {
    let m = c.this::<MemoLock>()?;
    let name = c.string(0)?;
    match m.space.full_key(name) {
        Ok(full) => Some((m, name, full)),
        Err(e) => {
            throw(&e, 1, "Ephpm\\MemoLock");
            None
        }
    }
}

/// `acquire(string $name, ?int $ttlMs = null, int $waitMs = 0): ?Ephpm\Lock`
extern "C" fn acquire(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 1, 3) else { return };
        let Some((m, given, name)) = begin(&c) else {
            return;
        };
        let (Some(ttl), Some(wait)) = (ttl_ms_arg(&c, 1, m.lock_ttl), c.millis_or(2, 0, 0)) else {
            return;
        };
        match m.locks.acquire(&name, ttl, clamp_to_execution_time(wait)) {
            Ok(Some(held)) => new_lock(rv, given, Kind::Exclusive(m.locks.clone(), held), ttl),
            Ok(None) => rv.set_null(),
            // The caller asked for exclusion, which a store out of reach cannot give: the
            // same failure as a lock that cannot be had (DESIGN.md §3 item 7).
            Err(e) => lock_unavailable(format!(
                "Ephpm\\MemoLock::acquire(): the lock store cannot be used: {e}"
            )),
        }
    })
}

/// `acquireRead(string $name, ?int $ttlMs = null, int $waitMs = 0): ?Ephpm\Lock` and
/// `acquireWrite(…)`: a share of the read/write lock `$name` (readers share it, a writer
/// has it alone), waiting up to `$waitMs`; null when it could not be had in time.
fn acquire_shared(ex: &mut ExecuteData, rv: &mut Zval, mode: Mode, what: &str) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 1, 3) else { return };
        let Some((m, given, name)) = begin(&c) else {
            return;
        };
        let (Some(ttl), Some(wait)) = (ttl_ms_arg(&c, 1, m.lock_ttl), c.millis_or(2, 0, 0)) else {
            return;
        };
        match m
            .rw
            .acquire(&name, mode, ttl, clamp_to_execution_time(wait))
        {
            Ok(Some(held)) => new_lock(rv, given, Kind::Shared(m.rw.clone(), held), ttl),
            Ok(None) => rv.set_null(),
            Err(e) => lock_unavailable(format!("{what}: the lock store cannot be used: {e}")),
        }
    })
}

extern "C" fn acquire_read(ex: &mut ExecuteData, rv: &mut Zval) {
    acquire_shared(ex, rv, Mode::Read, "Ephpm\\MemoLock::acquireRead()");
}

extern "C" fn acquire_write(ex: &mut ExecuteData, rv: &mut Zval) {
    acquire_shared(ex, rv, Mode::Write, "Ephpm\\MemoLock::acquireWrite()");
}

/// `exclusively(string $name, \Closure $run): mixed` — `$run` gets an `Ephpm\KeepAlive`.
extern "C" fn exclusively(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 2, 2) else { return };
        let Some((m, given, name)) = begin(&c) else {
            return;
        };
        let shown = String::from_utf8_lossy(given);
        let Some(closure) = c.closure(1) else { return };
        let wait = clamp_to_execution_time(m.wait);
        let held = match m.locks.acquire(&name, m.lock_ttl, wait) {
            Ok(Some(held)) => held,
            Ok(None) => {
                return lock_unavailable(format!(
                    "Ephpm\\MemoLock::exclusively(): the lock \"{shown}\" could not be acquired within {} ms",
                    wait.as_millis()
                ));
            }
            Err(e) => {
                return lock_unavailable(format!(
                    "Ephpm\\MemoLock::exclusively(): the lock store cannot be used: {e}"
                ));
            }
        };
        let keep_alive = new_keep_alive(given, m.locks.clone(), held.clone(), m.lock_ttl);
        let result = call(closure, vec![&keep_alive]);
        // Released whatever the section did; an exception it threw stays pending.
        let still_ours = m.locks.release(&held);
        if let Some(v) = result {
            *rv = v;
            if matches!(still_ours, Ok(false)) {
                lock_unavailable(format!(
                    "Ephpm\\MemoLock::exclusively(): the lock \"{shown}\" expired while the section ran: another process may have run it too"
                ));
            }
        }
    })
}

/// The value of `$pool->getItem($key)` when it is a hit.
fn pool_hit(pool: &Zval, key: &Zval) -> Option<Option<Zval>> {
    let item = call_method(pool, "getItem", vec![key])?;
    let hit = call_method(&item, "isHit", vec![])?;
    if hit.bool() == Some(true) {
        call_method(&item, "get", vec![]).map(Some)
    } else {
        Some(None)
    }
}

/// Saves the computed `value` into `pool` the way Symfony's CacheTrait would:
/// `$setMetadata($item)`, then `$pool->save($item->set($value))`.
fn publish(item: &Zval, pool: &Zval, set_metadata: Option<&Zval>, value: &Zval) -> bool {
    let metadata_ok = set_metadata.is_none_or(|f| call(f, vec![item]).is_some());
    metadata_ok
        && call_method(item, "set", vec![value]).is_some()
        && call_method(pool, "save", vec![item]).is_some()
}

/// Symfony's cache callback wrapper (`$pool->setCallbackWrapper(new Ephpm\MemoLock())`):
/// `__invoke(callable $callback, object $item, bool &$save, object $pool, ?\Closure
/// $setMetadata = null, ?object $logger = null, ?float $beta = null): mixed`.
///
/// The winner of the key's lock computes, publishes through `$setMetadata($item)` and
/// `$pool->save()`, sets `$save = false` and releases, which wakes the waiters; a waiter
/// sleeps until the release (at most the lock's TTL), reads the pool, serves a hit and
/// races again on a miss. `$beta === INF` recomputes behind the lock. A wait that would
/// run into max_execution_time, or a store that cannot be used, computes unprotected
/// with a warning through the logger.
extern "C" fn invoke(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 4, 7) else { return };
        let Some(m) = c.this::<MemoLock>() else {
            return;
        };
        let (Some(callback), Some(item), Some(save), Some(pool)) =
            (c.mixed(0), c.mixed(1), c.arg(2), c.mixed(3))
        else {
            return;
        };
        let logger = c.mixed(5).filter(|z| z.is_object()).or(m.logger.as_ref());
        let forced = c.mixed(6).and_then(Zval::double) == Some(f64::INFINITY);
        let (Some(key), Some(was_hit)) = (
            call_method(item, "getKey", vec![]),
            call_method(item, "isHit", vec![]),
        ) else {
            return;
        };
        let set_metadata = c.mixed(4).filter(|z| !z.is_null());
        let mut wrapped = Wrapped {
            callback,
            item,
            save,
            pool,
            key: &key,
            set_metadata,
            rv,
        };
        // An item whose key cannot name a lock (not a string, longer than a key may be)
        // is computed like one whose lock store cannot be used.
        let name = match key
            .zend_str()
            .map(|k| m.space.full_key(&[&b"memo:"[..], k.as_bytes()].concat()))
        {
            Some(Ok(name)) => name,
            other => {
                let why = match other {
                    Some(Err(e)) => e.to_string(),
                    _ => format!("its key is of type {}", type_name(&key)),
                };
                warn_to(
                    logger,
                    format!("ephpm: computing an item without stampede protection: {why}"),
                );
                wrapped.compute();
                return;
            }
        };
        // Symfony calls the wrapper after a miss, so do not look first. An item that was
        // a hit is here to be recomputed (INF, or early expiration): never look for it.
        let recompute = forced || was_hit.bool() == Some(true);
        let plan = Plan {
            find_first: false,
            find_after_winning: !recompute,
            find_after_waiting: !forced,
        };
        let why = match make_once(
            &m.locks,
            &name,
            m.lock_ttl,
            clamp_to_execution_time(m.wait),
            plan,
            &mut wrapped,
        ) {
            Outcome::Done(()) | Outcome::Failed => return,
            Outcome::TimedOut => "its lock was not released in time".to_string(),
            Outcome::StoreFailed(e) => e,
        };
        // A duplicated computation beats a failed request (ARCHITECTURE.md §8.7).
        warn_to(
            logger,
            format!(
                "ephpm: computing \"{}\" without stampede protection: {why}",
                String::from_utf8_lossy(&name)
            ),
        );
        wrapped.compute();
    })
}

/// The cache wrapper's hooks: the pool finds the item; the callback computes it.
struct Wrapped<'a> {
    callback: &'a Zval,
    item: &'a Zval,
    /// The caller's `&$save` reference, passed on as is: the callback's `$save = false`
    /// reaches Symfony.
    save: &'a mut Zval,
    pool: &'a Zval,
    key: &'a Zval,
    set_metadata: Option<&'a Zval>,
    rv: &'a mut Zval,
}

impl Wrapped<'_> {
    fn compute(&mut self) -> bool {
        match call(self.callback, vec![self.item, &*self.save]) {
            Some(v) => {
                *self.rv = v;
                true
            }
            None => false,
        }
    }
}

impl Maker<()> for Wrapped<'_> {
    fn find(&mut self) -> Step<()> {
        match pool_hit(self.pool, self.key) {
            Some(Some(v)) => {
                self.save.dereference_mut().set_bool(false);
                *self.rv = v;
                Step::Got(())
            }
            Some(None) => Step::Missing,
            None => Step::Failed,
        }
    }

    fn make(&mut self, _held: &Held) -> Step<()> {
        if !self.compute() {
            return Step::Failed;
        }
        // Publish before the release, as LockRegistry does, so that the waiters it wakes
        // find the item.
        let wants_saving = self.save.dereference().bool() == Some(true);
        if wants_saving && publish(self.item, self.pool, self.set_metadata, self.rv) {
            self.save.dereference_mut().set_bool(false);
        }
        Step::Got(())
    }
}

/// A value `$exists` may return for "not there yet".
fn absent(v: &Zval) -> bool {
    v.is_null() || v.is_false()
}

/// `once(string $name, \Closure $exists, \Closure $make): mixed` — makes a thing once,
/// fleet-wide on a shared store: `$exists()` is asked first and after every wait (it
/// returns the thing, or null/false); only a lock holder that still finds nothing calls
/// `$make(KeepAlive)`. Waiters wait for the thing, not for the lock. The lock is named
/// `once:<name>`, so the thing itself may be stored under `<name>`.
extern "C" fn once(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 3, 3) else { return };
        let Some((m, given, _)) = begin(&c) else {
            return;
        };
        let (Some(exists), Some(make)) = (c.closure(1), c.closure(2)) else {
            return;
        };
        // Its own lock name, so that the thing may live under `$name` in the same store;
        // under the store's prefix, as every lock name.
        let name = match m.space.full_key(&[&b"once:"[..], given].concat()) {
            Ok(full) => full,
            Err(e) => return throw(&e, 1, "Ephpm\\MemoLock::once()"),
        };
        let plan = Plan {
            find_first: true,
            find_after_winning: true,
            find_after_waiting: true,
        };
        let mut maker = OnceMaker {
            exists,
            make,
            given,
            m,
            rv,
        };
        let shown = String::from_utf8_lossy(given);
        match make_once(
            &m.locks,
            &name,
            m.lock_ttl,
            clamp_to_execution_time(m.wait),
            plan,
            &mut maker,
        ) {
            Outcome::Done(()) | Outcome::Failed => {}
            Outcome::TimedOut => lock_unavailable(format!(
                "Ephpm\\MemoLock::once(): \"{shown}\" was neither made nor its lock released within {} ms",
                m.wait.as_millis()
            )),
            Outcome::StoreFailed(e) => lock_unavailable(format!(
                "Ephpm\\MemoLock::once(): the lock store cannot be used: {e}"
            )),
        }
    })
}

/// `once()`'s hooks: `$exists()` finds the thing, `$make(KeepAlive)` makes it.
struct OnceMaker<'a> {
    exists: &'a Zval,
    make: &'a Zval,
    given: &'a [u8],
    m: &'a MemoLock,
    rv: &'a mut Zval,
}

impl Maker<()> for OnceMaker<'_> {
    fn find(&mut self) -> Step<()> {
        match call(self.exists, vec![]) {
            Some(found) if !absent(&found) => {
                *self.rv = found;
                Step::Got(())
            }
            Some(_) => Step::Missing,
            None => Step::Failed,
        }
    }

    fn make(&mut self, held: &Held) -> Step<()> {
        let keep_alive = new_keep_alive(
            self.given,
            self.m.locks.clone(),
            held.clone(),
            self.m.lock_ttl,
        );
        match call(self.make, vec![&keep_alive]) {
            Some(v) => {
                *self.rv = v;
                Step::Got(())
            }
            None => Step::Failed,
        }
    }
}

/// Runs `$call($pool)` with `wrapper` as the pool's callback wrapper, putting the pool's
/// own wrapper back afterwards, also when `$call` throws.
fn with_wrapper(
    pool: &Zval,
    wrapper: &dyn ext_php_rs::convert::IntoZvalDyn,
    f: &Zval,
    rv: &mut Zval,
) {
    let Some(previous) = call_method(pool, "setCallbackWrapper", vec![wrapper]) else {
        return;
    };
    let result = call(f, vec![pool]);
    // PHP calls nothing while an exception is pending: set it aside for the restore.
    let pending = ext_php_rs::zend::ExecutorGlobals::take_exception();
    let _ = call_method(pool, "setCallbackWrapper", vec![&previous]);
    if let Some(e) = pending {
        let mut zv = Zval::new();
        if ext_php_rs::convert::IntoZval::set_zval(e, &mut zv, false).is_ok() {
            let _ = ext_php_rs::exception::throw_object(zv);
        }
    } else if let Some(v) = result {
        *rv = v;
    }
}

/// `around(object $pool, \Closure $call): mixed` — this lock as `$pool`'s wrapper for one call.
extern "C" fn around(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 2, 2) else { return };
        let (Some(pool), Some(f), Some(this)) = (c.mixed(0), c.closure(1), c.this_zval()) else {
            return;
        };
        with_wrapper(pool, this, f, rv);
    })
}

/// `static unguarded(object $pool, \Closure $call): mixed` — no stampede protection for one call.
extern "C" fn unguarded(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 2, 2) else { return };
        let (Some(pool), Some(f)) = (c.mixed(0), c.closure(1)) else {
            return;
        };
        with_wrapper(pool, &Zval::null(), f, rv);
    })
}

/// `with(?int $lockTtlMs = null, ?int $waitTimeoutMs = null): static` — a copy.
extern "C" fn with(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 0, 2) else { return };
        let Some(m) = c.this::<MemoLock>() else {
            return;
        };
        let mut copy = m.copy();
        if c.arg(0).is_some_and(|z| !z.is_null()) {
            let Some(ttl) = c.millis_or(0, 0, 1) else {
                return;
            };
            copy.lock_ttl = ttl;
        }
        if c.arg(1).is_some_and(|z| !z.is_null()) {
            let Some(wait) = c.millis_or(1, 0, 0) else {
                return;
            };
            copy.wait = wait;
        }
        let _ = ext_php_rs::convert::IntoZval::set_zval(ZendClassObject::new(copy), rv, false);
    })
}

/// `NAME(string $name, ?int $ttlMs = null, int $waitMs = 0): ?Ephpm\Lock`: the three
/// acquire methods (exclusive, read, write) share their signature.
fn acquire_method(method: &'static str, handler: super::call::Handler) -> FunctionBuilder<'static> {
    FunctionBuilder::new(method, handler)
        .arg(Arg::new("name", DataType::String))
        .arg(nullable("ttlMs", DataType::Long))
        .arg(Arg::new("waitMs", DataType::Long).default("0"))
        .required_args(1)
        .returns(DataType::object("Ephpm\\Lock"), false, true)
}

fn methods() -> Vec<(FunctionBuilder<'static>, MethodFlags)> {
    let name = || Arg::new("name", DataType::String);
    let closure = |n: &str| Arg::new(n, DataType::object("Closure"));
    let nullable_ms = |n: &'static str| nullable(n, DataType::Long);
    let methods = vec![
        FunctionBuilder::new("__invoke", invoke)
            .arg(Arg::new("callback", DataType::Callable))
            .arg(Arg::new("item", DataType::object("")))
            .arg(Arg::new("save", DataType::Bool).as_ref())
            .arg(Arg::new("pool", DataType::object("")))
            .arg(nullable("setMetadata", DataType::object("Closure")))
            .arg(nullable("logger", DataType::object("")))
            .arg(nullable("beta", DataType::Double))
            .required_args(4)
            .returns(DataType::Mixed, false, false),
        acquire_method("acquire", acquire),
        acquire_method("acquireRead", acquire_read),
        acquire_method("acquireWrite", acquire_write),
        FunctionBuilder::new("exclusively", exclusively)
            .arg(name())
            .arg(Arg::new("run", DataType::object("Closure")))
            .required_args(2)
            .returns(DataType::Mixed, false, false),
        FunctionBuilder::new("with", with)
            .arg(nullable_ms("lockTtlMs"))
            .arg(nullable_ms("waitTimeoutMs"))
            .required_args(0)
            .returns(DataType::object("static"), false, false),
        FunctionBuilder::new("once", once)
            .arg(name())
            .arg(closure("exists"))
            .arg(closure("make"))
            .required_args(3)
            .returns(DataType::Mixed, false, false),
        FunctionBuilder::new("around", around)
            .arg(Arg::new("pool", DataType::object("")))
            .arg(closure("call"))
            .required_args(2)
            .returns(DataType::Mixed, false, false),
    ];
    let mut methods = public(methods);
    methods.push((
        FunctionBuilder::new("fromDsn", from_dsn)
            .arg(Arg::new("dsn", DataType::String))
            .arg(Arg::new("lockTtlMs", DataType::Long).default("30000"))
            .arg(Arg::new("waitTimeoutMs", DataType::Long).default("5000"))
            .arg(nullable("logger", DataType::object("")))
            .required_args(1)
            .returns(DataType::object("static"), false, false),
        MethodFlags::Public | MethodFlags::Static,
    ));
    methods.push((
        FunctionBuilder::new("unguarded", unguarded)
            .arg(Arg::new("pool", DataType::object("")))
            .arg(closure("call"))
            .required_args(2)
            .returns(DataType::Mixed, false, false),
        MethodFlags::Public | MethodFlags::Static,
    ));
    methods
}
