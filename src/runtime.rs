//! The background runtime (ARCHITECTURE.md §10): one tokio runtime per process, built on first
//! use and never in module startup, because the FPM master and `pcntl_fork()` parents fork
//! after startup and a child that inherits a started runtime has none of its threads (its
//! timers never fire, and it hangs).
//!
//! The runtime remembers the pid that built it. A forked child leaks the inherited one —
//! dropping it would try to join threads that do not exist in the child — and builds its
//! own. Nothing but PHP-facing threads touches the slot below, so a fork can never catch
//! it locked by a runtime thread.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, Once};
use std::time::Duration;

use tokio::runtime::{Handle, Runtime};

struct Owned {
    pid: u32,
    runtime: Runtime,
}

static RUNTIME: Mutex<Option<Owned>> = Mutex::new(None);

/// This process's pid, or 0 until asked (and again in a forked child).
static PID: AtomicU32 = AtomicU32::new(0);

/// This process's pid, without a system call each time: what tells a forked child that
/// the connections and runtime it sees are its parent's. glibc no longer caches
/// getpid(), and the Redis backend asks on every command.
pub fn pid() -> u32 {
    let cached = PID.load(Ordering::Relaxed);
    if cached != 0 {
        return cached;
    }
    static AT_FORK: Once = Once::new();
    AT_FORK.call_once(|| {
        // SAFETY: registers a handler that only stores to an atomic, which is
        // async-signal-safe as a fork child handler must be; no prepare or parent hook.
        unsafe { libc::pthread_atfork(None, None, Some(forget_pid)) };
    });
    let pid = std::process::id();
    PID.store(pid, Ordering::Relaxed);
    pid
}

extern "C" fn forget_pid() {
    PID.store(0, Ordering::Relaxed);
}

/// The process's runtime, built now if this process has none yet.
pub fn handle() -> std::io::Result<Handle> {
    let mut slot = RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
    let pid = pid();
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
        Some(owned) if owned.pid == pid() => {
            owned.runtime.shutdown_timeout(Duration::from_millis(500));
        }
        Some(inherited) => std::mem::forget(inherited),
        None => {}
    }
}

/// For the daemons (ephpm-node, ephpm-resp): SIGTERM (systemd, kill) or SIGINT (Ctrl-C);
/// never, if they cannot be caught.
pub async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    }
}
