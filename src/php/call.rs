//! One PHP call as a Rust handler sees it: the argument count checked, each argument
//! converted by PHP's own rules (coercion in weak mode, strictness under strict_types,
//! PHP's exact TypeError and ValueError wording), and `$this`.
//!
//! Every conversion that fails has already thrown the PHP exception when it returns
//! `None`; the handler just returns.

use std::ffi::CString;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ext_php_rs::class::RegisteredClass;
use ext_php_rs::types::{ZendClassObject, ZendHashTable, Zval};
use ext_php_rs::zend::{ExecuteData, ce};

use super::error::value_error;
use super::ffi;

/// The signature of a function or method handler.
pub type Handler = extern "C" fn(&mut ExecuteData, &mut Zval);

/// The arguments and `$this` of the running internal call.
pub struct Call<'a> {
    ex: *mut ExecuteData,
    count: u32,
    _frame: PhantomData<&'a mut ExecuteData>,
}

/// Runs a handler body, turning a Rust panic into a PHP `Error` instead of unwinding
/// into the engine.
pub fn run(
    ex: &mut ExecuteData,
    retval: &mut Zval,
    body: impl FnOnce(&mut ExecuteData, &mut Zval),
) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| body(ex, retval))) {
        if crate::store::shm::notice::is_corruption(&*panic) {
            // Bytes written into the segment by something else, found by a bounds check:
            // the shard is marked and repaired at its next use; this call did nothing.
            super::error::throw_new(
                super::error::store_exception(),
                "ephpm: the shared store's memory was found damaged (written by something \
                 else?); the shard is repaired at its next use and this call was not done"
                    .into(),
            );
        } else {
            super::error::throw_new(
                ce::error(),
                "ephpm: internal error (a bug: please report it)".into(),
            );
        }
    }
    if let Some(warning) = crate::store::shm::notice::take() {
        super::error::warn(warning);
    }
    // The process-wide count first: the thread-local behind it costs a `__tls_get_addr`
    // a call, and is only worth looking at once some thread has had a bailout.
    if BAILOUTS_PENDING.load(Ordering::Relaxed) != 0 && BAILED_OUT.replace(false) {
        BAILOUTS_PENDING.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: the handler's frames have returned and released what they held (locks
        // included); the fatal error caught by `guarded` goes on from here, as PHP's own
        // zend_try/zend_catch users re-raise it.
        unsafe { ext_php_rs::zend::bailout() };
    }
}

/// How many threads have a bailout `run` has not re-raised yet (`BAILED_OUT` set).
static BAILOUTS_PENDING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set by `guarded` when PHP code it ran hit a fatal error (a bailout).
    static BAILED_OUT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, which calls PHP userland code, so that a fatal error in that code (PHP's
/// bailout, a longjmp) stops here instead of skipping over the handler's frames: the
/// handler then sees `None`, releases its locks and returns, and `run` re-raises the
/// error.
pub fn guarded<R>(f: impl FnOnce() -> Option<R>) -> Option<R> {
    match ext_php_rs::zend::try_catch(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(ext_php_rs::zend::CatchError::Bailout) => {
            if !BAILED_OUT.replace(true) {
                BAILOUTS_PENDING.fetch_add(1, Ordering::Relaxed);
            }
            None
        }
        Err(_) => {
            super::error::throw_new(
                ce::error(),
                "ephpm: internal error (a bug: please report it)".into(),
            );
            None
        }
    }
}

/// The longest duration any argument may ask for, in seconds (about 31.7 years, as the
/// session handler's options): far beyond any real TTL or wait, and small enough that
/// no deadline computed from it (`Instant::now() + d`, a store's expiry) can overflow.
pub const MAX_SECONDS: i64 = 1_000_000_000;
/// The same limit for the arguments counted in milliseconds.
pub const MAX_MS: i64 = MAX_SECONDS * 1000;

/// Throws PHP's ValueError "must be between `min` and `max`" for argument `arg_num`.
pub fn range_error(arg_num: u32, min: i64, max: i64) {
    value_error(arg_num, &format!("must be between {min} and {max}"));
}

/// Seconds as a Duration, when `seconds` is finite and within `0..=MAX_SECONDS`:
/// `Duration::from_secs_f64` panics on NaN, a negative or an overflow, this never does.
pub fn seconds_within_limit(seconds: f64) -> Option<std::time::Duration> {
    if seconds.is_finite() && (0.0..=MAX_SECONDS as f64).contains(&seconds) {
        std::time::Duration::try_from_secs_f64(seconds).ok()
    } else {
        None
    }
}

/// A TTL argument in seconds, validated: `None` for 0 (no expiry).
pub fn ttl_from_seconds(seconds: f64, arg_num: u32) -> Option<Option<std::time::Duration>> {
    if !seconds.is_finite() {
        value_error(arg_num, "must be a finite number");
        return None;
    }
    match seconds_within_limit(seconds) {
        Some(d) if d.is_zero() => Some(None),
        Some(d) => Some(Some(d)),
        None => {
            range_error(arg_num, 0, MAX_SECONDS);
            None
        }
    }
}

impl<'a> Call<'a> {
    /// Checks that between `min` and `max` arguments were passed; throws PHP's
    /// ArgumentCountError otherwise.
    pub fn new(ex: &'a mut ExecuteData, min: u32, max: u32) -> Option<Self> {
        // SAFETY: `This.u2.num_args` is the argument count of the frame PHP passed us
        // (ZEND_CALL_NUM_ARGS); reading a u32 from the union is always defined.
        let count = unsafe { ex.This.u2.num_args };
        if count < min || count > max {
            // SAFETY: called inside an internal call, as the helper requires.
            unsafe { ffi::zend_wrong_parameters_count_error(min, max) };
            return None;
        }
        Some(Call {
            ex,
            count,
            _frame: PhantomData,
        })
    }

    /// `$this`, as the Rust object of class `T`.
    pub fn this<T: RegisteredClass>(&self) -> Option<&'a mut T> {
        // SAFETY: `ex` is the live frame of this call (Call::new); the object outlives it,
        // and a handler takes `$this` once.
        let obj = unsafe { (*self.ex).This.object_mut() }?;
        // ext-php-rs gives each registered class handlers of its own, and only its
        // create_object hands them out — to objects of the class and of PHP subclasses of
        // it, which inherit that create_object. So these handlers alone say that `obj` is
        // the `std` of a `ZendClassObject<T>` (ext-php-rs's `get_object` walks the class
        // hierarchy on top of this, on every call).
        if !std::ptr::eq(obj.handlers, T::get_metadata().handlers()) {
            return None;
        }
        let offset = std::mem::offset_of!(ZendClassObject<T>, std);
        // SAFETY: per the handlers, `obj` is the `std` field of a live, repr(C)
        // ZendClassObject<T>, `offset` bytes into it; it lives as long as the object.
        let container = unsafe {
            &mut *std::ptr::from_mut(obj)
                .cast::<u8>()
                .sub(offset)
                .cast::<ZendClassObject<T>>()
        };
        // None for an object whose constructor has not run (newInstanceWithoutConstructor).
        container.obj.as_mut()
    }

    /// `$this` as a zval (to pass the object itself on).
    pub fn this_zval(&self) -> Option<&'a Zval> {
        // SAFETY: `ex` is the live frame of this call; `This` holds the object for methods.
        let this = unsafe { &(*self.ex).This };
        this.is_object().then_some(this)
    }

    /// Argument `i` (0-based) if it was passed.
    pub fn arg(&self, i: u32) -> Option<&'a mut Zval> {
        if i >= self.count {
            return None;
        }
        // SAFETY: i < num_args, so the slot holds an argument; each slot is distinct
        // memory, and no two live references to one slot are handed out by one handler.
        unsafe { (*self.ex).zend_call_arg(i as usize) }
    }

    /// A `string` argument, coerced as PHP coerces for internal functions.
    pub fn string(&self, i: u32) -> Option<&'a [u8]> {
        self.string_as(i, ffi::Z_EXPECTED_STRING)
    }

    /// A `?string` argument; absent counts as null.
    pub fn string_or_null(&self, i: u32) -> Option<Option<&'a [u8]>> {
        match self.arg(i) {
            None => Some(None),
            Some(zv) if zv.is_null() => Some(None),
            Some(_) => self.string_as(i, ffi::Z_EXPECTED_STRING_OR_NULL).map(Some),
        }
    }

    fn string_as(&self, i: u32, expected: std::ffi::c_int) -> Option<&'a [u8]> {
        let zv = self.arg(i)?;
        if let Some(s) = zv.zend_str() {
            // SAFETY: re-borrow for the frame's lifetime: the string is the argument's,
            // which lives until the call returns.
            return Some(unsafe { &*std::ptr::from_ref(s.as_bytes()) });
        }
        let mut dest = std::ptr::null_mut();
        // SAFETY: `zv` is a live argument slot; PHP converts it in place (weak mode) and
        // points `dest` at the resulting string, or reports failure.
        if unsafe { ffi::zend_parse_arg_str_slow(zv, &mut dest, i + 1) } && !dest.is_null() {
            // SAFETY: `dest` is a zend_string owned by the argument slot.
            return Some(unsafe { zend_bytes(dest) });
        }
        if !ext_php_rs::zend::ExecutorGlobals::has_exception() {
            self.type_error(i, expected);
        }
        None
    }

    /// An `int` argument, or `default` when absent.
    pub fn long_or(&self, i: u32, default: i64) -> Option<i64> {
        let Some(zv) = self.arg(i) else {
            return Some(default);
        };
        if let Some(n) = zv.long() {
            return Some(n);
        }
        let mut n = 0;
        // SAFETY: a live argument slot and an out-pointer to a local.
        if unsafe { ffi::zend_parse_arg_long_slow(zv, &mut n, i + 1) } {
            return Some(n);
        }
        if !ext_php_rs::zend::ExecutorGlobals::has_exception() {
            self.type_error(i, ffi::Z_EXPECTED_LONG);
        }
        None
    }

    /// An `int` argument within `min..=max`, or `default` when absent; PHP's ValueError
    /// "must be between" otherwise.
    pub fn long_within(&self, i: u32, default: i64, min: i64, max: i64) -> Option<i64> {
        let n = self.long_or(i, default)?;
        if (min..=max).contains(&n) {
            Some(n)
        } else {
            range_error(i + 1, min, max);
            None
        }
    }

    /// A duration argument in milliseconds within `min..=MAX_MS`, or `default` when absent.
    pub fn millis_or(&self, i: u32, default: i64, min: i64) -> Option<std::time::Duration> {
        let ms = self.long_within(i, default, min, MAX_MS)?;
        // In range, so not negative.
        Some(std::time::Duration::from_millis(ms.unsigned_abs()))
    }

    /// A duration argument in whole seconds within `0..=MAX_SECONDS`, or `default` when
    /// absent.
    pub fn seconds_or(&self, i: u32, default: i64) -> Option<std::time::Duration> {
        let s = self.long_within(i, default, 0, MAX_SECONDS)?;
        Some(std::time::Duration::from_secs(s.unsigned_abs()))
    }

    /// An `int|float` argument as seconds, or `default` when absent.
    pub fn number_or(&self, i: u32, default: f64) -> Option<f64> {
        let Some(zv) = self.arg(i) else {
            return Some(default);
        };
        if let Some(n) = zv.long() {
            return Some(n as f64);
        }
        if let Some(x) = zv.double() {
            return Some(x);
        }
        let mut dest = std::ptr::null_mut();
        // SAFETY: a live argument slot; PHP converts it in place and points `dest` at it.
        if unsafe { ffi::zend_parse_arg_number_slow(zv, &mut dest, i + 1) } && !dest.is_null() {
            // SAFETY: `dest` points at the converted argument slot.
            let z: &Zval = unsafe { &*dest.cast::<Zval>() };
            return z.long().map(|n| n as f64).or(z.double());
        }
        if !ext_php_rs::zend::ExecutorGlobals::has_exception() {
            self.type_error(i, ffi::Z_EXPECTED_NUMBER);
        }
        None
    }

    /// An `array` argument.
    pub fn array(&self, i: u32) -> Option<&'a ZendHashTable> {
        let zv = self.arg(i)?;
        if let Some(a) = zv.array() {
            // SAFETY: the array belongs to the argument slot, alive for the call.
            return Some(unsafe { &*std::ptr::from_ref(a) });
        }
        self.type_error(i, ffi::Z_EXPECTED_ARRAY);
        None
    }

    /// A `mixed` argument (references are followed).
    pub fn mixed(&self, i: u32) -> Option<&'a Zval> {
        self.arg(i).map(|z| z.dereference())
    }

    fn type_error(&self, i: u32, expected: std::ffi::c_int) {
        if let Some(zv) = self.arg(i) {
            // SAFETY: inside an internal call; `zv` is a live argument slot.
            unsafe { ffi::zend_wrong_parameter_type_error(i + 1, expected, zv) };
        }
    }
}

/// # Safety
/// - `s` must point to a live zend_string that outlives `'a`.
unsafe fn zend_bytes<'a>(s: *mut ext_php_rs::ffi::zend_string) -> &'a [u8] {
    // SAFETY: forwarded; `len` bytes follow `val` in every zend_string.
    unsafe { std::slice::from_raw_parts((*s).val.as_ptr().cast::<u8>(), (*s).len) }
}

/// Throws PHP's TypeError for argument `arg_num`: "f(): Argument #N ($name) <message>".
pub fn arg_type_error(arg_num: u32, message: &str) {
    let msg = CString::new(message.replace('\0', "")).unwrap_or_default();
    // SAFETY: as in `value_error`.
    unsafe { ffi::zend_argument_type_error(arg_num, c"%s".as_ptr(), msg.as_ptr()) };
}

/// The PHP type name of a value, as PHP's own TypeErrors show it.
pub fn type_name(zv: &Zval) -> String {
    // SAFETY: `zv` is a live zval; the function returns a static C string.
    let p = unsafe { ffi::zend_zval_type_name(std::ptr::from_ref(zv).cast()) };
    // SAFETY: zend_zval_type_name always returns a NUL-terminated static string.
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}

impl<'a> Call<'a> {
    /// A `\Closure` argument, or `None` with PHP's TypeError thrown.
    pub fn closure(&self, i: u32) -> Option<&'a Zval> {
        let zv = self.mixed(i)?;
        if zv
            .object()
            .is_some_and(|o| o.get_class_name().is_ok_and(|n| n == "Closure"))
        {
            return Some(zv);
        }
        arg_type_error(
            i + 1,
            &format!("must be of type Closure, {} given", type_name(zv)),
        );
        None
    }

    /// A `callable` argument, or `None` with PHP's TypeError thrown.
    pub fn callable(&self, i: u32) -> Option<&'a Zval> {
        let zv = self.mixed(i)?;
        if zv.is_callable() {
            return Some(zv);
        }
        arg_type_error(
            i + 1,
            &format!("must be a valid callback, {} given", type_name(zv)),
        );
        None
    }

    /// A `?object` argument (absent counts as null), kept beyond the call.
    pub fn object_or_null(&self, i: u32) -> Option<Option<Zval>> {
        match self.mixed(i) {
            None => Some(None),
            Some(zv) if zv.is_null() => Some(None),
            Some(zv) if zv.is_object() => Some(Some(zv.shallow_clone())),
            Some(zv) => {
                arg_type_error(
                    i + 1,
                    &format!("must be of type ?object, {} given", type_name(zv)),
                );
                None
            }
        }
    }
}

/// How long a wait may last: `wanted`, but never into `max_execution_time` (one second
/// before the limit, ARCHITECTURE.md §8.6).
pub fn clamp_to_execution_time(wanted: Duration) -> Duration {
    // SAFETY: a NUL-terminated literal with its length; zend_ini_long only reads it.
    let limit = unsafe { ffi::zend_ini_long(c"max_execution_time".as_ptr(), 18, 0) };
    if limit <= 0 {
        return wanted;
    }
    // SAFETY: no arguments; the SAPI's request start time, or the current time.
    let started = unsafe { ffi::sapi_get_request_time() };
    let now = crate::ground::wall::since_epoch().as_secs_f64();
    let left = started + limit as f64 - 1.0 - now;
    // Not from_secs_f64: a clock or limit gone wrong (NaN, an overflow) must not panic.
    wanted.min(Duration::try_from_secs_f64(left.max(0.0)).unwrap_or(Duration::MAX))
}
