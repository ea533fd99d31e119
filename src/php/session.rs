//! Sessions from PHP: the native save handler `ephpm` (`session.save_handler = ephpm`)
//! and `Ephpm\SessionHandler`, both thin shells around one `crate::session::Handler`
//! per request.
//!
//! PHP calls close after every write, on `session_abort()`, `session_destroy()`,
//! `session_regenerate_id()` and at request shutdown (also after `exit()` and fatal
//! errors), and close releases the lock; a handler object dropped without close releases
//! it too.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use ext_php_rs::args::Arg;
use ext_php_rs::builders::FunctionBuilder;
use ext_php_rs::class::{ClassEntryInfo, ConstructorMeta, ConstructorResult};
use ext_php_rs::ffi::zend_string;
use ext_php_rs::flags::{ClassFlags, DataType, MethodFlags};
use ext_php_rs::types::array::Iter;
use ext_php_rs::types::{ZendHashTable, ZendStr, Zval};
use ext_php_rs::zend::{ClassEntry, ExecuteData};

use super::call::{Call, arg_type_error, clamp_to_execution_time, run, type_name};
use super::class::{builtin_class, native_class, nullable, public};
use super::error::value_error;
use super::error::warn;
use super::ffi::{self, FAILURE, PsModule, SUCCESS};
use super::ini;
use super::kv::keyspace_arg;
use super::open_keyspace;
use crate::session::{Handler, MAX_LOCK_SECONDS, OnTimeout, Settings, lock_ttl, lock_wait};

/// The settings of the `ephpm.session.*` entries, read now (ini_set applies).
fn settings_from_ini() -> Settings {
    Settings {
        locking: ini::number(c"ephpm.session.locking") != 0.0,
        lock_ttl: lock_ttl(
            ini::number(c"ephpm.session.lock_ttl"),
            ini::number(c"max_execution_time"),
        ),
        lock_wait: lock_wait(ini::number(c"ephpm.session.lock_wait")),
        on_timeout: if ini::string(c"ephpm.session.lock_timeout").eq_ignore_ascii_case("fail") {
            OnTimeout::Fail
        } else {
            OnTimeout::Warn
        },
    }
}

/// The wait bounded, now, by what is left of max_execution_time.
fn for_this_request(mut s: Settings) -> Settings {
    s.lock_wait = clamp_to_execution_time(s.lock_wait);
    s
}

fn max_lifetime() -> i64 {
    ini::number(c"session.gc_maxlifetime") as i64
}

/// Reports a session failure as PHP's session module does its own: an E_WARNING.
fn report(e: &crate::session::SessionError) {
    warn(&format!("ephpm: {e}"));
}

/// A new PHP string, owned by the caller (ext/session releases it).
fn new_string(bytes: &[u8]) -> *mut zend_string {
    ZendStr::new(bytes, false).into_raw().cast()
}

/// # Safety
/// `s` is a live zend_string.
unsafe fn bytes<'a>(s: *const zend_string) -> &'a [u8] {
    // SAFETY: forwarded; a zend_string is a ZendStr.
    unsafe { &*s.cast::<ZendStr>() }.as_bytes()
}

// ---- the native save handler ----

/// Runs a callback body; a panic becomes `fallback` instead of unwinding into PHP.
fn guard<R>(fallback: R, f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// # Safety
/// `mod_data` is ext/session's slot for this module, set by `s_open`.
unsafe fn handler<'a>(mod_data: *mut *mut c_void) -> Option<&'a mut Handler> {
    // SAFETY: the slot holds null or the Box<Handler> s_open leaked into it, used by one
    // request (thread) at a time.
    unsafe { (*mod_data).cast::<Handler>().as_mut() }
}

/// The handler in the module's slot, or a warning that it was never opened (PHP calls
/// open first; a caller that did not gets a failure, never a crash).
///
/// # Safety
/// As `handler`.
unsafe fn opened<'a>(mod_data: *mut *mut c_void) -> Option<&'a mut Handler> {
    // SAFETY: forwarded.
    let h = unsafe { handler(mod_data) };
    if h.is_none() {
        warn("ephpm: the session store is not open (open was not called)");
    }
    h
}

unsafe extern "C" fn s_open(
    mod_data: *mut *mut c_void,
    save_path: *const c_char,
    _name: *const c_char,
) -> c_int {
    guard(FAILURE, || {
        // SAFETY: ext/session passes its NUL-terminated save_path.
        let path = unsafe { CStr::from_ptr(save_path) }.to_bytes();
        // A DSN, or (Debian's /var/lib/php/sessions, say) a files path that is not ours.
        let dsn = path.windows(3).any(|w| w == b"://").then_some(path);
        match open_keyspace(dsn, b"") {
            Ok(space) => {
                // SAFETY: the module's slot, see `handler`.
                unsafe { s_close(mod_data) };
                let h = Box::new(Handler::new(space, for_this_request(settings_from_ini())));
                // SAFETY: as above; s_close frees it.
                unsafe { *mod_data = Box::into_raw(h).cast() };
                SUCCESS
            }
            Err(e) => {
                warn(&format!("ephpm: cannot open the session store: {e}"));
                FAILURE
            }
        }
    })
}

unsafe extern "C" fn s_close(mod_data: *mut *mut c_void) -> c_int {
    guard(FAILURE, || {
        // SAFETY: the module's slot; the Box was leaked by s_open and is taken back once.
        let p = unsafe { std::mem::replace(&mut *mod_data, std::ptr::null_mut()) };
        if !p.is_null() {
            // SAFETY: see above.
            let mut h = unsafe { Box::from_raw(p.cast::<Handler>()) };
            if !h.close() {
                warn(
                    "ephpm: the session's lock had expired before the session was closed; the lock another request holds now is untouched",
                );
            }
        }
        SUCCESS
    })
}

unsafe extern "C" fn s_read(
    mod_data: *mut *mut c_void,
    key: *mut zend_string,
    val: *mut *mut zend_string,
    _maxlifetime: i64,
) -> c_int {
    guard(FAILURE, || {
        // SAFETY: the module's slot; `key` is the session id ext/session passes.
        let (Some(h), id) = (unsafe { opened(mod_data) }, unsafe { bytes(key) }) else {
            return FAILURE;
        };
        let mut data = Vec::new();
        match h.read(id, &mut data) {
            Ok(warning) => {
                if let Some(w) = warning {
                    warn(&w);
                }
                // SAFETY: ext/session's out-parameter for the data it then owns.
                unsafe { *val = new_string(&data) };
                SUCCESS
            }
            Err(e) => {
                report(&e);
                FAILURE
            }
        }
    })
}

/// The body of write and update_timestamp.
fn store(
    mod_data: *mut *mut c_void,
    key: *mut zend_string,
    val: *mut zend_string,
    maxlifetime: i64,
    touch: bool,
) -> c_int {
    guard(FAILURE, || {
        // SAFETY: the module's slot; `key` and `val` are ext/session's live strings.
        let (Some(h), id, data) = (unsafe { opened(mod_data) }, unsafe { bytes(key) }, unsafe {
            bytes(val)
        }) else {
            return FAILURE;
        };
        let done = if touch {
            h.touch(id, data, maxlifetime)
        } else {
            h.write(id, data, maxlifetime)
        };
        match done {
            Ok(()) => SUCCESS,
            Err(e) => {
                report(&e);
                FAILURE
            }
        }
    })
}

unsafe extern "C" fn s_write(
    mod_data: *mut *mut c_void,
    key: *mut zend_string,
    val: *mut zend_string,
    maxlifetime: i64,
) -> c_int {
    store(mod_data, key, val, maxlifetime, false)
}

unsafe extern "C" fn s_update_timestamp(
    mod_data: *mut *mut c_void,
    key: *mut zend_string,
    val: *mut zend_string,
    maxlifetime: i64,
) -> c_int {
    store(mod_data, key, val, maxlifetime, true)
}

unsafe extern "C" fn s_destroy(mod_data: *mut *mut c_void, key: *mut zend_string) -> c_int {
    guard(FAILURE, || {
        // SAFETY: the module's slot and ext/session's id.
        let (Some(h), id) = (unsafe { opened(mod_data) }, unsafe { bytes(key) }) else {
            return FAILURE;
        };
        match h.destroy(id) {
            Ok(()) => SUCCESS,
            Err(e) => {
                report(&e);
                FAILURE
            }
        }
    })
}

/// The store expires sessions itself.
unsafe extern "C" fn s_gc(_mod_data: *mut *mut c_void, _maxlifetime: i64, nrdels: *mut i64) -> i64 {
    if !nrdels.is_null() {
        // SAFETY: ext/session's out-parameter.
        unsafe { *nrdels = 0 };
    }
    0
}

/// PHP's own id generator (session.sid_length, sid_bits_per_character).
fn php_session_id(mod_data: *mut *mut c_void) -> Option<Vec<u8>> {
    // SAFETY: php_session_create_id reads ext/session's settings; it returns a new
    // zend_string (or NULL), which is copied and released here.
    let s = unsafe { ffi::php_session_create_id(mod_data) };
    if s.is_null() {
        return None;
    }
    // SAFETY: a live zend_string we own (above).
    let id = unsafe { bytes(s) }.to_vec();
    // SAFETY: we own the only reference; ZBox releases it.
    drop(unsafe { ext_php_rs::boxed::ZBox::from_raw(s.cast::<ZendStr>()) });
    Some(id)
}

/// A new id reserved in the store, or, when it cannot be reserved, PHP's own id
/// unreserved with a warning (what the files handler hands out).
fn create_id(h: &mut Handler, mod_data: *mut *mut c_void) -> Option<Vec<u8>> {
    match h.create_id(|| php_session_id(mod_data), max_lifetime()) {
        Ok(id) => id,
        Err(e) => {
            report(&e);
            php_session_id(mod_data)
        }
    }
}

/// Never NULL while PHP's generator works: `\SessionHandler::create_sid()` returns what
/// this returns unchecked, and a subclass may never have opened us (its open() did not
/// call parent::open()). Then there is nothing to reserve in, and PHP's id is handed
/// out as the files handler does with no directory.
unsafe extern "C" fn s_create_sid(mod_data: *mut *mut c_void) -> *mut zend_string {
    let reserved = guard(None, || {
        // SAFETY: the module's slot.
        unsafe { handler(mod_data) }.map(|h| create_id(h, mod_data))
    });
    match reserved {
        Some(id) => id,
        None => php_session_id(mod_data),
    }
    .map_or(std::ptr::null_mut(), |id| new_string(&id))
}

unsafe extern "C" fn s_validate_sid(mod_data: *mut *mut c_void, key: *mut zend_string) -> c_int {
    guard(FAILURE, || {
        // SAFETY: the module's slot and ext/session's id.
        let (Some(h), id) = (unsafe { opened(mod_data) }, unsafe { bytes(key) }) else {
            return FAILURE;
        };
        match h.exists(id) {
            Ok(true) => SUCCESS,
            _ => FAILURE,
        }
    })
}

/// The module ext/session keeps a pointer to.
struct Module(PsModule);
// SAFETY: immutable after construction: a name literal and function pointers.
unsafe impl Sync for Module {}

static MODULE: Module = Module(PsModule {
    s_name: c"ephpm".as_ptr(),
    s_open,
    s_close,
    s_read,
    s_write,
    s_destroy,
    s_gc,
    s_create_sid,
    s_validate_sid,
    s_update_timestamp,
});

/// MINIT: registers the save handler `ephpm` with ext/session (which starts first: it
/// is built into PHP).
pub fn register_save_handler() -> bool {
    // SAFETY: MODULE is static, so the pointer ext/session keeps stays valid.
    unsafe { ffi::php_session_register_module(&MODULE.0) == SUCCESS }
}

// ---- Ephpm\SessionHandler ----

/// The Rust side of an `Ephpm\SessionHandler`.
pub struct SessionHandler {
    handler: Handler,
    /// Seconds a session lives; None: `session.gc_maxlifetime` at each write.
    lifetime: Option<i64>,
}

fn interface(symbol: &CStr) -> &'static ClassEntry {
    // ext/session is built into PHP (Debian's and php-src's default builds) and
    // registers its interfaces before any extension loads.
    #[allow(clippy::expect_used)]
    builtin_class(symbol).expect("ext/session is built into PHP")
}

const IMPLEMENTS: &[ClassEntryInfo] = &[
    (
        || interface(c"php_session_iface_entry"),
        "\\SessionHandlerInterface",
    ),
    (
        || interface(c"php_session_id_iface_entry"),
        "\\SessionIdInterface",
    ),
    (
        || interface(c"php_session_update_timestamp_iface_entry"),
        "\\SessionUpdateTimestampHandlerInterface",
    ),
];

native_class!(
    SessionHandler,
    "Ephpm\\SessionHandler",
    ClassFlags::Final,
    &[],
    methods,
    Some(ConstructorMeta {
        constructor: construct,
        build_fn: constructor_args,
        flags: None
    }),
    implements = IMPLEMENTS
);

/// A number of seconds in `$options`: an int or a finite float, 0 to `max`.
fn seconds_option(name: &str, value: &Zval, max: f64) -> Result<f64, String> {
    let x = value
        .long()
        .map(|n| n as f64)
        .or(value.double())
        .ok_or_else(|| {
            format!(
                "option \"{name}\" must be of type int|float, {} given",
                type_name(value)
            )
        })?;
    if !x.is_finite() {
        return Err(format!("option \"{name}\" must be a finite number"));
    }
    if !(0.0..=max).contains(&x) {
        return Err(format!("option \"{name}\" must be between 0 and {max}"));
    }
    Ok(x)
}

/// Reads the `$options` array over the ini settings. Keys and string values are bytes
/// (a key may hold any byte), shown escaped in the errors.
fn apply_options(
    mut s: Settings,
    options: &ZendHashTable,
) -> Result<(Settings, Option<i64>), String> {
    let mut lifetime = None;
    let max = f64::from(MAX_LOCK_SECONDS);
    let mut entries = Iter::new(options);
    while let Some((key, value)) = entries.next_zval() {
        let Some(key) = key.zend_str() else {
            return Err("cannot contain numeric keys".into());
        };
        let value = value.dereference();
        match key.as_bytes() {
            b"locking" => {
                s.locking = value.bool().ok_or_else(|| {
                    format!(
                        "option \"locking\" must be of type bool, {} given",
                        type_name(value)
                    )
                })?
            }
            // 0: as `ephpm.session.lock_ttl` = 0, max_execution_time or 30 s.
            b"lock_ttl" => {
                s.lock_ttl = lock_ttl(
                    seconds_option("lock_ttl", value, max)?,
                    ini::number(c"max_execution_time"),
                )
            }
            b"lock_wait" => s.lock_wait = lock_wait(seconds_option("lock_wait", value, max)?),
            b"lock_timeout" => {
                s.on_timeout = match value.zend_str().map(|v| v.as_bytes()) {
                    Some(b"warn") => OnTimeout::Warn,
                    Some(b"fail") => OnTimeout::Fail,
                    _ => return Err("option \"lock_timeout\" must be \"warn\" or \"fail\"".into()),
                }
            }
            b"lifetime" => {
                let n = value.long().ok_or_else(|| {
                    format!(
                        "option \"lifetime\" must be of type int, {} given",
                        type_name(value)
                    )
                })?;
                if n < 0 {
                    return Err("option \"lifetime\" must be greater than or equal to 0".into());
                }
                lifetime = Some(n);
            }
            other => {
                return Err(format!(
                    "contains an unrecognized key \"{}\"",
                    other.escape_ascii()
                ));
            }
        }
    }
    Ok((s, lifetime))
}

/// `__construct(?Ephpm\Kv $store = null, ?array $options = null)`: options `locking`,
/// `lock_ttl`, `lock_wait` (seconds, 0 to `MAX_LOCK_SECONDS`; a `lock_ttl` of 0 means
/// what the ini's does), `lock_timeout` (`warn`|`fail`), `lifetime` (seconds; default
/// `session.gc_maxlifetime`); the rest from `ephpm.session.*`.
fn construct(ex: &mut ExecuteData) -> ConstructorResult<SessionHandler> {
    let Some(c) = Call::new(ex, 0, 2) else {
        return ConstructorResult::ArgError;
    };
    let Some(space) = keyspace_arg(&c, 0, "Ephpm\\SessionHandler::__construct()") else {
        return ConstructorResult::ArgError;
    };
    let base = settings_from_ini();
    let (settings, lifetime) = match c.mixed(1).filter(|z| !z.is_null()) {
        None => (base, None),
        Some(zv) => match zv.array() {
            Some(options) => match apply_options(base, options) {
                Ok(r) => r,
                Err(why) => {
                    value_error(2, &why);
                    return ConstructorResult::ArgError;
                }
            },
            None => {
                arg_type_error(
                    2,
                    &format!("must be of type ?array, {} given", type_name(zv)),
                );
                return ConstructorResult::ArgError;
            }
        },
    };
    ConstructorResult::Ok(SessionHandler {
        handler: Handler::new(space, for_this_request(settings)),
        lifetime,
    })
}

fn constructor_args(f: FunctionBuilder) -> FunctionBuilder {
    f.arg(nullable("store", DataType::object("Ephpm\\Kv")))
        .arg(nullable("options", DataType::Array))
        .required_args(0)
}

impl SessionHandler {
    fn lifetime(&self) -> i64 {
        self.lifetime.unwrap_or_else(max_lifetime)
    }
}

/// The object and the string arguments of a method, or `None` with the error thrown.
fn begin(ex: &mut ExecuteData, strings: u32) -> Option<(&mut SessionHandler, Vec<&[u8]>)> {
    let c = Call::new(ex, strings, strings)?;
    let h = c.this::<SessionHandler>()?;
    let mut args = Vec::new();
    for i in 0..strings {
        args.push(c.string(i)?);
    }
    Some((h, args))
}

/// `open(string $path, string $name): bool` — the store was opened by the constructor.
extern "C" fn open(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        if begin(ex, 2).is_some() {
            rv.set_bool(true);
        }
    })
}

/// `close(): bool` — releases the lock by token.
extern "C" fn close(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        if let Some((h, _)) = begin(ex, 0) {
            if !h.handler.close() {
                warn(
                    "ephpm: the session's lock had expired before the session was closed; the lock another request holds now is untouched",
                );
            }
            rv.set_bool(true);
        }
    })
}

/// `read(string $id): string|false` — takes the session's lock, then reads it.
extern "C" fn read(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((h, args)) = begin(ex, 1) else {
            return;
        };
        let mut data = Vec::new();
        match h.handler.read(args[0], &mut data) {
            Ok(warning) => {
                if let Some(w) = warning {
                    warn(&w);
                }
                rv.set_zend_string(ZendStr::new(&data[..], false));
            }
            Err(e) => {
                report(&e);
                rv.set_bool(false);
            }
        }
    })
}

/// The body of write() and updateTimestamp().
fn write_or_touch(ex: &mut ExecuteData, rv: &mut Zval, touch: bool) {
    let Some((h, args)) = begin(ex, 2) else {
        return;
    };
    let lifetime = h.lifetime();
    let done = if touch {
        h.handler.touch(args[0], args[1], lifetime)
    } else {
        h.handler.write(args[0], args[1], lifetime)
    };
    if let Err(e) = &done {
        report(e);
    }
    rv.set_bool(done.is_ok());
}

/// `write(string $id, string $data): bool` — only while the lock is still ours.
extern "C" fn write(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| write_or_touch(ex, rv, false))
}

/// `updateTimestamp(string $id, string $data): bool` — renews an unchanged session.
extern "C" fn update_timestamp(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| write_or_touch(ex, rv, true))
}

/// `destroy(string $id): bool`
extern "C" fn destroy(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((h, args)) = begin(ex, 1) else {
            return;
        };
        let done = h.handler.destroy(args[0]);
        if let Err(e) = &done {
            report(e);
        }
        rv.set_bool(done.is_ok());
    })
}

/// `gc(int $max_lifetime): int|false` — 0: the store expires sessions itself.
extern "C" fn gc(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 1, 1) else { return };
        if c.long_or(0, 0).is_some() {
            rv.set_long(0);
        }
    })
}

/// `validateId(string $id): bool` — whether the session exists (strict mode).
extern "C" fn validate_id(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((h, args)) = begin(ex, 1) else {
            return;
        };
        rv.set_bool(matches!(h.handler.exists(args[0]), Ok(true)));
    })
}

/// `create_sid(): string` — PHP's generator, reserved in the store so it is never one
/// in use; unreserved, with a warning, when the store cannot reserve it.
extern "C" fn create_sid(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some((h, _)) = begin(ex, 0) else { return };
        let lifetime = h.lifetime();
        let id = match h
            .handler
            .create_id(|| php_session_id(std::ptr::null_mut()), lifetime)
        {
            Ok(id) => id,
            Err(e) => {
                report(&e);
                php_session_id(std::ptr::null_mut())
            }
        };
        match id {
            Some(id) => rv.set_zend_string(ZendStr::new(&id[..], false)),
            None if ext_php_rs::zend::ExecutorGlobals::has_exception() => {}
            None => super::error::throw_new(
                ext_php_rs::zend::ce::error(),
                "Failed to create session ID".into(),
            ),
        }
    })
}

fn methods() -> Vec<(FunctionBuilder<'static>, MethodFlags)> {
    let id = || Arg::new("id", DataType::String);
    let data = || Arg::new("data", DataType::String);
    let bool_ret = |f: FunctionBuilder<'static>| f.returns(DataType::Bool, false, false);
    public(vec![
        bool_ret(
            FunctionBuilder::new("open", open)
                .arg(Arg::new("path", DataType::String))
                .arg(Arg::new("name", DataType::String))
                .required_args(2),
        ),
        bool_ret(FunctionBuilder::new("close", close)),
        // Declared `string` (a subtype of the interface's string|false, which arginfo
        // built here cannot spell); false is returned when the read fails.
        FunctionBuilder::new("read", read)
            .arg(id())
            .required_args(1)
            .returns(DataType::String, false, false),
        bool_ret(
            FunctionBuilder::new("write", write)
                .arg(id())
                .arg(data())
                .required_args(2),
        ),
        bool_ret(
            FunctionBuilder::new("destroy", destroy)
                .arg(id())
                .required_args(1),
        ),
        FunctionBuilder::new("gc", gc)
            .arg(Arg::new("max_lifetime", DataType::Long))
            .required_args(1)
            .returns(DataType::Long, false, false),
        FunctionBuilder::new("create_sid", create_sid).returns(DataType::String, false, false),
        bool_ret(
            FunctionBuilder::new("validateId", validate_id)
                .arg(id())
                .required_args(1),
        ),
        bool_ret(
            FunctionBuilder::new("updateTimestamp", update_timestamp)
                .arg(id())
                .arg(data())
                .required_args(2),
        ),
    ])
}
