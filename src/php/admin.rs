//! `ephpm_store_remove()`: the operator's way to resize or reset a host store. A live
//! segment is never replaced behind its users' backs (a process with another
//! `ephpm.shm_size` adopts it as it is), so changing its size is this explicit step:
//! stop the processes that use the store, remove it, and the next process makes it anew
//! at its own `ephpm.shm_size`. It refuses while any process still maps the segment.

use ext_php_rs::args::Arg;
use ext_php_rs::builders::{FunctionBuilder, ModuleBuilder};
use ext_php_rs::flags::DataType;
use ext_php_rs::types::Zval;
use ext_php_rs::zend::ExecuteData;

use super::call::{Call, run};
use super::error::throw;
use super::ini;

const WHAT: &str = "ephpm_store_remove()";

/// `ephpm_store_remove(?string $name = null): bool` — true when a segment was removed,
/// false when there was none; Ephpm\StoreException while it is in use.
extern "C" fn store_remove(ex: &mut ExecuteData, rv: &mut Zval) {
    run(ex, rv, |ex, rv| {
        let Some(c) = Call::new(ex, 0, 1) else {
            return;
        };
        let Some(name) = c.string_or_null(0) else {
            return;
        };
        let name = name.map(|n| String::from_utf8_lossy(n).into_owned());
        let removed = crate::open::remove_host_store(name, &ini::config());
        match removed {
            Ok(r) => rv.set_bool(r),
            Err(e) => throw(&e, 1, WHAT),
        }
    })
}

pub fn register(m: ModuleBuilder<'_>) -> ModuleBuilder<'_> {
    m.function(
        FunctionBuilder::new("ephpm_store_remove", store_remove)
            .arg(
                Arg::new("name", DataType::String)
                    .allow_null()
                    .default("null"),
            )
            .required_args(0)
            .returns(DataType::Bool, false, false),
    )
}
