//! `Ephpm\Lock` (a held lock: exclusive, or a share of a read/write lock) and
//! `Ephpm\KeepAlive` (extends a held lock from inside a section). Both are made by
//! `Ephpm\MemoLock`, never by `new`; each method calls one `crate::lock::Locks` or
//! `crate::rwlock::RwLocks` operation.

use std::time::Duration;

use ext_php_rs::args::Arg;
use ext_php_rs::builders::FunctionBuilder;
use ext_php_rs::class::{ConstructorMeta, ConstructorResult};
use ext_php_rs::exception::PhpResult;
use ext_php_rs::flags::{ClassFlags, DataType, MethodFlags, PropertyFlags};
use ext_php_rs::internal::property::PropertyDescriptor;
use ext_php_rs::types::{ZendClassObject, ZendStr, Zval};
use ext_php_rs::zend::{ExecuteData, ce};

use super::call::{Call, run};
use super::class::{native_class, nullable, public};
use super::error::{lock_unavailable, throw_new};
use crate::lock::{Held, Locks};
use crate::rwlock::{self, Mode, RwLocks};

/// A lock this request holds; released when the object goes away in the process that
/// acquired it.
pub struct Lock {
    /// The name as the caller gave it (the store's name carries the Kv's prefix).
    name: Vec<u8>,
    kind: Kind,
    ttl: Duration,
    released: bool,
    /// The process that acquired it: a child forked while the lock is held inherits
    /// this object, and its exit must not release the parent's lock.
    owner: u32,
}

/// What a `Lock` holds: an exclusive lock (`MemoLock::acquire()`), or a share of a
/// read/write lock (`acquireRead()`, `acquireWrite()`), which promotes and demotes.
pub enum Kind {
    Exclusive(Locks, Held),
    Shared(RwLocks, rwlock::Held),
}

impl Kind {
    fn token(&self) -> &[u8] {
        match self {
            Kind::Exclusive(_, h) => &h.token,
            Kind::Shared(_, h) => &h.token,
        }
    }

    fn fence(&self) -> u64 {
        match self {
            Kind::Exclusive(_, h) => h.fence,
            Kind::Shared(_, h) => h.fence,
        }
    }

    fn extend(&self, ttl: Duration) -> crate::store::Result<bool> {
        match self {
            Kind::Exclusive(l, h) => l.extend(h, ttl),
            Kind::Shared(l, h) => l.extend(h, ttl),
        }
    }

    fn release(&self) -> crate::store::Result<bool> {
        match self {
            Kind::Exclusive(l, h) => l.release(h),
            Kind::Shared(l, h) => l.release(h),
        }
    }

    fn is_held(&self) -> crate::store::Result<bool> {
        match self {
            Kind::Exclusive(l, h) => l.is_held(h),
            Kind::Shared(l, h) => Ok(l.mode(h)?.is_some()),
        }
    }
}

/// Extends the lock of the section it was handed to.
pub struct KeepAlive {
    name: Vec<u8>,
    locks: Locks,
    held: Held,
    ttl: Duration,
}

impl Drop for Lock {
    fn drop(&mut self) {
        if !self.released && self.owner == std::process::id() {
            // Nobody can be told any more; a lock we no longer hold is left alone anyway.
            let _ = self.kind.release();
        }
    }
}

fn get_name(l: &Lock, zv: &mut Zval) -> PhpResult {
    zv.set_zend_string(ZendStr::new(&l.name, false));
    Ok(())
}

fn get_token(l: &Lock, zv: &mut Zval) -> PhpResult {
    zv.set_zend_string(ZendStr::new(l.kind.token(), false));
    Ok(())
}

fn get_fence(l: &Lock, zv: &mut Zval) -> PhpResult {
    zv.set_long(l.kind.fence() as i64);
    Ok(())
}

/// PHP's own error for a write to a readonly property.
fn readonly(name: &str) -> PhpResult {
    Err(ext_php_rs::exception::PhpException::new(
        format!("Cannot modify readonly property Ephpm\\Lock::${name}"),
        0,
        ce::error(),
    ))
}

const fn prop(
    name: &'static str,
    ty: DataType,
    get: fn(&Lock, &mut Zval) -> PhpResult,
    set: fn(&mut Lock, &Zval) -> PhpResult,
) -> PropertyDescriptor<Lock> {
    PropertyDescriptor {
        name,
        get: Some(get),
        set: Some(set),
        flags: PropertyFlags::Public,
        docs: &[],
        ty,
        nullable: false,
        readonly: true,
    }
}

/// `$lock->name`, `$lock->token`, `$lock->fence`: read-only.
static LOCK_PROPERTIES: [PropertyDescriptor<Lock>; 3] = [
    prop("name", DataType::String, get_name, |_, _| readonly("name")),
    prop("token", DataType::String, get_token, |_, _| {
        readonly("token")
    }),
    prop("fence", DataType::Long, get_fence, |_, _| readonly("fence")),
];

/// Made by `Ephpm\MemoLock` only: a private constructor, as PHP's own such classes have.
fn private_constructor<T>() -> Option<ConstructorMeta<T>> {
    Some(ConstructorMeta {
        constructor: |_| {
            throw_new(
                ce::error(),
                "Ephpm\\MemoLock makes these objects; they cannot be constructed".into(),
            );
            ConstructorResult::ArgError
        },
        build_fn: |f| f,
        flags: Some(MethodFlags::Private),
    })
}

native_class!(
    Lock,
    "Ephpm\\Lock",
    ClassFlags::Final,
    &LOCK_PROPERTIES,
    lock_methods,
    private_constructor()
);
native_class!(
    KeepAlive,
    "Ephpm\\KeepAlive",
    ClassFlags::Final,
    &[],
    keep_alive_methods,
    private_constructor()
);

/// A new `Ephpm\Lock` object in `rv`.
pub fn new_lock(rv: &mut Zval, name: &[u8], kind: Kind, ttl: Duration) {
    let lock = Lock {
        name: name.to_vec(),
        kind,
        ttl,
        released: false,
        owner: std::process::id(),
    };
    let _ = ext_php_rs::convert::IntoZval::set_zval(ZendClassObject::new(lock), rv, false);
}

/// A new `Ephpm\KeepAlive` object.
pub fn new_keep_alive(name: &[u8], locks: Locks, held: Held, ttl: Duration) -> Zval {
    let mut zv = Zval::new();
    let keep_alive = KeepAlive {
        name: name.to_vec(),
        locks,
        held,
        ttl,
    };
    let _ =
        ext_php_rs::convert::IntoZval::set_zval(ZendClassObject::new(keep_alive), &mut zv, false);
    zv
}

/// A `?int $ttlMs` argument: `default` when null or absent; 1 to `MAX_MS`.
pub fn ttl_ms_arg(c: &Call, i: u32, default: Duration) -> Option<Duration> {
    match c.arg(i) {
        None => Some(default),
        Some(zv) if zv.is_null() => Some(default),
        Some(_) => c.millis_or(i, 0, 1),
    }
}

/// Throws `Ephpm\LockUnavailable` for a held lock whose store cannot be used: whether the
/// lock is still ours cannot be known, and an unreachable owner is a failure, never a
/// guess (DESIGN.md §3 item 7).
fn store_failed(what: &str, name: &[u8], e: &crate::store::StoreError) {
    lock_unavailable(format!(
        "{what}: the lock \"{}\" cannot be checked: the lock store cannot be used: {e}",
        name.escape_ascii()
    ));
}

/// Extends a lock to `ttl` (`extended`: the store's answer), throwing LockUnavailable
/// when it is no longer ours.
fn extend(name: &[u8], extended: crate::store::Result<bool>, what: &str) {
    match extended {
        Ok(true) => {}
        Ok(false) => lock_unavailable(format!(
            "{what}: the lock \"{}\" is no longer held: it expired, and another process may hold it now",
            String::from_utf8_lossy(name)
        )),
        Err(e) => store_failed(what, name, &e),
    }
}

extern "C" fn lock_extend(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, _| {
        let Some(c) = Call::new(ex, 0, 1) else { return };
        let Some(l) = c.this::<Lock>() else { return };
        let Some(ttl) = ttl_ms_arg(&c, 0, l.ttl) else {
            return;
        };
        extend(&l.name, l.kind.extend(ttl), "Ephpm\\Lock::extend()");
    })
}

extern "C" fn lock_release(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 0, 0) else { return };
        let Some(l) = c.this::<Lock>() else { return };
        if l.released {
            return rv.set_bool(false);
        }
        match l.kind.release() {
            Ok(ours) => {
                l.released = true;
                rv.set_bool(ours);
            }
            Err(e) => store_failed("Ephpm\\Lock::release()", &l.name, &e),
        }
    })
}

extern "C" fn lock_is_held(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 0, 0) else { return };
        let Some(l) = c.this::<Lock>() else { return };
        if l.released {
            return rv.set_bool(false);
        }
        match l.kind.is_held() {
            Ok(held) => rv.set_bool(held),
            Err(e) => store_failed("Ephpm\\Lock::isHeld()", &l.name, &e),
        }
    })
}

extern "C" fn keep_alive_invoke(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, _| {
        let Some(c) = Call::new(ex, 0, 1) else { return };
        let Some(k) = c.this::<KeepAlive>() else {
            return;
        };
        let Some(ttl) = ttl_ms_arg(&c, 0, k.ttl) else {
            return;
        };
        extend(
            &k.name,
            k.locks.extend(&k.held, ttl),
            "Ephpm\\KeepAlive::__invoke()",
        );
    })
}

/// The share of a read/write lock `l` holds, or `None` with the exception thrown: an
/// exclusive lock neither promotes nor demotes, and a released one holds nothing.
fn share<'a>(l: &'a Lock, what: &str) -> Option<(&'a RwLocks, &'a rwlock::Held)> {
    match &l.kind {
        _ if l.released => {
            lock_unavailable(format!(
                "{what}: the lock \"{}\" was released",
                l.name.escape_ascii()
            ));
            None
        }
        Kind::Shared(locks, held) => Some((locks, held)),
        Kind::Exclusive(..) => {
            throw_new(
                ce::error(),
                format!(
                    "{what}: an exclusive lock (from Ephpm\\MemoLock::acquire()) has no read or write mode; take it with acquireRead() or acquireWrite()"
                ),
            );
            None
        }
    }
}

/// `promote(int $waitMs = 0): bool` — the read share becomes the write lock, waiting up
/// to `$waitMs` for the other readers to release theirs; false when they did not (the
/// read share is kept).
extern "C" fn lock_promote(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 0, 1) else { return };
        let Some(l) = c.this::<Lock>() else { return };
        let Some(wait) = c.millis_or(0, 0, 0) else {
            return;
        };
        let what = "Ephpm\\Lock::promote()";
        let Some((locks, held)) = share(l, what).map(|(l, h)| (l.clone(), h.clone())) else {
            return;
        };
        let wait = super::call::clamp_to_execution_time(wait);
        match locks.promote(&held, l.ttl, wait) {
            Ok(Some(promoted)) => {
                l.kind = Kind::Shared(locks, promoted);
                rv.set_bool(true);
            }
            Ok(None) => match locks.mode(&held) {
                Ok(Some(_)) => rv.set_bool(false),
                Ok(None) => lock_unavailable(format!(
                    "{what}: the lock \"{}\" is no longer held: it expired, and another process may hold it now",
                    l.name.escape_ascii()
                )),
                Err(e) => store_failed(what, &l.name, &e),
            },
            Err(e) => store_failed(what, &l.name, &e),
        }
    })
}

/// `demote(): void` — the write lock becomes a read share, so other readers may join.
extern "C" fn lock_demote(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, _| {
        let Some(c) = Call::new(ex, 0, 0) else { return };
        let Some(l) = c.this::<Lock>() else { return };
        let what = "Ephpm\\Lock::demote()";
        let Some((locks, held)) = share(l, what).map(|(l, h)| (l.clone(), h.clone())) else {
            return;
        };
        let gone = |l: &Lock| {
            lock_unavailable(format!(
                "{what}: the lock \"{}\" is no longer held: it expired, and another process may hold it now",
                l.name.escape_ascii()
            ))
        };
        match locks.mode(&held) {
            Ok(Some(_)) => {}
            Ok(None) => return gone(l),
            Err(e) => return store_failed(what, &l.name, &e),
        }
        match locks.demote(&held, l.ttl) {
            Ok(Some(demoted)) => l.kind = Kind::Shared(locks, demoted),
            Ok(None) => gone(l),
            Err(e) => store_failed(what, &l.name, &e),
        }
    })
}

/// `isWriteLocked(): bool` — whether this is a read/write lock's write lock, held now.
extern "C" fn lock_is_write_locked(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 0, 0) else { return };
        let Some(l) = c.this::<Lock>() else { return };
        let Kind::Shared(locks, held) = &l.kind else {
            return rv.set_bool(false);
        };
        if l.released {
            return rv.set_bool(false);
        }
        match locks.mode(held) {
            Ok(mode) => rv.set_bool(mode == Some(Mode::Write)),
            Err(e) => store_failed("Ephpm\\Lock::isWriteLocked()", &l.name, &e),
        }
    })
}

fn ttl_ms_param() -> Arg<'static> {
    nullable("ttlMs", DataType::Long)
}

fn lock_methods() -> Vec<(FunctionBuilder<'static>, MethodFlags)> {
    public(vec![
        FunctionBuilder::new("extend", lock_extend)
            .arg(ttl_ms_param())
            .required_args(0)
            .returns(DataType::Void, false, false),
        FunctionBuilder::new("release", lock_release).returns(DataType::Bool, false, false),
        FunctionBuilder::new("isHeld", lock_is_held).returns(DataType::Bool, false, false),
        FunctionBuilder::new("promote", lock_promote)
            .arg(Arg::new("waitMs", DataType::Long).default("0"))
            .required_args(0)
            .returns(DataType::Bool, false, false),
        FunctionBuilder::new("demote", lock_demote).returns(DataType::Void, false, false),
        FunctionBuilder::new("isWriteLocked", lock_is_write_locked).returns(
            DataType::Bool,
            false,
            false,
        ),
    ])
}

fn keep_alive_methods() -> Vec<(FunctionBuilder<'static>, MethodFlags)> {
    public(vec![
        FunctionBuilder::new("__invoke", keep_alive_invoke)
            .arg(ttl_ms_param())
            .required_args(0)
            .returns(DataType::Void, false, false),
    ])
}
