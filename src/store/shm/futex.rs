//! Shared futex wait and wake on a 32-bit word of the segment.
//!
//! The waiters are in other processes, so these are the *shared* futex operations: no
//! `FUTEX_PRIVATE_FLAG`, which would key the wait on this process's address space and
//! never see a wake from another one. Every wait is bounded.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Sleeps while `*word == expected`, for at most `timeout`.
///
/// Returns when woken, when the word no longer holds `expected` (`EAGAIN`), on a signal
/// (`EINTR`) or at the timeout (`ETIMEDOUT`); the caller re-checks its condition in every
/// case. `true` only for the timeout: a waiter that looks at a stuck holder does so once
/// per full slice, not after every wake.
pub fn wait(word: &AtomicU32, expected: u32, timeout: Duration) -> bool {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `word` is a live, aligned 32-bit atomic for the whole call; FUTEX_WAIT only
    // reads it. `ts` is a valid relative timeout on our stack. The unused arguments
    // (uaddr2, val3) are ignored by FUTEX_WAIT.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if rc == 0 {
        return false;
    }
    let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    debug_assert!(
        matches!(errno, libc::EAGAIN | libc::EINTR | libc::ETIMEDOUT),
        "unexpected futex wait errno {errno}"
    );
    errno == libc::ETIMEDOUT
}

/// Wakes at most one process waiting on `word`.
pub fn wake_one(word: &AtomicU32) {
    wake(word, 1);
}

/// Wakes every process waiting on `word`; returns how many were woken.
pub fn wake_all(word: &AtomicU32) -> usize {
    wake(word, i32::MAX)
}

fn wake(word: &AtomicU32, n: i32) -> usize {
    // SAFETY: `word` is a live, aligned 32-bit word; FUTEX_WAKE does not access it beyond
    // using its address as the key. The remaining arguments are ignored by FUTEX_WAKE.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            n,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    // FUTEX_WAKE can only fail with EFAULT/EINVAL for a bad address, which a live
    // reference excludes.
    debug_assert!(rc >= 0, "futex wake failed");
    rc.max(0) as usize
}
