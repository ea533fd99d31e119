//! The background runtime (DESIGN.md §6): one tokio runtime per process, built on first
//! use and never in module startup, because the FPM master and `pcntl_fork()` parents fork
//! after startup and a child that inherits a started runtime has none of its threads (its
//! timers never fire, and it hangs).
//!
//! The runtime remembers the pid that built it. A forked child leaks the inherited one —
//! dropping it would try to join threads that do not exist in the child — and builds its
//! own. Nothing but PHP-facing threads touches the slot below, so a fork can never catch
//! it locked by a runtime thread.

use std::sync::Mutex;
use std::time::Duration;

use tokio::runtime::{Handle, Runtime};

struct Owned {
    pid: u32,
    runtime: Runtime,
}

static RUNTIME: Mutex<Option<Owned>> = Mutex::new(None);

/// The process's runtime, built now if this process has none yet.
pub fn handle() -> std::io::Result<Handle> {
    let mut slot = RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    if let Some(owned) = slot.take() {
        if owned.pid == pid {
            let handle = owned.runtime.handle().clone();
            *slot = Some(owned);
            return Ok(handle);
        }
        // Inherited across fork(): its threads stayed in the parent.
        std::mem::forget(owned);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("ephpm-runtime")
        .enable_all()
        .build()?;
    let handle = runtime.handle().clone();
    *slot = Some(Owned { pid, runtime });
    Ok(handle)
}

/// Stops this process's runtime, waiting a moment for its tasks (module shutdown). An
/// inherited one is left alone.
pub fn shutdown() {
    let mut slot = RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
    match slot.take() {
        Some(owned) if owned.pid == std::process::id() => {
            owned.runtime.shutdown_timeout(Duration::from_millis(500));
        }
        Some(inherited) => std::mem::forget(inherited),
        None => {}
    }
}
