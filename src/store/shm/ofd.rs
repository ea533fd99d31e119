//! Open file description locks (`F_OFD_*`) on single bytes of the segment file: the
//! use lock (`segment.rs`), the per-shard recovery locks (below) and the registry of processes
//! (`registry.rs`) are all such bytes. An OFD lock belongs to the open file description,
//! not to the process: a forked child shares its parent's, closing another descriptor of
//! the same file drops nothing, and the kernel releases it when the last descriptor of
//! the description closes — at the latest when its process exits.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};

use super::ShmError;

fn byte(kind: libc::c_int, at: u64) -> libc::flock {
    // SAFETY: an all-zero flock is a valid value; every field we rely on is set below.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = at as libc::off_t;
    fl.l_len = 1;
    fl
}

/// Takes a lock of `kind` (`F_RDLCK`, `F_WRLCK`) on byte `at` of `file`, waiting for it
/// when `wait`; `Ok(false)` when it is held in a conflicting way and `!wait`.
pub fn lock(file: &File, kind: libc::c_int, at: u64, wait: bool) -> io::Result<bool> {
    let mut fl = byte(kind, at);
    let cmd = if wait {
        libc::F_OFD_SETLKW
    } else {
        libc::F_OFD_SETLK
    };
    loop {
        // SAFETY: fcntl on a descriptor we own with a pointer to a local flock (l_pid is
        // 0, as OFD locks require).
        if unsafe { libc::fcntl(file.as_raw_fd(), cmd, &mut fl) } == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN) | Some(libc::EACCES) if !wait => return Ok(false),
            _ => return Err(e),
        }
    }
}

/// Whether any open file description other than `fd`'s holds a lock on byte `at`.
pub fn held_by_others(fd: RawFd, at: u64) -> io::Result<bool> {
    let mut fl = byte(libc::F_WRLCK, at);
    // SAFETY: fcntl on a descriptor the caller keeps open, with a pointer to a local
    // flock that F_OFD_GETLK overwrites with the conflicting lock, if any.
    if unsafe { libc::fcntl(fd, libc::F_OFD_GETLK, &mut fl) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fl.l_type != libc::F_UNLCK as libc::c_short)
}

/// Serialises the recovery of shard `shard`'s lock between processes (see
/// `mutex::recover`): an exclusive lock on a byte of the segment file past the use byte,
/// dropped when the returned guard goes (or the process dies).
pub fn recovery_lock(segment_fd: RawFd, shard: usize) -> Result<RecoveryLock, ShmError> {
    // A new open file description, not a dup: OFD locks belong to the description, and
    // this process's use lock must not be turned into a write lock.
    let path = format!("/proc/self/fd/{segment_fd}");
    let own = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| ShmError::Os("reopen the segment", e))?;
    lock(&own, libc::F_WRLCK, 1 + shard as u64, true)
        .map_err(|e| ShmError::Os("fcntl(F_OFD_SETLKW)", e))?;
    Ok(RecoveryLock { _file: own })
}

/// Held while one process recovers a shard's lock.
pub struct RecoveryLock {
    _file: File,
}
