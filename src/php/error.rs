//! The one place engine errors become PHP exceptions, and the exception classes ephpm
//! registers: `Ephpm\StoreException extends \RuntimeException` (a store that failed),
//! `Ephpm\StoreFull extends Ephpm\StoreException` (a value that cannot fit),
//! `Ephpm\StoreUnavailable extends Ephpm\StoreException` (a server that cannot be reached
//! or did not answer in time; the message names its address and the cause) and
//! `Ephpm\LockUnavailable extends \RuntimeException` (a lock that cannot be had, or was lost).
//!
//! The classes are registered with the raw ClassBuilder and no object override, so they
//! inherit PHP's own exception object: file, line and trace are right, and users can
//! construct them.

use std::ffi::CString;
use std::sync::atomic::{AtomicPtr, Ordering};

use ext_php_rs::builders::ClassBuilder;
use ext_php_rs::zend::{ClassEntry, ce};

use super::ffi;
use crate::store::StoreError;

static STORE_EXCEPTION: AtomicPtr<ClassEntry> = AtomicPtr::new(std::ptr::null_mut());
static STORE_FULL: AtomicPtr<ClassEntry> = AtomicPtr::new(std::ptr::null_mut());
static STORE_UNAVAILABLE: AtomicPtr<ClassEntry> = AtomicPtr::new(std::ptr::null_mut());
static LOCK_UNAVAILABLE: AtomicPtr<ClassEntry> = AtomicPtr::new(std::ptr::null_mut());

/// `\RuntimeException` (SPL is always built in).
fn runtime_exception() -> &'static ClassEntry {
    super::class::builtin_class(c"spl_ce_RuntimeException").unwrap_or_else(ce::exception)
}

pub fn store_exception() -> &'static ClassEntry {
    class(&STORE_EXCEPTION)
}

fn class(slot: &AtomicPtr<ClassEntry>) -> &'static ClassEntry {
    let p = slot.load(Ordering::Acquire);
    // Until MINIT has registered the class, fall back to \RuntimeException.
    if p.is_null() {
        runtime_exception()
    } else {
        // SAFETY: set once in MINIT to a registered class entry, which lives as long as
        // the process.
        unsafe { &*p }
    }
}

/// Registers the exception classes (MINIT).
pub fn register() -> ext_php_rs::error::Result<()> {
    ClassBuilder::new("Ephpm\\StoreException")
        .extends((runtime_exception, "\\RuntimeException"))
        .registration(|ce, _| STORE_EXCEPTION.store(ce, Ordering::Release))
        .register()?;
    ClassBuilder::new("Ephpm\\StoreFull")
        .extends((store_exception, "\\Ephpm\\StoreException"))
        .registration(|ce, _| STORE_FULL.store(ce, Ordering::Release))
        .register()?;
    ClassBuilder::new("Ephpm\\StoreUnavailable")
        .extends((store_exception, "\\Ephpm\\StoreException"))
        .registration(|ce, _| STORE_UNAVAILABLE.store(ce, Ordering::Release))
        .register()?;
    ClassBuilder::new("Ephpm\\LockUnavailable")
        .extends((runtime_exception, "\\RuntimeException"))
        .registration(|ce, _| LOCK_UNAVAILABLE.store(ce, Ordering::Release))
        .register()
}

/// Throws `Ephpm\LockUnavailable`.
pub fn lock_unavailable(msg: String) {
    throw_new(class(&LOCK_UNAVAILABLE), msg);
}

/// Throws the PHP exception for `err`. `key_arg` is the argument number of the key, for
/// the ValueError of a bad key; `what` names the operation ("Ephpm\Kv::set()").
pub fn throw(err: &StoreError, key_arg: u32, what: &str) {
    let (class, msg) = match err {
        StoreError::EmptyKey => return value_error(key_arg, "cannot be empty"),
        StoreError::KeyTooLong(_) => {
            return value_error(key_arg, "must not be longer than 65536 bytes");
        }
        StoreError::Dsn(e) => return value_error(1, &format!("is not usable: {e}")),
        StoreError::Full { .. } => (class(&STORE_FULL), format!("{what}: {err}")),
        StoreError::NotAnInteger => (ce::type_error(), format!("{what}: {err}")),
        StoreError::Overflow => (ce::arithmetic_error(), format!("{what}: {err}")),
        StoreError::Unavailable { .. } => (class(&STORE_UNAVAILABLE), format!("{what}: {err}")),
        StoreError::Remote { .. } | StoreError::Cluster(_) | StoreError::NotAnRwLock(_) => {
            (store_exception(), format!("{what}: {err}"))
        }
        StoreError::Segment(_) => (
            store_exception(),
            format!("{what}: ephpm store failure: {err}"),
        ),
    };
    throw_new(class, msg);
}

/// Throws `Ephpm\StoreException` for a read whose string value memory_limit has no room
/// for: the value was not copied, and the request goes on.
pub fn too_large(what: &str, key: &[u8], len: usize, left: usize) {
    throw_new(
        store_exception(),
        format!("{what}: {}", too_large_message(key, len, left)),
    );
}

/// The words of `too_large`, also the warning of the ePHPm-compatible functions (which
/// PHP prefixes with the function's name).
pub fn too_large_message(key: &[u8], len: usize, left: usize) -> String {
    format!(
        "the value of \"{}\" is {len} bytes, more than memory_limit leaves room for ({left} bytes)",
        key.escape_ascii()
    )
}

/// Throws a new exception of `class` with `msg` (code 0).
pub fn throw_new(class: &'static ClassEntry, msg: String) {
    // ext-php-rs only fails to throw when there is no executing frame, which a handler
    // always has.
    let _ = ext_php_rs::exception::throw(class, &msg);
}

/// Raises an E_WARNING (for the ePHPm-compatible functions, which return false instead
/// of throwing on store failures, and for replaced segments).
pub fn warn(msg: &str) {
    ext_php_rs::error::php_error(&ext_php_rs::flags::ErrorType::Warning, msg);
}

/// Throws PHP's ValueError for argument `arg_num` of the running function:
/// "f(): Argument #N ($name) <message>".
pub fn value_error(arg_num: u32, message: &str) {
    let msg = CString::new(message.replace('\0', "")).unwrap_or_default();
    // SAFETY: a printf-style format that is a literal "%s" with one C-string argument,
    // both NUL-terminated and alive for the call; we are inside an internal call, which
    // is what the helper reads the function name from.
    unsafe { ffi::zend_argument_value_error(arg_num, c"%s".as_ptr(), msg.as_ptr()) };
}
