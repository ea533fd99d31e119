//! PHP values to engine values and back. Scalars map natively; arrays and objects go
//! through PHP's own serializer (`serialize()`'s format, so `__serialize`/`__sleep`
//! and `__unserialize`/`__wakeup` behave as users expect).

use std::cell::RefCell;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::flags::DataType;
use ext_php_rs::types::{ZendStr, Zval};
use ext_php_rs::zend::{ExecutorGlobals, ce};

use super::error::warn;
use super::ffi;
use super::string_room::{Roomed, StringRoom};
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
    // One thread-local lookup a call (in a shared object each costs a `__tls_get_addr`).
    SCRATCH.with(|scratch| {
        let mut buf = scratch.take();
        let r = f(&mut buf);
        if buf.capacity() <= SCRATCH_KEEP {
            scratch.replace(buf);
        }
        r
    })
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

/// Reads `key` into `out`: a string is copied once, out of the store straight into the
/// new PHP string (`StringRoom`); a serialized value into the scratch buffer, and
/// unserialized from there. No store lock is held by then, so making the PHP value may
/// end the request (memory_limit, a fatal error in `__unserialize`) without holding up
/// anybody.
pub fn fetch(space: &Keyspace, key: &[u8], out: &mut Zval) -> crate::store::Result<Fetch> {
    with_scratch(|buf| {
        let mut room = StringRoom::new(buf, false);
        let Some(hit) = space.get_into(key, &mut room)? else {
            return Ok(Fetch::Miss);
        };
        let roomed = room.take();
        Ok(match (hit.value, roomed) {
            (Fetched::Str, Roomed::String(s)) => {
                out.set_zend_string(s);
                Fetch::Hit
            }
            (Fetched::Str, Roomed::TooLarge { len, left }) => Fetch::TooLarge { len, left },
            // Never: every string hit asks for its room.
            (Fetched::Str, Roomed::Scratch) => Fetch::Miss,
            (kind, _) if from_value(kind.with(buf), out) => Fetch::Hit,
            _ => Fetch::Miss,
        })
    })
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
