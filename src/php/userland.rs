//! Calls from Rust into PHP code (closures, methods of the caller's objects, loggers),
//! each guarded so that an exception stays pending for the caller and a fatal error
//! cannot skip over the Rust frames that hold locks (see `call::guarded`).

use ext_php_rs::convert::IntoZvalDyn;
use ext_php_rs::types::{ZendCallable, ZendHashTable, Zval};
use ext_php_rs::zend::{ExecutorGlobals, ce};

use super::call::guarded;
use super::error::{throw_new, warn};

/// Calls a PHP callable; `None` when it threw (the exception stays pending).
pub fn call(f: &Zval, args: Vec<&dyn IntoZvalDyn>) -> Option<Zval> {
    settle(
        guarded(|| Some(ZendCallable::new(f).and_then(|f| f.try_call(args)))),
        "the callable",
    )
}

/// Calls the PHP function `name`; `None` when it does not exist or threw.
pub fn call_function(name: &str, args: Vec<&dyn IntoZvalDyn>) -> Option<Zval> {
    let f = ZendCallable::try_from_name(name).ok()?;
    settle(guarded(|| Some(f.try_call(args))), name)
}

/// Calls `method` on `obj` with `args`; `None` when it threw (the exception is pending)
/// or could not be called (an Error is thrown).
pub fn call_method(obj: &Zval, method: &str, args: Vec<&dyn IntoZvalDyn>) -> Option<Zval> {
    settle(
        guarded(|| Some(obj.try_call_method(method, args))),
        &format!("{method}()"),
    )
}

/// The value of a guarded call into PHP: `None` when it threw (the exception stays
/// pending), bailed out, or could not be made (an Error naming `what` is thrown).
fn settle(result: Option<ext_php_rs::error::Result<Zval>>, what: &str) -> Option<Zval> {
    match result? {
        Ok(v) => Some(v),
        Err(ext_php_rs::error::Error::ExceptionPending { .. }) => None,
        Err(e) => {
            throw_new(ce::error(), format!("ephpm: cannot call {what}: {e}"));
            None
        }
    }
}

/// Logs a warning through `$logger->warning()`, when there is a logger.
pub fn warn_to(logger: Option<&Zval>, message: String) {
    if let Some(l) = logger {
        let _ = l.try_call_method("warning", vec![&message]);
    }
}

/// Takes the pending exception, if any, so that the caller can go on (PHP calls nothing
/// while one is pending).
pub fn take_exception() -> Option<Zval> {
    let e = ExecutorGlobals::take_exception()?;
    let mut zv = Zval::new();
    ext_php_rs::convert::IntoZval::set_zval(e, &mut zv, false).ok()?;
    Some(zv)
}

/// Logs `message` and the exception's own message: `$logger->warning($message,
/// ['exception' => $e])` as PSR-3 suggests, or an E_WARNING without a logger.
pub fn log_exception(logger: Option<&Zval>, message: &str, exception: &Zval) {
    let cause = call_method(exception, "getMessage", vec![])
        .and_then(|m| m.string())
        .unwrap_or_default();
    let text = format!("{message}: {cause}");
    match logger {
        Some(l) => {
            let mut context = ZendHashTable::new();
            if context
                .insert("exception", exception.shallow_clone())
                .is_ok()
            {
                let _ = l.try_call_method("warning", vec![&text, &context]);
            }
        }
        None => warn(&text),
    }
}
