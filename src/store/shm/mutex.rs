//! The shard lock: a process-shared, robust pthread mutex that lives inside the segment.
//!
//! Robust means a holder killed at any instruction does not wedge the store: the kernel
//! marks the mutex, and the next locker is told so (`EOWNERDEAD`) and must repair what the
//! dead holder may have left half-done before it marks the mutex consistent again. This
//! module only speaks pthreads; what "repair" means is the shard's business
//! (`Shard::repair`).

use std::io;

use super::ShmError;

/// What `lock` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acquired {
    /// The previous holder unlocked normally; the state it guards is consistent.
    Clean,
    /// The previous holder died holding the lock. The caller holds the lock now, must
    /// repair the state it guards, then call [`mark_consistent`] before unlocking.
    OwnerDied,
}

/// Initialises a process-shared robust mutex in place.
///
/// # Safety
/// - `m` must point to writable memory, aligned for `pthread_mutex_t`, that no other
///   thread or process uses as a mutex yet (the segment creator holds the creation flock).
pub unsafe fn init(m: *mut libc::pthread_mutex_t) -> Result<(), ShmError> {
    // SAFETY: an all-zero attribute object is a valid argument for pthread_mutexattr_init,
    // which overwrites it.
    let mut attr: libc::pthread_mutexattr_t = unsafe { std::mem::zeroed() };
    // SAFETY: `attr` is a local we own; each call gets a pointer to it; `m` is valid and
    // unused per this function's contract.
    unsafe {
        check(
            libc::pthread_mutexattr_init(&mut attr),
            "pthread_mutexattr_init",
        )?;
        let result = (|| {
            check(
                libc::pthread_mutexattr_setpshared(&mut attr, libc::PTHREAD_PROCESS_SHARED),
                "pthread_mutexattr_setpshared",
            )?;
            check(
                libc::pthread_mutexattr_setrobust(&mut attr, libc::PTHREAD_MUTEX_ROBUST),
                "pthread_mutexattr_setrobust",
            )?;
            check(libc::pthread_mutex_init(m, &attr), "pthread_mutex_init")
        })();
        libc::pthread_mutexattr_destroy(&mut attr);
        result
    }
}

/// Locks the mutex, blocking until it is free.
///
/// # Safety
/// - `m` must point to a mutex initialised by [`init`] in a mapping that stays valid
///   until the matching [`unlock`].
/// - The calling thread must not hold it already (it is not recursive).
pub unsafe fn lock(m: *mut libc::pthread_mutex_t) -> Result<Acquired, ShmError> {
    // SAFETY: forwarded to the caller.
    match unsafe { libc::pthread_mutex_lock(m) } {
        0 => Ok(Acquired::Clean),
        libc::EOWNERDEAD => Ok(Acquired::OwnerDied),
        libc::ENOTRECOVERABLE => Err(ShmError::Unrecoverable),
        e => Err(ShmError::Os(
            "pthread_mutex_lock",
            io::Error::from_raw_os_error(e),
        )),
    }
}

/// Declares the state guarded by a mutex taken with `Acquired::OwnerDied` repaired.
///
/// # Safety
/// - The calling thread must hold `m`, acquired with `Acquired::OwnerDied`.
pub unsafe fn mark_consistent(m: *mut libc::pthread_mutex_t) {
    // SAFETY: forwarded to the caller. The only documented error is EINVAL (not robust or
    // not inconsistent), which the contract excludes.
    let rc = unsafe { libc::pthread_mutex_consistent(m) };
    debug_assert_eq!(rc, 0, "pthread_mutex_consistent");
}

/// Unlocks the mutex.
///
/// # Safety
/// - The calling thread must hold `m`.
pub unsafe fn unlock(m: *mut libc::pthread_mutex_t) {
    // SAFETY: forwarded to the caller; with the lock held the only error (EPERM) cannot occur.
    let rc = unsafe { libc::pthread_mutex_unlock(m) };
    debug_assert_eq!(rc, 0, "pthread_mutex_unlock");
}

fn check(rc: i32, what: &'static str) -> Result<(), ShmError> {
    if rc == 0 {
        Ok(())
    } else {
        Err(ShmError::Os(what, io::Error::from_raw_os_error(rc)))
    }
}
