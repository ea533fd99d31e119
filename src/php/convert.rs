//! PHP values to engine values and back. Scalars map natively; arrays and objects go
//! through PHP's own serializer (`serialize()`'s format, so `__serialize`/`__sleep`
//! and `__unserialize`/`__wakeup` behave as users expect).

use std::cell::RefCell;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::flags::DataType;
use ext_php_rs::types::{ZendStr, Zval};
use ext_php_rs::zend::{ExecutorGlobals, bailout, ce, try_catch};

use super::error::warn;
use super::ffi;
use crate::keyspace::Keyspace;
use crate::store::{Fetched, Value};

thread_local! {
    /// The buffer values are read into, reused so that a read allocates nothing but
    /// the PHP string it returns.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A buffer past this size is given back after use rather than kept.
const SCRATCH_KEEP: usize = 1 << 20;

/// Runs `f` with the reusable read buffer. Re-entrant (an `__unserialize` that reads
/// the store gets a buffer of its own).
pub fn with_scratch<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    let mut buf = take_scratch();
    let r = f(&mut buf);
    give_back(buf);
    r
}

fn take_scratch() -> Vec<u8> {
    SCRATCH.with(|s| s.take())
}

fn give_back(buf: Vec<u8>) {
    if buf.capacity() <= SCRATCH_KEEP {
        SCRATCH.with(|s| s.replace(buf));
    }
}

/// Converts `zv` to a storable value and hands it to `f`; `None` when the value cannot
/// be stored (the exception is thrown).
pub fn with_value<R>(zv: &Zval, f: impl FnOnce(Value<'_>) -> R) -> Option<R> {
    let zv = zv.dereference();
    let v = match zv.get_type() {
        DataType::String => Value::Str(zv.zend_str().map_or(&[][..], |s| s.as_bytes())),
        DataType::Long => Value::Int(zv.long().unwrap_or_default()),
        DataType::Double => Value::Float(zv.double().unwrap_or_default()),
        DataType::True => Value::Bool(true),
        DataType::False => Value::Bool(false),
        DataType::Bool => Value::Bool(zv.bool().unwrap_or_default()),
        DataType::Null | DataType::Undef => Value::Null,
        DataType::Array | DataType::Object(_) => {
            let s = serialize(zv)?;
            return Some(f(Value::Serialized(s.as_bytes())));
        }
        other => {
            super::error::throw_new(
                ce::type_error(),
                format!(
                    "ephpm cannot store a value of type {}",
                    other.to_string().to_lowercase()
                ),
            );
            return None;
        }
    };
    Some(f(v))
}

/// `serialize($zv)`; `None` if it threw (a Closure, say).
fn serialize(zv: &Zval) -> Option<ZBox<ZendStr>> {
    let mut buf = ffi::SmartStr {
        s: std::ptr::null_mut(),
        a: 0,
    };
    // SAFETY: the serializer's state is created and destroyed around one call, as
    // PHP_VAR_SERIALIZE_INIT/DESTROY do; `zv` is a live zval it only reads (the C
    // signature is not const, the function does not write through it).
    unsafe {
        let mut data = ffi::php_var_serialize_init();
        ffi::php_var_serialize(
            &mut buf,
            std::ptr::from_ref(zv).cast_mut().cast(),
            &mut data,
        );
        ffi::php_var_serialize_destroy(data);
    }
    if buf.s.is_null() {
        return None;
    }
    // SAFETY: the smart_str's string is a fresh, owned zend_string; ZBox releases it.
    let s = unsafe { ZBox::from_raw(buf.s) };
    (!ExecutorGlobals::has_exception()).then_some(s)
}

/// Strings of at least this many bytes are copied once, from the store straight into a
/// new PHP string, while the store holds its lock (when PHP's memory certainly has room
/// for it, see `room_for_string`); smaller ones are copied to the scratch buffer first,
/// which costs less than guarding the allocation.
const DIRECT_COPY: usize = 2048;

/// Zend's allocator (Zend/zend_alloc.h): memory comes in chunks of 2 MiB cut into pages
/// of 4 KiB; a block larger than a chunk less a page is "huge", mapped by itself and
/// rounded up to whole pages. A zend_string adds a 24-byte header and a NUL.
const ZEND_MM_CHUNK_SIZE: usize = 2 << 20;
const ZEND_MM_PAGE_SIZE: usize = 4096;
const ZSTR_OVERHEAD: usize = 24 + 1;

/// Whether PHP's memory_limit leaves room for a new PHP string of `len` bytes.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Room {
    /// Certainly: the allocation cannot hit the limit.
    Certain,
    /// Probably: it fits, unless it needs a new chunk the limit has no room for; allocate
    /// it only where a fatal error would hold no lock.
    Probable,
    /// No: allocating it would end the request with a fatal error.
    None { left: usize },
}

/// How `room_for_string(len)` stands, from memory_limit and what the request's heap
/// already holds. The allocator compares the limit with its *real* size (whole chunks and
/// huge blocks, `zend_memory_usage(true)`), which is never below the bytes in use.
pub fn room_for_string(len: usize) -> Room {
    // Read straight from PHP's core globals: ext-php-rs's `ProcessGlobals::get()` takes a
    // process-wide RwLock on every call, which cost a quarter of a cached get (measured
    // with perf). Only this thread writes memory_limit (ini_set), and not while we read.
    // SAFETY: the function returns PHP's (this thread's, under ZTS) core globals, valid
    // for the whole request.
    let limit = unsafe { (*ext_php_rs::ffi::ext_php_rs_process_globals()).memory_limit };
    // -1 (no limit) or an unset limit: the allocator grants anything.
    let Ok(limit) = usize::try_from(limit) else {
        return Room::Certain;
    };
    // SAFETY: reads the current heap's counters; called inside a request.
    let used = unsafe { ffi::zend_memory_usage(true) };
    let left = limit.saturating_sub(used);
    let block = len
        .saturating_add(ZSTR_OVERHEAD)
        .next_multiple_of(ZEND_MM_PAGE_SIZE);
    if block > left {
        Room::None { left }
    } else if block > ZEND_MM_CHUNK_SIZE - ZEND_MM_PAGE_SIZE
        || block.saturating_add(ZEND_MM_CHUNK_SIZE) <= left
    {
        // A huge block is checked against the limit by its own size, which fits; anything
        // smaller needs at most one new chunk, which fits too.
        Room::Certain
    } else {
        Room::Probable
    }
}

/// What a read left to do once the store's lock is released.
enum Landed {
    /// `out` holds the value.
    Done,
    /// The value's bytes, copied into the scratch buffer.
    Str(Vec<u8>),
    Serialized(Vec<u8>),
    /// A string of this many bytes that PHP's memory_limit has no room for: not copied.
    TooLarge {
        len: usize,
        left: usize,
    },
    /// Allocating the PHP string hit the memory limit after all: PHP's fatal error must
    /// go on.
    Bailout,
}

/// Lands a value shown under the store's lock. Nothing here may longjmp out while the
/// lock is held: a string is allocated here only when memory_limit certainly has room
/// for it (else it is copied to the scratch buffer, or refused), and that allocation
/// runs inside `try_catch`, which turns an engine bailout into a value, re-raised after
/// the lock is released.
fn land(p: Value<'_>, out: &mut Zval) -> Landed {
    match p {
        Value::Str(b) => match room_for_string(b.len()) {
            Room::None { left } => Landed::TooLarge { len: b.len(), left },
            Room::Certain if b.len() >= DIRECT_COPY => match try_catch(|| ZendStr::new(b, false)) {
                Ok(s) => {
                    out.set_zend_string(s);
                    Landed::Done
                }
                Err(_) => Landed::Bailout,
            },
            _ => {
                let mut buf = take_scratch();
                p.copy_into(&mut buf);
                Landed::Str(buf)
            }
        },
        Value::Serialized(_) => {
            let mut buf = take_scratch();
            p.copy_into(&mut buf);
            Landed::Serialized(buf)
        }
        Value::Int(n) => {
            out.set_long(n);
            Landed::Done
        }
        Value::Float(x) => {
            out.set_double(x);
            Landed::Done
        }
        Value::Bool(b) => {
            out.set_bool(b);
            Landed::Done
        }
        Value::Null => {
            out.set_null();
            Landed::Done
        }
    }
}

/// The outcome of `fetch`.
#[derive(Debug, PartialEq)]
pub enum Fetch {
    /// `out` holds the value.
    Hit,
    /// The key is absent, or a stored array or object could not be unserialized (a
    /// warning has been raised, or its exception is pending).
    Miss,
    /// The value is a string of `len` bytes, more than PHP's memory_limit leaves room for
    /// (`left` bytes): it was not copied.
    TooLarge { len: usize, left: usize },
}

/// Reads `key` into `out`.
pub fn fetch(space: &Keyspace, key: &[u8], out: &mut Zval) -> crate::store::Result<Fetch> {
    let mut landed = Landed::Done;
    if space.read(key, &mut |p| landed = land(p, out))?.is_none() {
        return Ok(Fetch::Miss);
    }
    let ok = match landed {
        Landed::Done => true,
        Landed::Str(buf) => {
            let ok = from_value(Value::Str(&buf), out);
            give_back(buf);
            ok
        }
        Landed::Serialized(buf) => {
            let ok = from_value(Value::Serialized(&buf), out);
            give_back(buf);
            ok
        }
        Landed::TooLarge { len, left } => return Ok(Fetch::TooLarge { len, left }),
        // SAFETY: no lock is held any more, and no frame between here and the handler
        // owns anything that needs dropping.
        Landed::Bailout => unsafe { bailout() },
    };
    Ok(if ok { Fetch::Hit } else { Fetch::Miss })
}

/// Converts an engine value to PHP into `out`; false when a stored array or object could
/// not be unserialized (a warning has been raised, or its exception is pending).
pub fn from_value(v: Value<'_>, out: &mut Zval) -> bool {
    match v {
        Value::Str(b) => out.set_zend_string(ZendStr::new(b, false)),
        Value::Serialized(b) => match unserialize(b) {
            Some(v) => *out = v,
            None => return false,
        },
        Value::Int(n) => out.set_long(n),
        Value::Float(x) => out.set_double(x),
        Value::Bool(b) => out.set_bool(b),
        Value::Null => out.set_null(),
    }
    true
}

/// A new PHP reference holding `value`, to pass to a callable that takes `&$param`
/// (PHP warns when a by-reference parameter gets a plain value); what the callable
/// assigns is read back through `Zval::dereference`.
pub fn new_reference(value: Zval) -> Zval {
    use ext_php_rs::ffi::{
        _zend_refcounted_h__bindgen_ty_1, zend_property_info_source_list, zend_refcounted_h,
        zend_reference,
    };
    /// GC_REFERENCE and IS_REFERENCE_EX (Zend/zend_types.h): a reference, not
    /// collectable by the cycle collector; the zval's type, refcounted.
    const GC_REFERENCE: u32 = 10 | (1 << 4);
    const IS_REFERENCE_EX: u32 = 10 | (1 << 8);
    let ptr = ext_php_rs::alloc::emalloc(std::alloc::Layout::new::<zend_reference>())
        .cast::<zend_reference>();
    let value = std::mem::ManuallyDrop::new(value);
    // SAFETY: `ptr` is a fresh emalloc'd block the size of a zend_reference, initialised
    // here as ZVAL_NEW_REF does: refcount 1, no typed-property sources, and `value`
    // moved in (ManuallyDrop: the reference owns it now and frees it with itself).
    unsafe {
        ptr.write(zend_reference {
            gc: zend_refcounted_h {
                refcount: 1,
                u: _zend_refcounted_h__bindgen_ty_1 {
                    type_info: GC_REFERENCE,
                },
            },
            val: std::ptr::read(&*value),
            sources: zend_property_info_source_list {
                ptr: std::ptr::null_mut(),
            },
        });
    }
    let mut zv = Zval::new();
    zv.value.ref_ = ptr;
    zv.u1.type_info = IS_REFERENCE_EX;
    zv
}

fn unserialize(bytes: &[u8]) -> Option<Zval> {
    let mut v = Zval::new();
    let mut p = bytes.as_ptr();
    // SAFETY: `p..max` is the live byte slice; the unserializer's state is created and
    // destroyed around one call as PHP_VAR_UNSERIALIZE_INIT/DESTROY do (destroy runs
    // the delayed __wakeup/__unserialize calls); `v` is a valid zval to write into.
    let ok = unsafe {
        let max = p.add(bytes.len());
        let mut hash = ffi::php_var_unserialize_init();
        let ok =
            ffi::php_var_unserialize(std::ptr::from_mut(&mut v).cast(), &mut p, max, &mut hash)
                != 0;
        ffi::php_var_unserialize_destroy(hash);
        ok
    };
    if ok && !ExecutorGlobals::has_exception() {
        Some(v)
    } else {
        if !ExecutorGlobals::has_exception() {
            warn(
                "ephpm: a stored array or object could not be unserialized; returning the default",
            );
        }
        None
    }
}

/// A fetched value as the string ePHPm's functions return.
pub fn to_php_string(value: Fetched, bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    use std::borrow::Cow;
    match value {
        Fetched::Str | Fetched::Serialized => Cow::Borrowed(bytes),
        Fetched::Int(n) => Cow::Owned(n.to_string().into_bytes()),
        Fetched::Float(x) => Cow::Owned(x.to_string().into_bytes()),
        Fetched::Bool(true) => Cow::Borrowed(b"1"),
        Fetched::Bool(false) | Fetched::Null => Cow::Borrowed(b""),
    }
}
